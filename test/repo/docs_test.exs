defmodule OpenAgentsPolicy.DocsTest do
  use ExUnit.Case, async: true
  @moduletag :repo

  @root Path.expand("../..", __DIR__)

  test "every guide is published by mix docs, and every published page exists" do
    extras = Mix.Project.config()[:docs][:extras] |> Keyword.keys() |> Enum.map(&Atom.to_string/1)

    guides =
      @root
      |> Path.join("guides/*.md")
      |> Path.wildcard()
      |> Enum.map(&Path.relative_to(&1, @root))

    assert guides -- extras == [], "guides missing from mix.exs docs extras"
    assert Enum.reject(extras, &File.regular?(Path.join(@root, &1))) == []
  end

  test "every public module is in a sidebar group, and the NIF module in none" do
    groups =
      Mix.Project.config()[:docs][:groups_for_modules] |> Keyword.values() |> List.flatten()

    {:ok, modules} = :application.get_key(:openagents_policy, :modules)

    # The library's own modules and its docs tooling (test/support is
    # compiled in too, under test).
    roots = [Path.join(@root, "lib"), Path.join(@root, "dev")]

    public =
      for module <- modules,
          String.starts_with?(to_string(module.module_info(:compile)[:source]), roots),
          {:docs_v1, _, _, _, doc, _, _} = Code.fetch_docs(module),
          doc != :hidden,
          do: module

    assert Enum.sort(public) == Enum.sort(groups)
    refute OpenAgentsPolicy.Native in groups
  end
end
