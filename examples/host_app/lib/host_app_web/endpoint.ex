defmodule HostAppWeb.Endpoint do
  @moduledoc "The HTTP endpoint (Bandit): the upgrade gate, request id, telemetry, JSON bodies, the router."
  use Phoenix.Endpoint, otp_app: :host_app

  if code_reloading? do
    plug Phoenix.CodeReloader
  end

  plug Plug.RequestId
  plug Plug.Telemetry, event_prefix: [:phoenix, :endpoint]

  plug Plug.Parsers,
    parsers: [:json],
    pass: ["*/*"],
    json_decoder: Phoenix.json_library()

  # The router, with the database's failures inside DBConnection made 503s.
  plug HostAppWeb.DatabaseAway, HostAppWeb.Router

  # Every request, all of the plugs above, runs inside HostApp.Upgrade's
  # gate: none runs while an install swaps the applications' environments.
  # (Phoenix wraps this in its own call/2, which renders an exception.)
  def call(conn, opts), do: HostApp.Upgrade.serve(fn -> super(conn, opts) end)
end
