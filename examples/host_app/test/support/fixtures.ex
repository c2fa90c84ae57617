defmodule HostApp.Fixtures do
  @moduledoc "Rows inserted in the sandboxed database, for the tests that need more than the seeds."
  alias OpenAgents.Accounts.User
  alias OpenAgents.Box.ConversationBox
  alias OpenAgents.Machines.Machine
  alias OpenAgents.Repo
  alias OpenAgents.Work.Job

  @doc "A new user with a unique handle."
  def user, do: Repo.insert!(%User{handle: "user-" <> Ecto.UUID.generate()})

  @doc "A Box of `user` in `state`, as loaded back from the database."
  def box(user, state),
    do: Repo.insert!(%ConversationBox{user_id: user.id, state: state}) |> reload()

  @doc "A Computer of `user` with `status` and `revoked_at`, as loaded back from the database."
  def machine(user, status, revoked_at \\ nil) do
    Repo.insert!(%Machine{user_id: user.id, name: "m", status: status, revoked_at: revoked_at})
    |> reload()
  end

  @doc "A work job on `machine` in `status`, as loaded back from the database."
  def job(machine, status),
    do:
      Repo.insert!(%Job{kind: "forge_attempt", status: status, machine_id: machine.id})
      |> reload()

  defp reload(%schema{id: id}), do: Repo.get!(schema, id)
end
