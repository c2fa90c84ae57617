defmodule HostAppWeb.ErrorJSON do
  @moduledoc """
  Every error is JSON: `{"errors": {"detail": "<status message>"}}`, or for
  fields of the request `{"errors": {"<field>": ["<message>", ...]}}`.
  Phoenix renders raised errors (a body that is not JSON is a 400) through
  `render/2`.

  A changeset's errors are published only for fields the request sent: a
  column behind them (`issue_id`, a link's `artifact_type`) or a field the
  request left out is never named, and an answer with no such field is the
  bare detail.
  """
  import Kernel, except: [send: 2]
  import Plug.Conn

  @doc "The body for a status template such as `\"404.json\"`."
  @spec render(String.t(), map()) :: map()
  def render(template, _assigns),
    do: %{errors: %{detail: Phoenix.Controller.status_message_from_template(template)}}

  @doc "Sends `status` with its detail body."
  @spec send(Plug.Conn.t(), pos_integer()) :: Plug.Conn.t()
  def send(conn, status),
    do: send_json(conn, status, %{detail: Plug.Conn.Status.reason_phrase(status)})

  @doc "Sends `status` with `errors` (`%{field => [message]}`) as the errors."
  @spec fields(Plug.Conn.t(), pos_integer(), map()) :: Plug.Conn.t()
  def fields(conn, status, errors), do: send_json(conn, status, errors)

  @doc """
  Sends 422 with the changeset's errors (messages interpolated) on the
  fields in `sent` (the names the request's body gave), and nothing else;
  the bare detail when none of them has an error.
  """
  @spec changeset(Plug.Conn.t(), Ecto.Changeset.t(), [String.t()]) :: Plug.Conn.t()
  def changeset(conn, %Ecto.Changeset{} = changeset, sent) do
    errors =
      changeset
      |> Ecto.Changeset.traverse_errors(fn {message, opts} ->
        Regex.replace(~r"%{(\w+)}", message, fn _, key ->
          opts |> Keyword.get(String.to_existing_atom(key), key) |> to_string()
        end)
      end)
      |> Map.filter(fn {field, _messages} -> Atom.to_string(field) in sent end)

    if errors == %{}, do: send(conn, 422), else: fields(conn, 422, errors)
  end

  defp send_json(conn, status, errors) do
    conn
    |> put_resp_content_type("application/json")
    |> send_resp(status, Jason.encode_to_iodata!(%{errors: errors}))
  end
end
