defmodule OpenAgents.Transparency.WorkDisclosure do
  @moduledoc """
  The field-by-field disclosure schedule for work in progress: attempts, work jobs,
  evidence edges and traces.

  A tier elsewhere answers "may this reader see the record"; for work being done now
  the question is "which of its fields": each family names the rung that first
  exposes each field, and a never list the columns no rung exposes. A column on
  neither list, or on both, is a defect `classify/2` finds. The rungs, the never
  lists and the viewers: [The disclosure model](disclosure-model.md). Repository
  authority, stronger than every rung, is the host's to check first.

  Every rule lives in the Rust core. This module guards arguments, asks the host
  what only it knows (`OpenAgentsPolicy.Host`), and keeps the core's answers over
  finite domains compiled in.
  """

  alias OpenAgentsPolicy.Host
  alias OpenAgentsPolicy.Host.Boundary
  alias OpenAgentsPolicy.Native

  # Read from the Rust core as this module compiles; a rebuilt NIF recompiles it.
  @families Native.families()
  @schedule Native.schedule()
  @relationships Native.relationships()
  @never Map.new(@families, &{&1, Native.never(&1)})
  @source_columns Map.new(@families, &{&1, Native.source_columns(&1)})
  explanation = fn {field, rung, reason} -> %{field: field, rung: rung, reason: reason} end
  @explained Map.new(@families, &{&1, Enum.map(Native.reasons(&1), explanation)})
  @explain Map.new(for {family, all} <- @explained, e <- all, do: {{family, e.field}, e})
  # The tier words a caller names: each tier as an atom and as a string, and `nil`.
  @tier_words [nil | Enum.flat_map(Native.tiers(), &[&1, Atom.to_string(&1)])]
  # The viewer classes (`Boundary.viewer/1`) compiled in: those whose tier, if any, is a word.
  @classes [:operator, {:user, true}, {:user, false}, :account, :nobody] ++
             for(w <- @tier_words, c <- [:tiered, :word], w != nil or c == :tiered, do: {c, w})

  @typedoc "A family of records: `:attempt`, `:work_job`, `:evidence`, `:trace`."
  @type family :: :attempt | :work_job | :evidence | :trace

  @typedoc "A tier, as `OpenAgents.Transparency.Ladder` names them."
  @type tier :: OpenAgents.Transparency.Ladder.tier()

  @typedoc "A viewer descriptor, as `viewer/2` answers it."
  @type descriptor :: %{:account_id => term(), :tier => tier(), optional(:admin) => true}

  @doc """
  The families this schedule covers.

      iex> :attempt in OpenAgents.Transparency.WorkDisclosure.families()
      true
  """
  @spec families() :: [family()]
  def families, do: @families

  @doc "The whole schedule, as `%{family => %{field => tier}}`."
  @spec schedule() :: %{family() => %{atom() => tier()}}
  def schedule, do: @schedule

  @doc """
  The columns of `family` that no tier discloses, in any form.

      iex> OpenAgents.Transparency.WorkDisclosure.never(:trace) |> Enum.all?(&is_atom/1)
      true
  """
  @spec never(family()) :: [atom()]
  def never(family)

  for family <- @families do
    def never(unquote(family)), do: unquote(@never[family])
  end

  @doc """
  The schema columns the scheduled fields of `family` are read from, sorted
  (a field is read from the column of its own name unless it is derived or
  renamed, as `recorded_at` from `inserted_at`).

      iex> columns = OpenAgents.Transparency.WorkDisclosure.source_columns(:trace)
      iex> columns == Enum.sort(columns)
      true
  """
  @spec source_columns(family()) :: [atom()]
  def source_columns(family) when family in @families, do: Map.fetch!(@source_columns, family)

  @doc """
  The tier that first exposes `field` of `family`, or `nil` if none does.

      iex> OpenAgents.Transparency.WorkDisclosure.tier_for(:work_job, :report) in OpenAgents.Transparency.Ladder.tiers()
      true
      iex> OpenAgents.Transparency.WorkDisclosure.tier_for(:work_job, :no_such_field)
      nil
  """
  @spec tier_for(family(), term()) :: tier() | nil
  def tier_for(family, field)

  for {family, fields} <- @schedule, field <- Map.keys(fields) ++ @never[family] do
    def tier_for(unquote(family), unquote(field)), do: unquote(Native.tier_for(family, field))
  end

  def tier_for(family, field) when family in @families, do: Native.tier_for(family, field)

  @doc """
  The fields of `family` that `tier` admits, sorted. `tier` is anything the
  ladder reads as a viewer: a tier atom or its string, a viewer map, a user;
  `nil`, no tier of its own, admits every field, and an unknown tier none.

      iex> OpenAgents.Transparency.WorkDisclosure.fields_at(:trace, :pulse) -- OpenAgents.Transparency.WorkDisclosure.fields_at(:trace, :glass)
      []
      iex> OpenAgents.Transparency.WorkDisclosure.fields_at(:trace, "dark")
      []
  """
  @spec fields_at(family(), term()) :: [atom()]
  def fields_at(family, tier) when family in @families,
    do: fields_for(family, elem(Boundary.viewer(tier), 0))

  for family <- @families, class <- @classes do
    defp fields_for(unquote(family), unquote(Macro.escape(class))),
      do: unquote(Native.fields_at(family, class))
  end

  defp fields_for(family, class), do: Native.fields_at(family, class)

  @typedoc "The rung that first discloses a column, or `:never`."
  @type rung :: :pulse | :ledger | :glass | :never

  @typedoc "Why a column of a family is disclosed from its rung, or never (`explain/2`)."
  @type explanation :: %{field: atom(), rung: rung(), reason: String.t()}

  @doc """
  Why `field` of `family` is where it is: the rung that first discloses it
  (`:never` for a never-listed column) and the schedule's reason; `nil` for
  a column the family does not have.

      iex> OpenAgents.Transparency.WorkDisclosure.explain(:work_job, :goal).rung
      :never
      iex> OpenAgents.Transparency.WorkDisclosure.explain(:work_job, :no_such_column)
      nil
  """
  @spec explain(family(), term()) :: explanation() | nil
  def explain(family, field) when family in @families, do: Map.get(@explain, {family, field})

  @doc """
  What `tier` withholds of `family`: each scheduled field `fields_at/2` does not
  show, explained, in schedule order ("withheld: needs ledger, because ...").

      iex> OpenAgents.Transparency.WorkDisclosure.withheld(:trace, nil)
      []
  """
  @spec withheld(family(), term()) :: [explanation()]
  def withheld(family, tier) do
    shown = fields_at(family, tier)
    for %{rung: rung} = e <- @explained[family], rung != :never, e.field not in shown, do: e
  end

  @doc """
  The viewer descriptor for `repository` and `user`: the account to compare with a
  link's owner, and the tier that clamps everything else (operator `glass`, with
  `admin: true`; member `ledger`; anyone else `pulse`).

      iex> %{account_id: nil, tier: tier} = OpenAgents.Transparency.WorkDisclosure.viewer(%{id: "repo"}, nil)
      iex> tier in OpenAgents.Transparency.Ladder.tiers()
      true
  """
  @spec viewer(term(), term()) :: descriptor()
  def viewer(repository, user) do
    {relationship, account} = Boundary.relationship(repository, user)
    descriptor(relationship, account)
  end

  # The core's descriptor for each relationship, the user's id where its marker is.
  marker = :__openagents_policy_account__

  for relationship <- @relationships, core <- [Native.viewer(relationship, marker)] do
    account = if marker in Map.values(core), do: Macro.var(:account, nil), else: {:_, [], nil}

    pairs = for {k, v} <- core, do: {k, if(v == marker, do: account, else: Macro.escape(v))}
    defp descriptor(unquote(relationship), unquote(account)), do: %{unquote_splicing(pairs)}
  end

  @doc """
  The effective tier of one record for one viewer. A record whose
  `:artifact_link` is a loaded link resolves through it: revoked is `dark` for
  everyone, its owner and an operator are `glass`. Any other record resolves
  through its `:transparency_tier`: an operator descriptor (`admin: true`) is
  `glass`, and nobody else is raised. A link not loaded while its id is set
  reads what `OpenAgentsPolicy.Host.unloaded_link/0` says.

      iex> OpenAgents.Transparency.WorkDisclosure.effective_tier(%{transparency_tier: "ledger"}, %{tier: :pulse}) in OpenAgents.Transparency.Ladder.tiers()
      true
  """
  @spec effective_tier(map(), term()) :: tier()
  def effective_tier(record, viewer) when is_map(record) do
    with {record, class} <- Boundary.record(record, viewer), do: tier_of(record, class)
  end

  def effective_tier(record, _viewer), do: raise(BadMapError, term: record)

  # The core's answers for each tier word: a column and a live link (owned or not)
  # for each viewer class, a revoked link for none; anything else is asked on the call.
  for tier <- @tier_words,
      {record, classes} <- [
        {{:column, {:tier, tier}}, @classes},
        {{:linked, :live, tier, true}, @classes},
        {{:linked, :live, tier, false}, @classes},
        {{:linked, :revoked, tier, false}, [:nobody]}
      ],
      class <- classes do
    defp tier_of(unquote(Macro.escape(record)), unquote(Macro.escape(class))),
      do: unquote(Native.effective_tier(record, class))
  end

  defp tier_of(record, class), do: Native.effective_tier(record, class)

  @typedoc """
  Tier values of one record shape a viewer reads above `dark`: these words, any
  other word (`other`), no word (`none`: `nil`, or a word longer than
  #{Boundary.word_bytes()} bytes, which no tier has); one per shape in `visibility/1`.
  """
  @type tier_values :: %{words: [String.t()], other: boolean(), none: boolean()}

  @other_word "<any other word>"
  @tier_strings Enum.map(Native.tiers(), &Atom.to_string/1)

  @doc """
  Which records `viewer` reads above `dark`, by shape, as `effective_tier/2` reads
  them: no link, by `transparency_tier` (`:column`); a live link, by its tier, owned
  by the viewer's `:account` (`:own_link`) or not (`:link`); a revoked link
  (`:revoked_link`). `where_visible/2`'s query, for a host that builds its own.
  """
  @spec visibility(term()) :: %{required(:account) => term(), optional(atom()) => tier_values()}
  def visibility(viewer) do
    {class, account} = Boundary.viewer(viewer)

    values = fn record, class ->
      read? = &(tier_of(record.(Boundary.tier(&1)), class) != :dark)
      %{words: Enum.filter(@tier_strings, read?), other: read?.(@other_word), none: read?.(nil)}
    end

    %{
      account: account,
      column: values.(&{:column, {:tier, &1}}, class),
      own_link: values.(&{:linked, :live, &1, true}, class),
      link: values.(&{:linked, :live, &1, false}, class),
      revoked_link: values.(&{:linked, :revoked, &1, false}, :nobody)
    }
  end

  if Code.ensure_loaded?(Ecto.Query) do
    @doc """
    `queryable` (a schema with `transparency_tier` and `artifact_link_id`, or a query
    on one) narrowed to the rows whose `effective_tier(record, viewer)`, link loaded,
    is not `:dark`: a left join on the configured `:artifact_link` schema, read as
    `visibility/1` answers. Compiled only where Ecto is.
    """
    @spec where_visible(Ecto.Queryable.t(), term()) :: Ecto.Query.t()
    def where_visible(queryable, viewer) do
      import Ecto.Query, only: [dynamic: 1, dynamic: 2, from: 2]
      seen = visibility(viewer)
      link = Host.module(:artifact_link)
      [key] = link.__schema__(:primary_key)

      q = from(r in queryable, left_join: l in ^link, on: field(l, ^key) == r.artifact_link_id)

      {column, tier} = {dynamic([r], r.transparency_tier), dynamic([..., l], l.tier)}

      # Owned as effective_tier/2 decides it, both set and equal, never NULL (so `not
      # owned` is its negation); an account the column cannot hold owns none.
      owned =
        case Ecto.Type.cast(link.__schema__(:type, :account_id), seen.account) do
          {:ok, id} when id != nil -> dynamic([..., l], coalesce(l.account_id == ^id, false))
          _not_an_account -> false
        end

      {mine, theirs} = {tier_in(tier, seen.own_link), tier_in(tier, seen.link)}
      own = dynamic((^owned and ^mine) or (not (^owned) and ^theirs))

      linked = dynamic([..., l], not is_nil(field(l, ^key)) and is_nil(l.revoked_at) and ^own)
      revoked = dynamic([..., l], not is_nil(l.revoked_at) and ^tier_in(tier, seen.revoked_link))
      unlinked = dynamic([..., l], is_nil(field(l, ^key)) and ^tier_in(column, seen.column))
      Ecto.Query.where(q, ^dynamic(^unlinked or ^linked or ^revoked))
    end

    # A tier value among `values`: a word listed, any other word, or no word.
    defp tier_in(tier, %{words: words, other: other, none: none}) do
      import Ecto.Query, only: [dynamic: 1]
      long = dynamic(fragment("octet_length(?) > ?", ^tier, ^Boundary.word_bytes()))
      other = if(other, do: dynamic(^tier not in ^@tier_strings and not (^long)), else: false)
      none = if(none, do: dynamic(is_nil(^tier) or ^long), else: false)
      dynamic(^tier in ^words or ^other or ^none)
    end
  end

  @doc """
  Mints the consent-bearing link for one attempt through the host's repo: tier
  `ledger`, `glass` for the requesting account, `dark` the moment it is revoked.
  An attempt requested by anything but a user with a binary id gets `:none`.
  """
  @spec link_for_attempt(term(), term(), term()) :: {:ok, struct()} | :none | {:error, term()}
  def link_for_attempt(repository, principal, authority \\ %{}) do
    principal = if is_map(principal), do: principal, else: %{}
    kind = Boundary.word(Map.get(principal, "type"))

    case Native.link_for_attempt(repository, kind, Map.get(principal, "id"), authority) do
      {:ok, attrs} -> Boundary.insert_link(attrs)
      {:error, _no_owner} -> :none
    end
  end

  @doc """
  Projects `source` for `family` at `tier`: each admitted field taken by its
  name (`nil` when absent), nothing else; `nil`, `source` unread, when the
  tier admits no field.

      iex> projected = OpenAgents.Transparency.WorkDisclosure.project(:trace, %{id: 7, document: "secret"}, :pulse)
      iex> Enum.sort(Map.keys(projected)) == OpenAgents.Transparency.WorkDisclosure.fields_at(:trace, :pulse)
      true
      iex> OpenAgents.Transparency.WorkDisclosure.project(:trace, %{id: 7}, :dark)
      nil
  """
  @spec project(family(), map(), term()) :: map() | nil
  def project(family, source, tier)

  # A tier word's fields, read in one match from a source that has them all; any
  # other source is read field by field below (a field it lacks reads `nil`).
  for family <- @families,
      tier <- @tier_words,
      fields <- [Native.fields_at(family, elem(Boundary.viewer(tier), 0))],
      fields != [] do
    taken = Enum.map(fields, &{&1, Macro.var(&1, __MODULE__)})

    def project(unquote(family), %{unquote_splicing(taken)}, unquote(tier)),
      do: %{unquote_splicing(taken)}
  end

  def project(family, source, tier) when family in @families do
    case fields_at(family, tier) do
      [] -> nil
      fields when is_map(source) -> Map.new(fields, &{&1, Map.get(source, &1)})
      _fields -> raise BadMapError, term: source
    end
  end

  @doc """
  Classifies a table's columns against the schedule of `family`: those neither
  a scheduled field's source nor never-listed, and those both. Both empty is
  the invariant, so a host's test holds its live schema to the schedule in one line:

      assert WorkDisclosure.classify(:attempt, Assignment.__schema__(:fields)) ==
               %{unclassified: [], doubly_classified: []}

      iex> OpenAgents.Transparency.WorkDisclosure.classify(:trace, [:prompt_nobody_scheduled])
      %{unclassified: [:prompt_nobody_scheduled], doubly_classified: []}
  """
  @spec classify(family(), [atom()]) :: %{unclassified: [atom()], doubly_classified: [atom()]}
  def classify(family, columns) when family in @families and is_list(columns) do
    classified = Native.classify(family, Enum.map(columns, &Atom.to_string/1))
    Map.new(classified, fn {key, words} -> {key, Enum.map(words, &String.to_existing_atom/1)} end)
  end

  @doc """
  The whole schedule as JSON, exactly as the Rust core serializes it: every
  family with its fields (name, tier, source column) and its never list.
  """
  @spec schedule_json() :: String.t()
  def schedule_json, do: Native.schedule_json()
end
