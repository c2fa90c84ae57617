defmodule OpenAgentsPolicy.Upgrade do
  @moduledoc """
  The library's part in a hot-code upgrade (a relup) that refuses, before
  anything changes, a NIF library the running VM could not swap in.

  Every build of the library carries `ebin/openagents_policy.appup` (its
  Mix compiler `compile.openagents_policy_appup` writes it). For an upgrade
  from, or a downgrade to, any other version of the library it says:

    1. `{apply, {OpenAgentsPolicy.Upgrade, :check, [direction, version]}}`,
       placed before the relup's `point_of_no_return`: `check/3` below;
    2. `point_of_no_return`;
    3. `{load_module, OpenAgentsPolicy.Native, ...}` first, so the new
       content-named NIF library is loaded (a new path, so a new library,
       never the one already mapped), then the modules that call it, among
       them the three whose tables are computed from the core at compile
       time (`OpenAgents.Delegations.Target`,
       `OpenAgents.Transparency.WorkDisclosure`,
       `OpenAgents.Transparency.Ladder`), then every other module, so tables
       and NIF are always from the same build once the relup is done.

  Words used here:

    * **target library**: the `priv/native/libopenagents_policy_nif-*.so` of
      the library version the relup installs, under the release's `lib/`
      (`openagents_policy-<vsn>`, unpacked by `release_handler`).
    * **refuse**: throw `{:error, {:openagents_policy, reason}}`, which
      `:release_handler.install_release/1` returns as `{:error, reason'}`
      with nothing loaded and the running release untouched. After the point
      of no return a module that fails to load makes `release_handler`
      restart the VM: that is what the check exists to prevent.

  Deliberately absent: any check of the Erlang side (the relup's own checks
  already refuse a module with processes still in its old code, with
  `soft_purge`), and any state to carry over (the NIF has no resources or
  private data, so its `upgrade` callback does nothing but succeed; it, and
  the `openagents_policy_nif_entry` crate that makes room for it, exist only
  because this kind of load needs one and `rustler::init!` does not emit it).
  """

  @nif "libopenagents_policy_nif"
  @timeout 15_000

  @typedoc "Which way the relup goes: to the version that carries this appup, or from it."
  @type direction :: :up | :down

  @doc """
  Refuses (throws `{:error, {:openagents_policy, reason}}`) unless every
  target library can be swapped into this VM; returns `:ok` otherwise.

  `:up` checks the library of `version` (the appup's own version). `:down`
  checks every other unpacked version under `lib_root` (the appup of the
  version being left does not know which one is going to be installed, and
  a relup only ever installs an unpacked one).

  A target library can be swapped in when exactly one `.so` is installed in
  its `priv/native` and a fresh VM of this installation loads it into its
  `OpenAgentsPolicy.Native` (the same module, the same `on_load`, the same
  path rule as the running VM will use). That catches a library for another
  CPU or C library, one built for a newer NIF version than this ERTS, a
  corrupt file and a NIF table that does not match the module.

  Reasons: `{:no_library, dir}` (no unpacked version or no `.so`),
  `{:several_libraries, files}`, `{:does_not_load, file, why}`.
  """
  @spec check(direction(), String.t(), Path.t()) :: :ok
  def check(direction, version, lib_root \\ Path.join(:code.root_dir(), "lib"))
      when direction in [:up, :down] and is_binary(version) do
    lib_root
    |> targets(direction, version)
    |> Enum.each(&check_dir!/1)
  end

  defp targets(lib_root, :up, version), do: [Path.join(lib_root, "openagents_policy-#{version}")]

  defp targets(lib_root, :down, version) do
    case Path.wildcard(Path.join(lib_root, "openagents_policy-*")) --
           [Path.join(lib_root, "openagents_policy-#{version}")] do
      [] -> refuse({:no_library, Path.join(lib_root, "openagents_policy-*")})
      dirs -> dirs
    end
  end

  defp check_dir!(dir) do
    case Path.wildcard(Path.join([dir, "priv", "native", @nif <> "*.so"])) do
      [file] -> check_loads!(file, Path.join(dir, "ebin"))
      [] -> refuse({:no_library, dir})
      files -> refuse({:several_libraries, files})
    end
  end

  @spec refuse(term()) :: no_return()
  defp refuse(reason), do: throw({:error, {:openagents_policy, reason}})

  # The target version's own Native, loaded by a fresh VM from the target's
  # ebin: its on_load finds the library through the code path exactly as the
  # relup's load will (release_handler points the code path at the new
  # version before it loads any module).
  defp check_loads!(file, ebin) do
    eval = ~S"""
    case code:ensure_loaded('Elixir.OpenAgentsPolicy.Native') of
      {module, _} -> io:put_chars("upgrade_check: ok\n");
      Other -> io:format("upgrade_check: ~p~n", [Other])
    end,
    halt(0).
    """

    args =
      boot_args() ++
        ["-noshell", "-pa", Path.join(:code.lib_dir(:elixir), "ebin"), "-pa", ebin] ++
        ["-eval", eval]

    port =
      Port.open({:spawn_executable, erl()}, [
        :binary,
        :exit_status,
        :stderr_to_stdout,
        args: args,
        env: for(var <- ~w(ERL_FLAGS ERL_AFLAGS ERL_ZFLAGS), do: {String.to_charlist(var), false})
      ])

    case await(port, "") do
      :ok -> :ok
      {:error, why} -> refuse({:does_not_load, file, why})
    end
  end

  defp await(port, output) do
    receive do
      {^port, {:data, data}} ->
        await(port, output <> data)

      {^port, {:exit_status, status}} ->
        cond do
          output =~ "upgrade_check: ok\n" ->
            :ok

          status == 0 ->
            {:error, String.trim(output)}

          true ->
            {:error, "the VM loading it exited with status #{status}: #{String.trim(output)}"}
        end
    after
      @timeout ->
        _killed =
          with {:os_pid, pid} <- Port.info(port, :os_pid),
               do: System.cmd("kill", ["-KILL", "#{pid}"])

        {:error, "loading it did not finish within #{div(@timeout, 1000)} s"}
    end
  end

  # This installation's erl: in a release, the one in its erts directory.
  defp erl do
    root = :code.root_dir()

    [
      Path.join([root, "erts-#{:erlang.system_info(:version)}", "bin", "erl"]),
      Path.join([root, "bin", "erl"])
    ]
    |> Enum.find(&File.regular?/1)
    |> Kernel.||(System.find_executable("erl"))
  end

  # A release has no bin/start.boot: the fresh VM boots the start_clean
  # script beside the boot script this VM started from, with the same boot
  # variables.
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
