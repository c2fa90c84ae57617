defmodule OpenAgentsPolicy.DecisionsTest do
  use ExUnit.Case, async: true
  doctest OpenAgentsPolicy.Decisions

  alias OpenAgentsPolicy.Decisions

  # The classes and sentences of the rule changes a maintainer makes most
  # are the Rust tests' (native/openagents_policy_decisions/tests/diff_probes.rs,
  # against golden files); here, the diff as the NIF serves it, the files
  # the repository keeps, and the Mix task.

  @root Path.expand("../..", __DIR__)
  @packaged Path.join(@root, "priv/decisions.json")
  @last_release Path.join(@root, "last-release/decisions.json")

  defp live, do: OpenAgentsPolicy.decisions_json()

  # `live()` decoded, edited, encoded again.
  defp edited(edit), do: live() |> Jason.decode!() |> edit.() |> Jason.encode!()

  # `live()` with each row's answer edited by `edit.(table, input, answer)`.
  defp answers(edit) do
    edited(fn document ->
      Map.update!(document, "rows", fn rows ->
        for [table, input, answer] <- rows, do: [table, input, edit.(table, input, answer)]
      end)
    end)
  end

  test "the package's priv/decisions.json is the live document, and its SHA-256 the decision digest" do
    packaged = File.read!(@packaged)

    unless packaged == live() do
      {:ok, markdown} = Decisions.diff(packaged, live(), format: :markdown)

      flunk("""
      priv/decisions.json (the decision document the package carries) is not the NIF's live one:

      #{markdown}
      If the rules changed on purpose, write it anew from the repository's root:
      `make decisions`.
      """)
    end

    assert Base.encode16(:crypto.hash(:sha256, packaged), case: :lower) ==
             OpenAgentsPolicy.fingerprint().decision_digest

    assert "priv/decisions.json" in Mix.Project.config()[:package][:files]
  end

  test "the last release's document is a decision document this library reads" do
    assert {:ok, _changes} = Decisions.diff(File.read!(@last_release), live())
  end

  # rustler's serde encoder writes a unit variant as an atom only if the VM
  # has that atom already: a VM started for the test, which has never made
  # the class's atom, gets the atom all the same. The script names the class
  # as a string only: an atom written in it would exist before the call.
  test "a class is an atom in a VM that had no atom of its name before the diff" do
    moved = String.replace(live(), ~s("tier":"ledger",), ~s("tier":"glass",), global: false)
    {:ok, [%{class: class}]} = Decisions.diff(live(), moved)

    script = """
    live = OpenAgentsPolicy.decisions_json()
    moved = String.replace(live, ~s("tier":"ledger",), ~s("tier":"glass",), global: false)
    existed? = try do: (String.to_existing_atom(#{inspect(Atom.to_string(class))}); true), rescue: (ArgumentError -> false)
    {:ok, changes} = OpenAgentsPolicy.Decisions.diff(live, moved)
    IO.puts("classes: " <> inspect({existed?, Enum.map(changes, & &1.class)}))
    """

    ebin = Path.wildcard(Path.join(Mix.Project.build_path(), "lib/*/ebin"))
    args = Enum.flat_map(ebin, &["-pa", &1]) ++ ["-e", script]
    {output, 0} = System.cmd(System.find_executable("elixir"), args, stderr_to_stdout: true)
    [_, printed] = Regex.run(~r/^classes: (.*)$/m, output)

    assert Code.eval_string(printed) |> elem(0) == {false, [class]}
  end

  test "a change names its table, its input, both answers, its class and who gains" do
    # Of the live document, whatever its rules: the first field at `ledger`
    # moved down to `pulse`.
    [input | _] =
      for ["schedule.fields", input, %{"tier" => "ledger"}] <- Jason.decode!(live())["rows"],
          do: input

    moved =
      answers(fn
        "schedule.fields", ^input, answer -> %{answer | "tier" => "pulse"}
        _table, _input, answer -> answer
      end)

    assert {:ok, [change]} = Decisions.diff(live(), moved)
    name = "`#{input["family"]}.#{input["field"]}`"

    assert %{
             table: "schedule.fields",
             input: ^input,
             old: %{"tier" => "ledger"} = old,
             new: %{"tier" => "pulse"} = new,
             class: :widens,
             says: says
           } = change

    assert Map.delete(old, "tier") == Map.delete(new, "tier")
    # Who gains, named from the document's relationships.
    assert says =~
             ~r/^#{Regex.escape(name)} is now disclosed from `pulse` \(was `ledger`\): .+ now see it$/

    assert Decisions.widened([change]) == [change]
    assert Decisions.widens?([change])

    {:ok, markdown} = Decisions.diff(live(), moved, format: :markdown)
    assert markdown =~ "#### Widens: someone gains (1)\n\n- #{change.says} (`schedule.fields`)"

    {:ok, json} = Decisions.diff(live(), moved, format: :json)
    assert %{"changes" => [entry]} = Jason.decode!(json)
    assert Map.keys(entry) == ~w(class input new old table)
    assert entry["class"] == "widens"
    assert entry["input"] == change.input
  end

  test "every refusal, on either side, as a typed error" do
    live = live()

    cases = [
      {"not json", :not_a_document, "not JSON"},
      {<<0xFF, 0xFE>>, :not_a_document, "not JSON"},
      {"{}", :not_a_document, "no \"format\" field"},
      {edited(&Map.delete(&1, "rows")), :not_a_document, "missing field `rows`"},
      {edited(&Map.put(&1, "format", 4)), :unknown_format, "of format 4,"},
      {edited(&Map.delete(&1, "format")), :unknown_format, "of format none"},
      {live <> String.duplicate(" ", 1024 * 1024), :too_large, "over the limit of 1048576 bytes"},
      {String.replace(
         live,
         ~s({"vocabulary":"kind"}),
         ~s({"vocabulary":"kind","vocabulary":"x"})
       ), :not_a_document, ~s(object names "vocabulary" twice)}
    ]

    for {bad, kind, why} <- cases do
      assert {:error, {^kind, :old, message}} = Decisions.diff(bad, live)
      assert message =~ why
      assert {:error, {^kind, :new, message}} = Decisions.diff(live, bad)
      assert message =~ "the new document"
    end

    # A list answer of tens of thousands of items, refused as it is read.
    words = for n <- 0..20_000, do: "w#{n}"

    grown =
      answers(fn
        "vocabularies", %{"vocabulary" => "kind"}, _words -> words
        _table, _input, answer -> answer
      end)

    assert {:error, {:too_large, :new, "the new document is over the limit of 256 items" <> _}} =
             Decisions.diff(live, grown)

    # Through apply/3: a literal nil is refused by Elixir 1.20's type
    # checker at compile time, and this is the refusal at run time.
    assert_raise FunctionClauseError, fn -> apply(Decisions, :diff, [nil, live]) end

    assert_raise ArgumentError, ~r/format: :html/, fn ->
      Decisions.diff(live, live, format: :html)
    end

    # Behind that guard, the NIF decodes the format itself (rustler's
    # NifUnitEnum), and any other word is refused as rustler refuses an
    # unknown variant.
    error =
      assert_raise ErlangError, fn ->
        OpenAgentsPolicy.Native.decisions_diff(live, live, :html)
      end

    assert error.original == :invalid_variant
  end

  test "two whole documents compare in one call, every answer read" do
    # The diff of two whole documents is one NIF call, on a dirty CPU
    # scheduler (native/openagents_policy_nif/src/diff.rs): reading both is
    # its cost whatever they hold. Its time is measured outside the suite,
    # never here.
    live = live()
    assert {:ok, []} = Decisions.diff(live, live)

    # Every field of every family scheduled from `pulse`: one widening per
    # field that was scheduled higher.
    everything =
      answers(fn
        "schedule.fields", _input, field -> %{field | "tier" => "pulse"}
        _table, _input, answer -> answer
      end)

    moved =
      for ["schedule.fields", input, %{"tier" => tier}] <- Jason.decode!(live)["rows"],
          tier != "pulse",
          do: input

    assert {:ok, changes} = Decisions.diff(live, everything)
    assert Enum.map(changes, & &1.input) == moved and moved != []
    assert Enum.all?(changes, &(&1.class == :widens and &1.table == "schedule.fields"))
  end

  test "two documents at the read limits are read whole, and a diff past its output refused" do
    # This build's document and 4,000 tier words more, of 100 bytes, each
    # ranked `rank` (`make bench-diff` times such, and a short dirty NIF beside it).
    word = String.duplicate("w", 100)
    live = Jason.decode!(OpenAgentsPolicy.decisions_json())

    [low, high] =
      for rank <- [0, 1] do
        more = for n <- 1..4_000, do: ["ladder.ranks", %{"tier" => "#{word}#{n}"}, rank]
        Jason.encode!(%{live | "rows" => live["rows"] ++ more})
      end

    assert byte_size(high) < 1024 * 1024
    assert {:ok, []} = Decisions.diff(low, low)

    # Every answer different: more than the diff may write, refused as soon
    # as it would be, naming its limit; never "no changes".
    assert {:error,
            {:too_large, nil, "the diff is over the limit of 1048576 bytes of output" <> _}} =
             Decisions.diff(low, high)
  end
end
