defmodule OpenAgents.Repo do
  @moduledoc """
  The host's Ecto repo on PostgreSQL. The library calls its `insert/1`, Ecto's
  own, to persist the link `link_for_attempt/3` mints.
  """
  use Ecto.Repo, otp_app: :host_app, adapter: Ecto.Adapters.Postgres
end
