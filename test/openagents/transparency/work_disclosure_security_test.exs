defmodule OpenAgents.Transparency.WorkDisclosureSecurityTest do
  @moduledoc """
  What must never happen, whatever the schedule's details: a never-listed
  column, or any key the schedule does not name, reaching a projection; a
  record appearing at `dark`; a revoked link showing anything; a viewer
  reading a record above its own tier without owning its live link or being
  an operator.
  """
  use ExUnit.Case, async: true
  use ExUnitProperties

  alias Ecto.Association.NotLoaded
  alias OpenAgents.Accounts
  alias OpenAgents.Accounts.User
  alias OpenAgents.Transparency.{ArtifactLink, Ladder, WorkDisclosure}
  alias OpenAgentsPolicy.Test.{Assignment, Generators, Upstream}

  # ── The host's tables (upstream.md), and the ladder's words ──
  @families WorkDisclosure.families()
  @columns Map.new(@families, &{&1, Upstream.columns(&1)})
  @tiers Ladder.tiers()
  # A tier's rank is its place on the ladder.
  @ranks Map.new(Enum.with_index(@tiers))
  # The words a link's (or a record's) tier column holds.
  @link_tiers Enum.map(@tiers, &Atom.to_string/1)

  # Keys a host source carries that no schedule names: Ecto's metadata and
  # associations, derived values, and things a careless caller might merge in.
  @extra_keys [:__meta__, :prompt, :api_key, :token, :secret, :raw, :document_bytes] ++
                Upstream.attempt_associations()
  @extra_string_keys ["id", "report", "goal", "branch"]

  @revoked_at ~U[2026-08-25 12:00:00Z]
  @accounts ["acct-1", "acct-2", nil]

  # Every tier form and viewer shape the ladder reads.
  @tier_forms [nil, 1, [], %{}, {:glass}, :bogus, "GLASS", true, false] ++
                @tiers ++
                Enum.map(@tiers, &Atom.to_string/1) ++
                Enum.map(@tiers ++ [nil, "bogus"], &%{tier: &1}) ++
                [%{admin: true}, %{admin: true, tier: :dark}, %{admin: false, tier: :pulse}] ++
                [%{account_id: "acct-1"}, %{account_id: "acct-1", tier: :pulse}] ++
                [%{account_id: nil, tier: :glass, admin: true}] ++
                [%User{id: "acct-1"}, %User{id: "op", admin: true}]

  @dark_forms [:dark, "dark", "GLASS", :bogus, false, %{tier: nil}, %{tier: :dark}, %{tier: "x"}]

  # A source for `family` in which every scheduled field holds a public value
  # and every other key (never-listed columns, columns read under another
  # name such as a trace's document, extra keys) holds a secret.
  defp hostile_source(family) do
    fields = Map.keys(WorkDisclosure.schedule()[family])
    unscheduled = Enum.uniq((@columns[family] ++ @extra_keys) -- fields)

    secrets = Map.new(unscheduled, &{&1, secret(family, &1)})
    string_secrets = Map.new(@extra_string_keys, &{&1, secret(family, &1)})
    public = Map.new(fields, &{&1, {:public, family, &1}})

    secrets |> Map.merge(string_secrets) |> Map.merge(public)
  end

  defp secret(family, key), do: {:secret, family, key}

  # Asserts that `projection` of `family` discloses nothing unscheduled.
  defp assert_discloses_only_scheduled(family, projection, context) do
    fields = Map.keys(WorkDisclosure.schedule()[family])
    never = WorkDisclosure.never(family)

    for {key, value} <- projection do
      assert key in fields,
             "#{family} projection for #{context} carries unscheduled key #{inspect(key)}"

      refute key in never,
             "#{family} projection for #{context} carries never-listed #{inspect(key)}"

      assert value == {:public, family, key},
             "#{family}.#{key} for #{context} disclosed #{inspect(value)}"
    end

    refute inspect(projection, limit: :infinity) =~ ":secret",
           "#{family} projection for #{context} leaks a secret: #{inspect(projection)}"
  end

  describe "no never-listed column and no unscheduled key ever appears in a projection" do
    test "for every family and every tier form or viewer" do
      for family <- @families, tier <- @tier_forms do
        case WorkDisclosure.project(family, hostile_source(family), tier) do
          nil -> assert WorkDisclosure.fields_at(family, tier) == []
          projection -> assert_discloses_only_scheduled(family, projection, inspect(tier))
        end
      end
    end

    test "for every family and every viewer viewer/2 can return, through effective_tier/2" do
      repository = %{id: "repo-1"}

      users = [
        nil,
        %User{id: "acct-1"},
        %User{id: "m", member_of: ["repo-1"]},
        %User{id: "op", admin: true}
      ]

      for family <- @families, user <- users, link <- link_variants(), column <- @link_tiers do
        viewer = WorkDisclosure.viewer(repository, user)

        tier =
          WorkDisclosure.effective_tier(%{transparency_tier: column, artifact_link: link}, viewer)

        if projection = WorkDisclosure.project(family, hostile_source(family), tier),
          do: assert_discloses_only_scheduled(family, projection, "#{inspect(viewer)} at #{tier}")
      end
    end

    test "a trace's document is never published, at any tier, to anyone" do
      for tier <- @tier_forms do
        projection =
          WorkDisclosure.project(:trace, %{document: "the whole run", id: 1}, tier) || %{}

        refute "the whole run" in Map.values(projection)
        refute Map.has_key?(projection, :document)
      end
    end
  end

  describe "dark" do
    test "is nil for every family, every form of dark, and any source" do
      for family <- @families,
          tier <- @dark_forms,
          source <- [hostile_source(family), %{}, nil] do
        assert WorkDisclosure.project(family, source, tier) == nil,
               "#{family} at #{inspect(tier)} was not nil"
      end
    end

    test "a revoked link is dark to everyone, an operator and its owner included, and projects nil" do
      for family <- @families,
          viewer <- @tier_forms,
          revoked_at <- [@revoked_at, "yesterday", 0] do
        link = %ArtifactLink{account_id: "acct-1", tier: "glass", revoked_at: revoked_at}
        record = %Assignment{transparency_tier: "glass", artifact_link: link}

        tier = WorkDisclosure.effective_tier(record, viewer)
        assert tier == :dark, "revoked link read at #{tier} by #{inspect(viewer)}"
        assert WorkDisclosure.project(family, hostile_source(family), tier) == nil
      end
    end
  end

  describe "monotone projections" do
    test "pulse within ledger within glass: a higher rung never drops or changes a value" do
      for family <- @families do
        source = hostile_source(family)

        [pulse, ledger, glass] =
          Enum.map([:pulse, :ledger, :glass], &WorkDisclosure.project(family, source, &1))

        assert Map.take(ledger, Map.keys(pulse)) == pulse
        assert Map.take(glass, Map.keys(ledger)) == ledger
      end
    end

    test "a viewer's projection grows with its tier, for every viewer shape carrying one" do
      for family <- @families, account_id <- @accounts do
        [pulse, ledger, glass] =
          Enum.map(
            [:pulse, :ledger, :glass],
            &WorkDisclosure.project(family, hostile_source(family), %{
              account_id: account_id,
              tier: &1
            })
          )

        assert Map.take(ledger, Map.keys(pulse)) == pulse
        assert Map.take(glass, Map.keys(ledger)) == ledger
      end
    end
  end

  describe "generated records and viewers (StreamData: shrunk to the smallest failure)" do
    @runs 5_000

    property "the effective tier never rises above the record's own tier without a live link's owner or an operator" do
      # Generators built once, not once per run.
      {records, viewers} = {record(), viewer()}

      check all(record <- records, viewer <- viewers, max_runs: @runs) do
        tier = WorkDisclosure.effective_tier(record, viewer)
        assert tier in @tiers

        case link_state(record) do
          {:revoked, _link} ->
            assert tier == :dark

          {:live, link} ->
            if owner?(link, viewer) or admin?(viewer) do
              assert tier == :glass
            else
              assert @ranks[tier] <= @ranks[named(link.tier)]
              assert_within_viewer(tier, viewer)
            end

          :unlinked ->
            if match?(%{admin: true}, viewer) do
              assert tier == :glass
            else
              assert @ranks[tier] <= @ranks[named(Map.get(record, :transparency_tier))]
              assert_within_viewer(tier, viewer)
            end
        end
      end
    end

    property "whatever a record and viewer resolve to, the projection discloses only scheduled fields" do
      {records, viewers} = {record(), viewer()}

      check all(
              family <- member_of(@families),
              record <- records,
              viewer <- viewers,
              max_runs: @runs
            ) do
        tier = WorkDisclosure.effective_tier(record, viewer)
        projection = WorkDisclosure.project(family, hostile_source(family), tier)

        if tier == :dark,
          do: assert(projection == nil),
          else:
            assert_discloses_only_scheduled(family, projection, "#{inspect(viewer)} at #{tier}")

        # The viewer itself as the tier argument is held to the same line.
        direct = WorkDisclosure.project(family, hostile_source(family), viewer)
        if direct, do: assert_discloses_only_scheduled(family, direct, inspect(viewer))
      end
    end
  end

  # ── record and viewer generators ──

  defp link_variants do
    [
      nil,
      %NotLoaded{__field__: :artifact_link},
      %ArtifactLink{account_id: "acct-1", tier: "ledger", revoked_at: nil},
      %ArtifactLink{account_id: nil, tier: "glass", revoked_at: nil},
      %ArtifactLink{account_id: "acct-1", tier: "glass", revoked_at: @revoked_at},
      %{account_id: "acct-1", tier: "glass", revoked_at: nil}
    ]
  end

  # A tier as a record, a link or a viewer may carry one: a link tier, a
  # near miss of one, a random binary, or any term.
  defp tier_word, do: frequency([{4, Generators.word(@link_tiers)}, {1, Generators.term(1)}])

  defp revoked_at,
    do: frequency([{2, constant(nil)}, {1, constant(@revoked_at)}, {1, Generators.term(1)}])

  defp link do
    frequency([
      {1, constant(nil)},
      {1, constant(%NotLoaded{__field__: :artifact_link})},
      {1,
       fixed_map(%{
         account_id: member_of(@accounts),
         tier: constant("glass"),
         revoked_at: constant(nil)
       })},
      {1, Generators.term(1)},
      {3,
       gen all(
             account_id <- member_of(@accounts),
             tier <- tier_word(),
             revoked_at <- revoked_at()
           ) do
         %ArtifactLink{account_id: account_id, tier: tier, revoked_at: revoked_at}
       end}
    ])
  end

  # A record as the host passes one: a map with a transparency_tier, with or
  # without an artifact_link, or an Assignment; one in ten lacks the tier.
  defp record do
    shape =
      one_of([
        fixed_map(%{transparency_tier: tier_word()}),
        fixed_map(%{transparency_tier: tier_word(), artifact_link: link()}),
        map({tier_word(), link()}, fn {tier, link} ->
          %Assignment{transparency_tier: tier, artifact_link: link}
        end)
      ])

    frequency([
      {9, shape},
      {1, map(shape, &Map.delete(&1, :transparency_tier))}
    ])
  end

  defp viewer do
    account = member_of(@accounts)

    frequency([
      {1, constant(nil)},
      {1, Generators.term(1)},
      {1, tier_word()},
      {1, fixed_map(%{tier: tier_word()})},
      {1, fixed_map(%{account_id: account, tier: tier_word()})},
      {1, fixed_map(%{account_id: account})},
      {1,
       fixed_map(%{
         account_id: account,
         tier: constant(:glass),
         admin: member_of([true, false, "true", nil])
       })},
      {1, map({account, boolean()}, fn {id, admin} -> %User{id: id, admin: admin} end)},
      {2, member_of(@tier_forms)}
    ])
  end

  # ── upstream.md's notions, independently of the library ──

  defp link_state(record) do
    case Map.get(record, :artifact_link) do
      %ArtifactLink{revoked_at: nil} = link -> {:live, link}
      %ArtifactLink{} = link -> {:revoked, link}
      _ -> :unlinked
    end
  end

  defp named(word) when is_atom(word) and not is_nil(word), do: named(Atom.to_string(word))

  defp named(word) when is_binary(word),
    do: Enum.find(@tiers, :dark, &(Atom.to_string(&1) == word))

  defp named(_word), do: :dark

  defp owner?(%ArtifactLink{account_id: owner}, viewer) do
    reader =
      case viewer do
        %User{id: id} -> id
        %{account_id: account_id} -> account_id
        _ -> nil
      end

    owner != nil and reader != nil and owner == reader
  end

  defp admin?(%{admin: true}), do: true
  defp admin?(%User{} = user), do: Accounts.admin?(user)
  defp admin?(_viewer), do: false

  # A viewer that carries a tier of its own is never read above it.
  defp assert_within_viewer(tier, viewer) do
    own =
      case viewer do
        %{admin: true} -> :glass
        %User{} = user -> if Accounts.admin?(user), do: :glass
        %{tier: word} -> named(word)
        %{account_id: _} -> nil
        word when is_binary(word) or (is_atom(word) and not is_nil(word)) -> named(word)
        _ -> nil
      end

    if own, do: assert(@ranks[tier] <= @ranks[own], "#{tier} is above the viewer's own #{own}")
  end
end
