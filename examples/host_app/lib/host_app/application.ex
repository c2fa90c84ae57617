defmodule HostApp.Application do
  @moduledoc false
  use Application

  @impl true
  def start(_type, _args) do
    children = [
      OpenAgents.Repo,
      HostApp.Presence,
      # Before the endpoint: every request passes HostApp.Upgrade's gate.
      HostApp.Upgrade,
      HostAppWeb.Endpoint
    ]

    Supervisor.start_link(children, strategy: :one_for_one, name: HostApp.Supervisor)
  end

  @impl true
  def config_change(changed, _new, removed) do
    HostAppWeb.Endpoint.config_change(changed, removed)
    :ok
  end
end
