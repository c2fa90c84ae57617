defmodule HostAppWeb do
  @moduledoc """
  `use HostAppWeb, :router` and `use HostAppWeb, :controller`, as `mix
  phx.new --no-html` lays them out (Phoenix 1.8's generator, which 1.7.14 and
  later also compile): a router without path helpers, and a JSON-only
  controller with the error helpers. Absent, as in any JSON API the
  generator makes without HTML: channels, verified routes (no route here
  builds a URL) and Gettext (every message is the status's reason phrase).
  """

  @doc false
  def router do
    quote do
      use Phoenix.Router, helpers: false
      import Plug.Conn
      import Phoenix.Controller
    end
  end

  @doc false
  def controller do
    quote do
      use Phoenix.Controller, formats: [:json]
      import Plug.Conn
      alias HostAppWeb.ErrorJSON
    end
  end

  @doc false
  defmacro __using__(which) when is_atom(which), do: apply(__MODULE__, which, [])
end
