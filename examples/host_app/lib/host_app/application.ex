defmodule HostApp.Application do
  @moduledoc false
  use Application

  @impl true
  def start(_type, _args) do
    # Read here, once per boot: a request reads the copy, never the
    # application environment an install swaps (HostApp.Upgrade).
    HostApp.Upgrade.put_served_by_headers(
      Application.get_env(:host_app, :served_by_headers, false)
    )

    # The digest x-policy-digest names, asked of the library once here
    # (and after each install), never per request.
    HostApp.Upgrade.refresh_digest()

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
