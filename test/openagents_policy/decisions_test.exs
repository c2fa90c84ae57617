defmodule OpenAgentsPolicy.DecisionsTest do
  use ExUnit.Case, async: true
  doctest OpenAgentsPolicy.Decisions

  alias OpenAgentsPolicy.Decisions

  # The classes and sentences of the rule changes a maintainer makes most
  # are the core's tests' (native/openagents_policy/tests/diff_probes.rs,
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
    assert {:ok, changes} = Decisions.diff(File.read!(@last_release), live())
    assert is_list(changes)
  end

  test "a change names its table, its input, both answers, its class and who gains" do
    moved =
      answers(fn
        "schedule.fields_at", %{"family" => "attempt", "viewer_tier" => "pulse"}, fields ->
          Enum.sort(["terminal_commit" | fields])

        _table, _input, answer ->
          answer
      end)

    assert {:ok, [change]} = Decisions.diff(live(), moved)

    assert change == %{
             table: "schedule.fields_at",
             input: %{
               "family" => "attempt",
               "viewer_tier" => "pulse",
               "field" => "terminal_commit"
             },
             old: false,
             new: true,
             class: :widens,
             says: "strangers and anonymous readers (`pulse`) now see `attempt.terminal_commit`"
           }

    assert Decisions.widened([change]) == [change]
    assert Decisions.widens?([change])

    {:ok, markdown} = Decisions.diff(live(), moved, format: :markdown)

    assert markdown =~
             "#### Widens: someone gains (1)\n\n- strangers and anonymous readers (`pulse`) now see `attempt.terminal_commit` (`schedule.fields_at`)"

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
      {edited(&Map.put(&1, "format", 3)), :unknown_format, "of format 3,"},
      {edited(&Map.delete(&1, "format")), :unknown_format, "of format none"},
      {live <> String.duplicate(" ", 4 * 1024 * 1024), :too_large,
       "over the limit of 4194304 bytes"}
    ]

    for {bad, kind, why} <- cases do
      assert {:error, {^kind, :old, message}} = Decisions.diff(bad, live)
      assert message =~ why
      assert {:error, {^kind, :new, message}} = Decisions.diff(live, bad)
      assert message =~ "the new document"
    end

    # Within every limit of a document, more changes than a diff may hold.
    words = for n <- 0..24_576, do: "w#{n}"

    grown =
      answers(fn
        "vocabularies", %{"vocabulary" => "kind"}, _words -> words
        _table, _input, answer -> answer
      end)

    assert {:error, {:too_large, nil, "the diff is over the limit of 24576 changes" <> _}} =
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

    # Every family's every field admitted at every viewer tier: one widening
    # per (family, field, tier) that did not admit it.
    rows = Jason.decode!(live)["rows"]

    all = fn family ->
      for ["schedule.fields", %{"family" => ^family, "field" => f}, _] <- rows, do: f
    end

    everything =
      answers(fn
        "schedule.fields_at", %{"family" => family}, _fields -> Enum.sort(all.(family))
        _table, _input, answer -> answer
      end)

    gained =
      for ["schedule.fields_at", %{"family" => family}, fields] <- rows,
          field <- all.(family),
          field not in fields,
          do: field

    assert {:ok, changes} = Decisions.diff(live, everything)
    assert length(changes) == length(gained) and gained != []
    assert Enum.all?(changes, &(&1.class == :widens and &1.table == "schedule.fields_at"))
  end

  test "two documents at the limits are read and compared whole, every answer a change" do
    # As many rows of long words as 4 MiB holds: the most one diff reads
    # and makes (`make bench-diff` times it, and a short dirty NIF beside it).
    word = String.duplicate("w", 100)

    rows = fn tier ->
      for n <- 1..16_000,
          do: ["ladder.effective", %{"subject" => "#{word}#{n}", "viewer" => word}, tier]
    end

    [low, high] =
      for tier <- ~w(dark glass), do: Jason.encode!(%{"format" => 2, "rows" => rows.(tier)})

    assert byte_size(high) < 4 * 1024 * 1024
    assert {:ok, changes} = Decisions.diff(low, high)
    # Neither document ranks its tiers, so none of it is classed a gain.
    assert length(changes) == 16_000 and Enum.all?(changes, &(&1.class == :changes))
  end

  describe "mix openagents_policy.diff" do
    # Files under the system's temporary directory (ExUnit's :tmp_dir would
    # put them in the checkout).
    setup do
      dir = Path.join(System.tmp_dir!(), "decisions_test-#{System.unique_integer([:positive])}")
      File.mkdir_p!(dir)
      Mix.shell(Mix.Shell.Process)

      on_exit(fn ->
        Mix.shell(Mix.Shell.IO)
        File.rm_rf!(dir)
      end)

      old = Path.join(dir, "old.json")
      File.write!(old, live())
      %{old: old, dir: dir}
    end

    defp run_task(args) do
      Mix.Tasks.OpenagentsPolicy.Diff.run(args)
      receive do: ({:mix_shell, :info, [out]} -> out), after: (0 -> flunk("nothing printed"))
    end

    test "identical documents: no decision changes, in both formats", %{old: old} do
      assert run_task([old, old]) == "### Decision changes\n\nno decision changes"
      assert run_task([old, old, "--format", "json"]) == ~s({"changes":[]})
    end

    test "a change, widening first", %{old: old, dir: dir} do
      new = Path.join(dir, "new.json")

      # Of the live document, whatever its rules: the first field at
      # `ledger` moved up to `glass`, the last moved down to `pulse`.
      ledger =
        for ["schedule.fields", input, %{"tier" => "ledger"}] <- Jason.decode!(live())["rows"],
            do: input

      {up, down} = {List.first(ledger), List.last(ledger)}
      assert up != down

      File.write!(
        new,
        answers(fn
          "schedule.fields", ^down, answer -> %{answer | "tier" => "pulse"}
          "schedule.fields", ^up, answer -> %{answer | "tier" => "glass"}
          _table, _input, answer -> answer
        end)
      )

      out = run_task([old, new])
      assert out =~ "Answers changed: 2 (widening 1, narrowing 1, neither 0)."
      {widens, _} = :binary.match(out, "#### Widens")
      {narrows, _} = :binary.match(out, "#### Narrows")
      assert widens < narrows

      assert %{"changes" => [%{"class" => "narrows"}, %{"class" => "widens"}]} =
               Jason.decode!(run_task([old, new, "--format", "json"]))
    end

    test "a file that is not a decision document fails the task, naming it", %{old: old, dir: dir} do
      bad = Path.join(dir, "bad.json")
      File.write!(bad, "[]")

      assert_raise Mix.Error, ~r/bad\.json: the new document is not a decision document/, fn ->
        run_task([old, bad])
      end

      assert_raise Mix.Error, ~r/missing\.json: no such file/, fn ->
        run_task([Path.join(dir, "missing.json"), old])
      end

      assert_raise Mix.Error, ~r/--format must be markdown or json/, fn ->
        run_task([old, old, "--format", "yaml"])
      end

      assert_raise Mix.Error, ~r/usage/, fn -> run_task([old]) end
    end
  end
end
