defmodule OpenAgentsPolicy.TablesTest do
  # The compile-time tables: every function whose inputs range over a finite
  # vocabulary answers from clauses compiled from the core's answers. Each
  # table is walked over its whole domain here and held to the NIF's live
  # answer (`OpenAgentsPolicy.Native`, called directly), and the words just
  # outside each domain are held to the core too (or to the seed's exception).
  use ExUnit.Case, async: true

  alias OpenAgents.Accounts.User
  alias OpenAgents.Delegations.Target
  alias OpenAgents.Machines.Machine
  alias OpenAgents.Transparency.{ArtifactLink, WorkDisclosure}
  alias OpenAgentsPolicy.Host.Boundary
  alias OpenAgentsPolicy.Native

  # Words no vocabulary holds, and near misses of the ones they do.
  @strangers ["", "bogus", "stopping", "Active", "active ", "queued\0", "glass", "box "]

  defp substrate(name), do: Map.new(Native.substrates()) |> Map.fetch!(name)

  describe "Target" do
    test "the vocabularies are the core's" do
      assert Target.lifecycles() == Native.lifecycles()
      assert Target.delegation_lifecycles() == Native.delegation_lifecycles()
      assert Target.job_terminal_statuses() == Native.job_terminal_statuses()
      assert Target.custodies() == Native.custodies()
      assert Target.kinds() == Native.kinds()
    end

    test "custody/1 and runtime_class/1 over every kind; anything else is refused" do
      for kind <- Native.kinds() do
        assert Target.custody(kind) == Native.custody(kind)
        assert Target.runtime_class(kind) == Native.runtime_class(kind)
      end

      for stranger <- [:box, nil, 1 | @strangers] do
        assert_raise FunctionClauseError, fn -> Target.custody(stranger) end
        assert_raise FunctionClauseError, fn -> Target.runtime_class(stranger) end
      end
    end

    test "the substrate lifecycles over every known word, and the core's answer off it" do
      for {name, project, native} <- [
            {"box", &Target.box_lifecycle/1, &Native.box_lifecycle/1},
            {"run", &Target.run_lifecycle/1, &Native.run_lifecycle/1},
            {"job", &Target.job_lifecycle/1, &Native.job_lifecycle/1}
          ] do
        words = substrate(name)
        assert words != []

        for word <- words ++ @strangers ++ Enum.map(words, &String.upcase/1) do
          assert project.(word) == native.(word), "#{name} lifecycle of #{inspect(word)}"
        end

        for not_a_binary <- [:running, nil, 1, ~c"running"] do
          assert_raise FunctionClauseError, fn -> project.(not_a_binary) end
        end
      end
    end

    test "computer_lifecycle/2 over every status, revoked or not, online or not" do
      statuses = Native.machine_statuses()
      assert statuses != []

      for status <- statuses ++ [nil, :active | @strangers],
          revoked_at <- [nil, ~U[2026-08-25 10:00:00Z], false],
          online? <- [true, false] do
        machine = %Machine{status: status, revoked_at: revoked_at}
        read_revoked_at = if status == "revoked", do: nil, else: revoked_at

        assert Target.computer_lifecycle(machine, online?) ==
                 Native.computer_lifecycle(status, read_revoked_at, online?),
               inspect({status, revoked_at, online?})
      end
    end

    test "seam/3 over every kind, lifecycle and reach; anything else is refused" do
      for kind <- Native.kinds(),
          lifecycle <- Native.lifecycles(),
          authorized? <- [true, false] do
        assert Target.seam(kind, lifecycle, authorized?) ==
                 Native.seam(kind, lifecycle, authorized?)
      end

      for {kind, lifecycle, authorized?} <- [
            {"box", "active", nil},
            {"box", "succeeded", true},
            {"vm", "active", true},
            {:box, "active", true}
          ] do
        assert_raise FunctionClauseError, fn -> Target.seam(kind, lifecycle, authorized?) end
      end
    end

    test "delegation_seam/1 over every delegation lifecycle; anything else is refused" do
      for lifecycle <- Native.delegation_lifecycles() do
        assert Target.delegation_seam(lifecycle) == Native.delegation_seam(lifecycle)
      end

      for stranger <- ["cold", :active | @strangers] do
        assert_raise FunctionClauseError, fn -> Target.delegation_seam(stranger) end
      end
    end
  end

  describe "WorkDisclosure" do
    test "families/0 and schedule/0 are the core's" do
      assert WorkDisclosure.families() == Native.families()
      assert WorkDisclosure.schedule() == Native.schedule()
    end

    test "never/1 and source_columns/1 over every family; anything else is refused" do
      for family <- Native.families() do
        assert WorkDisclosure.never(family) == Native.never(family)
        assert WorkDisclosure.source_columns(family) == Native.source_columns(family)
      end

      for stranger <- [:changelog, "attempt", nil] do
        assert_raise FunctionClauseError, fn -> WorkDisclosure.never(stranger) end
        assert_raise FunctionClauseError, fn -> WorkDisclosure.source_columns(stranger) end
      end
    end

    test "tier_for/2 over every field of every family, and any other term as a field" do
      for family <- Native.families() do
        scheduled = Map.keys(Native.schedule()[family])
        columns = Native.never(family) ++ Native.source_columns(family)
        strings = Enum.map(scheduled, &Atom.to_string/1)
        others = [nil, true, 1, 1.0, :bogus, {:id}, [:id], %{id: :pulse}, make_ref()]

        for field <- scheduled ++ columns ++ strings ++ others ++ @strangers do
          assert WorkDisclosure.tier_for(family, field) == Native.tier_for(family, field),
                 inspect({family, field})
        end
      end

      assert_raise FunctionClauseError, fn -> WorkDisclosure.tier_for(unknown_family(), :id) end
    end

    test "fields_at/2 over every family and every tier word, and the core's answer off them" do
      tiers = Native.tiers()
      words = [nil | tiers ++ Enum.map(tiers, &Atom.to_string/1)]
      others = [:bogus, "GLASS", 3, %{tier: :ledger}, %{admin: true}, %User{id: "u"}]

      for family <- Native.families(), tier <- words ++ others ++ @strangers do
        assert WorkDisclosure.fields_at(family, tier) ==
                 Native.fields_at(family, class(tier)),
               inspect({family, tier})
      end

      assert_raise FunctionClauseError, fn ->
        WorkDisclosure.fields_at(unknown_family(), :glass)
      end
    end

    test "project/3 over every family and tier word, on sources with and without each field" do
      tiers = Native.tiers()
      words = [nil | tiers ++ Enum.map(tiers, &Atom.to_string/1)]

      for family <- Native.families() do
        fields = Map.keys(Native.schedule()[family])
        columns = Native.never(family) ++ Native.source_columns(family)
        full = Map.new(fields ++ columns, &{&1, {:value_of, &1}})
        # Past 32 keys a map is a hash map, as the host's attempt sources are.
        wide = Map.merge(full, Map.new(1..40, &{:"extra_#{&1}", &1}))
        each_missing = Enum.map(fields, &Map.delete(full, &1))
        sources = [full, wide, %{}, %{id: 1}, %URI{}] ++ each_missing

        for tier <- words ++ [:bogus, %{tier: :ledger}, %{admin: true}], source <- sources do
          projected =
            case Native.fields_at(family, class(tier)) do
              [] -> nil
              fields -> Map.new(fields, &{&1, Map.get(source, &1)})
            end

          assert WorkDisclosure.project(family, source, tier) == projected,
                 inspect({family, tier, source})
        end

        for tier <- words, source <- [nil, "source", [id: 1]] do
          if Native.fields_at(family, class(tier)) == [] do
            assert WorkDisclosure.project(family, source, tier) == nil
          else
            assert_raise BadMapError, fn -> WorkDisclosure.project(family, source, tier) end
          end
        end
      end
    end

    test "viewer/2 gives every relationship the core's descriptor" do
      repository = %{id: "repo-1"}

      readers = %{
        operator: %User{id: "op", admin: true},
        member: %User{id: "mem", member_of: ["repo-1"]},
        stranger: %User{id: "str", member_of: ["repo-2"]},
        anonymous: nil
      }

      relationships = Native.relationships()
      assert Enum.sort(relationships) == Enum.sort(Map.keys(readers))

      for relationship <- relationships do
        reader = readers[relationship]
        account = reader && reader.id
        assert WorkDisclosure.viewer(repository, reader) == Native.viewer(relationship, account)
      end

      for not_a_user <- [%{id: "u"}, "u", :u] do
        assert WorkDisclosure.viewer(repository, not_a_user) == Native.viewer(:anonymous, nil)
      end
    end

    # effective_tier/2's compiled answers: every tier word (and words just
    # outside, which the core answers on the call), revoked or live, owned or
    # not, read by a viewer of every class the table holds (and of the
    # shapes next to them), each held to the NIF called directly.
    test "effective_tier/2 over every tier word, viewer class and ownership" do
      words = [nil | Enum.flat_map(Native.tiers(), &[&1, Atom.to_string(&1)])]
      tiers = words ++ ["bogus", :bogus, "Glass", 7]

      viewers = fn account ->
        [
          %{admin: true},
          %{admin: true, tier: :pulse, account_id: account},
          %{admin: false, tier: :ledger, account_id: account},
          %{account_id: account},
          %{account_id: nil},
          %{},
          %{name: "someone"},
          nil,
          7,
          [],
          "bogus",
          :bogus
        ] ++
          for(word <- tiers, do: %{tier: word, account_id: account}) ++
          for(word <- tiers, do: %{tier: word}) ++
          Enum.reject(tiers, &is_nil/1)
      end

      for owner <- ["acct-1", nil, 1],
          account <- ["acct-1", "acct-2", nil, 1.0],
          viewer <- viewers.(account),
          tier <- tiers,
          revoked_at <- [nil, ~U[2026-08-25 10:00:00Z]] do
        link = %ArtifactLink{account_id: owner, tier: tier, revoked_at: revoked_at}
        {class, account} = Boundary.viewer(viewer)
        {:link, state, tier, owns?} = Boundary.link(link, account)

        # A revoked link is read without its viewer: the core's answer for
        # the viewer's own class is the same.
        assert WorkDisclosure.effective_tier(%{artifact_link: link}, viewer) ==
                 Native.effective_tier({:linked, state, tier, owns?}, class),
               inspect({link, viewer})
      end

      for account <- ["acct-1", nil], viewer <- viewers.(account), tier <- tiers do
        {class, account} = Boundary.viewer(viewer)
        column = Native.effective_tier({:column, Boundary.subject(tier, account)}, class)

        assert WorkDisclosure.effective_tier(%{transparency_tier: tier}, viewer) == column,
               inspect({tier, viewer})

        assert WorkDisclosure.effective_tier(
                 %{artifact_link: nil, transparency_tier: tier},
                 viewer
               ) ==
                 column,
               inspect({tier, viewer})
      end
    end
  end

  defp class(viewer), do: elem(Boundary.viewer(viewer), 0)

  # A family the schedule does not have, read at run time as a host's data
  # would bring it: the call under test is the one a host makes, not one the
  # compiler can already see has no clause.
  defp unknown_family, do: String.to_atom("changelog")
end
