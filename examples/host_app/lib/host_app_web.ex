defmodule HostAppWeb do
  @moduledoc "`use HostAppWeb, :controller`: a JSON controller with the error helpers."

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
