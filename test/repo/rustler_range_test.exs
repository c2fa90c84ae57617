defmodule OpenAgentsPolicy.RustlerRangeTest do
  # One rustler range for the project: the workspace's (which the NIF crate
  # inherits) and the entry crate's, which sits outside the workspace and so
  # repeats it. Both crates must build with the same rustler: the entry
  # gathers the NIFs the NIF crate registers.
  use ExUnit.Case, async: true
  @moduletag :repo

  @root Path.expand("../..", __DIR__)

  defp rustler_line(file) do
    lines =
      @root
      |> Path.join(file)
      |> File.read!()
      |> String.split("\n")
      |> Enum.filter(&String.starts_with?(&1, "rustler "))

    assert [line] = lines, "#{file}: expected one `rustler = ...` line, found #{inspect(lines)}"
    line
  end

  test "the entry crate's rustler is the workspace's, word for word" do
    workspace = rustler_line("Cargo.toml")
    assert workspace =~ ~s(version = ">=0.37, <0.40")
    assert rustler_line("native/openagents_policy_nif_entry/Cargo.toml") == workspace
  end

  test "the NIF crate takes rustler from the workspace" do
    manifest = File.read!(Path.join(@root, "native/openagents_policy_nif/Cargo.toml"))
    assert manifest =~ ~r/^rustler\.workspace = true$/m
    refute manifest =~ ~r/^rustler = /m
  end
end
