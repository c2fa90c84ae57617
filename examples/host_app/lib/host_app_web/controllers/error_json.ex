defmodule HostAppWeb.ErrorJSON do
  @moduledoc """
  Every error is JSON: `{"errors": {"detail": "<status message>"}}`, or for a
  changeset `{"errors": {"<field>": ["<message>", ...]}}`. Phoenix renders
  raised errors (a body that is not JSON is a 400) through `render/2`.
  """
  import Plug.Conn

  @doc "The body for a status template such as `\"404.json\"`."
  @spec render(String.t(), map()) :: map()
  def render(template, _assigns),
    do: %{errors: %{detail: Phoenix.Controller.status_message_from_template(template)}}

  @doc "Sends `status` with its detail body."
  @spec send(Plug.Conn.t(), pos_integer()) :: Plug.Conn.t()
  def send(conn, status) do
    body = %{errors: %{detail: Plug.Conn.Status.reason_phrase(status)}}

    conn
    |> put_resp_content_type("application/json")
    |> send_resp(status, Jason.encode_to_iodata!(body))
  end

  @doc "Sends 422 with the changeset's errors, messages interpolated."
  @spec changeset(Plug.Conn.t(), Ecto.Changeset.t()) :: Plug.Conn.t()
  def changeset(conn, %Ecto.Changeset{} = changeset) do
    errors =
      Ecto.Changeset.traverse_errors(changeset, fn {message, opts} ->
        Regex.replace(~r"%{(\w+)}", message, fn _, key ->
          opts |> Keyword.get(String.to_existing_atom(key), key) |> to_string()
        end)
      end)

    conn
    |> put_resp_content_type("application/json")
    |> send_resp(422, Jason.encode_to_iodata!(%{errors: errors}))
  end
end
