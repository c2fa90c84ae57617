defmodule HostAppWeb.Endpoint do
  @moduledoc "The HTTP endpoint (Bandit): request id, telemetry, JSON bodies, then the upgrade gate around the router."
  use Phoenix.Endpoint, otp_app: :host_app
  # After Phoenix.Endpoint: a request the listener accepts before the
  # endpoint is warm waits for it (HostAppWeb.Warmup).
  use HostAppWeb.Warmup

  if code_reloading? do
    plug Phoenix.CodeReloader
  end

  plug Plug.RequestId
  plug Plug.Telemetry, event_prefix: [:phoenix, :endpoint]

  plug Plug.Parsers,
    parsers: [:json],
    pass: ["*/*"],
    json_decoder: Phoenix.json_library()

  # The router, with the database's failures inside DBConnection made 503s,
  # inside HostApp.Upgrade's gate: none runs while an install swaps the
  # applications' environments. After the parsers, so a request whose body
  # is still arriving is not inside (it cannot hold an install's drain).
  plug :gated, HostAppWeb.DatabaseAway.init(HostAppWeb.Router)

  defp gated(conn, router),
    do: HostApp.Upgrade.serve_conn(conn, &HostAppWeb.DatabaseAway.call(&1, router))
end
