defmodule HostApp.Application do
  @moduledoc false
  use Application

  @impl true
  def start(_type, _args) do
    # The served-by headers, once per boot (HostAppWeb.ServedBy).
    HostAppWeb.ServedBy.put(Application.get_env(:host_app, :served_by_headers, false))

    children = [
      OpenAgents.Repo,
      HostApp.Presence,
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
