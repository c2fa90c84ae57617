defmodule OpenAgents.Repo do
  @moduledoc """
  The host's Ecto repo on PostgreSQL. The library calls its `insert/1`, Ecto's
  own, to persist the link `link_for_attempt/3` mints.
  """
  @behaviour OpenAgentsPolicy.Host.Repo
  use Ecto.Repo, otp_app: :host_app, adapter: Ecto.Adapters.Postgres

  # Preloads run in the request's own process rather than in parallel tasks:
  # when PostgreSQL is away, the request then raises
  # DBConnection.ConnectionError, which HostAppWeb answers with a JSON 503,
  # instead of being taken down by a crashed preloading task (a 500).
  @impl true
  def default_options(operation) when operation in [:all, :preload], do: [in_parallel: false]
  def default_options(_operation), do: []
end
