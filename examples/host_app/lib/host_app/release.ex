defmodule HostApp.Release do
  @moduledoc """
  What a release runs outside the web server, where Mix is absent:

      bin/host_app eval "HostApp.Release.migrate()"
      bin/host_app eval "HostApp.Release.seed()"
  """
  @app :host_app

  @doc "Creates each repo's database if it is missing, then runs every pending migration."
  @spec migrate() :: :ok
  def migrate do
    Application.load(@app)

    for repo <- Application.fetch_env!(@app, :ecto_repos) do
      case repo.__adapter__().storage_up(repo.config()) do
        :ok ->
          :ok

        {:error, :already_up} ->
          :ok

        {:error, reason} ->
          raise "could not create the database of #{inspect(repo)}: #{inspect(reason)}"
      end

      {:ok, _, _} = Ecto.Migrator.with_repo(repo, &Ecto.Migrator.run(&1, :up, all: true))
    end

    :ok
  end

  @doc "Seeds the world of `HostApp.Seeds` (a no-op when it is there)."
  @spec seed() :: :ok
  def seed do
    Application.load(@app)

    {:ok, _, _} =
      Ecto.Migrator.with_repo(OpenAgents.Repo, fn _repo ->
        # The library answers from its NIF; viewer/2 and link minting ask the
        # repo, which with_repo started.
        {:ok, _} = Application.ensure_all_started(:openagents_policy)
        HostApp.Seeds.run()
      end)

    :ok
  end
end
