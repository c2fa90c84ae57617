defmodule OpenAgentsPolicy.SeedRules do
  @moduledoc false
  # The tests' oracle: the seeds' rules (000 `Delegations.Target`, 002
  # `Transparency.WorkDisclosure`) and the host's `OpenAgents.Transparency`
  # (upstream.md), written out once and independently of the library: nothing
  # here calls it. The library's tests, its fuzz run, its concurrency test,
  # `make parity` and the fault runs' load client all hold the library to this.
  #
  # The rules' data (vocabularies, tables, the schedule) is seed_rules.json,
  # the core crate's test fixture (native/openagents_policy/tests/oracle/),
  # which the crate's tests read too; this module reads it at compile
  # time (atoms made here, where the seeds hold atoms) and holds the rules
  # that are code, `Target`'s with the seed's own guards. The nested modules
  # `Ladder` and `WorkDisclosure` are the seeds' other public functions built
  # on them. Each takes the same
  # arguments, gives the same values, and raises the same exceptions by the
  # same constructs the seeds use (a guard that rejects raises
  # FunctionClauseError, `Map.get/2` on a non-map raises BadMapError, dot
  # access on a struct missing the key raises KeyError).

  @external_resource json =
                       Path.expand(
                         "../../../native/openagents_policy/tests/oracle/seed_rules.json",
                         __DIR__
                       )
  @data json |> File.read!() |> Jason.decode!()
  @target @data["target"]
  @host @data["host"]
  @disclosure @data["disclosure"]

  @lifecycles @target["lifecycles"]
  @delegation_lifecycles @target["delegation_lifecycles"]
  @kinds @target["kinds"]
  @custodies @target["custodies"]
  @custody @target["custody"]
  @runtime_class @target["runtime_class"]
  @cancellable @target["cancellable"]
  @box Map.new(@target["box_lifecycle"], &List.to_tuple/1)
  @run Map.new(@target["run_lifecycle"], &List.to_tuple/1)
  @job Map.new(@target["job_lifecycle"], &List.to_tuple/1)

  @tiers Enum.map(@host["tiers"], &String.to_atom/1)
  @rank Map.new(@host["ranks"], fn {tier, rank} -> {String.to_atom(tier), rank} end)
  @minimum Map.new(@host["capability_minimums"], fn [access, tier] ->
             {String.to_atom(access), String.to_atom(tier)}
           end)
  @capabilities @target["capabilities"]

  # The schedule (002): per family, the fields of each rung, the never list
  # in the seed's order, and the fields read from a column of another name.
  atoms = fn words -> Enum.map(words, &String.to_atom/1) end

  @schedule Map.new(@disclosure["schedule"], fn {family, s} ->
              rungs =
                for rung <- @disclosure["rungs"] do
                  {String.to_atom(rung),
                   for([field, ^rung] <- s["fields"], do: String.to_atom(field))}
                end

              renames =
                Map.new(s["columns"], fn {f, c} -> {String.to_atom(f), String.to_atom(c)} end)

              {String.to_atom(family),
               Map.new(rungs) |> Map.merge(%{never: atoms.(s["never"]), renames: renames})}
            end)
  @families atoms.(@disclosure["families"])
  @rungs atoms.(@disclosure["rungs"])

  # ── Delegations.Target ─────────────────────────────────────────────────

  def lifecycles, do: @lifecycles
  def delegation_lifecycles, do: @delegation_lifecycles
  def kinds, do: @kinds
  def custodies, do: @custodies
  def custody(kind) when kind in @kinds, do: Map.fetch!(@custody, kind)
  def runtime_class(kind) when kind in @kinds, do: Map.fetch!(@runtime_class, kind)
  # The host's vocabularies are its facts, not the seeds' rules: they live in
  # upstream.ex, compiled beside this file wherever a suite uses them (the
  # scripts that load this file alone never ask).
  def box_states, do: apply(OpenAgentsPolicy.Test.Upstream, :box_states, [])
  def job_statuses, do: apply(OpenAgentsPolicy.Test.Upstream, :job_statuses, [])

  # The seeds' catch-all: a word missing from a table reads "failed".
  def box_lifecycle(state) when is_binary(state), do: Map.get(@box, state, "failed")
  def run_lifecycle(state) when is_binary(state), do: Map.get(@run, state, "failed")
  def job_lifecycle(status) when is_binary(status), do: Map.get(@job, status, "failed")

  # `or` short-circuits: `revoked_at` is read only when the status is not
  # "revoked".
  def computer_lifecycle(%{__struct__: OpenAgents.Machines.Machine} = machine, online?)
      when is_boolean(online?) do
    cond do
      machine.status == "revoked" or not is_nil(machine.revoked_at) -> "destroyed"
      machine.status == "active" and online? -> "active"
      true -> "cold"
    end
  end

  def capabilities(lifecycle, authorized?),
    do: if(lifecycle == "active" and authorized?, do: [@capabilities["target"]], else: [])

  def unavailable_reason("active", true), do: nil
  def unavailable_reason("active", false), do: "not_authorized"
  def unavailable_reason(lifecycle, _authorized?), do: lifecycle

  def cancellable?(lifecycle), do: lifecycle in @cancellable

  @doc "The seam document's keys, sorted."
  def seam_keys, do: @target["seam_keys"]

  def seam(kind, lifecycle, authorized?)
      when kind in @kinds and lifecycle in @lifecycles and is_boolean(authorized?) do
    %{
      "custody" => custody(kind),
      "runtime_class" => runtime_class(kind),
      "lifecycle" => lifecycle,
      "capabilities" => capabilities(lifecycle, authorized?),
      "unavailable_reason" => unavailable_reason(lifecycle, authorized?)
    }
  end

  def delegation_seam(lifecycle) when lifecycle in @delegation_lifecycles,
    do: %{
      "lifecycle" => lifecycle,
      "capabilities" => if(cancellable?(lifecycle), do: [@capabilities["delegation"]], else: [])
    }

  # ── the ladder (upstream.md, OpenAgents.Transparency) ──────────────────

  def tiers, do: @tiers
  def ranks, do: @rank
  def minimums, do: @minimum

  @doc "A tier atom or its word; anything else reads dark."
  def name(tier) when tier in @tiers, do: tier
  def name(tier) when is_binary(tier), do: Enum.find(@tiers, :dark, &(Atom.to_string(&1) == tier))
  def name(_), do: :dark

  def rank(tier), do: Map.fetch!(@rank, name(tier))

  @doc "The lower of two tiers; a reader with no tier of its own (`nil`) clamps nothing."
  def clamp(tier, nil), do: tier
  def clamp(tier, own), do: Enum.min_by([tier, own], &@rank[&1])

  @doc """
  A loaded link read by a viewer (`{own tier or nil, operator?, account id
  or nil}`): a revoked link (or one with no `revoked_at`) is dark for
  everyone; a live one is glass for an operator and for its account, else
  its tier clamped by the reader's. The host's ladder reads a live link's
  tier as `link.tier` either way, so a map claiming the struct without a
  `:tier` raises KeyError there.
  """
  def link_tier(link, {own, operator?, reader}) do
    owner = Map.get(link, :account_id)

    cond do
      not (is_map_key(link, :revoked_at) and link.revoked_at == nil) -> :dark
      not is_map_key(link, :tier) -> raise KeyError, key: :tier, term: link
      operator? or (owner != nil and reader != nil and owner == reader) -> :glass
      true -> clamp(name(link.tier), own)
    end
  end

  @doc """
  The tier a host reader (`:anonymous`, `:stranger`, `:member`, `:owner`,
  `:operator`, with `reader_id` its account id) reads a record at, given its
  link as loaded (a map, or `:none` / `:not_loaded`) and its tier column, as
  `WorkDisclosure.viewer/2` then `effective_tier/2` give it.
  """
  def effective_tier(reader, reader_id, link, tier_column) do
    own =
      case reader do
        :operator -> :glass
        :member -> :ledger
        _user_or_anonymous -> :pulse
      end

    case link do
      %{} -> link_tier(link, {own, reader == :operator, reader_id})
      _ when reader == :operator -> :glass
      _none_or_not_loaded -> clamp(name(tier_column), own)
    end
  end

  # ── Transparency.WorkDisclosure ────────────────────────────────────────

  def families, do: @families
  def rungs, do: @rungs

  @doc "`%{family => %{field => rung}}`."
  def schedule do
    Map.new(@schedule, fn {family, s} ->
      {family, Map.new(for rung <- @rungs, f <- s[rung], do: {f, rung})}
    end)
  end

  def never(family), do: Map.fetch!(@schedule, family).never
  def renames(family), do: Map.fetch!(@schedule, family).renames

  @doc "The fields of `family` a reader at `tier` (an atom) sees, sorted; `[]` at dark."
  def fields(family, tier) when tier in @tiers do
    for({field, at} <- schedule()[family], @rank[at] <= @rank[tier], do: field) |> Enum.sort()
  end

  def source_columns(family) do
    s = Map.fetch!(@schedule, family)

    (s.pulse ++ s.ledger ++ s.glass)
    |> Enum.map(&Map.get(s.renames, &1, &1))
    |> Enum.uniq()
    |> Enum.sort()
  end

  @doc "Every word the schedule names: families, fields, never entries, columns."
  def schedule_words do
    Enum.flat_map(@schedule, fn {family, s} ->
      [family | s.pulse ++ s.ledger ++ s.glass ++ s.never ++ Map.values(s.renames)]
    end)
  end

  # ── the host, as the library is configured with it ─────────────────────

  # Links and users are recognised by these struct names; the modules the
  # library calls come from its configuration.
  def host(key, default), do: Application.get_env(:openagents_policy, key, default)
  def accounts, do: host(:accounts, OpenAgents.Accounts)
  def repositories, do: host(:repositories, OpenAgents.Repositories)
  def artifact_link, do: host(:artifact_link, OpenAgents.Transparency.ArtifactLink)
  def repo, do: host(:repo, OpenAgents.Repo)

  defmodule Lenient do
    @moduledoc false
    # Raised where the contract names no exception class but some exception
    # is right: any of `allowed`, raised by Elixir code (never by the NIF).
    defexception [:allowed, :why]
    @impl true
    def message(%{allowed: allowed, why: why}), do: "#{why}: any of #{inspect(allowed)}"
  end

  defmodule Satisfies do
    @moduledoc false
    # Returned where no single value is right (a JSON document whose spacing
    # the seeds do not fix): the library's value must pass `check`.
    defstruct [:check, :why]
  end

  defmodule Ladder do
    @moduledoc false
    # The host's OpenAgents.Transparency (upstream.md), which the library's
    # Ladder serves.
    alias OpenAgentsPolicy.SeedRules, as: R

    def tiers, do: R.tiers()
    def name(tier), do: R.name(tier)
    def rank(tier), do: R.rank(tier)

    @doc """
    `{own tier or nil, operator?, account id or nil}`. A user viewer's
    `Accounts.admin?/1` is asked up front, as the library asks it, so a host
    stand-in that raises for a malformed user raises in both.
    """
    def read(viewer) do
      user? = is_struct(viewer, OpenAgents.Accounts.User)
      user_admin? = user? and if(R.accounts().admin?(viewer), do: true, else: false)

      cond do
        is_map(viewer) and Map.get(viewer, :admin) === true ->
          {:glass, true, nil}

        # The account a user reads for: a set `account_id` (which only a map
        # claiming the struct can carry) before its `id`, as the host's
        # ladder asks.
        user? ->
          {if(user_admin?, do: :glass), user_admin?, user_account(viewer)}

        is_map(viewer) and is_map_key(viewer, :tier) ->
          {R.name(viewer.tier), false, Map.get(viewer, :account_id)}

        is_map(viewer) ->
          {nil, false, Map.get(viewer, :account_id)}

        is_binary(viewer) or (is_atom(viewer) and viewer != nil) ->
          {R.name(viewer), false, nil}

        true ->
          {nil, false, nil}
      end
    end

    defp user_account(user) do
      case Map.get(user, :account_id) do
        nil -> Map.get(user, :id)
        account -> account
      end
    end

    def viewer_tier(viewer), do: elem(read(viewer), 0)
    def clamp(tier, viewer), do: R.clamp(R.name(tier), viewer_tier(viewer))
    def effective_tier(subject, viewer), do: effective(subject, read(viewer))

    @doc false
    def effective(subject, read) do
      if is_struct(subject, OpenAgents.Transparency.ArtifactLink),
        do: R.link_tier(subject, read),
        else: R.clamp(R.name(subject), elem(read, 0))
    end

    def allows?(subject, access, viewer) do
      needed = if is_atom(access), do: Map.get(R.minimums(), access, :dark), else: :dark
      R.rank(effective_tier(subject, viewer)) >= R.rank(needed)
    end
  end

  defmodule WorkDisclosure do
    @moduledoc false
    # Seed 002's public functions, and the library's additions
    # (`schedule_json/0`, `classify/2`).
    alias OpenAgentsPolicy.SeedRules, as: R
    # The enclosing module is still open here, so its attribute is readable.
    @families Module.get_attribute(R, :families)
    # `link_for_attempt/3`'s fixed attributes: the seed's artifact type,
    # ref, tier and consent.
    @attempt_link Module.get_attribute(R, :disclosure)["attempt_link"]
                  |> Map.new(fn {key, value} -> {String.to_atom(key), value} end)

    def families, do: R.families()
    def schedule, do: R.schedule()
    def never(family) when family in @families, do: R.never(family)
    def source_columns(family) when family in @families, do: R.source_columns(family)
    def tier_for(family, field) when family in @families, do: Map.get(R.schedule()[family], field)

    # Each field asks `allows?(rung, capability(rung), tier)`: the rung
    # clamped by the viewer must still reach the rung.
    def fields_at(family, tier) when family in @families do
      own = Ladder.viewer_tier(tier)

      for({field, at} <- R.schedule()[family], R.clamp(at, own) == at, do: field)
      |> Enum.sort()
    end

    def viewer(repository, user) do
      user? = is_struct(user, OpenAgents.Accounts.User)

      cond do
        user? and R.accounts().admin?(user) ->
          %{account_id: user.id, tier: :glass, admin: true}

        user? and R.repositories().member?(repository, user) ->
          %{account_id: user.id, tier: :ledger}

        user? ->
          %{account_id: user.id, tier: :pulse}

        true ->
          %{account_id: nil, tier: :pulse}
      end
    end

    def effective_tier(record, viewer) do
      case Map.get(record, :artifact_link) do
        %{__struct__: OpenAgents.Transparency.ArtifactLink} = link ->
          Ladder.effective_tier(link, viewer)

        _absent ->
          tier = Map.get(record, :transparency_tier)
          operator? = is_map(viewer) and Map.get(viewer, :admin) === true
          read = Ladder.read(viewer)
          if operator?, do: :glass, else: Ladder.effective(tier, read)
      end
    end

    def link_for_attempt(repository, principal),
      do: link_for_attempt(repository, principal, %{})

    def link_for_attempt(%{id: repository_id}, %{"type" => "user", "id" => account_id}, authority)
        when is_binary(account_id) do
      link = R.artifact_link()

      link.__struct__()
      |> link.changeset(
        Map.merge(@attempt_link, %{
          account_id: account_id,
          repository_id: repository_id,
          authority_snapshot: authority
        })
      )
      |> R.repo().insert()
    end

    def link_for_attempt(_repository, _principal, _authority), do: :none

    def project(family, source, tier) when family in @families do
      case fields_at(family, tier) do
        [] -> nil
        fields -> Map.new(fields, fn field -> {field, Map.get(source, field)} end)
      end
    end

    # A UTF-8 JSON array naming every family, scheduled field, tier, source
    # column and never entry.
    def schedule_json do
      %Satisfies{
        why: "a JSON document naming every family, field, tier, column and never entry",
        check: fn json ->
          is_binary(json) and String.valid?(json) and String.starts_with?(json, "[") and
            Enum.all?(
              R.schedule_words() ++ R.rungs(),
              &String.contains?(json, ~s("#{&1}"))
            )
        end
      }
    end

    # The host's one-line schema check. Its spec is a list of atoms; for
    # anything else no class is named, so any exception the Elixir side
    # raises will do, and the NIF's own badarg or panic will not.
    def classify(family, columns) when family in @families and is_list(columns) do
      unless proper_atom_list?(columns) do
        raise Lenient,
          allowed: [FunctionClauseError, ArgumentError],
          why: "columns is not a proper list of atoms"
      end

      sources = R.source_columns(family)
      never = R.never(family)

      %{
        unclassified: Enum.filter(columns, &(&1 not in sources and &1 not in never)),
        doubly_classified: Enum.filter(columns, &(&1 in sources and &1 in never))
      }
    end

    defp proper_atom_list?([]), do: true
    defp proper_atom_list?([h | t]) when is_atom(h), do: proper_atom_list?(t)
    defp proper_atom_list?(_), do: false
  end
end
