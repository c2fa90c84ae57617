Code.require_file("../../scripts/fuzz_gen.exs", __DIR__)

defmodule OpenAgentsPolicy.FuzzTest do
  # Seeded random terms into every public function of Delegations.Target,
  # Transparency.WorkDisclosure and Transparency.Ladder, each outcome held to
  # the seeds' behaviour (scripts/fuzz_gen.exs has the generator and the
  # oracle; scripts/fuzz.exs runs the same fuzzer for longer).
  #
  # The oracle: the VM survives; every call returns exactly the seed's value
  # or raises exactly the seed's exception class (FunctionClauseError where a
  # seed guard rejects, BadMapError where the seed calls Map.get on a
  # non-map, KeyError where it dot-accesses a struct missing the key); never
  # an ErlangError, never an exception raised by the NIF itself.
  use ExUnit.Case, async: true

  alias OpenAgentsPolicy.Fuzz
  alias OpenAgentsPolicy.Fuzz.Model

  @seed 20_260_825
  @calls 4_000

  test "every public function of the three modules is fuzzed, and the oracle knows each" do
    functions = Fuzz.functions()
    unknown = for {m, f, a} <- functions, not Model.knows?(m, f, a), do: "#{inspect(m)}.#{f}/#{a}"

    assert length(functions) >= 30
    # A function added to a module is still fuzzed (with arbitrary terms and
    # the generic oracle), but should get a model of its own.
    assert unknown == [], "no oracle for: #{Enum.join(unknown, ", ")}"
  end

  test "#{@calls} seeded calls: the seed's value or the seed's exception class, never a NIF error" do
    report = Fuzz.run(@calls, @seed)

    assert report.calls == @calls
    # every function was called, and both outcomes occurred
    assert map_size(report.by_function) == length(Fuzz.functions())
    assert report.classes[:returned] > div(@calls, 3)
    assert report.classes[FunctionClauseError] > 0

    assert report.failure_count == 0,
           "#{report.failure_count} of #{report.calls} calls disagreed with the seed " <>
             "(seed #{@seed}; first #{length(report.failures)}):\n\n" <>
             Enum.join(report.failures, "\n\n")
  end

  # The inputs that matter most, named, so a regression says which one.
  describe "known shapes" do
    alias OpenAgents.Delegations.Target
    alias OpenAgents.Transparency.WorkDisclosure

    defp check!(module, fun, args) do
      assert {_class, nil} = Fuzz.check({module, fun, args})
    end

    test "a Machine whose status is \"revoked\" is destroyed before revoked_at is read" do
      machine = %{__struct__: OpenAgents.Machines.Machine, status: "revoked"}
      check!(Target, :computer_lifecycle, [machine, true])
    end

    test "a Machine missing status or revoked_at raises KeyError" do
      check!(Target, :computer_lifecycle, [%{__struct__: OpenAgents.Machines.Machine}, true])

      check!(Target, :computer_lifecycle, [
        %{__struct__: OpenAgents.Machines.Machine, status: "active"},
        false
      ])
    end

    test "a non-map source raises BadMapError only when some field is admitted" do
      check!(WorkDisclosure, :project, [:trace, [:id], :pulse])
      check!(WorkDisclosure, :project, [:trace, [:id], :dark])
      check!(WorkDisclosure, :effective_tier, [[artifact_link: nil], nil])
    end

    test "bitstrings and sub-binaries are not words" do
      check!(WorkDisclosure, :fields_at, [:trace, <<"glass", 1::1>>])
      check!(Target, :box_lifecycle, [binary_part("xxidlexx", 2, 4)])

      check!(WorkDisclosure, :link_for_attempt, [
        %{id: 1},
        %{"type" => "user", "id" => <<1::3>>}
      ])
    end

    test "classify/2 on columns that are not a proper list of atoms" do
      check!(WorkDisclosure, :classify, [:trace, ["id"]])
      check!(WorkDisclosure, :classify, [:trace, [:id | :tail]])
    end

    test "classify/2 on atoms outside Latin-1" do
      check!(WorkDisclosure, :classify, [:trace, [:id, :日本]])
    end
  end
end
