defmodule RustlerPrecompiled do
  @moduledoc false
  # `make demo` only (MIX_ENV=demo, whose elixirc_paths alone list dev/demo):
  # the demo env declares NimbleOptions alone, so that it builds with Elixir
  # and cargo and no rustler, and rustler_precompiled is not there. This stands
  # in for it with the one thing the demo needs of it: OpenAgentsPolicy.Native
  # loads the library `make demo` built with cargo and put in priv/native,
  # where rustler puts a source build. No download, no checksum, no cache:
  # never compiled outside the demo env, and not in the package.

  defmacro __using__(opts) do
    quote bind_quoted: [opts: opts] do
      otp_app = Keyword.fetch!(opts, :otp_app)
      library = "priv/native/lib#{Keyword.fetch!(opts, :crate)}"

      @external_resource Path.join(File.cwd!(), library <> ".so")
      @on_load :load_demo_nif
      @load_from {otp_app, library}
      @load_data Keyword.fetch!(opts, :load_data)

      @doc false
      def load_demo_nif do
        {otp_app, library} = @load_from

        otp_app
        |> Application.app_dir(library)
        |> String.to_charlist()
        |> :erlang.load_nif(@load_data)
      end
    end
  end
end
