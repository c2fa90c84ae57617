defmodule Mix.Tasks.Compile.OpenagentsPolicyNif do
  @moduledoc """
  Builds the Rust NIF crate `openagents_policy_nif` and installs it where
  `OpenAgentsPolicy.Native` loads it from.

  This is a cut-down version of what the `rustler` Mix package does; that
  package lives on hex.pm, which this project cannot use, so the library
  carries its own compiler. It runs before the Elixir compiler (see
  `:compilers` in mix.exs), because modules of the library call the NIF while
  they are being compiled.

  On every `mix compile`, in the project root (the directory of the current
  project's mix.exs, also the right place when the library is a `path:` or
  `git:` dependency):

    1. **Cargo decides what is stale.** It runs
       `cargo build --locked -p openagents_policy_nif --release
       --message-format=json-render-diagnostics` (no `--release` with
       `OPENAGENTS_POLICY_NIF_PROFILE=debug`). On a tree cargo has already
       built this is a no-op of about 0.1 s; an edit cargo has not built yet,
       even one saved while it was building, is built now. Cargo's own
       settings all apply (`CARGO_TARGET_DIR`, `CARGO_BUILD_TARGET_DIR`,
       `.cargo/config.toml`'s `target-dir` and `build.target`, ...), because
       the library's path is taken from cargo's report of the `cdylib` it
       produced (its `compiler-artifact` message), never guessed.
       `--locked` refuses to rewrite `Cargo.lock`.
    2. **The content decides what is installed.** The library is installed
       as `priv/native/libopenagents_policy_nif-<digest>.so` under
       `Mix.Project.app_path/0`, named by its content. When a file of that
       name is already there, nothing is done, so a no-op compile recompiles
       no Elixir module. Otherwise the new file is installed, every other
       build in `priv/native` is deleted (a release carries the current one
       only), and `OpenAgentsPolicy.Native`, which names the installed file
       as an `@external_resource`, recompiles with the modules that read the
       core at compile time. In a running VM (`recompile()` in IEx in this
       project; in a host, Phoenix's code reloader with this library in
       `reloadable_apps` and this compiler in `reloadable_compilers`)
       the recompiled `Native` loads the new file: a new path, so the VM
       loads the new code instead of reusing the library it already holds.
    3. **A library that cannot load stops the build.** Before it is kept,
       the installed file is loaded by a separate VM, under a time limit, so
       a wrong-architecture or corrupt file fails here within seconds, with
       its path and the loader's error, instead of stalling the Elixir
       compiler on a module that never loads.

  With `OPENAGENTS_POLICY_NIF_PATH=/path/to/libopenagents_policy_nif.so`
  cargo is not run at all: that prebuilt library is installed whenever its
  content differs from what is installed, whatever its modification time.

  The source tree must not have a `priv/` directory: Mix would link it into
  the build over the installed library.
  """
  use Mix.Task.Compiler

  @crate "openagents_policy_nif"
  @native "priv/native"
  @check_timeout 30_000
  @machines %{
    3 => "x86",
    8 => "mips",
    20 => "ppc",
    21 => "ppc64",
    22 => "s390x",
    40 => "arm",
    62 => "x86_64",
    183 => "aarch64",
    243 => "riscv"
  }
  @escapes %{?n => "\n", ?t => "\t", ?r => "\r", ?b => "\b", ?f => "\f"}

  @impl true
  def run(args) do
    root = Path.dirname(Mix.Project.project_file())
    dir = Path.join(Mix.Project.app_path(), @native)
    {origin, artifact} = produce(root)

    name = "lib#{@crate}-#{digest(artifact)}"
    installed = Path.join(dir, name <> ".so")

    if "--force" in args or not File.regular?(installed) do
      install!(origin, artifact, installed, root)
      {:ok, []}
    else
      {:noop, []}
    end
  end

  @impl true
  def manifests, do: [manifest()]

  @impl true
  def clean do
    priv = Path.join(Mix.Project.app_path(), "priv")
    File.rm_rf!(Path.join(priv, "native"))
    File.rmdir(priv)
    File.rm(manifest())
    :ok
  end

  defp manifest, do: Path.join(Mix.Project.manifest_path(), "compile.#{@crate}")

  # The file's content, named: the first 16 hex digits of its MD5 (a name,
  # not a security measure; MD5 needs no :crypto).
  defp digest(file) do
    file |> File.read!() |> :erlang.md5() |> Base.encode16(case: :lower) |> binary_part(0, 16)
  end

  # Copies the library in under its own name, proves it loads, then deletes
  # every other build. A new library that does not load is removed again, so
  # the previous build stays current and the next compile tries again.
  defp install!(origin, artifact, installed, root) do
    dir = Path.dirname(installed)
    File.mkdir_p!(dir)
    reinstall? = File.regular?(installed)

    if match?({:prebuilt, _}, origin),
      do: Mix.shell().info("Installing prebuilt NIF #{artifact}")

    # Copy then rename: never a half-written file under the final name.
    File.cp!(artifact, installed <> ".tmp")
    File.rename!(installed <> ".tmp", installed)

    case check_loads(installed, root) do
      :ok ->
        :ok

      {:error, why} ->
        unless reinstall?, do: File.rm(installed)

        Mix.raise("""
        The NIF library #{artifact} cannot be loaded by this VM (OTP #{System.otp_release()}, \
        #{:erlang.system_info(:system_architecture)}):

            #{why}

        The file is #{describe(artifact)}.
        #{hint(origin)}\
        """)
    end

    for file <- Path.wildcard(Path.join(dir, "lib#{@crate}*")),
        file != installed,
        do: File.rm!(file)

    File.mkdir_p!(Path.dirname(manifest()))
    File.write!(manifest(), :erlang.term_to_binary({origin, Path.basename(installed)}))
    Mix.shell().info("Installed NIF #{Path.basename(installed)} (from #{artifact})")
  end

  defp hint({:prebuilt, _}),
    do: "OPENAGENTS_POLICY_NIF_PATH names it: point it at a library built for this machine."

  defp hint({:cargo, _}),
    do: "It was built by cargo here; check the Rust toolchain's target and the NIF version."

  # What the file's header says it is: the loader's own message for a library
  # of another architecture is often just "No such file or directory".
  defp describe(file) do
    case File.open(file, [:read, :binary], &IO.binread(&1, 20)) do
      {:ok, <<0x7F, "ELF", class, endian, _::binary-12, machine::binary-2>>} ->
        machine =
          if endian == 2,
            do: :binary.decode_unsigned(machine),
            else: :binary.decode_unsigned(machine, :little)

        bits = if class == 2, do: "64-bit", else: "32-bit"
        "an ELF #{bits} file for #{Map.get(@machines, machine, "machine #{machine}")}"

      {:ok, <<magic::little-32, _::binary>>} when magic in [0xFEEDFACF, 0xFEEDFACE] ->
        "a Mach-O file"

      {:ok, _} ->
        "not a shared library (no ELF or Mach-O header)"

      {:error, reason} ->
        "unreadable (#{:file.format_error(reason)})"
    end
  end

  ## Where the library comes from

  defp produce(root) do
    case System.get_env("OPENAGENTS_POLICY_NIF_PATH") do
      nil ->
        profile = profile()
        {{:cargo, profile}, cargo_build!(root, profile)}

      path ->
        path = Path.expand(path)

        unless File.regular?(path) do
          Mix.raise("OPENAGENTS_POLICY_NIF_PATH is set to #{path}, which is not a file")
        end

        {{:prebuilt, path}, path}
    end
  end

  defp profile do
    case System.get_env("OPENAGENTS_POLICY_NIF_PROFILE", "release") do
      profile when profile in ["release", "debug"] -> profile
      other -> Mix.raise("OPENAGENTS_POLICY_NIF_PROFILE must be release or debug, got: #{other}")
    end
  end

  # Runs cargo, streaming what it says for people (less its "Finished" line,
  # so a no-op compile stays silent), and returns the cdylib it reports.
  defp cargo_build!(root, profile) do
    cargo =
      System.find_executable("cargo") ||
        Mix.raise("""
        cargo was not found on PATH, so the #{@crate} NIF cannot be built.
        Install Rust with rustup (https://rustup.rs), or point
        OPENAGENTS_POLICY_NIF_PATH at a prebuilt lib#{@crate}.so.
        """)

    args =
      ["build", "--locked", "-p", @crate, "--message-format=json-render-diagnostics"] ++
        if(profile == "release", do: ["--release"], else: [])

    port =
      Port.open({:spawn_executable, cargo}, [
        :binary,
        :exit_status,
        :stderr_to_stdout,
        {:line, 65_536},
        args: args,
        cd: root
      ])

    {status, artifacts} = collect(port, "", [])

    if status != 0 do
      Mix.raise("""
      `cargo #{Enum.join(args, " ")}` failed with exit status #{status} (output above).
      If it says Cargo.lock needs to be updated, run `cargo update --workspace` in #{root}.
      To use a prebuilt library instead, set OPENAGENTS_POLICY_NIF_PATH.
      """)
    end

    case Enum.uniq(artifacts) do
      [file] ->
        file

      [] ->
        Mix.raise("cargo built #{@crate} but reported no cdylib for it")

      several ->
        Mix.raise(
          "cargo reported #{length(several)} cdylibs for #{@crate} (several build " <>
            "targets?), so which one to install is ambiguous: #{Enum.join(several, ", ")}"
        )
    end
  end

  defp collect(port, partial, artifacts) do
    receive do
      {^port, {:data, {:noeol, chunk}}} ->
        collect(port, partial <> chunk, artifacts)

      {^port, {:data, {:eol, chunk}}} ->
        collect(port, "", line(partial <> chunk, artifacts))

      {^port, {:exit_status, status}} ->
        {status, artifacts}
    end
  end

  # Cargo's JSON messages start with `{"reason":`; everything else is for
  # people.
  defp line("{\"reason\":" <> _ = json, artifacts) do
    case String.contains?(json, @crate) and decode_json(json) do
      %{"reason" => "compiler-artifact", "target" => %{"name" => @crate} = target} = message ->
        if "cdylib" in Map.get(target, "crate_types", []),
          do: Enum.filter(message["filenames"], &dynamic_library?/1) ++ artifacts,
          else: artifacts

      _other ->
        artifacts
    end
  end

  defp line(text, artifacts) do
    unless String.starts_with?(String.trim_leading(text), "Finished "),
      do: Mix.shell().info(text)

    artifacts
  end

  defp dynamic_library?(file), do: Path.extname(file) in [".so", ".dylib"]

  ## The load check

  # Loads `installed` into a fresh VM of the same OTP installation, in a
  # module of `OpenAgentsPolicy.Native`'s name with its NIF stubs, exactly as
  # the library will be loaded. A fresh VM, because a load in this one would
  # stay loaded, and because a module that fails to load here is what stalls
  # the Elixir compiler.
  defp check_loads(installed, root) do
    tmp = Path.join(Path.dirname(manifest()), "nif_check")
    File.mkdir_p!(tmp)
    File.write!(Path.join(tmp, "Elixir.OpenAgentsPolicy.Native.beam"), stub_module(root))

    lib = installed |> Path.rootname(".so") |> String.to_charlist()

    eval = """
    R = (catch 'Elixir.OpenAgentsPolicy.Native':check(#{:io_lib.format(~c"~p", [lib])})),
    case R of
      ok -> io:put_chars("nif_check: ok\\n");
      {error, {Reason, Text}} -> io:format("nif_check: ~p: ~ts~n", [Reason, Text]);
      Other -> io:format("nif_check: ~p~n", [Other])
    end,
    halt(0).
    """

    port =
      Port.open({:spawn_executable, erl()}, [
        :binary,
        :exit_status,
        :stderr_to_stdout,
        args: ["-noshell", "-pa", tmp, "-eval", eval],
        # Flags meant for the developer's own VMs (a node name, say) would
        # make this one fail for reasons of its own.
        env: for(var <- ~w(ERL_FLAGS ERL_AFLAGS ERL_ZFLAGS), do: {String.to_charlist(var), false})
      ])

    result = await_check(port, "")
    File.rm_rf(tmp)
    result
  end

  defp await_check(port, output) do
    receive do
      {^port, {:data, data}} ->
        await_check(port, output <> data)

      {^port, {:exit_status, status}} ->
        case String.split(output, "nif_check: ", parts: 2) do
          [_, "ok\n"] -> :ok
          [_, why] -> {:error, String.trim(why)}
          [_] -> {:error, "the VM loading it #{died(status)}: #{inspect(String.trim(output))}"}
        end
    after
      @check_timeout ->
        with {:os_pid, pid} <- Port.info(port, :os_pid),
             do: System.cmd("sh", ["-c", "kill -KILL #{pid}"])

        {:error, "loading it did not finish within #{div(@check_timeout, 1000)} s"}
    end
  end

  # A truncated library, for one, makes the loader touch pages past its end:
  # SIGBUS, which is why the check runs in a VM of its own.
  defp died(status) when status > 128 do
    signal = status - 128

    "was killed by signal #{signal}#{Map.get(%{6 => " (SIGABRT)", 7 => " (SIGBUS)", 11 => " (SIGSEGV)"}, signal)}"
  end

  defp died(status), do: "exited with status #{status}"

  # The `erl` of the OTP installation this VM runs, so the check loads the
  # library into the same ERTS.
  defp erl do
    bundled = Path.join([:code.root_dir(), "bin", "erl"])
    if File.regular?(bundled), do: bundled, else: System.find_executable("erl")
  end

  # A BEAM module named OpenAgentsPolicy.Native, with a stub for every NIF
  # that lib/openagents_policy/native.ex declares (`def f(...), do:
  # :erlang.nif_error(...)`): the VM refuses a library with a function its
  # module lacks, so the check sees what the real load will see.
  defp stub_module(root) do
    source = File.read!(Path.join(root, "lib/openagents_policy/native.ex"))
    {_ast, stubs} = source |> Code.string_to_quoted!() |> Macro.prewalk([], &stub/2)

    call = fn fun, args ->
      {:call, 1, {:remote, 1, {:atom, 1, :erlang}, {:atom, 1, fun}}, args}
    end

    check =
      {:function, 1, :check, 1,
       [{:clause, 1, [{:var, 1, :P}], [], [call.(:load_nif, [{:var, 1, :P}, {:integer, 1, 0}])]}]}

    functions =
      for {name, arity} <- Enum.uniq(stubs) do
        vars = for i <- 1..arity//1, do: {:var, 1, :"_A#{i}"}
        body = call.(:nif_error, [{:atom, 1, :nif_not_loaded}])
        {:function, 1, name, arity, [{:clause, 1, vars, [], [body]}]}
      end

    forms =
      [
        {:attribute, 1, :module, :"Elixir.OpenAgentsPolicy.Native"},
        {:attribute, 1, :export, [{:check, 1} | Enum.uniq(stubs)]},
        check
      ] ++ functions

    {:ok, _module, binary} = :compile.forms(forms, [:binary, :return_errors])
    binary
  end

  defp stub({:def, _, [{name, _, args}, [do: {{:., _, [:erlang, :nif_error]}, _, _}]]} = ast, acc)
       when is_atom(name),
       do: {ast, [{name, length(args || [])} | acc]}

  defp stub(ast, acc), do: {ast, acc}

  ## A JSON reader, for cargo's messages (the library has no dependencies).

  defp decode_json(text) do
    case value(skip(text)) do
      {value, rest} -> if skip(rest) == "", do: value, else: :invalid
    end
  catch
    :invalid -> :invalid
  end

  defp skip(<<c, rest::binary>>) when c in ~c" \t\r\n", do: skip(rest)
  defp skip(rest), do: rest

  defp value("{" <> rest), do: members(skip(rest), %{})
  defp value("[" <> rest), do: elements(skip(rest), [])
  defp value("\"" <> rest), do: string(rest, [])
  defp value("true" <> rest), do: {true, rest}
  defp value("false" <> rest), do: {false, rest}
  defp value("null" <> rest), do: {nil, rest}

  defp value(text) do
    case Regex.run(~r/^-?\d+(\.\d+)?([eE][-+]?\d+)?/, text) do
      [number | _] ->
        {elem(Float.parse(number), 0),
         binary_part(text, byte_size(number), byte_size(text) - byte_size(number))}

      nil ->
        throw(:invalid)
    end
  end

  defp members("}" <> rest, acc), do: {acc, rest}

  defp members("\"" <> rest, acc) do
    {key, rest} = string(rest, [])
    ":" <> rest = skip(rest)
    {value, rest} = value(skip(rest))
    acc = Map.put(acc, key, value)

    case skip(rest) do
      "," <> rest -> members(skip(rest), acc)
      "}" <> rest -> {acc, rest}
      _ -> throw(:invalid)
    end
  end

  defp members(_text, _acc), do: throw(:invalid)

  defp elements("]" <> rest, acc), do: {Enum.reverse(acc), rest}

  defp elements(text, acc) do
    {value, rest} = value(text)

    case skip(rest) do
      "," <> rest -> elements(skip(rest), [value | acc])
      "]" <> rest -> {Enum.reverse([value | acc]), rest}
      _ -> throw(:invalid)
    end
  end

  defp string("\"" <> rest, acc), do: {IO.iodata_to_binary(Enum.reverse(acc)), rest}

  defp string("\\u" <> <<hex::binary-4, rest::binary>>, acc) do
    case {String.to_integer(hex, 16), rest} do
      {high, "\\u" <> <<low::binary-4, rest::binary>>} when high in 0xD800..0xDBFF ->
        low = String.to_integer(low, 16) - 0xDC00
        string(rest, [<<0x10000 + (high - 0xD800) * 0x400 + low::utf8>> | acc])

      {code, rest} ->
        string(rest, [<<code::utf8>> | acc])
    end
  end

  defp string("\\" <> <<c, rest::binary>>, acc),
    do: string(rest, [Map.get(@escapes, c, <<c>>) | acc])

  defp string(<<c, rest::binary>>, acc), do: string(rest, [<<c>> | acc])
  defp string("", _acc), do: throw(:invalid)
end
