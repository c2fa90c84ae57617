defmodule OpenAgentsPolicy.LoadCheck do
  @moduledoc """
  Does a fresh VM of this OTP installation load a NIF library? The check
  `OpenAgentsPolicy.Upgrade.check/3` makes before a relup's point of no
  return, and the maintainers' check of the precompiled artifacts
  (`scripts/precompiled_check.sh`).

    * `library/3` loads a library file into a stub module made for the
      functions the library itself names: an artifact built for another
      machine is checked whole, with no module of this build in the way.
    * `module/3` loads a compiled module whose `on_load` loads its library,
      from a given code path (a target release's ebin), as the relup will;
      with `ask:`, it then calls one function of that module and answers
      what it returned.

  The load runs in a VM of its own, which runs the Erlang module
  `openagents_policy_load_check` of this build: a library loaded there
  stays out of this VM, and a loader that crashes (a truncated file:
  SIGBUS) does not take this VM with it. That VM boots `start_clean`, runs
  no `.erlang` or `ERL_FLAGS` of the user's, and does not outlive its
  caller nor the check's one deadline (30 s unless `:timeout` says
  otherwise). Refused, with the loader's own words or what became of that
  VM: a library that does not load, a load or a call that does not finish
  by the deadline, an answer naming an atom this VM does not know. Of what
  that VM prints, the first and last 64 KiB are kept. No retry, no
  distribution, and nothing of Mix in that VM.
  """

  @timeout 30_000
  # The check VM's module (src/openagents_policy_load_check.erl).
  @check_vm :openagents_policy_load_check
  # What is kept of the check VM's output: its first and last @kept bytes.
  @kept 65_536

  @typedoc "Why a library does not load: the loader's words, or what became of the check VM."
  @type reason :: String.t()

  @typedoc """
  `:timeout`: milliseconds for the whole check (30 000 by default), counted
  by the caller from before the check VM starts and by the check VM from
  its own start;
  `:keep_stub` (`library/3` only): where to write the stub module's `.beam`;
  `:ask` (`module/3` only): the name of a function of the loaded module, of
  arity 0, to call in the check VM once the module has loaded.
  """
  @type option :: {:timeout, pos_integer()} | {:keep_stub, Path.t()} | {:ask, atom()}

  @doc """
  Loads the NIF library `file` (a path ending in `.so`) into a stub module
  named `module` in a fresh VM, and returns `:ok` if it loads.

  With `keep_stub: path`, the stub module it loaded into is written there
  as a `.beam` (scripts/precompiled_check.sh loads artifacts in a VM of
  another architecture with it).

  The fresh VM does not outlive the calling process, nor its deadline.
  Raises when no directory can be made for it (`mktemp -d` in
  `System.tmp_dir!/0`).
  """
  @spec library(Path.t(), module(), [option()]) :: :ok | {:error, reason()}
  def library(file, module, opts \\ []) when is_atom(module) do
    # Absolute: the check VM runs in a directory of its own.
    lib = file |> Path.expand() |> Path.rootname(".so")
    keep = if path = opts[:keep_stub], do: [Path.expand(path)], else: []
    run({:library, [Atom.to_string(module), lib | keep]}, [], opts)
  end

  @doc """
  Loads `module` from `code_paths` (put before the installation's own on
  the check VM's code path) in a fresh VM, and returns `:ok` if it loads: its `on_load`, which loads
  the NIF library, succeeded. `elixir`'s own ebin is on the path too.

  With `ask: function`, the check VM then calls `module.function()` (the
  module just loaded, so a NIF answers from the library just loaded), and
  the check returns `{:ok, answer}` instead of `:ok`: the term it returned,
  printed by the check VM in Erlang's external term format and read back
  here with `:erlang.binary_to_term/2`'s `:safe` (an answer naming an atom
  this VM does not know is refused, not made). A function that raises,
  throws or exits, or is not there, is `{:error, reason}`: the check VM's
  banner of the exception (`Exception.format_banner/3`), after the name of
  the function asked. The call is within the check's one deadline.

  The fresh VM does not outlive the calling process, nor its deadline.
  Raises when no directory can be made for it (`mktemp -d` in
  `System.tmp_dir!/0`).
  """
  @spec module(module(), [Path.t()], [option()]) :: :ok | {:ok, term()} | {:error, reason()}
  def module(module, code_paths, opts \\ []) when is_atom(module) do
    elixir = Path.join(:code.lib_dir(:elixir), "ebin")
    paths = Enum.flat_map([elixir | code_paths], &["-pa", Path.expand(&1)])

    {ask, doing} =
      case opts[:ask] do
        nil ->
          {[], "loading it"}

        function when is_atom(function) ->
          asked = "#{inspect(module)}.#{function}/0"

          {[Atom.to_string(function), asked <> ", asked after the load"],
           "loading it and calling #{asked}"}
      end

    run({:module, [Atom.to_string(module) | ask]}, paths, opts, doing)
  end

  # The check VM: this installation's erl, booting start_clean, with
  # @check_vm's code copied into a home of the check's own (new_home!/1),
  # its working directory and the first entry of its code path (the last
  # -pa), so a target's ebin, which may hold another version of the module,
  # never supplies it. HOME is that directory and XDG_CONFIG_HOME unset, so
  # no .erlang of the user's runs; ERL_FLAGS and the like unset, as a node
  # name meant for a developer's own VMs would make this one fail. The
  # check VM watches its standard input, the port's pipe, and halts at its
  # end, as a `:peer` with `connection: :standard_io` does; `:peer` itself
  # would take that VM's output for its control channel, where the check
  # reads the loader's words and how the VM died.
  defp run({function, check_args}, paths, opts, doing \\ "loading it") do
    timeout = Keyword.get(opts, :timeout, @timeout)
    home = new_home!(System.tmp_dir!())

    try do
      {@check_vm, beam, _} = :code.get_object_code(@check_vm)
      File.write!(Path.join(home, "#{@check_vm}.beam"), beam)

      # -noinput: no reader of the standard input but the watch's.
      check = ["-run", "#{@check_vm}", "#{function}", home, "#{timeout}" | check_args]
      args = boot_args() ++ ["-noinput"] ++ paths ++ ["-pa", home | check]
      {program, args} = bounded(erl(), args, timeout)

      port =
        Port.open({:spawn_executable, program}, [
          :binary,
          :exit_status,
          :stderr_to_stdout,
          args: args,
          cd: home,
          env:
            [{~c"HOME", String.to_charlist(home)}, {~c"XDG_CONFIG_HOME", false}] ++
              for(
                var <- ~w(ERL_FLAGS ERL_AFLAGS ERL_ZFLAGS),
                do: {String.to_charlist(var), false}
              )
        ])

      kept = {"", :queue.new(), 0, 0}
      await(port, kept, System.monotonic_time(:millisecond) + timeout, {timeout, doing})
    after
      File.rm_rf(home)
    end
  end

  # The check VM run under timeout(1), which SIGKILLs it a whole second or
  # more after the deadline, from outside both VMs: so it ends even when
  # nothing in it can run (a load stuck in native code) and its caller is
  # gone. timeout is its process group's leader (erl_child_setup makes each
  # port program one) and the check VM is in that group: kill/1 ends both.
  # GNU's and BusyBox's timeout alike take `-s KILL SECONDS`. Where there is
  # none (macOS without coreutils), erl runs alone: a load stuck in native
  # code then runs until kill/1 at the deadline, or for good if the caller
  # died too.
  defp bounded(erl, args, timeout) do
    case System.find_executable("timeout") do
      nil -> {erl, args}
      bound -> {bound, ["-s", "KILL", "#{div(timeout + 999, 1000) + 1}", erl | args]}
    end
  end

  # A new directory of this check's own, readable by this user only from
  # the moment it exists: `mktemp -d` makes it with one mkdir(2) of mode
  # 0700 (mkdtemp(3); GNU's mktemp likewise), under a random name it fails
  # rather than reuse (one already there could have been planted, .erlang
  # and all). Not File.mkdir/1 then chmod: in between, the directory is
  # 0777 less this VM's umask, and under a umask of 000 or 002 another user
  # could write a .erlang into it; Erlang's own mkdir takes no mode, and a
  # VM cannot set its umask. The check VM removes it once booted; it is left
  # only when that VM dies while booting and its caller died too.
  defp new_home!(tmp) do
    template = Path.join(tmp, "load_check-XXXXXXXXXXXX")

    mktemp =
      System.find_executable("mktemp") || raise "no mktemp on PATH: the load check needs one"

    case System.cmd(mktemp, ["-d", template], stderr_to_stdout: true) do
      {home, 0} -> String.trim_trailing(home, "\n")
      {output, _} -> raise "mktemp -d #{template} failed: #{String.trim(output)}"
    end
  end

  defp await(port, kept, deadline, late) do
    receive do
      {^port, {:data, data}} ->
        await(port, keep(kept, data), deadline, late)

      {^port, {:exit_status, status}} ->
        output = kept_output(kept)
        own_deadline = @check_vm.deadline_status()

        case String.split(output, @check_vm.marker(), parts: 2) do
          [_, "ok\n"] -> :ok
          [_, "answer " <> answer] -> read_answer(answer)
          [before, why] -> {:error, explain(why, before)}
          # The check VM's own deadline, reached first: this VM was late to its own.
          [_] when status == own_deadline -> {:error, late(late, kept)}
          [_] -> {:error, "the VM loading it #{died(status)}: #{inspect(String.trim(output))}"}
        end
    after
      max(deadline - System.monotonic_time(:millisecond), 0) ->
        kill(port)
        {:error, late(late, kept)}
    end
  end

  defp late({timeout, doing}, kept) do
    dropped = dropped(kept)

    "#{doing} did not finish within #{div(timeout, 1000)} s" <>
      if dropped > 0, do: " (#{says_dropped(dropped)})", else: ""
  end

  # What the check VM printed, bounded: a library whose load prints forever
  # would otherwise grow this VM (a production node, in a relup) until the
  # deadline. Kept, from `{"", :queue.new(), 0, 0}` on (run/4): the first
  # @kept bytes (`head`) and, as a queue of whole chunks (`tail`, `size`
  # bytes), at least the last @kept; each chunk before those is dropped as
  # the next comes, only counted, so the pipe is still drained and the
  # check VM never blocks on it. Only the head's bytes are copied; the
  # port's chunks being at most 64 KiB, at most 192 KiB are held.
  defp keep({head, tail, size, dropped}, data) when byte_size(head) < @kept do
    room = min(@kept - byte_size(head), byte_size(data))
    rest = binary_part(data, room, byte_size(data) - room)
    kept = {head <> binary_part(data, 0, room), tail, size, dropped}
    if rest == "", do: kept, else: keep(kept, rest)
  end

  defp keep({head, tail, size, dropped}, data) do
    drop_front({head, :queue.in(data, tail), size + byte_size(data), dropped})
  end

  defp drop_front({head, tail, size, dropped} = kept) do
    {{:value, front}, rest} = :queue.out(tail)

    if size - byte_size(front) >= @kept,
      do: drop_front({head, rest, size - byte_size(front), dropped + byte_size(front)}),
      else: kept
  end

  # Every byte not kept: the chunks dropped, and the part of the oldest
  # queued chunk before the last @kept bytes.
  defp dropped({_head, _tail, size, dropped}), do: dropped + max(size - @kept, 0)

  # The kept output as one text: the head, then the last @kept bytes, and
  # between them, when anything was dropped, a line that says so.
  defp kept_output({head, tail, size, _} = kept) do
    cut = max(size - @kept, 0)
    last = tail |> :queue.to_list() |> IO.iodata_to_binary() |> binary_part(cut, size - cut)

    case dropped(kept) do
      0 -> head <> last
      dropped -> head <> "\n[#{says_dropped(dropped)}]\n" <> last
    end
  end

  defp says_dropped(bytes),
    do:
      "#{bytes} bytes of the check VM's output dropped: " <>
        "the check keeps the first and last #{div(@kept, 1024)} KiB of it"

  # The asked function's answer: its external format, in hex, on the marked
  # line. `:safe`: an atom this VM does not know is refused, not made.
  defp read_answer(line) do
    [hex | _] = String.split(line, "\n", parts: 2)
    {:ok, hex |> Base.decode16!() |> :erlang.binary_to_term([:safe])}
  rescue
    ArgumentError ->
      {:error, "the answer of the function asked could not be read: #{inspect(line)}"}
  end

  # The check VM's verdict, then what it printed before it (a module's
  # on_load logs the loader's own words there).
  defp explain(why, before) do
    [why, before] |> Enum.map(&String.trim/1) |> Enum.reject(&(&1 == "")) |> Enum.join("\n")
  end

  # SIGKILL to the port's process group: timeout(1) and the check VM under
  # it (the erl script exec's the emulator), or the check VM alone where it
  # runs without timeout; then the port closed and its messages dropped.
  defp kill(port) do
    case Port.info(port, :os_pid) do
      {:os_pid, pid} ->
        {_output, _status} =
          System.cmd("kill", ["-KILL", "--", "-#{pid}"], stderr_to_stdout: true)

        :ok

      nil ->
        :ok
    end

    receive do
      {^port, {:exit_status, _}} -> :ok
    after
      5_000 -> :ok
    end

    if Port.info(port), do: Port.close(port)
    flush(port)
  end

  defp flush(port) do
    receive do
      {^port, _} -> flush(port)
    after
      0 -> :ok
    end
  end

  defp died(status) when status > 128 do
    signal = status - 128
    names = %{6 => " (SIGABRT)", 7 => " (SIGBUS)", 9 => " (SIGKILL)", 11 => " (SIGSEGV)"}
    "was killed by signal #{signal}#{Map.get(names, signal)}"
  end

  defp died(status), do: "exited with status #{status}"

  # This installation's erl: in a release, the one in its erts directory
  # (a release's bin/ holds its own scripts); else the installation's bin/.
  defp erl do
    root = :code.root_dir()

    [
      Path.join([root, "erts-#{:erlang.system_info(:version)}", "bin", "erl"]),
      Path.join([root, "bin", "erl"])
    ]
    |> Enum.find(&File.regular?/1)
    |> Kernel.||(System.find_executable("erl"))
  end

  # The start_clean script beside the boot script this VM started from,
  # with the same boot variables; none named (erl's default boot) when this
  # VM was started without -boot.
  defp boot_args do
    with {:ok, [[boot]]} <- :init.get_argument(:boot),
         clean = Path.join(Path.dirname(to_string(boot)), "start_clean"),
         true <- File.regular?(clean <> ".boot") do
      vars =
        case :init.get_argument(:boot_var) do
          {:ok, pairs} -> Enum.flat_map(pairs, fn [k, v] -> ["-boot_var", "#{k}", "#{v}"] end)
          :error -> []
        end

      ["-boot", clean | vars]
    else
      _ -> []
    end
  end
end
