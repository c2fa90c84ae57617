defmodule OpenAgentsPolicy.LoadCheck do
  @moduledoc """
  The one load check: does a fresh VM of this OTP installation load a NIF
  library? Used by `OpenAgentsPolicy.Upgrade.check/3` before a relup's point
  of no return (a wrong-architecture, truncated or too-new library is
  refused in seconds, with the loader's own error), and by the maintainers'
  check of the precompiled artifacts (`scripts/precompiled_check.sh`).

  A fresh VM, because a library loaded here would stay loaded, and because
  a loader that crashes (a truncated file makes it touch pages past its
  end: SIGBUS) must not take this VM with it.

  Two subjects:

    * `library/3` (the artifacts'): a NIF library file, loaded into a module
      of the name its NIF table carries, generated in the check VM with a
      stub for every function **the library itself names**. The check VM
      asks the loader: `:erlang.load_nif/2` refuses a library that names a
      function its module lacks with ERTS's `Function not found M:F/A`; the
      stub is added and the load tried again, until it loads or fails for
      another reason. So the check depends on nothing in
      `lib/openagents_policy/native.ex`, only on the loader's message, which
      has read so since OTP R13: an artifact built for another machine is
      checked whole, with no module of this build in the way.
    * `module/3` (the upgrade's): a compiled module whose `on_load` loads
      the library, from the given code path (a target release's own ebin),
      exactly as the relup will load it. With `ask: function`, that VM
      then calls one function of the loaded module, with no arguments, and
      the check answers what it returned (the upgrade asks the target's
      own NIF module for its decision digest, the one
      `OpenAgentsPolicy.decision_digest/0` answers here: what the target's
      library decides, from the library itself).

  How the check VM is run, for both: the `erl` of this installation (in a
  release, the one in its `erts-*` directory), booting the `start_clean`
  script beside this VM's boot script (a release has no `bin/start.boot`);
  `ERL_FLAGS`, `ERL_AFLAGS` and `ERL_ZFLAGS` unset (a node name meant for a
  developer's own VMs would make this one fail for reasons of its own);
  `HOME` set to an empty directory of the check's own, and
  `XDG_CONFIG_HOME` unset, so no `.erlang` of the user's runs in it. That
  directory is made new by `mktemp -d`: one `mkdir(2)` of a random name in
  the system's temporary directory, with mode 0700 from the start (no
  moment where another user of the machine, under a umask of 000 or 002,
  could write a `.erlang` into it), and never one already there, which
  another user could have planted; the check VM removes it once booted
  (its `.erlang` would be read during the boot), before the load. One
  deadline for the whole check (30 s unless `:timeout` says otherwise), not
  renewed by output: a library whose load prints forever is still cut off;
  then the check VM is killed (SIGKILL to the port's process group), so
  none is left behind. Of what the check
  VM prints before its verdict, only the first and last 64 KiB are kept
  here (the rest is read from the pipe and dropped, and a refusal says how
  many bytes went), so a library that prints forever costs this VM no more.

  The check VM dies with its caller, as a `:peer` node started with
  `connection: :standard_io` does, by the same means: its first act is a
  watch on its standard input, the calling port's pipe, to which nothing is
  written. End of file there means the port was closed: by the calling
  process, by that process's death (a port is linked to its owner), or by
  the death of the calling VM however it dies (the kernel closes its end of
  the pipe: a SIGKILL, a CI job's kill, Ctrl-C); the check VM then halts.
  The watch also holds the check's deadline, from the check VM's own start,
  so a caller alive but stuck (suspended, or never reading its port) leaves
  none running past it either. A load stuck in native code can keep every
  process of the check VM from running, the watch's too: so the check VM
  runs under `timeout -s KILL`, which kills it from outside both VMs one to
  two seconds after the deadline, whatever became of its caller. `:peer`
  itself is not used: it makes the node's output its control channel, where
  the check reads the loader's own words and how the VM died (a signal, an
  exit status) from the port.

  What remains possible: a directory left behind when the check VM dies
  while it boots, before it removes it, and its caller died too (or the
  caller died between making it and starting the check VM); and, on a
  machine with no `timeout` on the `PATH` (macOS without coreutils), a
  check VM whose load is stuck in native code runs until its caller kills
  it at the deadline, or for good if the caller died too.

  Absent: anything Mix or Elixir at run time in the check VM (`library/3`
  needs erts, kernel, stdlib and compiler only), any retry, and
  distribution (the caller may be a non-distributed Mix task).
  """

  @timeout 30_000
  @marker "load_check: "
  # The check VM's exit status when it halts at its own deadline (timeout(1)'s).
  @deadline_status 124
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
    lib = file |> Path.expand() |> Path.rootname(".so") |> String.to_charlist()
    keep = if path = opts[:keep_stub], do: String.to_charlist(Path.expand(path)), else: ~c""

    eval = """
    M = #{literal(module)}, Lib = #{literal(lib)}, Keep = #{literal(keep)},
    Call = fun(F, As) -> {call, 1, {remote, 1, {atom, 1, erlang}, {atom, 1, F}}, As} end,
    Stub = fun({N, A}) ->
      {function, 1, N, A, [{clause, 1, [{var, 1, '_'} || _ <- lists:seq(1, A)], [],
                            [Call(nif_error, [{atom, 1, nif_not_loaded}])]}]}
    end,
    Load = fun Load(Fs) ->
      Forms = [{attribute, 1, module, M}, {attribute, 1, export, [{check, 1} | Fs]},
               {function, 1, check, 1, [{clause, 1, [{var, 1, 'P'}], [],
                                         [Call(load_nif, [{var, 1, 'P'}, {integer, 1, 0}])]}]}
               | lists:map(Stub, Fs)],
      {ok, M, Bin} = compile:forms(Forms, [binary, return_errors]),
      code:purge(M), code:delete(M), code:purge(M),
      {module, M} = code:load_binary(M, "load_check", Bin),
      case catch M:check(Lib) of
        ok when Keep =:= "" -> ok;
        ok -> file:write_file(Keep, Bin);
        {error, {bad_lib, "Function not found " ++ Missing}} = Error ->
          case re:run(Missing, ":([^:]+)/([0-9]+)$", [{capture, all_but_first, list}]) of
            {match, [N, A]} ->
              F = {list_to_atom(N), list_to_integer(A)},
              case lists:member(F, Fs) of true -> Error; false -> Load([F | Fs]) end;
            nomatch -> Error
          end;
        Other -> Other
      end
    end,
    #{report("Load([])")}
    """

    run(eval, [], opts)
  end

  @doc """
  Loads `module` from `code_paths` (put first on the check VM's code path)
  in a fresh VM, and returns `:ok` if it loads: its `on_load`, which loads
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
    # The on_load's own result: the code server returns only
    # on_load_failure, and reports the result from a process of its own
    # (error_logger's warning_msg), which a primary filter hands to the
    # check (the check VM would otherwise halt before it is printed).
    eval = """
    M = #{literal(module)}, Self = self(),
    OnLoad = fun(\#{msg := {report, \#{args := [Mod, Res, _]}}}, P) when Mod =:= M -> P ! {on_load, Res}, stop;
                (\#{msg := {Format, [Mod, Res, _]}}, P) when Mod =:= M, is_list(Format) -> P ! {on_load, Res}, stop;
                (_, _) -> ignore
             end,
    ok = logger:add_primary_filter(load_check_on_load, {OnLoad, Self}),
    R = case code:ensure_loaded(M) of
          {module, _} -> #{ask(module, opts[:ask])};
          {error, on_load_failure} -> receive {on_load, Returned} -> Returned after 10000 -> {error, on_load_failure} end;
          Other -> Other
        end,
    #{report("R")}
    """

    elixir = Path.join(:code.lib_dir(:elixir), "ebin")
    paths = Enum.flat_map([elixir | code_paths], &["-pa", Path.expand(&1)])

    doing =
      if function = opts[:ask],
        do: "loading it and calling #{inspect(module)}.#{function}/0",
        else: "loading it"

    run(eval, paths, opts, doing)
  end

  # After the load: nothing more, or the one call asked for, caught whole
  # (a missing function is an undef like any other error). Its variables
  # named apart from the rest of the check's (erl_eval refuses a variable
  # bound in one branch and used after).
  defp ask(_module, nil), do: "ok"

  defp ask(module, function) when is_atom(function) do
    """
    try M:#{literal(function)}() of
            AskAnswer -> {answer, AskAnswer}
          catch
            AskClass:AskReason:AskStack ->
              {asked, #{literal(String.to_charlist(asked(module, function)))},
               'Elixir.Exception':format_banner(AskClass, AskReason, AskStack)}
          end
    """
  end

  defp asked(module, function), do: "#{inspect(module)}.#{function}/0, asked after the load"

  defp literal(term), do: :io_lib.format(~c"~p", [term]) |> IO.iodata_to_binary()

  # The check VM's last words: one marked line saying ok or why not.
  defp report(result) do
    """
    case #{result} of
      ok -> io:put_chars("#{@marker}ok\\n");
      {answer, A} -> io:format("#{@marker}answer ~s~n", ['Elixir.Base':encode16(term_to_binary(A))]);
      {asked, Asked, Banner} -> io:format("#{@marker}~ts: ~ts~n", [Asked, Banner]);
      {error, {Reason, Text}} when is_list(Text) -> io:format("#{@marker}~p: ~ts~n", [Reason, Text]);
      Why -> io:format("#{@marker}~p~n", [Why])
    end,
    halt(0).
    """
  end

  defp run(eval, paths, opts, doing \\ "loading it") do
    timeout = Keyword.get(opts, :timeout, @timeout)
    home = new_home!(System.tmp_dir!())

    # -noinput: no reader of the standard input but the watch's.
    args = boot_args() ++ ["-noinput"] ++ paths ++ ["-eval", watch(home, timeout) <> eval]
    {program, args} = bounded(erl(), args, timeout)

    try do
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
  # GNU's and BusyBox's timeout alike take `-s KILL SECONDS`; where there is
  # none (macOS without coreutils), erl runs alone, as the moduledoc says.
  defp bounded(erl, args, timeout) do
    case System.find_executable("timeout") do
      nil -> {erl, args}
      bound -> {bound, ["-s", "KILL", "#{div(timeout + 999, 1000) + 1}", erl | args]}
    end
  end

  # The check VM's first acts, before the load: removing its home, which
  # served while it booted (its .erlang, had it one, is read by the boot
  # script, before any -eval), so no directory is left whatever ends the
  # check VM after that; then a process of its own that halts it when its
  # standard input, the port's pipe, reaches end of file (the port closed,
  # by its owner or with it, or the calling VM gone) or goes away, and at
  # the deadline, counted from the check VM's start: so never before the
  # caller's own, which is the one that speaks while the caller is alive
  # and reading. No flush at halt: a caller stuck with its pipe full must
  # not hold it.
  defp watch(home, timeout) do
    """
    _ = file:del_dir_r(#{literal(String.to_charlist(home))}),
    _ = spawn(fun() ->
      process_flag(trap_exit, true),
      Stdin = open_port({fd, 0, 1}, [in, eof, binary]),
      _ = erlang:send_after(#{timeout}, self(), deadline),
      Halt = fun(Status) -> erlang:halt(Status, [{flush, false}]) end,
      Watch = fun W() ->
        receive
          {Stdin, {data, _}} -> W();
          {Stdin, eof} -> Halt(1);
          {'EXIT', Stdin, _} -> Halt(1);
          deadline -> Halt(#{@deadline_status})
        end
      end,
      Watch()
    end),
    """
  end

  # A new directory of this check's own, readable by this user only from
  # the moment it exists: `mktemp -d` makes it with one mkdir(2) of mode
  # 0700 (mkdtemp(3); GNU's mktemp likewise), under a random name it fails
  # rather than reuse (one already there could have been planted, .erlang
  # and all). Not File.mkdir/1 then chmod: in between, the directory is
  # 0777 less this VM's umask, and under a umask of 000 or 002 another user
  # could write a .erlang into it; Erlang's own mkdir takes no mode, and a
  # VM cannot set its umask.
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

        case String.split(output, @marker, parts: 2) do
          [_, "ok\n"] -> :ok
          [_, "answer " <> answer] -> read_answer(answer)
          [before, why] -> {:error, explain(why, before)}
          # The check VM's own deadline, reached first: this VM was late to its own.
          [_] when status == @deadline_status -> {:error, late(late, kept)}
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
