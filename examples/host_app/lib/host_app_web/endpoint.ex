defmodule HostAppWeb.Endpoint do
  @moduledoc "The HTTP endpoint (Bandit): request id, telemetry, JSON bodies, the served-by headers, the router."
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

  plug HostAppWeb.ServedBy
  # The router, with the database's failures inside DBConnection made 503s.
  plug HostAppWeb.DatabaseAway, HostAppWeb.Router
end
