defmodule OpenAgentsPolicy.Test.Served do
  @moduledoc """
  A directory served over HTTP from 127.0.0.1 by OTP's own `:httpd`, as the
  precompiled path's tests fetch artifacts from it. Call it from `setup` or
  `setup_all`: the server is stopped when the test (or the module) exits.
  """

  import ExUnit.Callbacks, only: [on_exit: 1]

  @doc "Serves `served` (with `root` as the server's root) on a free port; returns the port."
  @spec serve!(Path.t(), Path.t()) :: :inet.port_number()
  def serve!(root, served) do
    # :inets is on the code path from test_helper.exs.
    {:ok, _} = Application.ensure_all_started(:inets)

    {:ok, httpd} =
      :inets.start(:httpd,
        port: 0,
        bind_address: {127, 0, 0, 1},
        server_name: ~c"localhost",
        server_root: String.to_charlist(root),
        document_root: String.to_charlist(served)
      )

    on_exit(fn -> :inets.stop(:httpd, httpd) end)
    :httpd.info(httpd)[:port]
  end
end
