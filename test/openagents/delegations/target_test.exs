defmodule OpenAgents.Delegations.TargetTest do
  # The app's own TargetTest, in its shape: inputs derived from the host's
  # substrate vocabularies (every Box state maps into the vocabulary, only
  # `error` reads failed, `idle ready running` read active, every run state
  # and job status maps into the delegation vocabulary, custody never varies
  # with lifecycle or authority, an unauthorized caller is offered nothing for
  # any kind and lifecycle, the seam document has the same five keys
  # everywhere). Then what this wrapper adds to the core: the JSON entries,
  # the exceptions bad input raises, and over generated input that every
  # compiled clause is the NIF's answer. The rules' invariants over every
  # input are the core's tests (native/openagents_policy/tests/target.rs);
  # parity with the seed is `make parity`.
  use ExUnit.Case, async: true
  use ExUnitProperties

  alias OpenAgents.Accounts.User
  alias OpenAgents.Delegations.Target
  alias OpenAgents.Machines.Machine
  alias OpenAgents.Transparency.ArtifactLink
  alias OpenAgentsPolicy.Native
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
  @job_statuses Upstream.job_statuses()
  @job_cancelling Upstream.job_cancelling_status()
  @machine_statuses Upstream.machine_statuses()
  @catalog Upstream.capacity_catalog()

  # ── The library's vocabularies ──
  @lifecycles Target.lifecycles()
  @delegation_lifecycles Target.delegation_lifecycles()
  @kinds Target.kinds()
  # The seam document's keys, in the order the Rust core serializes them.
  @seam_keys ~w(custody runtime_class lifecycle capabilities unavailable_reason)

  # Terms that are not binaries, for the guards.
  @non_binaries [nil, :running, :box, true, 1, 1.5, ~c"running", ["running"], {"running"}, %{}]
  @non_booleans [nil, "true", 1, 0, :yes, "false", [], %{}]

  # Binaries no substrate declares: near misses, nothing, bytes that are not UTF-8.
  @strangers ["", "ERROR", "Ready", " idle", "idle ", "running\0", "rêady", "timed-out"] ++
               [<<0xFF>>, <<0xC3, 0x28>>, <<"idle", 0xFF>>, <<0xFF, "idle">>]

  defp all_targets do
    for kind <- @kinds,
        lifecycle <- @lifecycles,
        authorized? <- [true, false],
        do: {kind, lifecycle, authorized?}
  end

  describe "the host's vocabularies" do
    test "the core knows every word of every substrate the host declares" do
      substrates = Map.new(Native.substrates())
      assert Enum.sort(substrates["box"]) == Enum.sort([@fanout_queued | @box_states])
      assert Enum.sort(substrates["run"]) == Enum.sort(@run_states)
      assert Enum.sort(substrates["job"]) == Enum.sort(@job_statuses)
      assert Enum.sort(Native.machine_statuses()) == Enum.sort(@machine_statuses)
    end

    test "every data location of the capacity catalog is a custody word" do
      for {class, {_isolation, _egress, location}} <- @catalog do
        assert location in Target.custodies(),
               "catalog class #{class} keeps data at #{location}, which is no custody word"
      end
    end

    test "a kind's runtime class is one the capacity catalog admits, keeping data where its custody says" do
      for kind <- @kinds, class = Target.runtime_class(kind), class != nil do
        assert {_isolation, _egress, location} = Map.fetch!(@catalog, class)
        assert location == Target.custody(kind), "#{kind} is #{class}"
      end
    end
  end

  describe "box_lifecycle/1" do
    test "every Box state maps into the target lifecycle vocabulary" do
      for state <- [@fanout_queued | @box_states] do
        assert Target.box_lifecycle(state) in @lifecycles, "Box state #{inspect(state)}"
      end
    end

    test "only error reads failed" do
      assert for(
               state <- [@fanout_queued | @box_states],
               Target.box_lifecycle(state) == "failed",
               do: state
             ) == ["error"]
    end

    test "idle, ready and running read active" do
      for state <- ~w(idle ready running), do: assert(Target.box_lifecycle(state) == "active")
    end

    test "any binary is accepted, and every word no Box declares reads alike" do
      foreign =
        not_in(@run_states ++ @job_statuses ++ @lifecycles, [@fanout_queued | @box_states])

      [answer] = Enum.uniq(for word <- foreign ++ @strangers, do: Target.box_lifecycle(word))
      assert answer in @lifecycles
    end
  end

  describe "run_lifecycle/1 and job_lifecycle/1" do
    test "every run state maps into the delegation lifecycle vocabulary" do
      for state <- @run_states, do: assert(Target.run_lifecycle(state) in @delegation_lifecycles)
    end

    test "every job status maps into the delegation lifecycle vocabulary" do
      for status <- @job_statuses,
          do: assert(Target.job_lifecycle(status) in @delegation_lifecycles)
    end

    test "the job statuses that ended are the host's Work.Job.terminal_statuses/0" do
      assert Target.job_terminal_statuses() == Upstream.job_terminal_statuses()
      refute @job_cancelling in Target.job_terminal_statuses()
    end

    test "any binary is accepted, and every word a substrate does not declare reads alike" do
      run_foreign = not_in(@box_states ++ @job_statuses ++ @delegation_lifecycles, @run_states)
      [run] = Enum.uniq(for word <- run_foreign ++ @strangers, do: Target.run_lifecycle(word))
      assert run in @delegation_lifecycles

      # A job whose cancel is in flight carries `stopping`, which is no status.
      refute @job_cancelling in @job_statuses
      job_foreign = not_in(@box_states ++ @run_states ++ @delegation_lifecycles, @job_statuses)
      stopping = [@job_cancelling | job_foreign ++ @strangers]
      [job] = Enum.uniq(for word <- stopping, do: Target.job_lifecycle(word))
      assert job in @delegation_lifecycles
    end
  end

  describe "computer_lifecycle/2" do
    @revoked_at ~U[2026-08-25 12:00:00Z]
    @statuses @machine_statuses ++ [nil, "paused", "", "ACTIVE", :active, ~c"active"]

    test "every machine, crossed with revocation and reachability, maps into the vocabulary" do
      for status <- @statuses, revoked_at <- [nil, @revoked_at], online? <- [true, false] do
        machine = %Machine{status: status, revoked_at: revoked_at}
        assert Target.computer_lifecycle(machine, online?) in @lifecycles
      end
    end

    test "only an active, reachable, unrevoked machine is active" do
      stamps = [nil, @revoked_at, ~N[2026-08-25 12:00:00], "2026-08-25", 0, false, :revoked, %{}]

      for status <- @statuses, revoked_at <- stamps, online? <- [true, false] do
        active? =
          Target.computer_lifecycle(%Machine{status: status, revoked_at: revoked_at}, online?) ==
            "active"

        assert active? == (status == "active" and is_nil(revoked_at) and online?),
               "status #{inspect(status)}, revoked_at #{inspect(revoked_at)}, online? #{online?}"
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

      for status <- @statuses, revoked_at <- [nil, @revoked_at], online? <- [true, false] do
        bare = %Machine{status: status, revoked_at: revoked_at}

        assert Target.computer_lifecycle(
                 %{busy | status: status, revoked_at: revoked_at},
                 online?
               ) ==
                 Target.computer_lifecycle(bare, online?)
      end
    end
  end

  describe "seam/3" do
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

    test "an unauthorized caller is offered nothing for any kind and lifecycle" do
      for kind <- @kinds, lifecycle <- @lifecycles do
        assert Target.seam(kind, lifecycle, false)["capabilities"] == [],
               "an unauthorized caller was offered something on a #{lifecycle} #{kind}"
      end
    end
  end

  describe "the seam as the Rust core's serde writes it (the decision document)" do
    # A Rust service serializes the core's Seam and DelegationSeam with
    # serde; the document's rows are that JSON, so the Elixir map must be the
    # same object for every question the document asks.
    setup do
      rows = Jason.decode!(OpenAgentsPolicy.decisions_json())["rows"]
      %{rows: rows}
    end

    test "every seam row decodes to the Elixir seam", %{rows: rows} do
      seams =
        for ["seams.seams", %{"kind" => kind, "lifecycle" => lifecycle, "reach" => reach}, seam] <-
              rows do
          assert Target.seam(kind, lifecycle, reach == "authorized") == seam,
                 "seam(#{kind}, #{lifecycle}, #{reach})"
        end

      assert length(seams) == length(all_targets())
    end

    test "every delegation seam row decodes to the Elixir delegation seam", %{rows: rows} do
      seams =
        for ["seams.delegation_seams", %{"lifecycle" => lifecycle}, seam] <- rows do
          assert Target.delegation_seam(lifecycle) == seam, "delegation_seam(#{lifecycle})"
        end

      assert length(seams) == length(@delegation_lifecycles)
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

    property "every binary maps into the vocabulary, through the compiled clauses the NIF's answer" do
      words = Enum.uniq([@fanout_queued | @box_states] ++ @run_states ++ @job_statuses)

      check all(word <- Generators.word(words), max_runs: @runs) do
        box = Target.box_lifecycle(word)
        run = Target.run_lifecycle(word)
        job = Target.job_lifecycle(word)

        assert box in @lifecycles
        assert run in @delegation_lifecycles
        assert job in @delegation_lifecycles
        assert box == Native.box_lifecycle(word)
        assert run == Native.run_lifecycle(word)
        assert job == Native.job_lifecycle(word)
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

    property "seam/3 answers the NIF's document for the vocabulary and refuses everything else" do
      check all(
              kind <- Generators.word_or_term(@kinds),
              lifecycle <- Generators.word_or_term(@lifecycles),
              authorized? <- Generators.word_or_term([true, false]),
              max_runs: @runs
            ) do
        if kind in @kinds and lifecycle in @lifecycles and is_boolean(authorized?) do
          assert Target.seam(kind, lifecycle, authorized?) ==
                   Native.seam(kind, lifecycle, authorized?)
        else
          assert_raise FunctionClauseError, fn -> Target.seam(kind, lifecycle, authorized?) end
        end
      end
    end

    property "a machine's lifecycle is the NIF's for any status and revoked_at" do
      check all(
              status <- one_of([Generators.word(@machine_statuses), Generators.term(1)]),
              revoked_at <- one_of([constant(nil), Generators.term(1)]),
              name <- Generators.term(1),
              online? <- boolean(),
              max_runs: @runs
            ) do
        machine = %Machine{status: status, revoked_at: revoked_at, name: name}
        # A machine whose status is "revoked" is never asked for revoked_at.
        read_revoked_at = if status == "revoked", do: nil, else: revoked_at

        assert Target.computer_lifecycle(machine, online?) ==
                 Native.computer_lifecycle(status, read_revoked_at, online?)
      end
    end
  end

  # The words of `words` that are not in `vocabulary`, each once.
  defp not_in(words, vocabulary), do: words |> Enum.reject(&(&1 in vocabulary)) |> Enum.uniq()
end
