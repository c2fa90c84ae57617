defmodule OpenAgentsPolicy.Host.Boundary do
  @moduledoc false
  # Where the library meets the host: a viewer, a record, a link and a tier reduced,
  # once per call, to the typed terms the NIFs take (no account id crosses), and the
  # calls into the host modules OpenAgentsPolicy.Host names. A host never calls it.

  alias OpenAgentsPolicy.Host

  @user Host.defaults().user
  @link Host.defaults().artifact_link
  # By name: the library does not depend on Ecto.
  @not_loaded Ecto.Association.NotLoaded

  # A viewer's class (viewer/1), a subject (subject/2), a tier: as NIFs take them.
  @type class :: :operator | :account | :nobody | {:user | :tiered | :word, term()}
  @type subject :: {:link, :live | :revoked, tier(), boolean()} | {:tier, tier()}
  @type tier :: atom() | binary()

  # Whether a struct of `module` is a link (a user): the default or the configured module.
  defp link?(module), do: module == @link or module == Host.module(:artifact_link)
  defp user?(module), do: module == @user or module == Host.module(:user)

  # A viewer as `{class, account}` (a user's `account_id` when set, else its `id`),
  # the shapes in the order OpenAgents.Transparency.Ladder's docs list them.
  @spec viewer(term()) :: {class(), term()}
  def viewer(%{admin: true}), do: {:operator, nil}
  def viewer(%{__struct__: mod} = map), do: if(user?(mod), do: user(map), else: viewer_map(map))
  def viewer(%{} = map), do: viewer_map(map)
  def viewer(nil), do: {:nobody, nil}
  def viewer(word) when is_binary(word) or is_atom(word), do: {{:word, tier(word)}, nil}
  def viewer(_nobody), do: {:nobody, nil}

  defp viewer_map(%{tier: tier} = map), do: {{:tiered, tier(tier)}, Map.get(map, :account_id)}
  defp viewer_map(%{account_id: account}), do: {:account, account}
  defp viewer_map(_map), do: {:nobody, nil}

  # The host's `admin?/1`, read as truthy.
  defp user(user) do
    account = with nil <- Map.get(user, :account_id), do: Map.get(user, :id)
    {{:user, if(Host.module(:accounts).admin?(user), do: true, else: false)}, account}
  end

  # A tier bounded for a NIF: an atom or a word (a binary of at most @word_bytes,
  # more than any of the core's; where_visible/2's SQL reads it too), else nil.
  @word_bytes 64
  defguardp word?(word) when is_binary(word) and byte_size(word) <= @word_bytes

  @spec word_bytes() :: pos_integer()
  def word_bytes, do: @word_bytes

  @spec tier(term()) :: tier() | nil
  def tier(tier) when is_atom(tier) or word?(tier), do: tier
  def tier(_not_a_tier), do: nil

  @spec word(term()) :: binary() | nil
  def word(word) when word?(word), do: word
  def word(_not_a_word), do: nil

  # What the ladder reads `subject` at for `viewer`: `{subject, class}`.
  @spec reading(term(), term()) :: {subject(), class()}
  def reading(subject, viewer) do
    {class, account} = viewer(viewer)
    {subject(subject, account), class}
  end

  # A subject for a reader for `account`: a link is link/2's, anything else a tier.
  @spec subject(term(), term()) :: subject()
  def subject(%{__struct__: module} = subject, account) do
    if link?(module), do: link(subject, account), else: {:tier, tier(subject)}
  end

  def subject(tier, _account), do: {:tier, tier(tier)}

  # A link for a reader for `account`: ownership is decided here (`==`, both set), so
  # no account id reaches a NIF; a live link without `:tier` raises as `link.tier` does.
  @spec link(map(), term()) :: subject()
  def link(%{revoked_at: nil, tier: tier} = link, account),
    do: {:link, :live, tier(tier), owns?(Map.get(link, :account_id), account)}

  def link(%{revoked_at: nil} = link, _account), do: raise(KeyError, key: :tier, term: link)
  def link(link, _account), do: {:link, :revoked, tier(Map.get(link, :tier)), false}

  defp owns?(owner, account), do: owner != nil and account != nil and owner == account

  # What effective_tier/2 decides on: `{record, class}` as the NIF takes them, or
  # `:dark` (`unloaded_link: :dark`), read in a compiled match (on a host's 35-key
  # record, most of the call). A struct in the link's place that is not a link leaves the column.
  @spec record(map(), term()) :: {tuple(), class()} | :dark
  def record(record, viewer) do
    case record do
      %{artifact_link: %{__struct__: @not_loaded}} -> unloaded(record, viewer)
      %{artifact_link: %{__struct__: module} = link} -> linked(module, link, record, viewer)
      %{transparency_tier: tier} -> column(tier, viewer)
      %{} -> column(nil, viewer)
    end
  end

  # As link/2 reads it, built here (the request path); a revoked link reads alike for
  # every viewer (the core's `Link::tier_for_anyone`), so its viewer is not read.
  defp linked(module, link, record, viewer) do
    cond do
      not link?(module) -> column(Map.get(record, :transparency_tier), viewer)
      match?(%{revoked_at: nil, tier: _}, link) -> live(link, viewer(viewer))
      match?(%{revoked_at: nil}, link) -> link(link, nil)
      true -> {{:linked, :revoked, tier(Map.get(link, :tier)), false}, :nobody}
    end
  end

  defp live(link, {class, account}),
    do: {{:linked, :live, tier(link.tier), owns?(Map.get(link, :account_id), account)}, class}

  # An operator reads a column before any link in it is read (the seed's
  # `unlinked_tier(_tier, %{admin: true})`), so that raises nothing.
  defp column(subject, viewer) do
    case viewer(viewer) do
      {:operator, _account} -> {{:column, {:tier, nil}}, :operator}
      {class, account} -> {{:column, subject(subject, account)}, class}
    end
  end

  # A link that exists (its id is set) but was not loaded: as configured.
  defp unloaded(record, viewer) do
    mode = if Map.get(record, :artifact_link_id), do: Host.unloaded_link(), else: :tier_column

    case mode do
      :tier_column -> column(Map.get(record, :transparency_tier), viewer)
      :dark -> :dark
      :raise -> raise ArgumentError, unloaded_message(record)
    end
  end

  defp unloaded_message(record) do
    described = with %{__struct__: m} <- record, do: " (a #{inspect(m)})", else: (_ -> "")

    "effective_tier/2 was given a record whose :artifact_link was not loaded while its " <>
      "artifact_link_id is set#{described}: preload :artifact_link (for example " <>
      "Repo.preload(records, :artifact_link)) so that a revoked link reads dark " <>
      "(config :openagents_policy, unloaded_link: :raise)"
  end

  # A user's relationship to `repository`, asked in this order; any other viewer is anonymous.
  @spec relationship(term(), term()) :: {:operator | :member | :stranger | :anonymous, term()}
  def relationship(repository, %{__struct__: module} = user) do
    cond do
      not user?(module) -> {:anonymous, nil}
      Host.module(:accounts).admin?(user) -> {:operator, user.id}
      Host.module(:repositories).member?(repository, user) -> {:member, user.id}
      true -> {:stranger, user.id}
    end
  end

  def relationship(_repository, _not_a_user), do: {:anonymous, nil}

  # The core's link attributes, through the host's `changeset/2` and `insert/1`.
  @spec insert_link(map()) :: term()
  def insert_link(attrs) do
    link = Host.module(:artifact_link)
    link.__struct__() |> link.changeset(attrs) |> Host.module(:repo).insert()
  end
end
