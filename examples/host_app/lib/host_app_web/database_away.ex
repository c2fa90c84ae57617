defmodule HostAppWeb.DatabaseAway do
  @moduledoc """
  Wraps the router so that PostgreSQL going away is a JSON 503 however
  DBConnection reports it (see `unavailable.ex` for the exceptions).

  Three of its reports are not exceptions of its own: when the pool or the
  connection goes away in the middle of a checkout, the request exits with
  `{reason, {DBConnection.Holder, :checkout, args}}`, or `:ets` raises an
  `ArgumentError` inside `DBConnection.Holder` (the holder table deleted
  under it); and while the repo's supervisor restarts its pool, `:ets`
  raises an `ArgumentError` inside `Ecto.Repo.Registry` (the repo not
  registered yet). Phoenix would answer each with a 500; here they become a
  `DBConnection.ConnectionError`, which it answers with a 503. Anything else
  passes through unchanged.
  """
  @behaviour Plug

  alias Plug.Conn.WrapperError

  @impl true
  def init(router), do: router

  @impl true
  def call(conn, router) do
    router.call(conn, router.init([]))
  catch
    :exit, {_reason, {DBConnection.Holder, :checkout, _args}} = reason ->
      unavailable(conn, reason, __STACKTRACE__)

    :error, %WrapperError{kind: :error, reason: %ArgumentError{}} = wrapper ->
      if Enum.any?(wrapper.stack, &away?/1),
        do: unavailable(wrapper.conn, wrapper.reason, wrapper.stack),
        else: WrapperError.reraise(wrapper)
  end

  # The frames whose ArgumentError means the database is away or coming back.
  defp away?({module, _function, _arity, _location}),
    do: module in [DBConnection.Holder, Ecto.Repo.Registry]

  defp away?(_frame), do: false

  defp unavailable(conn, reason, stack) do
    error =
      DBConnection.ConnectionError.exception(
        "the database connection went away during a checkout: " <> inspect(reason)
      )

    WrapperError.reraise(conn, :error, error, stack)
  end
end
