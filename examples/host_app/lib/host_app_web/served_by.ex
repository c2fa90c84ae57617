defmodule HostAppWeb.ServedBy do
  @moduledoc """
  Says on every response which decisions answered it: `x-policy-digest`, the
  library's decision digest (`OpenAgentsPolicy.decision_digest/0`), and,
  when the release started with `HOST_APP_SERVED_BY_HEADERS=1` (or `true`),
  `x-served-by-node`, the node's name (off by default: an anonymous client
  is not told a host name). Both are read once, at boot (`put/1`, called by
  HostApp.Application), into a `:persistent_term`; a request reads only that.
  """
  @behaviour Plug

  @key {__MODULE__, :headers}

  @doc "Keeps the headers every response gets: the digest, and the node when `node?`."
  @spec put(boolean()) :: :ok
  def put(node?) when is_boolean(node?) do
    node = if node?, do: [{"x-served-by-node", Atom.to_string(node())}], else: []
    :persistent_term.put(@key, [{"x-policy-digest", OpenAgentsPolicy.decision_digest()} | node])
  end

  @impl true
  def init(opts), do: opts

  @impl true
  def call(conn, _opts), do: Plug.Conn.merge_resp_headers(conn, :persistent_term.get(@key, []))
end
