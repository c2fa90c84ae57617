defmodule OpenAgents.Delegations.TargetTest do
  use ExUnit.Case, async: true
  use ExUnitProperties

  alias OpenAgents.Accounts.User
  alias OpenAgents.Delegations.Target
  alias OpenAgents.Machines.Machine
  alias OpenAgents.Transparency.ArtifactLink
  alias OpenAgentsPolicy.Native
  alias OpenAgentsPolicy.SeedRules
  alias OpenAgentsPolicy.Test.{Generators, Upstream}

  doctest OpenAgents.Delegations.Target

  # ── The host's substrate vocabularies (upstream.md), in declaration order ──
  #
  # Inputs are derived from these, never listed per test, so a state the host
  # adds fails the suite the day it lands instead of reading `failed` on five
  # surfaces.
  @box_states Upstream.box_states()
  @fanout_queued Upstream.fanout_queued()
  @run_states Upstream.run_states()
  @run_terminal_states Upstream.run_terminal_states()
  @job_statuses Upstream.job_statuses()
  @job_terminal_statuses Upstream.job_terminal_statuses()
  @job_cancelling Upstream.job_cancelling_status()
  @machine_statuses Upstream.machine_statuses()
  @catalog Upstream.capacity_catalog()

  # ── The seed's vocabularies and rules: the tests' oracle (test/support) ──
  @lifecycles SeedRules.lifecycles()
  @delegation_lifecycles SeedRules.delegation_lifecycles()
  @kinds SeedRules.kinds()
  # The seam document's keys, in the order the Rust core serializes them.
  @seam_keys ~w(custody runtime_class lifecycle capabilities unavailable_reason)
  @delegation_seam_keys ~w(lifecycle capabilities)

  # Terms that are not binaries, for the guards.
  @non_binaries [nil, :running, :box, true, 1, 1.5, ~c"running", ["running"], {"running"}, %{}]
  @non_booleans [nil, "true", 1, 0, :yes, "false", [], %{}]

  defp all_targets do
    for kind <- @kinds,
        lifecycle <- @lifecycles,
        authorized? <- [true, false],
        do: {kind, lifecycle, authorized?}
  end

  describe "vocabularies" do
    test "the target lifecycle is the seven states of openagents.cloud_computer.v1, in order" do
      assert Target.lifecycles() == @lifecycles
    end

    test "the delegation lifecycle is its own six words: a delegation ends, a target persists" do
      assert Target.delegation_lifecycles() == @delegation_lifecycles
    end

    test "custody and kind vocabularies are the seed's" do
      assert Target.custodies() == SeedRules.custodies()
      assert Target.kinds() == @kinds
    end

    test "every data location of the capacity catalog is a custody word" do
      for {class, {_isolation, _egress, location}} <- @catalog do
        assert location in Target.custodies(),
               "catalog class #{class} keeps data at #{location}, which is no custody word"
      end
    end
  end

  describe "custody/1 and runtime_class/1" do
    test "custody is derived from the kind alone" do
      for kind <- @kinds, do: assert(Target.custody(kind) == SeedRules.custody(kind))
    end

    test "a Computer is `connected`; a Box claims no runtime class until evidence exists" do
      assert Target.runtime_class("computer") == "connected"
      assert Target.runtime_class("box") == nil
    end

    test "a Computer's class is one the capacity catalog admits, and it keeps data where its custody says" do
      class = Target.runtime_class("computer")
      assert {_isolation, _egress, location} = Map.fetch!(@catalog, class)
      assert location == Target.custody("computer")
    end
  end

  describe "box_lifecycle/1" do
    test "projects every state exactly as the seed's table does" do
      for state <- [@fanout_queued | @box_states] do
        assert Target.box_lifecycle(state) == SeedRules.box_lifecycle(state),
               "Box state #{inspect(state)}"
      end
    end

    test "every Box state maps into the target lifecycle vocabulary" do
      for state <- [@fanout_queued | @box_states] do
        assert Target.box_lifecycle(state) in @lifecycles, "Box state #{inspect(state)}"
      end
    end

    test "the fan-out item not yet admitted is the only producer of queued" do
      assert Target.box_lifecycle(@fanout_queued) == "queued"
      refute Enum.any?(@box_states, &(Target.box_lifecycle(&1) == "queued"))
    end

    test "a word the Box vocabulary does not know reads failed, even one from another substrate" do
      foreign =
        not_in(@run_states ++ @job_statuses ++ @lifecycles, [@fanout_queued | @box_states])

      for word <- foreign ++ ["", "ERROR", "Ready", " idle", "idle ", "running\0", "rêady"] do
        assert Target.box_lifecycle(word) == "failed", "#{inspect(word)} is no Box state"
      end
    end

    test "an empty or non-UTF-8 binary is accepted and reads failed" do
      for word <- ["", <<0xFF>>, <<0xC3, 0x28>>, <<"idle", 0xFF>>, <<0xFF, "idle">>] do
        assert Target.box_lifecycle(word) == "failed"
      end
    end
  end

  describe "run_lifecycle/1" do
    test "projects every run state exactly as the seed's table does" do
      for state <- @run_states do
        assert Target.run_lifecycle(state) == SeedRules.run_lifecycle(state),
               "run state #{inspect(state)}"
      end
    end

    test "every run state maps into the delegation lifecycle vocabulary" do
      for state <- @run_states, do: assert(Target.run_lifecycle(state) in @delegation_lifecycles)
    end

    test "a run can still be cancelled exactly when its state is not terminal" do
      for state <- @run_states do
        cancellable? =
          Target.delegation_seam(Target.run_lifecycle(state))["capabilities"] == ["cancel"]

        assert cancellable? == state not in @run_terminal_states,
               "run state #{inspect(state)} (terminal: #{state in @run_terminal_states})"
      end
    end

    test "an unknown, empty or non-UTF-8 run state reads failed" do
      foreign = not_in(@box_states ++ @job_statuses ++ @delegation_lifecycles, @run_states)

      for word <- foreign ++ ["", "RUNNING", "timed-out", <<0xFF>>, <<"lost", 0>>] do
        assert Target.run_lifecycle(word) == "failed", "#{inspect(word)} is no run state"
      end
    end
  end

  describe "job_lifecycle/1" do
    test "projects every job status exactly as the seed's table does" do
      for status <- @job_statuses do
        assert Target.job_lifecycle(status) == SeedRules.job_lifecycle(status),
               "job status #{inspect(status)}"
      end
    end

    test "every job status maps into the delegation lifecycle vocabulary" do
      for status <- @job_statuses,
          do: assert(Target.job_lifecycle(status) in @delegation_lifecycles)
    end

    test "a job can still be cancelled exactly when its status is not terminal" do
      for status <- @job_statuses do
        cancellable? =
          Target.delegation_seam(Target.job_lifecycle(status))["capabilities"] == ["cancel"]

        assert cancellable? == status not in @job_terminal_statuses,
               "job status #{inspect(status)} (terminal: #{status in @job_terminal_statuses})"
      end
    end

    test "a job whose cancel is in flight (`stopping`, not a status) reads failed" do
      refute @job_cancelling in @job_statuses
      assert Target.job_lifecycle(@job_cancelling) == "failed"
    end

    test "an unknown, empty or non-UTF-8 job status reads failed" do
      foreign = not_in(@box_states ++ @run_states ++ @delegation_lifecycles, @job_statuses)

      for word <- foreign ++ ["", "Queued", "budget-exhausted", <<0xFF>>] do
        assert Target.job_lifecycle(word) == "failed", "#{inspect(word)} is no job status"
      end
    end
  end

  describe "computer_lifecycle/2" do
    @revoked_at ~U[2026-08-25 12:00:00Z]

    # {status, revoked_at, online?} => lifecycle, the seed's cond row by row.
    @computer_table [
      {"active", nil, true, "active"},
      {"active", nil, false, "cold"},
      {"active", @revoked_at, true, "destroyed"},
      {"active", @revoked_at, false, "destroyed"},
      {"revoked", nil, true, "destroyed"},
      {"revoked", nil, false, "destroyed"},
      {"revoked", @revoked_at, true, "destroyed"},
      {"revoked", @revoked_at, false, "destroyed"},
      {nil, nil, true, "cold"},
      {nil, nil, false, "cold"},
      {"paused", nil, true, "cold"},
      {"", nil, true, "cold"},
      {"ACTIVE", nil, true, "cold"},
      {"REVOKED", nil, true, "cold"},
      {:active, nil, true, "cold"},
      {:revoked, nil, true, "cold"},
      {~c"active", nil, true, "cold"},
      {nil, @revoked_at, true, "destroyed"}
    ]

    test "follows the seed's truth table" do
      for {status, revoked_at, online?, expected} <- @computer_table do
        machine = %Machine{status: status, revoked_at: revoked_at}

        assert Target.computer_lifecycle(machine, online?) == expected,
               "status #{inspect(status)}, revoked_at #{inspect(revoked_at)}, online? #{online?}"
      end
    end

    test "every machine status the database admits, crossed with revocation and reachability" do
      for status <- @machine_statuses,
          revoked_at <- [nil, @revoked_at],
          online? <- [true, false] do
        lifecycle =
          Target.computer_lifecycle(%Machine{status: status, revoked_at: revoked_at}, online?)

        assert lifecycle in @lifecycles

        assert lifecycle ==
                 SeedRules.computer_lifecycle(
                   %Machine{status: status, revoked_at: revoked_at},
                   online?
                 )
      end
    end

    test "any non-nil revoked_at reads destroyed, whatever the status and reachability" do
      stamps = [@revoked_at, ~N[2026-08-25 12:00:00], "2026-08-25", 0, false, :revoked, %{}, []]

      for revoked_at <- stamps,
          status <- @machine_statuses ++ [nil, "paused"],
          online? <- [true, false] do
        machine = %Machine{status: status, revoked_at: revoked_at}

        assert Target.computer_lifecycle(machine, online?) == "destroyed",
               "revoked_at #{inspect(revoked_at)} with status #{inspect(status)}"
      end
    end

    test "only an active, reachable, unrevoked machine is active" do
      for status <- @machine_statuses ++ [nil, "paused"],
          revoked_at <- [nil, @revoked_at],
          online? <- [true, false] do
        active? =
          Target.computer_lifecycle(%Machine{status: status, revoked_at: revoked_at}, online?) ==
            "active"

        assert active? == (status == "active" and is_nil(revoked_at) and online?)
      end
    end

    test "reads only status and revoked_at" do
      busy = %Machine{
        id: "m-1",
        user_id: "u-1",
        name: "revoked",
        tier: "revoked",
        platform: "linux",
        agent_version: "9.9.9",
        roots: ["/home/me"],
        token_digest: "digest",
        token_expires_at: @revoked_at,
        last_seen_at: @revoked_at,
        last_probe: %{"ok" => false},
        inserted_at: @revoked_at,
        updated_at: @revoked_at,
        scoped_forge_credentials_enabled: true
      }

      for {status, revoked_at, online?, expected} <- @computer_table do
        machine = %{busy | status: status, revoked_at: revoked_at}
        assert Target.computer_lifecycle(machine, online?) == expected
      end
    end

    test "a revoked computer reads destroyed while a reclaimed Box reads destroyed too: kind tells them apart" do
      assert Target.computer_lifecycle(%Machine{status: "revoked"}, true) == "destroyed"
      assert Target.box_lifecycle("archived") == "destroyed"
      refute Target.custody("computer") == Target.custody("box")
    end
  end

  describe "seam/3" do
    test "every kind, lifecycle and authority gives the seed's document" do
      for {kind, lifecycle, authorized?} <- all_targets() do
        assert Target.seam(kind, lifecycle, authorized?) ==
                 SeedRules.seam(kind, lifecycle, authorized?),
               "seam(#{inspect(kind)}, #{inspect(lifecycle)}, #{authorized?})"
      end
    end

    test "the seam document has the same five keys everywhere" do
      for {kind, lifecycle, authorized?} <- all_targets() do
        assert Enum.sort(Map.keys(Target.seam(kind, lifecycle, authorized?))) ==
                 Enum.sort(@seam_keys)
      end
    end

    test "custody never varies with lifecycle or authority" do
      for kind <- @kinds do
        custodies =
          for lifecycle <- @lifecycles,
              authorized? <- [true, false],
              uniq: true,
              do: Target.seam(kind, lifecycle, authorized?)["custody"]

        assert custodies == [Target.custody(kind)],
               "custody of #{kind} varied: #{inspect(custodies)}"
      end
    end

    test "runtime class never varies with lifecycle or authority" do
      for {kind, lifecycle, authorized?} <- all_targets() do
        assert Target.seam(kind, lifecycle, authorized?)["runtime_class"] ==
                 Target.runtime_class(kind)
      end
    end

    test "an unauthorized caller is offered nothing for any kind and lifecycle" do
      for kind <- @kinds, lifecycle <- @lifecycles do
        assert Target.seam(kind, lifecycle, false)["capabilities"] == [],
               "an unauthorized caller was offered something on a #{lifecycle} #{kind}"
      end
    end

    test "only an active target offers start, and only to an authorized caller" do
      for {kind, lifecycle, authorized?} <- all_targets() do
        capabilities = Target.seam(kind, lifecycle, authorized?)["capabilities"]
        assert capabilities == if(lifecycle == "active" and authorized?, do: ["start"], else: [])
      end
    end

    test "unavailable_reason is the lifecycle, not_authorized when only reach is missing, nil when startable" do
      for {kind, lifecycle, authorized?} <- all_targets() do
        reason = Target.seam(kind, lifecycle, authorized?)["unavailable_reason"]

        cond do
          lifecycle != "active" -> assert reason == lifecycle
          authorized? -> assert reason == nil
          true -> assert reason == "not_authorized"
        end
      end
    end

    test "unavailable_reason introduces no third vocabulary, and is nil exactly when start is offered" do
      for {kind, lifecycle, authorized?} <- all_targets() do
        seam = Target.seam(kind, lifecycle, authorized?)
        assert seam["unavailable_reason"] in [nil, "not_authorized" | @lifecycles]
        assert is_nil(seam["unavailable_reason"]) == (seam["capabilities"] == ["start"])
      end
    end

    test "the seam's lifecycle is the one given" do
      for {kind, lifecycle, authorized?} <- all_targets(),
          do: assert(Target.seam(kind, lifecycle, authorized?)["lifecycle"] == lifecycle)
    end
  end

  describe "delegation_seam/1" do
    test "every delegation lifecycle gives the seed's document" do
      for lifecycle <- @delegation_lifecycles do
        assert Target.delegation_seam(lifecycle) == SeedRules.delegation_seam(lifecycle)
      end
    end

    test "an ended delegation offers nothing" do
      for lifecycle <- Enum.reject(@delegation_lifecycles, &SeedRules.cancellable?/1),
          do: assert(Target.delegation_seam(lifecycle)["capabilities"] == [])
    end
  end

  describe "the seam's JSON, as the Rust core's serde_json writes it" do
    test "decodes to the Elixir seam for every kind, lifecycle and authority, keys in the core's order" do
      for {kind, lifecycle, authorized?} <- all_targets() do
        json = Native.seam_json(kind, lifecycle, authorized?)
        seam = Target.seam(kind, lifecycle, authorized?)

        assert Jason.decode!(json) == seam,
               "seam_json(#{kind}, #{lifecycle}, #{authorized?}): #{json}"

        assert keys_in_document_order(json) == @seam_keys
        assert json == compact_json(@seam_keys, seam)
      end
    end

    test "delegation_seam_json decodes to the Elixir delegation seam for all six lifecycles" do
      for lifecycle <- @delegation_lifecycles do
        json = Native.delegation_seam_json(lifecycle)
        seam = Target.delegation_seam(lifecycle)

        assert Jason.decode!(json) == seam, "delegation_seam_json(#{lifecycle}): #{json}"
        assert keys_in_document_order(json) == @delegation_seam_keys
        assert json == compact_json(@delegation_seam_keys, seam)
      end
    end

    test "the JSON entries refuse what the map entries refuse, naming the word" do
      assert {:error, why} = Native.seam_json("cloud_computer", "active", true)
      assert why =~ "cloud_computer"
      assert {:error, why} = Native.seam_json("box", "succeeded", true)
      assert why =~ "succeeded"
      assert {:error, why} = Native.delegation_seam_json("cold")
      assert why =~ "cold"
    end
  end

  describe "bad input raises FunctionClauseError" do
    test "custody/1 and runtime_class/1 refuse unknown kinds and non-binaries" do
      for kind <- ["cloud_computer", "Box", "boxes", "", "computer ", <<0xFF>>] ++ @non_binaries do
        assert_raise FunctionClauseError, fn -> Target.custody(kind) end
        assert_raise FunctionClauseError, fn -> Target.runtime_class(kind) end
      end
    end

    test "the substrate projections refuse anything that is not a binary" do
      for term <- @non_binaries ++ [<<1::3>>] do
        assert_raise FunctionClauseError, fn -> Target.box_lifecycle(term) end
        assert_raise FunctionClauseError, fn -> Target.run_lifecycle(term) end
        assert_raise FunctionClauseError, fn -> Target.job_lifecycle(term) end
      end
    end

    test "seam/3 refuses an unknown kind, a non-target lifecycle, and a non-boolean authority" do
      for kind <- ["cloud_computer", "Box", ""] ++ @non_binaries,
          do: assert_raise(FunctionClauseError, fn -> Target.seam(kind, "active", true) end)

      # Delegation-only words and substrate words are not target lifecycles.
      not_targets = not_in(@delegation_lifecycles ++ @box_states, @lifecycles)

      for lifecycle <- not_targets ++ ["", "ACTIVE"] ++ @non_binaries,
          do: assert_raise(FunctionClauseError, fn -> Target.seam("box", lifecycle, true) end)

      for authorized? <- @non_booleans,
          do:
            assert_raise(FunctionClauseError, fn -> Target.seam("box", "active", authorized?) end)
    end

    test "delegation_seam/1 refuses target-only words, substrate words and non-binaries" do
      not_delegations =
        not_in(@lifecycles ++ @run_states ++ @job_statuses, @delegation_lifecycles)

      for lifecycle <- not_delegations ++ ["", "Active"] ++ @non_binaries,
          do: assert_raise(FunctionClauseError, fn -> Target.delegation_seam(lifecycle) end)
    end

    test "computer_lifecycle/2 refuses maps that are not a Machine, non-maps and a non-boolean online?" do
      not_machines = [
        %{status: "active", revoked_at: nil},
        %User{id: "u"},
        %ArtifactLink{},
        nil,
        "computer:abc",
        :machine,
        [status: "active"]
      ]

      for machine <- not_machines,
          do:
            assert_raise(FunctionClauseError, fn -> Target.computer_lifecycle(machine, true) end)

      for online? <- @non_booleans do
        assert_raise FunctionClauseError, fn ->
          Target.computer_lifecycle(%Machine{status: "active"}, online?)
        end
      end
    end
  end

  describe "properties over generated input (StreamData: shrunk to the smallest failure)" do
    @runs 3_000

    property "every binary maps into the vocabulary, and a word the substrate does not declare reads failed" do
      words = Enum.uniq([@fanout_queued | @box_states] ++ @run_states ++ @job_statuses)

      check all(word <- Generators.word(words), max_runs: @runs) do
        box = Target.box_lifecycle(word)
        run = Target.run_lifecycle(word)
        job = Target.job_lifecycle(word)

        assert box in @lifecycles
        assert run in @delegation_lifecycles
        assert job in @delegation_lifecycles
        assert box == SeedRules.box_lifecycle(word)
        assert run == SeedRules.run_lifecycle(word)
        assert job == SeedRules.job_lifecycle(word)
      end
    end

    property "any term is either a binary the projections read, or refused with FunctionClauseError" do
      check all(term <- Generators.term(), max_runs: @runs) do
        for project <- [&Target.box_lifecycle/1, &Target.run_lifecycle/1, &Target.job_lifecycle/1] do
          if is_binary(term),
            do: assert(project.(term) in (@lifecycles ++ @delegation_lifecycles)),
            else: assert_raise(FunctionClauseError, fn -> project.(term) end)
        end
      end
    end

    property "seam/3 answers for the vocabulary and refuses everything else with FunctionClauseError" do
      check all(
              kind <- Generators.word_or_term(@kinds),
              lifecycle <- Generators.word_or_term(@lifecycles),
              authorized? <- Generators.word_or_term([true, false]),
              max_runs: @runs
            ) do
        if kind in @kinds and lifecycle in @lifecycles and is_boolean(authorized?) do
          assert Target.seam(kind, lifecycle, authorized?) ==
                   SeedRules.seam(kind, lifecycle, authorized?)
        else
          assert_raise FunctionClauseError, fn -> Target.seam(kind, lifecycle, authorized?) end
        end
      end
    end

    property "a machine's lifecycle follows the seed's cond for any status and revoked_at" do
      check all(
              status <- one_of([Generators.word(@machine_statuses), Generators.term(1)]),
              revoked_at <- one_of([constant(nil), Generators.term(1)]),
              name <- Generators.term(1),
              online? <- boolean(),
              max_runs: @runs
            ) do
        machine = %Machine{status: status, revoked_at: revoked_at, name: name}

        assert Target.computer_lifecycle(machine, online?) ==
                 SeedRules.computer_lifecycle(
                   %Machine{status: status, revoked_at: revoked_at},
                   online?
                 )
      end
    end
  end

  # The keys of the JSON object `json`, in the order the document writes them
  # (a map would forget it).
  defp keys_in_document_order(json) do
    %Jason.OrderedObject{values: pairs} = Jason.decode!(json, objects: :ordered_objects)
    Enum.map(pairs, &elem(&1, 0))
  end

  # `map` written as compact JSON with its keys in `keys` order, as serde_json
  # writes a struct.
  defp compact_json(keys, map),
    do: keys |> Enum.map(&{&1, map[&1]}) |> Jason.OrderedObject.new() |> Jason.encode!()

  # The words of `words` that are not in `vocabulary`, each once.
  defp not_in(words, vocabulary), do: words |> Enum.reject(&(&1 in vocabulary)) |> Enum.uniq()
end
