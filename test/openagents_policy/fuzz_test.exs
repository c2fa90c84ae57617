defmodule OpenAgentsPolicy.FuzzTest do
  # Seeded random terms into every public function of Delegations.Target,
  # Transparency.WorkDisclosure and Transparency.Ladder, each outcome held to
  # the function's invariants (test/support/fuzz.ex has the generator and
  # the invariants; scripts/fuzz.exs runs the same fuzzer for longer, and
  # `make parity` holds the same generator's calls to the seeds themselves).
  #
  # Held: the VM survives; every call returns a value of its function's
  # shape in the library's vocabularies (a seam offering nothing without
  # reach, custody from the kind alone, fields that are the schedule's, a
  # projection holding exactly the admitted fields), or raises one of the
  # classes the seeds raise (FunctionClauseError where a guard rejects,
  # BadMapError where a map is read from a non-map, KeyError where a struct
  # lacks the key, ArgumentError for what the wrapper refuses); never an
  # ErlangError, never an exception raised by the NIF itself, never a host
  # effect but link_for_attempt's one insert.
  use ExUnit.Case, async: true
  use ExUnitProperties

  alias Ecto.Association.NotLoaded
  alias OpenAgents.Accounts.User
  alias OpenAgents.Delegations.Target
  alias OpenAgents.Machines.Machine
  alias OpenAgents.Transparency.{ArtifactLink, Ladder, WorkDisclosure}
  alias OpenAgentsPolicy.Fuzz
  alias OpenAgentsPolicy.Test.{Generators, Upstream}

  @seed 20_260_825
  @calls 4_000

  test "every public function of the three modules is fuzzed, and each has an invariant" do
    functions = Fuzz.functions()

    unknown =
      for {m, f, a} <- functions,
          not Fuzz.invariant?(m, f, a),
          do: "#{inspect(m)}.#{f}/#{a}"

    assert length(functions) >= 30
    # A function added to a module is still fuzzed (with arbitrary terms,
    # held only to the exception classes), but should get an invariant.
    assert unknown == [], "no invariant for: #{Enum.join(unknown, ", ")}"
  end

  test "#{@calls} seeded calls: each function's invariant or a refusal, never a NIF error" do
    report = Fuzz.run(@calls, @seed)

    assert report.calls == @calls
    # every function was called, and both outcomes occurred
    assert map_size(report.by_function) == length(Fuzz.functions())
    assert report.classes[:returned] > div(@calls, 3)
    assert report.classes[FunctionClauseError] > 0

    assert report.failure_count == 0,
           "#{report.failure_count} of #{report.calls} calls broke an invariant " <>
             "(seed #{@seed}; first #{length(report.failures)}):\n\n" <>
             Enum.join(report.failures, "\n\n")
  end

  # The same invariants over StreamData's input, so a failure is reported at
  # the smallest call that still fails: the function shrinks towards the
  # first one, each argument towards the simplest term that still fails.
  property "generated calls of every public function: its invariant or a refusal" do
    check all(
            {module, fun, arity} <- member_of(Fuzz.functions()),
            args <- fixed_list(for role <- roles(module, fun, arity), do: argument(role)),
            max_runs: 2_000
          ) do
      assert {_class, nil} = Fuzz.check({module, fun, args})
    end
  end

  # What each argument of each function is, as the host passes it; a
  # function added later gets arbitrary terms.
  @roles %{
    {Target, :custody, 1} => [:kind],
    {Target, :runtime_class, 1} => [:kind],
    {Target, :box_lifecycle, 1} => [:state],
    {Target, :run_lifecycle, 1} => [:state],
    {Target, :job_lifecycle, 1} => [:state],
    {Target, :computer_lifecycle, 2} => [:machine, :boolean],
    {Target, :seam, 3} => [:kind, :lifecycle, :boolean],
    {Target, :delegation_seam, 1} => [:lifecycle],
    {WorkDisclosure, :never, 1} => [:family],
    {WorkDisclosure, :source_columns, 1} => [:family],
    {WorkDisclosure, :tier_for, 2} => [:family, :field],
    {WorkDisclosure, :fields_at, 2} => [:family, :viewer],
    {WorkDisclosure, :viewer, 2} => [:repository, :user],
    {WorkDisclosure, :effective_tier, 2} => [:record, :viewer],
    {WorkDisclosure, :link_for_attempt, 2} => [:repository, :principal],
    {WorkDisclosure, :link_for_attempt, 3} => [:repository, :principal, :authority],
    {WorkDisclosure, :project, 3} => [:family, :source, :viewer],
    {WorkDisclosure, :classify, 2} => [:family, :columns],
    {WorkDisclosure, :explain, 2} => [:family, :field],
    {WorkDisclosure, :visibility, 1} => [:viewer],
    {WorkDisclosure, :withheld, 2} => [:family, :viewer],
    {Ladder, :lower, 2} => [:tier, :tier],
    {Ladder, :name, 1} => [:tier],
    {Ladder, :rank, 1} => [:tier],
    {Ladder, :viewer_tier, 1} => [:viewer],
    {Ladder, :clamp, 2} => [:tier, :viewer],
    {Ladder, :effective_tier, 2} => [:subject, :viewer],
    {Ladder, :allows?, 3} => [:subject, :access, :viewer]
  }

  defp roles(module, fun, arity),
    do: Map.get_lazy(@roles, {module, fun, arity}, fn -> List.duplicate(:any, arity) end)

  # An argument in `role`: shaped as the host passes it five times in six,
  # any term otherwise.
  defp argument(:any), do: Generators.term(2)
  defp argument(role), do: frequency([{5, shaped(role)}, {1, Generators.term(2)}])

  @families Map.keys(Upstream.tables())
  @columns Enum.flat_map(@families, &Upstream.columns/1) ++ [:bogus, :__meta__]
  @fields Enum.flat_map(@families, &Map.keys(WorkDisclosure.schedule()[&1]))
  @substrate_words Upstream.box_states() ++ Upstream.run_states() ++ Upstream.job_statuses()
  @lifecycles Target.lifecycles() ++ Target.delegation_lifecycles()
  @accounts ["acct-1", "acct-2", nil]

  defp shaped(:kind), do: Generators.word(Target.kinds())
  defp shaped(:state), do: Generators.word(@substrate_words ++ @lifecycles)
  defp shaped(:lifecycle), do: Generators.word(@lifecycles)
  defp shaped(:boolean), do: boolean()

  defp shaped(:family),
    do: frequency([{6, member_of(@families)}, {1, member_of(["attempt", :Attempt, nil])}])

  defp shaped(:field), do: member_of(Enum.uniq(@fields ++ @columns))
  defp shaped(:columns), do: list_of(member_of(@columns), max_length: 12)
  defp shaped(:access), do: member_of([:metadata, :content, :full, :bogus, "metadata", nil])
  defp shaped(:authority), do: member_of([%{}, %{"roots" => ["/home/x"], "machine_name" => "m"}])
  defp shaped(:repository), do: fixed_map(%{id: member_of(["repo-1", "repo-2", 1, nil])})
  defp shaped(:subject), do: one_of([shaped(:link), shaped(:tier)])

  defp shaped(:tier) do
    one_of([
      member_of(Ladder.tiers()),
      Generators.word(Enum.map(Ladder.tiers(), &Atom.to_string/1))
    ])
  end

  defp shaped(:machine) do
    fields = %{status: Generators.word(Upstream.machine_statuses()), revoked_at: revoked_at()}
    map(fixed_map(fields), &struct(Machine, &1))
  end

  defp shaped(:user) do
    user = %{
      id: member_of(@accounts),
      admin: boolean(),
      member_of: list_of(member_of(["repo-1", 1]))
    }

    one_of([constant(nil), map(fixed_map(user), &struct(User, &1))])
  end

  defp shaped(:link) do
    fields = %{account_id: member_of(@accounts), tier: shaped(:tier), revoked_at: revoked_at()}
    map(fixed_map(fields), &struct(ArtifactLink, &1))
  end

  defp shaped(:record) do
    link = one_of([shaped(:link), constant(nil), constant(%NotLoaded{__field__: :artifact_link})])
    optional_map(%{transparency_tier: shaped(:subject), artifact_link: link})
  end

  defp shaped(:viewer) do
    one_of([
      shaped(:tier),
      fixed_map(%{account_id: member_of(@accounts), tier: shaped(:tier)}),
      fixed_map(%{
        account_id: member_of(@accounts),
        tier: constant(:glass),
        admin: constant(true)
      }),
      fixed_map(%{admin: member_of([true, "true", false, nil])}),
      fixed_map(%{account_id: member_of(@accounts)}),
      shaped(:user)
    ])
  end

  defp shaped(:principal) do
    fixed_map(%{
      "type" => member_of(["user", "agent", "User", "", :user]),
      "id" => member_of(["acct-1", "acct-2", 1, nil, <<1::3>>, <<0xFF>>])
    })
  end

  defp shaped(:source) do
    key = member_of(Enum.uniq(@fields ++ @columns))
    map(list_of({key, Generators.term(1)}, max_length: 40), &Map.new/1)
  end

  defp revoked_at, do: member_of([nil, ~U[2026-08-25 12:00:00Z], "yesterday"])

  # The inputs that matter most, named, so a regression says which one: each
  # held to its invariant, and to the outcome the seeds' constructs give it.
  describe "known shapes" do
    defp check!(module, fun, args) do
      assert {class, nil} = Fuzz.check({module, fun, args})
      class
    end

    test "a Machine whose status is \"revoked\" is read before revoked_at, which it need not have" do
      machine = %{__struct__: OpenAgents.Machines.Machine, status: "revoked"}
      assert check!(Target, :computer_lifecycle, [machine, true]) == :returned
    end

    test "a Machine missing status or revoked_at raises KeyError" do
      machine = %{__struct__: OpenAgents.Machines.Machine}
      assert check!(Target, :computer_lifecycle, [machine, true]) == KeyError
      active = %{__struct__: OpenAgents.Machines.Machine, status: "active"}
      assert check!(Target, :computer_lifecycle, [active, false]) == KeyError
    end

    test "a non-map source raises BadMapError only when some field is admitted" do
      assert check!(WorkDisclosure, :project, [:trace, [:id], :pulse]) == BadMapError
      assert check!(WorkDisclosure, :project, [:trace, [:id], :dark]) == :returned
      assert check!(WorkDisclosure, :effective_tier, [[artifact_link: nil], nil]) == BadMapError
    end

    test "bitstrings and sub-binaries are not words" do
      assert WorkDisclosure.fields_at(:trace, <<"glass", 1::1>>) ==
               WorkDisclosure.fields_at(:trace, nil)

      check!(WorkDisclosure, :fields_at, [:trace, <<"glass", 1::1>>])
      sub = binary_part("xxidlexx", 2, 4)
      assert Target.box_lifecycle(sub) == Target.box_lifecycle("idle")

      assert WorkDisclosure.link_for_attempt(%{id: 1}, %{"type" => "user", "id" => <<1::3>>}) ==
               :none
    end

    test "classify/2 refuses columns that are not a proper list of atoms" do
      assert check!(WorkDisclosure, :classify, [:trace, ["id"]]) in [
               ArgumentError,
               FunctionClauseError
             ]

      assert check!(WorkDisclosure, :classify, [:trace, [:id | :tail]]) in [
               ArgumentError,
               FunctionClauseError
             ]
    end

    test "classify/2 on atoms outside Latin-1" do
      assert check!(WorkDisclosure, :classify, [:trace, [:id, :日本]]) == :returned
      assert WorkDisclosure.classify(:trace, [:id, :日本]).unclassified == [:日本]
    end
  end
end
