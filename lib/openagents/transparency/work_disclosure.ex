defmodule OpenAgents.Transparency.WorkDisclosure do
  @moduledoc """
  The field-by-field disclosure schedule for work in progress: attempts,
  work jobs, evidence edges and traces.

  A tier elsewhere answers "may this reader see the record". For work
  someone is doing now the question is "which of its fields": each family
  names the rung that first exposes each field, and a never list names the
  columns no rung exposes. A column on neither list, or on both, is a defect
  `classify/2` finds, which keeps this a schedule rather than an intention.

    * `pulse`: the work exists, its shape, how it came out; no ref, revision,
      receipt or place.
    * `ledger`: the content of the result: what identifies or addresses
      repository content.
    * `glass`: the work job's own output, for the account the work belongs to
      (an `ArtifactLink` raises its owner to `glass`) and an operator.
    * `dark`: nothing; a projection at `dark` is `nil`, never an empty map.

  The never lists are not a fifth rung: the prompt and goal, the authority
  snapshot, internal node names, credential delivery, the conversation the
  work came from. Repository authority is stronger than every rung: the
  host's `Repositories.readable_by/2` runs first.

  Every rule lives in the Rust core. This module guards arguments, asks the
  host what only it knows (`Accounts.admin?/1`, `Repositories.member?/2`;
  `link_for_attempt/3` inserts through `ArtifactLink.changeset/2` and
  `Repo.insert/1`, see `OpenAgentsPolicy.Host`), and keeps the core's answers
  over finite domains as function clauses compiled in, asking the core on
  the call for anything else.
  """

  alias OpenAgentsPolicy.{Host, Native}

  # Read from the Rust core as this module compiles (a compile-time
  # dependency on Native, so a rebuilt library recompiles it).
  @families Native.families()
  @not_loaded Host.not_loaded()
  @schedule Native.schedule()
  @relationships Native.relationships()
  # The tier words a caller names directly: each tier as an atom and as a
  # string, and `nil`. `fields_at/2` and `project/3` hold the core's answer
  # for each; any other tier term (a viewer, a user, an unknown word) is asked
  # of the core on the call.
  @tier_words [nil | Enum.flat_map(Native.tiers(), &[&1, Atom.to_string(&1)])]
  # A viewer that is a tier word names it as itself: `nil` is no viewer.
  @viewer_words Enum.reject(@tier_words, &is_nil/1)
  # The classes of viewer `effective_tier/2` holds the core's answers for
  # (see `viewer_class/1`), each with a function making a viewer of that
  # class that reads for a given account (when its shape carries one).
  @viewer_classes [
                    operator: fn _account -> %{admin: true} end,
                    account: fn account -> %{account_id: account} end,
                    nobody: fn _account -> nil end
                  ] ++
                    Enum.map(@tier_words, fn word ->
                      {{:tiered, word}, fn account -> %{tier: word, account_id: account} end}
                    end) ++
                    Enum.map(@viewer_words, fn word ->
                      {{:word, word}, fn _account -> word end}
                    end)
  @dirty_read_bytes OpenAgentsPolicy.Scheduler.dirty_read_bytes()
  @class_count length(@viewer_classes)
  # effective_tier/2's answers, the core's over the whole compiled domain, as
  # tuples indexed by tier word (`word_at/1`), viewer class (`viewer_class/1`)
  # and, for a live link, whether the viewer owns it: a revoked link of every
  # tier word; a live link of every tier word read by a viewer of every
  # class, owner or not; a tier column of every tier word read by a viewer of
  # every class. Each class is asked through a viewer of its shape; the test
  # suite holds every answer to the NIF.
  @revoked_answers List.to_tuple(
                     for tier <- @tier_words,
                         do: Native.linked_tier("owner", tier, :revoked, nil, nil)
                   )
  @linked_answers List.to_tuple(
                    for tier <- @tier_words,
                        {_class, viewer_of} <- @viewer_classes,
                        account <- ["reader", "owner"],
                        do: Native.linked_tier("owner", tier, nil, viewer_of.(account), nil)
                  )
  @column_answers List.to_tuple(
                    for tier <- @tier_words,
                        {_class, viewer_of} <- @viewer_classes,
                        do: Native.effective_tier(nil, tier, viewer_of.("reader"), nil)
                  )

  @typedoc "A family of records: `:attempt`, `:work_job`, `:evidence`, `:trace`."
  @type family :: :attempt | :work_job | :evidence | :trace

  @typedoc "A tier, as `OpenAgents.Transparency.Ladder` names them."
  @type tier :: OpenAgents.Transparency.Ladder.tier()

  @doc """
  The families this schedule covers.

      iex> OpenAgents.Transparency.WorkDisclosure.families()
      [:attempt, :work_job, :evidence, :trace]
  """
  @spec families() :: [family()]
  def families, do: @families

  @doc "The whole schedule, as `%{family => %{field => tier}}`."
  @spec schedule() :: %{family() => %{atom() => tier()}}
  def schedule, do: @schedule

  @doc """
  The columns of `family` that no tier discloses, in any form.

      iex> OpenAgents.Transparency.WorkDisclosure.never(:trace)
      [:user_id, :visibility, :assignment_id]
  """
  @spec never(family()) :: [atom()]
  def never(family)

  for family <- @families do
    def never(unquote(family)), do: unquote(Native.never(family))
  end

  @doc """
  The schema columns the scheduled fields of `family` are read from, sorted.
  A field is read from the column of its own name unless it is derived or
  renamed (`requester_kind` from `requesting_principal`, `budget` from
  `budget_snapshot`, the evidence `commit` from `commit_sha`, `recorded_at`
  from `inserted_at`, a trace's `schema_version` and `step_count` from its
  `document`).

      iex> OpenAgents.Transparency.WorkDisclosure.source_columns(:trace)
      [:byte_size, :digest, :document, :id, :inserted_at]
  """
  @spec source_columns(family()) :: [atom()]
  def source_columns(family)

  for family <- @families do
    def source_columns(unquote(family)), do: unquote(Native.source_columns(family))
  end

  @doc """
  The tier that first exposes `field` of `family`, or `nil` if none does.

      iex> OpenAgents.Transparency.WorkDisclosure.tier_for(:work_job, :report)
      :glass
      iex> OpenAgents.Transparency.WorkDisclosure.tier_for(:work_job, :goal)
      nil
  """
  @spec tier_for(family(), term()) :: tier() | nil
  def tier_for(family, field)

  for {family, fields} <- @schedule, field <- Map.keys(fields) do
    def tier_for(unquote(family), unquote(field)),
      do: unquote(Native.tier_for(family, field))
  end

  def tier_for(family, field) when family in @families, do: Native.tier_for(family, field)

  @doc """
  The fields of `family` that `tier` admits, sorted.

  `tier` is anything the ladder reads as a viewer: a tier atom or its string,
  a viewer map, a user. `nil` has no tier of its own and so admits every
  field; an unknown tier names `dark` and admits none.

      iex> OpenAgents.Transparency.WorkDisclosure.fields_at(:trace, :pulse)
      [:id, :recorded_at, :schema_version, :step_count]
      iex> OpenAgents.Transparency.WorkDisclosure.fields_at(:trace, "dark")
      []
  """
  @spec fields_at(family(), term()) :: [atom()]
  def fields_at(family, tier)

  for family <- @families, tier <- @tier_words do
    def fields_at(unquote(family), unquote(tier)),
      do: unquote(Native.fields_at(family, tier, nil))
  end

  def fields_at(family, tier) when family in @families do
    {tier, user_admin} = Host.viewer_term(tier)

    Native.fields_at(family, tier, user_admin)
  end

  @doc """
  The viewer descriptor for `repository` and `user`: the account to compare
  with a link's owner, and the tier that clamps everything else.

    * an operator (`Accounts.admin?/1`) is `glass`, marked `admin: true`;
    * a member of the repository (`Repositories.member?/2`) is `ledger`, the
      rung membership admits a private repository's reader on;
    * any other user is `pulse`, and so is no user at all, with no account.

      iex> OpenAgents.Transparency.WorkDisclosure.viewer(%{id: "repo"}, nil)
      %{account_id: nil, tier: :pulse}
  """
  @spec viewer(term(), term()) :: %{
          required(:account_id) => term(),
          required(:tier) => tier(),
          optional(:admin) => true
        }
  def viewer(repository, %{__struct__: module} = user) do
    if Host.user?(module),
      do: descriptor(Host.relationship(repository, user), user.id),
      else: descriptor(:anonymous, nil)
  end

  def viewer(_repository, _not_a_user), do: descriptor(:anonymous, nil)

  # The core's descriptor for each relationship, asked with a marker for the
  # account, so each clause puts the user's id where the core put it (and
  # nowhere the core did not).
  marker = :__openagents_policy_account__

  for relationship <- @relationships do
    account = Macro.var(:account, __MODULE__)

    descriptor =
      for {key, value} <- Native.viewer(relationship, marker) do
        if value == marker, do: {key, account}, else: {key, Macro.escape(value)}
      end

    account =
      if Enum.any?(descriptor, &(elem(&1, 1) == account)), do: account, else: {:_, [], nil}

    defp descriptor(unquote(relationship), unquote(account)), do: %{unquote_splicing(descriptor)}
  end

  @doc """
  The effective tier of one record for one viewer.

  A record whose `:artifact_link` is a loaded link (a struct of the host's
  `:artifact_link` module) resolves through it: revoked is `dark` for
  everyone, its owner and an operator are `glass`. Any other record (no link,
  `nil`) resolves through its `:transparency_tier`: an operator descriptor
  (`admin: true`) is `glass`, and nobody else is raised.

  A record whose link exists but was not loaded (`:artifact_link` is
  `%Ecto.Association.NotLoaded{}` while `artifact_link_id` is set) reads what
  `config :openagents_policy, unloaded_link:` says (see
  `OpenAgentsPolicy.Host`): its tier column (`:tier_column`, the default, as
  the app's `Transparency` reads it), `dark` (`:dark`), or an
  `ArgumentError` saying to preload the link (`:raise`).

      iex> OpenAgents.Transparency.WorkDisclosure.effective_tier(%{transparency_tier: "ledger"}, %{tier: :pulse})
      :pulse
      iex> OpenAgents.Transparency.WorkDisclosure.effective_tier(%{transparency_tier: "pulse"}, %{admin: true})
      :glass
  """
  @spec effective_tier(map(), term()) :: tier()
  def effective_tier(record, viewer) when is_map(record) do
    # The record's fields are read here, where the compiled match knows their
    # keys (on a host's 35-key record that is most of the call): a loaded
    # link's owner, tier and revocation, else the tier column.
    case record do
      %{artifact_link: %{__struct__: @not_loaded}} -> unloaded_tier(record, viewer)
      %{artifact_link: %{__struct__: module} = link} -> struct_tier(module, link, record, viewer)
      %{transparency_tier: tier} -> column_tier(tier, viewer)
      %{} -> column_tier(nil, viewer)
    end
  end

  def effective_tier(record, _viewer), do: raise(BadMapError, term: record)

  # A struct in the link's place is the link when it is of the default name
  # or the configured module (`Host.link?/1`); a map that claims it without
  # its fields goes to the core whole.
  defp struct_tier(module, link, record, viewer) do
    if Host.link?(module) do
      case link do
        %{account_id: owner, tier: tier, revoked_at: revoked_at} ->
          linked_tier(owner, tier, revoked_at, viewer)

        _lacking_fields ->
          {viewer, user_admin} = Host.viewer_term(viewer)
          link = Host.live_link_tier!(link)

          Native.effective_tier(Host.subject_term(link), nil, viewer, user_admin)
      end
    else
      column_tier(Map.get(record, :transparency_tier), viewer)
    end
  end

  # A loaded link's tier, from its three fields. A revoked link, or a live
  # one read by a viewer of a compiled class, answers from the core's tables
  # (below) when its tier is a word; anything else is asked of the core.
  defp linked_tier(owner, tier, revoked_at, viewer) when revoked_at != nil do
    case word_at(tier) do
      nil -> linked_core(owner, tier, revoked_at, viewer)
      at -> elem(@revoked_answers, at)
    end
  end

  defp linked_tier(owner, tier, nil, viewer) do
    with at when at != nil <- word_at(tier),
         {class, account} <- viewer_class(viewer),
         owns when is_boolean(owns) <- owns?(owner, account) do
      elem(@linked_answers, (at * @class_count + class) * 2 + if(owns, do: 1, else: 0))
    else
      _core -> linked_core(owner, tier, nil, viewer)
    end
  end

  defp linked_core(owner, tier, revoked_at, viewer) do
    {viewer, user_admin} = Host.viewer_term(viewer)

    Native.linked_tier(owner, tier, revoked_at, viewer, user_admin)
  end

  # Whether a viewer reading for `account` owns a link of `owner`: both set
  # and equal (`==`, as the core compares them). Compared here only when that
  # is cheap (binaries a normal-scheduler NIF may read,
  # `OpenAgentsPolicy.Scheduler`); :core otherwise, so the core (and its
  # choice of scheduler) compares them.
  defp owns?(nil, _account), do: false
  defp owns?(_owner, nil), do: false

  defp owns?(owner, account)
       when is_binary(owner) and is_binary(account) and
              byte_size(owner) <= @dirty_read_bytes and byte_size(account) <= @dirty_read_bytes,
       do: owner == account

  defp owns?(_owner, _account), do: :core

  # A tier word's place in @tier_words (the row of the tables below), or nil.
  for {word, at} <- Enum.with_index(@tier_words) do
    defp word_at(unquote(word)), do: unquote(at)
  end

  defp word_at(_other), do: nil

  # The class of a viewer as the core reads its shape (its place in
  # @viewer_classes, the column of the tables below), and the account it
  # reads for: `{class, account}`, or :core for a viewer only the core (and
  # the host) can read: a struct (which the host's `:user` setting names, and
  # whose `admin?/1` the host answers), or a tier that is not a word. The
  # clauses follow the core's order (`decode::viewer`): an operator mark, a
  # tier, an account, any other map; a word; anything else is nobody.
  class_at = fn class -> Enum.find_index(@viewer_classes, &(elem(&1, 0) == class)) end

  defp viewer_class(%{__struct__: _}), do: :core
  defp viewer_class(%{admin: true}), do: {unquote(class_at.(:operator)), nil}

  for word <- @tier_words do
    defp viewer_class(%{tier: unquote(word)} = viewer),
      do: {unquote(class_at.({:tiered, word})), Map.get(viewer, :account_id)}
  end

  defp viewer_class(%{tier: _}), do: :core
  defp viewer_class(%{account_id: account}), do: {unquote(class_at.(:account)), account}
  defp viewer_class(%{}), do: {unquote(class_at.(:nobody)), nil}

  for word <- @viewer_words do
    defp viewer_class(unquote(word)), do: {unquote(class_at.({:word, word})), nil}
  end

  defp viewer_class(viewer) when is_binary(viewer) or (is_atom(viewer) and viewer != nil),
    do: :core

  defp viewer_class(_viewer), do: {unquote(class_at.(:nobody)), nil}

  # A link that exists (its id is set) but was not loaded: what the host
  # configured. With no id there is no link to have forgotten.
  defp unloaded_tier(record, viewer) do
    case Map.get(record, :artifact_link_id) do
      nil ->
        column_tier(Map.get(record, :transparency_tier), viewer)

      _id ->
        case Host.unloaded_link() do
          :tier_column -> column_tier(Map.get(record, :transparency_tier), viewer)
          :dark -> :dark
          :raise -> raise ArgumentError, unloaded_message(record)
        end
    end
  end

  defp unloaded_message(record) do
    "effective_tier/2 was given a record whose :artifact_link was not loaded while its " <>
      "artifact_link_id is set#{describe(record)}: preload :artifact_link (for example " <>
      "Repo.preload(records, :artifact_link)) so that a revoked link reads dark " <>
      "(config :openagents_policy, unloaded_link: :raise)"
  end

  defp describe(%{__struct__: module}), do: " (a #{inspect(module)})"
  defp describe(_record), do: ""

  # The tier column (or whatever stands in it): a tier word read by a viewer
  # of a compiled class answers from the core's table; anything else is the
  # core's to name and clamp.
  defp column_tier(tier, viewer) do
    with at when at != nil <- word_at(tier),
         {class, _account} <- viewer_class(viewer) do
      elem(@column_answers, at * @class_count + class)
    else
      _core -> column_core(tier, viewer)
    end
  end

  defp column_core(tier, viewer) do
    {viewer_term, user_admin} = Host.viewer_term(viewer)
    # An operator descriptor reads a column as glass before any link in it is read.
    unless match?(%{admin: true}, viewer), do: Host.live_link_tier!(tier)

    Native.effective_tier(nil, Host.subject_term(tier), viewer_term, user_admin)
  end

  @doc """
  Mints the consent-bearing link for one attempt through the host's repo, or
  returns `:none`.

  The link lets the ladder do what a tier column cannot: raise the requesting
  account to `glass`, and go `dark` the moment it is revoked. Its tier is
  `ledger`, the ceiling a member already has. An attempt that an agent (or
  anything but a user with a binary id) requested has no owner, so it gets
  `:none` rather than a link owned by nobody.
  """
  @spec link_for_attempt(term(), term(), term()) :: {:ok, struct()} | :none | {:error, term()}
  def link_for_attempt(repository, principal, authority \\ %{}) do
    # The principal's two words are read here, where the compiled match knows
    # their keys; whether they make an owner is the core's to say.
    kind =
      case principal do
        %{"type" => kind} -> kind
        _ -> nil
      end

    id =
      case principal do
        %{"id" => id} -> id
        _ -> nil
      end

    case Native.link_for_attempt(repository, kind, id, authority) do
      {:ok, attrs} -> Host.insert_link(attrs)
      {:error, _no_owner} -> :none
    end
  end

  @doc """
  Projects `source` for `family` at `tier`: each admitted field taken from
  `source` by its name (`nil` when absent), and nothing else. `nil` when the
  tier admits no field, without reading `source` at all.

      iex> OpenAgents.Transparency.WorkDisclosure.project(:trace, %{id: 7, digest: "sha", document: "secret"}, :pulse)
      %{id: 7, recorded_at: nil, schema_version: nil, step_count: nil}
      iex> OpenAgents.Transparency.WorkDisclosure.project(:trace, %{id: 7}, :dark)
      nil
  """
  @spec project(family(), map(), term()) :: map() | nil
  def project(family, source, tier)

  # A tier named by a word: the fields the core admits at it (the table of
  # `fields_at/2`), each read from the source in one match when the source has
  # them all, else one by one. A source need not have them: a field it lacks
  # reads `nil`, as in the NIF's own projection, which the test suite holds
  # these clauses to.
  for family <- @families, tier <- @tier_words do
    case Native.fields_at(family, tier, nil) do
      [] ->
        def project(unquote(family), _source, unquote(tier)), do: nil

      fields ->
        taken = Enum.map(fields, &{&1, Macro.var(&1, __MODULE__)})
        source = Macro.var(:source, __MODULE__)
        looked_up = Enum.map(fields, &{&1, quote(do: Map.get(unquote(source), unquote(&1)))})

        def project(unquote(family), %{unquote_splicing(taken)}, unquote(tier)),
          do: %{unquote_splicing(taken)}

        def project(unquote(family), unquote(source), unquote(tier))
            when is_map(unquote(source)),
            do: %{unquote_splicing(looked_up)}
    end
  end

  def project(family, source, tier) when family in @families and is_map(source) do
    {tier, user_admin} = Host.viewer_term(tier)

    Native.project(family, source, tier, user_admin)
  end

  def project(family, source, tier) when family in @families do
    case fields_at(family, tier) do
      [] -> nil
      _fields -> raise BadMapError, term: source
    end
  end

  @doc """
  Classifies a table's columns against the schedule of `family`: those that
  are neither a scheduled field's source nor never-listed, and those that are
  both. Both empty is the invariant, so a host's test can hold its live schema
  to the schedule in one line:

      assert WorkDisclosure.classify(:attempt, Assignment.__schema__(:fields)) ==
               %{unclassified: [], doubly_classified: []}

      iex> OpenAgents.Transparency.WorkDisclosure.classify(:trace, [:id, :document, :prompt, :user_id])
      %{unclassified: [:prompt], doubly_classified: []}
  """
  @spec classify(family(), [atom()]) :: %{unclassified: [atom()], doubly_classified: [atom()]}
  def classify(family, columns) when family in @families and is_list(columns) do
    {unclassified, doubly} = Native.classify(family, Enum.map(columns, &Atom.to_string/1))
    given = List.to_tuple(columns)
    pick = fn positions -> Enum.map(positions, &elem(given, &1)) end
    %{unclassified: pick.(unclassified), doubly_classified: pick.(doubly)}
  end

  @doc """
  The whole schedule as JSON, exactly as the Rust core serializes it: every
  family with its fields (name, tier, source column) and its never list.
  """
  @spec schedule_json() :: String.t()
  def schedule_json, do: Native.schedule_json()
end
