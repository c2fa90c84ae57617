defmodule OpenAgents.Transparency.WorkDisclosureTest do
  # The app's own WorkDisclosureTest, in its shape: every column of the
  # host's four tables classified exactly once, a monotone ladder (dark
  # empty, pulse within ledger within glass), projections at each rung. Then
  # what this wrapper adds to the core: every tier form it reads, the host
  # calls (Accounts, Repositories, ArtifactLink, Repo), the JSON, and the
  # exceptions bad input raises. Which rung first exposes which field is the
  # core's to say (native/openagents_policy/src/disclosure.rs); each compiled
  # clause is held to the NIF in test/openagents_policy/tables_test.exs, and
  # the whole module to the seed by `make parity`.
  use ExUnit.Case, async: true

  alias Ecto.Association.NotLoaded
  alias OpenAgents.Accounts.User
  alias OpenAgents.Transparency.{ArtifactLink, Ladder, WorkDisclosure}
  alias OpenAgentsPolicy.Test.{Assignment, Changeset, Evidence, Upstream, WorkJob}

  doctest OpenAgents.Transparency.WorkDisclosure

  # ── The host's tables (upstream.md), in `__schema__(:fields)` order ──
  @columns Map.new(Map.keys(Upstream.tables()), &{&1, Upstream.columns(&1)})
  @associations Upstream.attempt_associations()

  # ── The library's schedule and ladder ──
  @families WorkDisclosure.families()
  @tiers Ladder.tiers()
  @rungs @tiers -- [:dark]
  # A tier's rank is its place on the ladder.
  @ranks Map.new(Enum.with_index(@tiers))
  @schedule WorkDisclosure.schedule()
  @never Map.new(@families, &{&1, WorkDisclosure.never(&1)})

  @revoked_at ~U[2026-08-25 12:00:00Z]
  @not_families [:deployment, :changelog, :Attempt, "attempt", nil, 1, [:attempt]]

  # The fields of `family` a `rung` admits by the schedule's own words: those
  # first exposed at or below it, sorted.
  defp rung_fields(family, rung) do
    for({field, first} <- @schedule[family], @ranks[first] <= @ranks[rung], do: field)
    |> Enum.sort()
  end

  defp all_fields(family), do: @schedule[family] |> Map.keys() |> Enum.sort()

  # A source carrying a distinct value under every column and every field.
  defp full_source(family) do
    Map.new(@columns[family] ++ all_fields(family), &{&1, "#{family}.#{&1}"})
  end

  describe "the schedule against the host's tables (the host's WorkDisclosureTest)" do
    test "each family is one of the host's tables" do
      assert Enum.sort(@families) == Enum.sort(Map.keys(Upstream.tables()))
    end

    for family <- Map.keys(Upstream.tables()) do
      @family family

      test "every column of #{Upstream.tables()[family]} is classified exactly once" do
        assert WorkDisclosure.classify(@family, @columns[@family]) ==
                 %{unclassified: [], doubly_classified: []}
      end

      test "every column of #{Upstream.tables()[family]} is a scheduled field's source or never-listed, not both" do
        sources = WorkDisclosure.source_columns(@family)
        never = WorkDisclosure.never(@family)

        for column <- @columns[@family] do
          assert column in sources or column in never,
                 "#{@family}.#{column} is neither the source of a scheduled field nor never-listed"

          refute column in sources and column in never,
                 "#{@family}.#{column} is both the source of a scheduled field and never-listed"
        end
      end

      test "the #{family} schedule names no column #{Upstream.tables()[family]} lacks" do
        named = WorkDisclosure.source_columns(@family) ++ WorkDisclosure.never(@family)
        assert Enum.sort(named) == Enum.sort(@columns[@family])
      end

      test "a column added to #{Upstream.tables()[family]} is reported unclassified until someone decides" do
        columns = [:prompt_v2 | @columns[@family]] ++ [:owner_hostname]

        assert WorkDisclosure.classify(@family, columns) ==
                 %{unclassified: [:prompt_v2, :owner_hostname], doubly_classified: []}
      end

      test "the #{family} ladder is monotone: dark empty, pulse within ledger within glass" do
        assert WorkDisclosure.fields_at(@family, :dark) == []
        pulse = WorkDisclosure.fields_at(@family, :pulse)
        ledger = WorkDisclosure.fields_at(@family, :ledger)
        glass = WorkDisclosure.fields_at(@family, :glass)

        # The first rung is not empty: at pulse every family shows its record's id.
        assert :id in pulse
        assert MapSet.subset?(MapSet.new(pulse), MapSet.new(ledger))
        assert MapSet.subset?(MapSet.new(ledger), MapSet.new(glass))
        assert glass == all_fields(@family)
      end

      test "#{family} projections at each rung hold exactly that rung's fields" do
        source = full_source(@family)
        assert WorkDisclosure.project(@family, source, :dark) == nil

        for rung <- @rungs do
          assert WorkDisclosure.project(@family, source, rung) ==
                   Map.take(source, rung_fields(@family, rung)),
                 "#{@family} at #{rung}"
        end
      end
    end

    test "classify/2 reports columns in the order given" do
      assert WorkDisclosure.classify(:trace, [:zeta, :id, :alpha, :document]) ==
               %{unclassified: [:zeta, :alpha], doubly_classified: []}
    end
  end

  describe "the schedule, as the wrapper serves it" do
    test "source_columns/1 is sorted, names each column once, and holds every field read under its own name" do
      for family <- @families do
        columns = WorkDisclosure.source_columns(family)
        assert columns == columns |> Enum.uniq() |> Enum.sort()

        for field <- Map.keys(@schedule[family]),
            field in Upstream.columns(family),
            do: assert(field in columns, "#{family}.#{field}")
      end
    end

    test "a trace's document is read and published by no rung" do
      assert :document in WorkDisclosure.source_columns(:trace)
      refute :document in WorkDisclosure.fields_at(:trace, :glass)
      assert WorkDisclosure.tier_for(:trace, :document) == nil
    end

    test "tier_for/2 is each field's first tier, and nil for never-listed, renamed-away and unknown names" do
      for family <- @families do
        for {field, tier} <- @schedule[family],
            do: assert(WorkDisclosure.tier_for(family, field) == tier)

        renamed_away = WorkDisclosure.source_columns(family) -- Map.keys(@schedule[family])
        unscheduled = @never[family] ++ renamed_away ++ [:bogus, :__meta__]

        for field <- unscheduled -- Map.keys(@schedule[family]),
            do: assert(WorkDisclosure.tier_for(family, field) == nil, "#{family}.#{field}")

        for field <- ["id", nil, 1, {:id}],
            do: assert(WorkDisclosure.tier_for(family, field) == nil)
      end
    end

    test "schedule_json/0, the Rust core's serialization, says the same as the Elixir functions" do
      decoded = Jason.decode!(WorkDisclosure.schedule_json())
      assert Enum.map(decoded, & &1["family"]) == Enum.map(@families, &Atom.to_string/1)

      for %{"family" => name, "fields" => fields, "never" => never} <- decoded do
        family = String.to_existing_atom(name)
        assert Enum.map(never, & &1["column"]) == Enum.map(@never[family], &Atom.to_string/1)

        assert Map.new(fields, &{&1["field"], &1["tier"]}) ==
                 Map.new(@schedule[family], fn {field, tier} -> {"#{field}", "#{tier}"} end)

        assert fields |> Enum.map(& &1["column"]) |> Enum.uniq() |> Enum.sort() ==
                 Enum.map(WorkDisclosure.source_columns(family), &Atom.to_string/1)
      end
    end
  end

  describe "fields_at/2 reads every tier form" do
    test "atoms and their strings admit the same fields, each rung those first exposed at or below it" do
      for family <- @families, tier <- [:dark | @rungs] do
        assert WorkDisclosure.fields_at(family, tier) == rung_fields(family, tier)
        assert WorkDisclosure.fields_at(family, Atom.to_string(tier)) == rung_fields(family, tier)
      end
    end

    test "nil has no tier of its own and so admits every field" do
      for family <- @families,
          do: assert(WorkDisclosure.fields_at(family, nil) == all_fields(family))
    end

    test "an unknown tier word names dark and admits nothing" do
      for family <- @families,
          word <- ["GLASS", "Ledger", "", " pulse", :bogus, :GLASS, true, false] do
        assert WorkDisclosure.fields_at(family, word) == [], "#{family} at #{inspect(word)}"
      end
    end

    test "a term that is neither a word nor a viewer map has no tier, so clamps nothing" do
      for family <- @families, term <- [1, 3, 1.5, [], ~c"glass", {:glass}, %{}] do
        assert WorkDisclosure.fields_at(family, term) == all_fields(family),
               "#{family} at #{inspect(term)}"
      end
    end

    test "a viewer map admits its tier's fields; %{tier: nil} admits none" do
      for family <- @families, tier <- [:dark | @rungs] do
        assert WorkDisclosure.fields_at(family, %{tier: tier}) == rung_fields(family, tier)

        assert WorkDisclosure.fields_at(family, %{account_id: "acct-1", tier: "#{tier}"}) ==
                 rung_fields(family, tier)
      end

      for family <- @families, do: assert(WorkDisclosure.fields_at(family, %{tier: nil}) == [])
    end

    test "an operator descriptor, an account without a tier, and any User admit every field" do
      viewers = [
        %{admin: true},
        %{admin: true, tier: :pulse},
        %{account_id: nil, tier: :glass, admin: true},
        %{account_id: "acct-1"},
        %User{id: "acct-1"},
        %User{id: "op", admin: true}
      ]

      for family <- @families, viewer <- viewers do
        assert WorkDisclosure.fields_at(family, viewer) == all_fields(family),
               "#{family} for #{inspect(viewer)}"
      end
    end

    test "the descriptors viewer/2 returns admit their rung's fields" do
      repository = %{id: "repo-1"}

      for {user, rung} <- [
            {%User{id: "op", admin: true}, :glass},
            {%User{id: "m", member_of: ["repo-1"]}, :ledger},
            {%User{id: "s"}, :pulse},
            {nil, :pulse}
          ],
          family <- @families do
        assert WorkDisclosure.fields_at(family, WorkDisclosure.viewer(repository, user)) ==
                 rung_fields(family, rung)
      end
    end
  end

  describe "project/3" do
    test "is nil at dark, never an empty map" do
      darks = [:dark, "dark", "GLASS", :bogus, false, %{tier: nil}, %{tier: :dark}]

      for family <- @families, tier <- darks ++ [%{account_id: "a", tier: "dark"}] do
        assert WorkDisclosure.project(family, full_source(family), tier) == nil
      end
    end

    test "at dark the source is not read at all" do
      for family <- @families, source <- [nil, :not_a_map, "string", [id: 1], 42] do
        assert WorkDisclosure.project(family, source, :dark) == nil
        assert WorkDisclosure.project(family, source, "GLASS") == nil
        assert WorkDisclosure.project(family, source, %{tier: nil}) == nil
      end
    end

    test "at any other rung a source that is not a map raises BadMapError" do
      for family <- @families,
          source <- [nil, "string", [], [id: 1], {:id, 1}],
          tier <- [:pulse, :ledger, :glass, nil, %{admin: true}] do
        assert_raise BadMapError, fn -> WorkDisclosure.project(family, source, tier) end
      end
    end

    test "a field missing from the source is nil, present and never dropped" do
      for family <- @families, rung <- @rungs do
        expected = Map.new(rung_fields(family, rung), &{&1, nil})
        assert WorkDisclosure.project(family, %{}, rung) == expected
      end
    end

    test "a string-keyed source gives nil values: fields are read by their atom names only" do
      for family <- @families do
        source = Map.new(full_source(family), fn {key, value} -> {Atom.to_string(key), value} end)

        assert WorkDisclosure.project(family, source, :glass) ==
                 Map.new(all_fields(family), &{&1, nil})
      end
    end

    test "values are taken verbatim, false and nested terms included" do
      source = %{id: 0, status: false, usage: %{"tokens" => [1, 2]}, budget: {:bounds, 60}}
      projected = WorkDisclosure.project(:work_job, source, :glass)

      assert projected.id == 0
      assert projected.status == false
      assert projected.usage == %{"tokens" => [1, 2]}
      assert projected.budget == {:bounds, 60}
    end

    test "a viewer map, a User, and the internal caller's descriptor work as the tier" do
      source = full_source(:work_job)

      assert WorkDisclosure.project(:work_job, source, %{account_id: "a", tier: :ledger}) ==
               Map.take(source, rung_fields(:work_job, :ledger))

      for viewer <- [%{account_id: nil, tier: :glass, admin: true}, %User{id: "u"}, nil] do
        assert WorkDisclosure.project(:work_job, source, viewer) ==
                 Map.take(source, all_fields(:work_job))
      end
    end

    test "reads a struct source by field, as the host passes Map.from_struct(assignment) plus :requester_kind" do
      assignment = %Assignment{
        id: "att-1",
        target_kind: "box",
        state: "completed",
        requesting_principal: %{"type" => "user", "id" => "acct-secret"},
        branch: "oa/issue-7",
        terminal_commit: "c0ffee",
        conversation_id: "conv-secret",
        machine_id: "machine-secret",
        credential_delivery_status: "delivered",
        transparency_tier: "ledger",
        artifact_link: %ArtifactLink{account_id: "acct-secret", tier: "ledger"}
      }

      source = assignment |> Map.from_struct() |> Map.put(:requester_kind, "user")
      # 25 columns, __meta__, 8 associations, and the derived requester_kind.
      assert map_size(source) == length(@columns.attempt) + 1 + length(@associations) + 1

      for rung <- @rungs do
        projected = WorkDisclosure.project(:attempt, source, rung)
        assert projected == Map.take(source, rung_fields(:attempt, rung)), "at #{rung}"
        # What the host merges in is read like a column: requester_kind is scheduled.
        assert Map.get(projected, :requester_kind, "user") == "user"

        # No never-listed column's value, and no association, reaches the projection.
        for key <- @never.attempt ++ @associations,
            do: refute(Map.has_key?(projected, key), "#{key} at #{rung}")
      end

      # A struct itself is a map: its fields are read, requester_kind is absent.
      from_struct = WorkDisclosure.project(:attempt, assignment, :glass)
      assert from_struct.requester_kind == nil
      assert from_struct.state == "completed"
    end

    test "reads a work job as the host passes it: Map.from_struct(job) with :budget put" do
      job = %WorkJob{
        id: "job-1",
        kind: "attempt",
        status: "completed",
        goal: "the issue's own sentence",
        report: "model prose",
        usage: %{"input_tokens" => 10},
        model_id: "model-x",
        budget_snapshot: %{"prompt_ceiling" => 4096, "prompt" => "secret"},
        tool_call_count: 3
      }

      bounds = %{wall_clock_s: 600, report_bytes: 8192, prompt_bytes: 4096}
      source = job |> Map.from_struct() |> Map.put(:budget, bounds)

      for rung <- @rungs do
        projected = WorkDisclosure.project(:work_job, source, rung)
        assert projected == Map.take(source, rung_fields(:work_job, rung)), "at #{rung}"
        # The bounds the host put are read; the snapshot they came from is not.
        if Map.has_key?(projected, :budget), do: assert(projected.budget == bounds)
        refute Map.has_key?(projected, :budget_snapshot)
        refute Map.has_key?(projected, :goal)
      end
    end
  end

  describe "viewer/2" do
    setup do
      %{repository: %{id: "repo-1"}}
    end

    test "an operator is glass and marked admin", %{repository: repository} do
      assert WorkDisclosure.viewer(repository, %User{id: "op", admin: true}) ==
               %{account_id: "op", tier: :glass, admin: true}

      assert WorkDisclosure.viewer(repository, %User{id: "op", admin: true, member_of: ["repo-1"]}) ==
               %{account_id: "op", tier: :glass, admin: true}
    end

    test "a member of the repository is ledger", %{repository: repository} do
      assert WorkDisclosure.viewer(repository, %User{id: "m", member_of: ["repo-1"]}) ==
               %{account_id: "m", tier: :ledger}
    end

    test "any other user is pulse, with their account", %{repository: repository} do
      assert WorkDisclosure.viewer(repository, %User{id: "s", member_of: ["repo-2"]}) ==
               %{account_id: "s", tier: :pulse}
    end

    test "no user is pulse with no account; so is anything that is not a User", %{
      repository: repository
    } do
      for user <- [nil, %{id: "u", admin: true}, "u", :u] do
        assert WorkDisclosure.viewer(repository, user) == %{account_id: nil, tier: :pulse}
      end
    end
  end

  describe "effective_tier/2" do
    setup do
      link = %ArtifactLink{id: "l", account_id: "acct-1", tier: "ledger", revoked_at: nil}
      %{link: link, record: %{transparency_tier: "pulse", artifact_link: link}}
    end

    test "a live link raises its owner to glass, by account_id or as a User", %{record: record} do
      assert WorkDisclosure.effective_tier(record, %{account_id: "acct-1", tier: :pulse}) ==
               :glass

      assert WorkDisclosure.effective_tier(record, %User{id: "acct-1"}) == :glass
    end

    test "a live link raises an operator to glass", %{record: record} do
      assert WorkDisclosure.effective_tier(record, %{account_id: "op", tier: :glass, admin: true}) ==
               :glass

      assert WorkDisclosure.effective_tier(record, %{admin: true}) == :glass
      assert WorkDisclosure.effective_tier(record, %User{id: "op", admin: true}) == :glass
    end

    test "a stranger reads the link's tier clamped, never the record's column", %{record: record} do
      assert WorkDisclosure.effective_tier(record, %{account_id: "acct-2", tier: :pulse}) ==
               :pulse

      assert WorkDisclosure.effective_tier(record, %{account_id: "acct-2", tier: :ledger}) ==
               :ledger

      assert WorkDisclosure.effective_tier(record, %{account_id: "acct-2", tier: :glass}) ==
               :ledger

      assert WorkDisclosure.effective_tier(record, %{account_id: nil, tier: :pulse}) == :pulse
      assert WorkDisclosure.effective_tier(record, %{account_id: "acct-2"}) == :ledger
    end

    test "a revoked link is dark for everyone, even %{admin: true} and its owner", %{
      record: record
    } do
      revoked = put_in(record.artifact_link.revoked_at, @revoked_at)

      for viewer <- [
            %{admin: true},
            %{account_id: "op", tier: :glass, admin: true},
            %User{id: "op", admin: true},
            %{account_id: "acct-1", tier: :glass},
            %User{id: "acct-1"},
            nil
          ] do
        assert WorkDisclosure.effective_tier(revoked, viewer) == :dark, inspect(viewer)
      end
    end

    test "with no loaded link (nil, not loaded, absent) the tier column is clamped and no owner is raised" do
      for link <- [nil, %NotLoaded{__field__: :artifact_link}, :absent] do
        record =
          if link == :absent,
            do: %{transparency_tier: "ledger"},
            else: %{transparency_tier: "ledger", artifact_link: link}

        assert WorkDisclosure.effective_tier(record, %{account_id: "acct-1", tier: :pulse}) ==
                 :pulse

        assert WorkDisclosure.effective_tier(record, %{account_id: "acct-1", tier: :glass}) ==
                 :ledger

        assert WorkDisclosure.effective_tier(record, %{account_id: "acct-1"}) == :ledger
        assert WorkDisclosure.effective_tier(record, %User{id: "acct-1"}) == :ledger
        assert WorkDisclosure.effective_tier(record, nil) == :ledger
      end
    end

    test "an unlinked record is glass for an operator descriptor, whatever its column says" do
      for column <- ["dark", "pulse", "ledger", "glass", nil, "GLASS"] do
        assert WorkDisclosure.effective_tier(%{transparency_tier: column}, %{admin: true}) ==
                 :glass

        assert WorkDisclosure.effective_tier(
                 %{transparency_tier: column, artifact_link: nil},
                 %{account_id: nil, tier: :glass, admin: true}
               ) == :glass
      end
    end

    test "an unlinked record is never raised for a non-operator, even at glass" do
      for column <- ["dark", "pulse", "ledger", nil, "GLASS"],
          viewer <- [%{tier: :glass}, %{account_id: "acct-1", tier: :glass}, %User{id: "acct-1"}] do
        tier = WorkDisclosure.effective_tier(%{transparency_tier: column}, viewer)
        assert tier != :glass, "column #{inspect(column)} rose to glass for #{inspect(viewer)}"
      end
    end

    test "a map in the link's place that is not an ArtifactLink is not a link" do
      lookalike = %{account_id: "acct-1", tier: "glass", revoked_at: nil}
      record = %{transparency_tier: "pulse", artifact_link: lookalike}
      assert WorkDisclosure.effective_tier(record, %{account_id: "acct-1"}) == :pulse
    end

    test "host structs work as records", %{link: link} do
      attempt = %Assignment{transparency_tier: "pulse"}

      assert WorkDisclosure.effective_tier(attempt, %{account_id: "acct-1", tier: :ledger}) ==
               :pulse

      evidence = %Evidence{transparency_tier: "pulse", artifact_link: link}

      assert WorkDisclosure.effective_tier(evidence, %{account_id: "acct-1", tier: :pulse}) ==
               :glass

      assert WorkDisclosure.effective_tier(evidence, %{account_id: "acct-9", tier: :glass}) ==
               :ledger
    end

    test "a map claiming the link struct, live but with no :tier, raises KeyError where the ladder reads it" do
      lacking = %ArtifactLink{account_id: "acct-1", revoked_at: nil} |> Map.from_struct()
      lacking = lacking |> Map.delete(:tier) |> Map.put(:__struct__, ArtifactLink)

      # Through the record's link, for every viewer (an operator's glass reads the tier too),
      # and through a tier column, for every viewer but an operator descriptor.
      for viewer <- [%{admin: true}, %{account_id: "acct-1"}, %{tier: :pulse}, :glass, nil] do
        error =
          assert_raise KeyError, fn ->
            WorkDisclosure.effective_tier(%{artifact_link: lacking}, viewer)
          end

        assert error.key == :tier and error.term == lacking
      end

      for viewer <- [%{account_id: "acct-1"}, %User{id: "acct-1"}, :ledger] do
        assert_raise KeyError, fn ->
          WorkDisclosure.effective_tier(%{transparency_tier: lacking}, viewer)
        end
      end

      assert WorkDisclosure.effective_tier(%{transparency_tier: lacking}, %{admin: true}) ==
               :glass

      # Revoked, or with no revoked_at at all, it is dark before its tier is read.
      for dark <- [
            Map.put(lacking, :revoked_at, ~U[2026-08-25 12:00:00Z]),
            Map.delete(lacking, :revoked_at)
          ] do
        assert WorkDisclosure.effective_tier(%{artifact_link: dark}, %{admin: true}) == :dark
      end
    end

    test "a map claiming the User struct owns a link by its account_id before its id", %{
      record: record
    } do
      claims = fn fields -> Map.merge(%User{}, fields) end

      assert WorkDisclosure.effective_tier(record, claims.(%{id: "acct-9", account_id: "acct-1"})) ==
               :glass

      assert WorkDisclosure.effective_tier(record, claims.(%{id: "acct-1", account_id: "acct-9"})) ==
               :ledger

      assert WorkDisclosure.effective_tier(record, claims.(%{id: "acct-1", account_id: nil})) ==
               :glass
    end

    test "a record that is not a map raises BadMapError" do
      for record <- [nil, "attempt", [], [transparency_tier: "glass"], 1] do
        assert_raise BadMapError, fn -> WorkDisclosure.effective_tier(record, %{admin: true}) end
      end
    end
  end

  describe "link_for_attempt/2,3" do
    setup do
      %{repository: %{id: "repo-1"}, principal: %{"type" => "user", "id" => "acct-1"}}
    end

    test "mints a ledger link owned by the requesting user, through the host's repo", ctx do
      authority = %{"roots" => ["/home/me/src"], "machine_name" => "laptop"}

      assert {:ok, %ArtifactLink{} = link} =
               WorkDisclosure.link_for_attempt(ctx.repository, ctx.principal, authority)

      assert_received {:repo_insert, %Changeset{data: %ArtifactLink{} = data, changes: changes}}
      assert data == %ArtifactLink{}

      assert changes == %{
               account_id: "acct-1",
               repository_id: "repo-1",
               artifact_type: "attempt",
               artifact_ref: "id",
               tier: "ledger",
               consent: %{"granted_by" => "requesting_principal"},
               authority_snapshot: authority
             }

      assert is_binary(link.id)
      assert {link.account_id, link.repository_id, link.tier} == {"acct-1", "repo-1", "ledger"}
      assert link.revoked_at == nil
    end

    test "the authority snapshot defaults to an empty map", ctx do
      assert {:ok, link} = WorkDisclosure.link_for_attempt(ctx.repository, ctx.principal)
      assert link.authority_snapshot == %{}
      assert_received {:repo_insert, %Changeset{changes: %{authority_snapshot: %{}}}}
    end

    test "a principal's other keys and a repository's other fields do not matter", ctx do
      principal = Map.put(ctx.principal, "name", "someone")
      repository = %{id: "repo-1", name: "private", owner: "someone"}
      assert {:ok, link} = WorkDisclosure.link_for_attempt(repository, principal, :snapshot)

      assert {link.account_id, link.repository_id, link.authority_snapshot} ==
               {"acct-1", "repo-1", :snapshot}
    end

    test "the minted link raises its requester to glass and clamps everyone else", ctx do
      {:ok, link} = WorkDisclosure.link_for_attempt(ctx.repository, ctx.principal)
      record = %Assignment{transparency_tier: "pulse", artifact_link: link}

      assert WorkDisclosure.effective_tier(
               record,
               WorkDisclosure.viewer(ctx.repository, %User{id: "acct-1"})
             ) ==
               :glass

      member = %User{id: "m", member_of: ["repo-1"]}

      assert WorkDisclosure.effective_tier(record, WorkDisclosure.viewer(ctx.repository, member)) ==
               :ledger

      assert WorkDisclosure.effective_tier(record, WorkDisclosure.viewer(ctx.repository, nil)) ==
               :pulse
    end

    test "an attempt an agent requested gets :none, and nothing is inserted", ctx do
      agent = %{"type" => "agent", "id" => "agent-7"}
      assert WorkDisclosure.link_for_attempt(ctx.repository, agent) == :none
      assert WorkDisclosure.link_for_attempt(ctx.repository, agent, %{"roots" => []}) == :none
      refute_received {:repo_insert, _}
    end

    test "a malformed principal gets :none", ctx do
      principals = [
        %{"type" => "user", "id" => 42},
        %{"type" => "user", "id" => nil},
        %{"type" => "user", "id" => :acct},
        %{"type" => "user", "id" => ~c"acct-1"},
        %{"type" => "user"},
        %{"id" => "acct-1"},
        %{type: "user", id: "acct-1"},
        %{"type" => :user, "id" => "acct-1"},
        %{"type" => "User", "id" => "acct-1"},
        %{},
        nil,
        "user:acct-1",
        [{"type", "user"}, {"id", "acct-1"}]
      ]

      for principal <- principals do
        assert WorkDisclosure.link_for_attempt(ctx.repository, principal) == :none,
               inspect(principal)
      end

      refute_received {:repo_insert, _}
    end

    test "a repository without :id gets :none", ctx do
      for repository <- [%{}, %{"id" => "repo-1"}, nil, "repo-1", [id: "repo-1"]] do
        assert WorkDisclosure.link_for_attempt(repository, ctx.principal) == :none,
               inspect(repository)
      end

      refute_received {:repo_insert, _}
    end
  end

  describe "an unknown family raises FunctionClauseError" do
    test "from never/1, source_columns/1, tier_for/2, fields_at/2, project/3 and classify/2" do
      for family <- @not_families do
        assert_raise FunctionClauseError, fn -> WorkDisclosure.never(family) end
        assert_raise FunctionClauseError, fn -> WorkDisclosure.source_columns(family) end
        assert_raise FunctionClauseError, fn -> WorkDisclosure.tier_for(family, :id) end
        assert_raise FunctionClauseError, fn -> WorkDisclosure.fields_at(family, :glass) end

        assert_raise FunctionClauseError, fn ->
          WorkDisclosure.project(family, %{id: 1}, :glass)
        end

        assert_raise FunctionClauseError, fn ->
          WorkDisclosure.project(family, %{id: 1}, :dark)
        end

        assert_raise FunctionClauseError, fn -> WorkDisclosure.classify(family, [:id]) end
      end
    end
  end
end
