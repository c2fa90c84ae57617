defmodule HostApp.Attempts do
  @moduledoc """
  Attempts as the API reads and writes them.

  Reading: every attempt of a repository, oldest first, with its work job
  and (unless told not to) its `:artifact_link` preloaded, so the ladder can
  read the link; not preloaded, the association stays
  `%Ecto.Association.NotLoaded{}` and the tier column decides.

  Writing (`create/4`): the host calls `link_for_attempt/3` once per new
  attempt, inside the transaction that persists it. A user's attempt gets the
  link the library mints (inserted by the library through this app's
  `ArtifactLink.changeset/2` and `Repo.insert/1`); the attempt is inserted
  pointing at it; the link is then bound to the attempt's id. Whatever fails,
  nothing is kept, and the failing changeset is returned as it came.
  """
  import Ecto.Query

  alias OpenAgents.Accounts.User
  alias OpenAgents.Forge.{Assignment, Issue, IssueEvidence}
  alias OpenAgents.Repo
  alias OpenAgents.Repositories.Repository
  alias OpenAgents.Traces.Trace
  alias OpenAgents.Transparency.{ArtifactLink, WorkDisclosure}

  @doc "Every attempt of `repository`, oldest first; `preload_link?: false` leaves the link not loaded."
  @spec list(Repository.t(), boolean()) :: [Assignment.t()]
  def list(%Repository{id: id}, preload_link? \\ true) do
    from(a in Assignment,
      where: a.repository_id == ^id,
      order_by: [asc: a.inserted_at, asc: a.id],
      preload: [:work_job]
    )
    |> Repo.all()
    |> preload_link(preload_link?)
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

  @doc "The traces of an attempt, oldest first."
  @spec traces(Assignment.t()) :: [Trace.t()]
  def traces(%Assignment{id: id}) do
    Repo.all(
      from t in Trace, where: t.assignment_id == ^id, order_by: [asc: t.inserted_at, asc: t.id]
    )
  end

  defp preload_link(assignments, true), do: Repo.preload(assignments, :artifact_link)
  defp preload_link(assignments, false), do: assignments

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
    issue_id =
      Repo.one(
        from i in Issue,
          where: i.repository_id == ^repository.id and i.number == ^attrs.issue_number,
          select: i.id
      )

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
    |> Repo.insert()
  end

  defp bind(nil, _assignment), do: {:ok, nil}

  defp bind(link, assignment),
    do: link |> ArtifactLink.bind_changeset(assignment.id) |> Repo.update()

  @doc """
  Revokes the link with id `link_id` for `user`: allowed to the link's
  account and to an operator. Revoking a revoked link changes nothing.
  """
  @spec revoke_link(String.t(), User.t()) ::
          {:ok, ArtifactLink.t()} | {:error, :not_found | :forbidden | Ecto.Changeset.t()}
  def revoke_link(link_id, %User{} = user) do
    with {:ok, uuid} <- cast_id(link_id),
         %ArtifactLink{} = link <- Repo.get(ArtifactLink, uuid) || {:error, :not_found},
         :ok <- may_revoke(link, user) do
      if link.revoked_at,
        do: {:ok, link},
        else: link |> ArtifactLink.revoke_changeset(%{"revoked_by" => user.id}) |> Repo.update()
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
