defmodule HostAppWeb.DatabaseAway do
  @moduledoc """
  Wraps the router so that PostgreSQL going away is a JSON 503 however
  DBConnection and Ecto report it (see `unavailable.ex` for the exceptions).

  Some of their reports are not exceptions of their own: when the pool or
  the connection goes away in the middle of a checkout, the request exits
  with `{reason, {DBConnection.Holder, :checkout, args}}`, or `:ets` raises
  `badarg` inside `DBConnection.Holder` (the holder table deleted under it);
  and while the repo's supervisor restarts (its pool crashed), Ecto raises a
  `RuntimeError` (no repo of that name), or `:ets` raises `badarg` inside
  `Ecto.Repo.Registry` (the new repo not yet in it) or `Ecto.Query.Planner`
  (the old repo's query cache gone with it). The router hands an error on in
  a `Plug.Conn.WrapperError`, an Erlang error's reason raw (`:badarg`, not
  an `ArgumentError`). Phoenix would answer each with a 500; here they
  become a `DBConnection.ConnectionError`, which it answers with a 503.
  Anything else passes through unchanged.
  """
  @behaviour Plug

  alias Plug.Conn.WrapperError

  @ets_owners [DBConnection.Holder, Ecto.Repo.Registry, Ecto.Query.Planner]

  @impl true
  def init(router), do: router

  @impl true
  def call(conn, router) do
    router.call(conn, router.init([]))
  catch
    :exit, {_reason, {DBConnection.Holder, :checkout, _args}} = reason ->
      unavailable(conn, reason, __STACKTRACE__)

    :error, %WrapperError{kind: :error, reason: reason, stack: stack} = wrapper ->
      if away?(Exception.normalize(:error, reason, stack), stack),
        do: unavailable(wrapper.conn, reason, stack),
        else: WrapperError.reraise(wrapper)
  end

  # :ets failing inside the pool's holder, Ecto's repo registry or a repo's
  # query cache, or no repo of the name: the database is away or the repo
  # is restarting.
  defp away?(%ArgumentError{}, [{:ets, _, _, _} | _] = stack),
    do: Enum.any?(stack, &(elem(&1, 0) in @ets_owners))

  defp away?(%RuntimeError{}, [{Ecto.Repo.Registry, :lookup, _, _} | _]), do: true
  defp away?(_error, _stack), do: false

  defp unavailable(conn, reason, stack) do
    error =
      DBConnection.ConnectionError.exception(
        "the database or its repo went away: " <> inspect(reason)
      )

    WrapperError.reraise(conn, :error, error, stack)
  end
end
