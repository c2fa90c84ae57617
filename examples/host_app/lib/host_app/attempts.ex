defmodule HostApp.Attempts do
  @moduledoc """
  Attempts as the API reads and writes them.

  Reading: a repository's attempts, oldest first, a batch at a time after a
  cursor, each with its work job and its `:artifact_link` preloaded (without
  it the ladder cannot see a revocation); a listing's query reads only the
  rows the reader does not read at `dark` (`WorkDisclosure.where_visible/2`).
  A trace is read as its projected columns and two facts from its document,
  never the document.

  Writing (`create/4`): `link_for_attempt/3` once per new attempt, inside the
  transaction that inserts the attempt pointing at the minted link and then
  binds the link to the attempt's id; whatever fails, nothing is kept and the
  failing changeset comes back as it came. Revoking is guarded by `revoked_at
  IS NULL`: of two concurrent revokes one wins and the other is told so.
  """
  import Ecto.Query

  alias OpenAgents.Accounts.User
  alias OpenAgents.Forge.{Assignment, Issue, IssueEvidence}
  alias OpenAgents.Repo
  alias OpenAgents.Repositories.Repository
  alias OpenAgents.Traces.Trace
  alias OpenAgents.Transparency.{ArtifactLink, WorkDisclosure}

  @typedoc "Where a batch starts: after this attempt (its `inserted_at` and id), or from the first."
  @type cursor :: Assignment.t() | nil

  @doc """
  At most `count` attempts of `repository`, oldest first (by `inserted_at`,
  then id), after `cursor` (an attempt of the same repository) or from the
  first, each with its work job and link preloaded.
  """
  @spec batch(Repository.t(), cursor(), pos_integer()) :: [Assignment.t()]
  def batch(repository, cursor, count) do
    repository
    |> query(cursor, count)
    |> join(:left, [a], l in assoc(a, :artifact_link))
    |> preload([a, l], [:work_job, artifact_link: l])
    |> Repo.all()
  end

  @doc """
  As `batch/3`, reading only the attempts `viewer` does not read at `dark`
  (`WorkDisclosure.where_visible/2`): an attempt a reader cannot see costs
  its page no row returned, preload or decision, only PostgreSQL's pass over
  it in the index scan.
  """
  @spec batch(Repository.t(), cursor(), pos_integer(), map()) :: [Assignment.t()]
  def batch(repository, cursor, count, viewer) do
    repository
    |> query(cursor, count)
    |> WorkDisclosure.where_visible(viewer)
    |> preload([a, ..., l], [:work_job, artifact_link: l])
    |> Repo.all()
  end

  defp query(%Repository{id: id}, cursor, count) do
    from(a in Assignment,
      where: a.repository_id == ^id,
      order_by: [asc: a.inserted_at, asc: a.id],
      limit: ^count
    )
    |> after_cursor(cursor)
  end

  # `inserted_at >= at` on its own, so the (repository_id, inserted_at)
  # index bounds the scan.
  defp after_cursor(query, nil), do: query

  defp after_cursor(query, %Assignment{inserted_at: at, id: id}),
    do: where(query, [a], a.inserted_at >= ^at and (a.inserted_at > ^at or a.id > ^id))

  @doc """
  One attempt of `repository` with its work job and link preloaded, or `nil`
  (also for an id that is not a UUID, or an attempt of another repository).
  """
  @spec get_in_repository(Repository.t(), String.t()) :: Assignment.t() | nil
  def get_in_repository(%Repository{id: repository_id}, id) do
    with {:ok, uuid} <- Ecto.UUID.cast(id),
         %Assignment{} = assignment <-
           Repo.get_by(Assignment, id: uuid, repository_id: repository_id) do
      Repo.preload(assignment, [:work_job, :artifact_link])
    else
      _ -> nil
    end
  end

  @doc "One attempt with its repository, work job, link, evidence (with links) and traces, or `nil`."
  @spec get(String.t()) :: Assignment.t() | nil
  def get(id) do
    with {:ok, uuid} <- Ecto.UUID.cast(id),
         %Assignment{} = assignment <- Repo.get(Assignment, uuid) do
      Repo.preload(assignment, [:repository, :work_job, :artifact_link])
    else
      _ -> nil
    end
  end

  @doc "The evidence edges of an attempt, oldest first, each with its own link preloaded."
  @spec evidence(Assignment.t()) :: [IssueEvidence.t()]
  def evidence(%Assignment{id: id}) do
    Repo.all(
      from e in IssueEvidence,
        where: e.assignment_id == ^id,
        order_by: [asc: e.inserted_at, asc: e.id],
        preload: :artifact_link
    )
  end

  @doc """
  The traces of an attempt that its uploader did not keep private, oldest
  first, as the source of their projection: the columns it reads, and the
  document's schema version and step count (read by PostgreSQL; the document
  is not loaded).
  """
  @spec trace_sources(Assignment.t()) :: [map()]
  def trace_sources(%Assignment{id: id}) do
    Repo.all(
      from t in Trace,
        where: t.assignment_id == ^id and t.visibility != "private",
        order_by: [asc: t.inserted_at, asc: t.id],
        select: %{
          id: t.id,
          digest: t.digest,
          byte_size: t.byte_size,
          recorded_at: t.inserted_at,
          schema_version: fragment("?->'schema_version'", t.document),
          step_count:
            fragment(
              "CASE WHEN jsonb_typeof(?->'steps') = 'array' THEN jsonb_array_length(?->'steps') END",
              t.document,
              t.document
            )
        }
    )
  end

  @doc "The issue of `repository` numbered `number`, or `nil`."
  @spec issue(Repository.t(), integer()) :: Issue.t() | nil
  def issue(%Repository{id: id}, number),
    do: Repo.one(from i in Issue, where: i.repository_id == ^id and i.number == ^number)

  @doc """
  Requests an attempt at issue `issue_number` of `repository` for `user`, on
  a `target_kind` target, under `authority`. Returns the attempt with its
  work job (none yet) and link preloaded, or the changeset that failed (the
  link's, from `link_for_attempt/3` unchanged, or the attempt's).
  """
  @spec create(Repository.t(), User.t(), map(), map()) ::
          {:ok, Assignment.t()} | {:error, Ecto.Changeset.t()}
  def create(%Repository{} = repository, %User{} = user, attrs, authority \\ %{}) do
    principal = %{"type" => "user", "id" => user.id}

    Repo.transaction(fn ->
      with {:ok, link} <- mint(repository, principal, authority),
           {:ok, assignment} <- insert(repository, principal, link, attrs),
           {:ok, link} <- bind(link, assignment) do
        %{assignment | artifact_link: link, work_job: nil}
      else
        {:error, changeset} -> Repo.rollback(changeset)
      end
    end)
  end

  defp mint(repository, principal, authority) do
    case WorkDisclosure.link_for_attempt(repository, principal, authority) do
      {:ok, %ArtifactLink{} = link} -> {:ok, link}
      :none -> {:ok, nil}
      {:error, changeset} -> {:error, changeset}
    end
  end

  defp insert(repository, principal, link, attrs) do
    issue_id = with %Issue{id: id} <- issue(repository, attrs.issue_number), do: id

    %Assignment{}
    |> Assignment.changeset(%{
      repository_id: repository.id,
      issue_id: issue_id,
      target_kind: attrs.target_kind,
      requesting_principal: principal,
      state: "admitted",
      admitted_at: DateTime.utc_now() |> DateTime.truncate(:second),
      transparency_tier: "ledger",
      artifact_link_id: link && link.id
    })
    |> then(fn changeset ->
      # Said of the field the request named, not of the column behind it.
      if issue_id,
        do: changeset,
        else: Ecto.Changeset.add_error(changeset, :issue_number, "does not exist")
    end)
    |> Repo.insert()
  end

  defp bind(nil, _assignment), do: {:ok, nil}

  defp bind(link, assignment),
    do: link |> ArtifactLink.bind_changeset(assignment.id) |> Repo.update()

  @doc """
  Revokes the link with id `link_id` for `user`: allowed to the link's
  account and to an operator. A link already revoked is not stamped again:
  `{:error, :already_revoked}`, and its first `revoked_at` and tombstone
  stay.
  """
  @spec revoke_link(String.t(), User.t()) ::
          {:ok, ArtifactLink.t()} | {:error, :not_found | :forbidden | :already_revoked}
  def revoke_link(link_id, %User{} = user) do
    with {:ok, uuid} <- cast_id(link_id),
         %ArtifactLink{} = link <- Repo.get(ArtifactLink, uuid) || {:error, :not_found},
         :ok <- may_revoke(link, user) do
      stamp(link.id, %{"revoked_by" => user.id})
    end
  end

  @doc """
  Stamps `revoked_at` (now) and `tombstone` on the link `link_id` if it is
  live, in one guarded `UPDATE ... WHERE revoked_at IS NULL`: of concurrent
  stamps exactly one writes, and the others get `{:error, :already_revoked}`.
  """
  @spec stamp(Ecto.UUID.t(), map()) :: {:ok, ArtifactLink.t()} | {:error, :already_revoked}
  def stamp(link_id, tombstone) when is_map(tombstone) do
    now = DateTime.utc_now() |> DateTime.truncate(:second)

    query =
      from l in ArtifactLink,
        where: l.id == ^link_id and is_nil(l.revoked_at),
        select: l

    case Repo.update_all(query, set: [revoked_at: now, revocation_tombstone: tombstone]) do
      {1, [link]} -> {:ok, link}
      {0, []} -> {:error, :already_revoked}
    end
  end

  defp cast_id(id) do
    case Ecto.UUID.cast(id) do
      {:ok, uuid} -> {:ok, uuid}
      :error -> {:error, :not_found}
    end
  end

  defp may_revoke(%ArtifactLink{account_id: id}, %User{id: id}), do: :ok

  defp may_revoke(_link, user),
    do: if(OpenAgents.Accounts.admin?(user), do: :ok, else: {:error, :forbidden})
end
