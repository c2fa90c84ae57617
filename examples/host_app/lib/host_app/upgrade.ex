defmodule HostApp.Upgrade do
  @moduledoc """
  Installs a release in place with no request deciding its answer while
  `release_handler` swaps the applications' data: a request waits at the
  gate for the install to end, and the install waits for the requests
  already inside to leave, which they do once their answers are decided,
  before their bytes wait on the client.

  Why. `:release_handler.install_release/1`, before it evaluates the
  relup's first instruction (and whether or not the relup then refuses),
  replaces every application's specification and environment
  (`application_controller:change_application_data/2`): for each
  application it deletes the whole environment, then inserts the new one
  key by key. After the instructions it calls the `config_change/3` of every
  application whose environment changed. A process that reads an
  application's environment in between finds it missing, whatever both
  versions say. In this host that is every request that loads a
  `:utc_datetime` column: Ecto calls `DateTime.from_naive!/2`, which fetches
  `:elixir`'s `:time_zone_database` with `Application.fetch_env!/2` even for
  `"Etc/UTC"`, raises `ArgumentError`, and the reader gets a 500. The gap
  lasts microseconds, unless `application_controller` is scheduled out
  inside it, as it can be on a busy machine, while another scheduler serves
  requests. One run of scripts/hot_upgrade.sh in eight, on a loaded
  machine, once served a 500 while `install` ran (one request of 3643, its
  log lost); of the release's 37 applications, `:elixir` is the only one
  whose missing environment changes an answer here. No appup instruction
  can help: the swap comes before the first one.

  Words:

    * **gate**: the process `HostApp.Upgrade.Gate`, supervised, which knows
      who closed the door, which requests are inside and which are held.
      It monitors each of them, so none can wedge it by dying: a request
      killed inside (Bandit kills an HTTP/2 stream's process when its client
      hangs up) leaves as it dies; an installer killed while it holds the
      door (say, by a relup that purges this module) reopens it, once
      `release_handler` is done with that installer's call.
    * **inside**: while a request's answer is decided: from after
      `Plug.Parsers` (the endpoint enters the gate there) until its
      response is sent (a `Plug.Conn.register_before_send/2` callback
      leaves, the first registered inside, so the last to run; Bandit has
      not taken a byte yet), or until the endpoint's call ends when it
      sends none or raises. The gate counts the work, not the wire. A
      request whose body is still arriving is not inside yet, and one whose
      response is still going out is not inside any more, so neither a
      slow body nor a client that reads its answer slowly, or never (an
      HTTP/2 window of 0 with a byte of `WINDOW_UPDATE` now and then, which
      keeps Bandit writing for as long as the client likes), holds the
      drain or other readers. What runs after it left (Bandit writing the
      bytes, `Plug.Telemetry`'s stop event, `Phoenix.Logger`'s line) reads
      no application's environment. A chunked response leaves at
      `send_chunked/2`: a host that computes an answer while it streams it
      would have to stay inside until its last chunk, and this one has
      none.
    * **drain**: the install closes the door, then waits until no request
      is inside, for at most one absolute deadline (15 s by default); past
      it, it installs nothing and says so, as a refused install does, and
      the door opens.
    * **hold**: a request that finds the door closed waits for a message
      from the gate (no polling), for at most `held_ms` (5 s); at most
      `max_held` (1,000) wait at once. Past either, the reader gets a 503
      with `Retry-After`. Otherwise it is answered, by the new version, once
      the install ends: late, not failed. Why 5 s: it is the install a
      held request waits for, not the drain (the requests inside leave as
      soon as their answers are decided, milliseconds here), and an install
      takes 1-3 s (castle's sys.config, the library's preflight in a fresh
      VM, `release_handler`'s swap: 1.7 to 2.8 s per node in the rolling
      upgrade on two shared cores), so the hot and rolling upgrades fail no
      request. And it is a third of the drain, so a drain that requests
      inside do hold (a database slow to answer, not gone) costs a new
      reader at most 5 s and a 503, never the whole drain and the install
      after it. A 503 at once was the other way; it would fail every
      request that comes while an install runs (hundreds per install under
      the proofs' load).

  `install/1` prints what `bin/host_app install` (castle's
  `Castle.install/1`) prints, so `bin/host_app rpc
  'HostApp.Upgrade.install("0.1.1")'` is that command behind the gate.

  Reopening by hand: `bin/host_app rpc 'IO.inspect(HostApp.Upgrade.reopen())'`
  opens a door left closed (`:reopened`, logged as a warning;
  `:already_open` when it was). `state/0` tells whether it is closed.

  Which version answered: with `HOST_APP_SERVED_BY_HEADERS=1` (or `true`)
  in the release's environment when it boots, every response the gate lets
  through names the node that served it and the decision digest of the
  library version that decided it (`x-served-by-node`, `x-policy-digest`),
  as the rolling upgrade's load reads them. Set on entering, inside: no
  install can change that version before the answer is decided. Absent,
  neither is sent, so an anonymous client is not told the node's name (in
  a release, a host name or an address). config/runtime.exs reads the
  variable into `:host_app, :served_by_headers`, HostApp.Application copies
  that into a `:persistent_term` at start (`put_served_by_headers/1`), and
  requests read only the term. The digest is a `:persistent_term` too
  (`refresh_digest/0`), asked of the library at start and by `closed/2`
  before it opens the door, so after each install: a request reads the
  term, never the library.

  A gate that does not answer a request's entry within `enter_ms` (5 s)
  gets it a 503 with `Retry-After`, as a hold past `held_ms` does, never an
  answer as if there were no gate; the gate forgets the entry when it
  reads it. A gate that dies while asked is asked again once its
  supervisor has started it again, within the same 5 s.

  Deliberately absent: any hold on what does not come through the endpoint
  (this host has no background work that reads configuration), and any
  configuration read from the application environment per request (the
  thing an install swaps): the limits are the gate's own (`configure/1`),
  the headers' switch a `:persistent_term`.
  """

  alias HostApp.Upgrade.Gate

  @drain_ms 15_000
  @enter_ms 5_000
  @served_by {__MODULE__, :served_by_headers}
  @digest {__MODULE__, :decision_digest}
  @enter_timeout {__MODULE__, :enter_ms}

  @doc "The gate's child spec: HostApp.Application starts it before the endpoint."
  @spec child_spec(keyword()) :: Supervisor.child_spec()
  def child_spec(opts), do: %{id: Gate, start: {Gate, :start_link, [opts]}}

  @doc """
  Runs `fun` (one request) inside the gate: counted while it runs, after
  waiting for any install holding the door. `{:error, :gate_full}` or
  `{:error, :gate_timeout}` without running it when the hold is refused
  (too many held, or held past `held_ms`), or when the gate does not
  answer within `enter_ms`.
  """
  @spec serve((... -> result)) :: result | {:error, :gate_full | :gate_timeout} when result: var
  def serve(fun) do
    case enter() do
      :ok ->
        try do
          fun.()
        after
          leave()
        end

      :no_gate ->
        fun.()

      {:error, _} = refused ->
        refused
    end
  end

  @doc """
  The endpoint's form of `serve/1`: runs `fun.(conn)` inside the gate until
  its response is sent (see "inside" above: the bytes go out with the
  request outside), or until `fun` returns or raises when it sends none; a
  refused hold is a 503 with `Retry-After`. With the headers on
  (`put_served_by_headers/1`), the response names the node and the
  decision digest of the library version that decided it
  (`x-served-by-node`, `x-policy-digest`, the digest as `refresh_digest/0`
  last kept it), set inside the gate.
  """
  @spec serve_conn(Plug.Conn.t(), (Plug.Conn.t() -> Plug.Conn.t())) :: Plug.Conn.t()
  def serve_conn(conn, fun) do
    case enter() do
      # With no gate process (:no_gate) its leaves find none, or a gate that
      # does not know this request, and do nothing.
      entered when entered in [:ok, :no_gate] ->
        # This entry's own key: the response's before_send and the `after`
        # both leave through it, and only the first finds it, so a request
        # leaves once whether it sends a response, sends none or raises
        # (Phoenix renders an exception's 500 with the conn that carries
        # the callback, after the `after`), and a nested serve_conn leaves
        # its own level only.
        entry = {__MODULE__, make_ref()}
        Process.put(entry, :inside)

        try do
          conn
          |> served_by()
          |> Plug.Conn.register_before_send(fn conn ->
            leave(entry)
            conn
          end)
          |> fun.()
        after
          leave(entry)
        end

      {:error, reason} when reason in [:gate_full, :gate_timeout] ->
        HostAppWeb.Unavailable.retry_later(conn)
    end
  end

  defp served_by(conn) do
    if :persistent_term.get(@served_by, false) do
      conn
      |> Plug.Conn.put_resp_header("x-served-by-node", Atom.to_string(node()))
      |> Plug.Conn.put_resp_header("x-policy-digest", :persistent_term.get(@digest, ""))
    else
      conn
    end
  end

  @doc """
  Turns the `x-served-by-node` and `x-policy-digest` headers on (`true`)
  or off for every response from now on, and returns the previous
  setting (off until set). HostApp.Application sets it at start from
  `:host_app, :served_by_headers` (`HOST_APP_SERVED_BY_HEADERS`, read by
  config/runtime.exs); the tests that check the headers turn them on.
  """
  @spec put_served_by_headers(boolean()) :: boolean()
  def put_served_by_headers(on?) when is_boolean(on?) do
    previous = :persistent_term.get(@served_by, false)
    :persistent_term.put(@served_by, on?)
    previous
  end

  @doc """
  Asks the library for the decision digest of the version loaded now,
  keeps it where `x-policy-digest` reads it, and returns it.
  HostApp.Application calls it at start, `closed/2` before it opens the door.
  """
  @spec refresh_digest() :: String.t()
  def refresh_digest do
    digest = OpenAgentsPolicy.decision_digest()
    :persistent_term.put(@digest, digest)
    digest
  end

  # :ok (counted inside), :no_gate (no gate process to count it), or a
  # refusal; the gate is asked for at most enter_ms in all.
  defp enter do
    case Process.whereis(Gate) do
      nil -> :no_gate
      gate -> ask(gate, enter_deadline())
    end
  end

  defp ask(gate, deadline) do
    case GenServer.call(gate, {:enter, self()}, max(deadline - now(), 0)) do
      :ok -> :ok
      :full -> {:error, :gate_full}
      {:held, ref, held_ms} -> held(gate, ref, held_ms)
    end
  catch
    # Not answered in time: refused, and the gate told to forget whatever
    # entry it makes of the call (it reads this cast after it).
    :exit, {:timeout, _} ->
      GenServer.cast(gate, {:forget, self()})
      {:error, :gate_timeout}

    # The gate died while asked: its supervisor starts it again, open.
    :exit, _ ->
      restarted(gate, deadline)
  end

  # The gate that replaced `dead`, asked before `deadline`; refused past it.
  defp restarted(dead, deadline) do
    case Process.whereis(Gate) do
      gate when is_pid(gate) and gate != dead ->
        ask(gate, deadline)

      _none_yet ->
        if now() >= deadline do
          {:error, :gate_timeout}
        else
          Process.sleep(1)
          restarted(dead, deadline)
        end
    end
  end

  defp enter_deadline, do: now() + :persistent_term.get(@enter_timeout, @enter_ms)
  defp now, do: System.monotonic_time(:millisecond)

  defp held(gate, ref, held_ms) do
    watch = Process.monitor(gate)

    receive do
      {:open, ^ref} ->
        Process.demonitor(watch, [:flush])
        enter()

      {:DOWN, ^watch, :process, _, _} ->
        restarted(gate, enter_deadline())
    after
      held_ms ->
        Process.demonitor(watch, [:flush])
        GenServer.cast(gate, {:give_up, ref})

        receive do
          {:open, ^ref} -> :ok
        after
          0 -> :ok
        end

        {:error, :gate_timeout}
    end
  end

  defp leave do
    case Process.whereis(Gate) do
      nil -> :ok
      gate -> GenServer.cast(gate, {:leave, self()})
    end
  end

  # Leaves for serve_conn's `entry`, if it has not left already.
  defp leave(entry) do
    case Process.delete(entry) do
      :inside -> leave()
      nil -> :ok
    end
  end

  @doc """
  Runs `fun` with the door closed and no request inside; `{:error,
  {:requests_still_running, count}}` without running it when requests are
  still inside after `drain_ms` (#{@drain_ms} ms by default; the door opens
  again), `{:error, :install_in_progress}` when another install holds the
  door. However `fun` ends, the digest is refreshed (`refresh_digest/0`)
  and then the door opens again; it opens too if this process dies.
  """
  @spec closed((... -> result), non_neg_integer()) ::
          {:ok, result}
          | {:error,
             {:requests_still_running, pos_integer()} | :install_in_progress | :installer_died}
        when result: var
  def closed(fun, drain_ms \\ @drain_ms) do
    case GenServer.call(Gate, {:close, self(), drain_ms}, :infinity) do
      :ok ->
        try do
          {:ok, fun.()}
        after
          # The digest of the version the install left loaded, kept before
          # any request is let in to name it.
          try do
            refresh_digest()
          after
            GenServer.call(Gate, {:open, self()})
          end
        end

      {:error, _} = refused ->
        refused
    end
  end

  @doc "The gate now: whether the door is closed, the requests inside and those held at it."
  @spec state() :: %{closed: boolean(), inside: non_neg_integer(), held: non_neg_integer()}
  def state, do: GenServer.call(Gate, :state)

  @doc """
  Opens the door, whoever closed it (`:reopened`), or says it was open
  (`:already_open`): the way out of a door left closed by hand.
  """
  @spec reopen() :: :reopened | :already_open
  def reopen, do: GenServer.call(Gate, :reopen)

  @doc """
  Sets the hold's limits (`max_held`, `held_ms`) and how long a request
  waits for the gate to answer its entry (`enter_ms`, a `:persistent_term`:
  it is read without the gate), and returns the previous ones:
  `configure(configure(max_held: 1))` restores them.
  """
  @spec configure(keyword()) :: keyword()
  def configure(opts) do
    {enter, limits} = Keyword.split(opts, [:enter_ms])
    previous = :persistent_term.get(@enter_timeout, @enter_ms)
    held = GenServer.call(Gate, {:configure, limits})
    if ms = enter[:enter_ms], do: :persistent_term.put(@enter_timeout, ms)
    [{:enter_ms, previous} | held]
  end

  @doc """
  `bin/host_app install VSN` behind the gate: castle writes the target's
  sys.config and `release_handler` installs it, with no request running.
  Prints castle's lines, or `Install of VSN failed. REASON` when the gate
  refuses.
  """
  @spec install(String.t()) :: :ok
  def install(vsn) when is_binary(vsn) do
    case closed(fn -> Castle.install(vsn) end) do
      {:ok, _printed} -> :ok
      {:error, reason} -> IO.puts("Install of #{vsn} failed. #{inspect(reason)}")
    end
  end
end
