defmodule HostAppWeb.DelegationController do
  @moduledoc """
  `GET /api/delegations/:id`: `{"data": delegation_seam(job_lifecycle(status))}`
  for the work job with that id. A job is shown to whoever may see the
  attempt it serves (not dark to them; the oldest, by `inserted_at` then id,
  when several serve it, so the answer never depends on the database's
  order); a job that serves no attempt, to the owner of its machine and to
  operators. Anything else, a malformed id
  included, is 404, as for a job that does not exist.
  """
  use HostAppWeb, :controller

  import Ecto.Query
  alias HostApp.{Disclosure, Fleet}
  alias OpenAgents.Accounts
  alias OpenAgents.Forge.Assignment
  alias OpenAgents.Repo
  alias OpenAgents.Work.Job

  @doc false
  def show(conn, %{"id" => id}) do
    user = conn.assigns.current_user

    with {:ok, uuid} <- Ecto.UUID.cast(id),
         %Job{} = job <- Repo.get(Job, uuid) |> Repo.preload(:machine),
         true <- visible?(job, user) do
      json(conn, %{data: Fleet.seam(job.status)})
    else
      _ -> ErrorJSON.send(conn, 404)
    end
  end

  defp visible?(job, user) do
    attempt =
      Repo.one(
        from a in Assignment,
          where: a.work_job_id == ^job.id,
          preload: [:repository, :artifact_link],
          order_by: [asc: a.inserted_at, asc: a.id],
          limit: 1
      )

    case attempt do
      %Assignment{} ->
        Disclosure.item(attempt, Disclosure.viewer(attempt.repository, user)) != nil

      nil ->
        user != nil and (owns_machine?(job, user) or Accounts.admin?(user))
    end
  end

  defp owns_machine?(%Job{machine: %{user_id: id}}, %{id: id}), do: true
  defp owns_machine?(_job, _user), do: false
end
