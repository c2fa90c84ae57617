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
       version's NIF library is loaded (a new path, `lib/openagents_policy-<vsn>/`,
       so a new library, never the one already mapped), then the modules that call it, among
       them the three whose tables are computed from the core at compile
       time (`OpenAgents.Delegations.Target`,
       `OpenAgents.Transparency.WorkDisclosure`,
       `OpenAgents.Transparency.Ladder`), then every other module, so tables
       and NIF are always from the same build once the relup is done.

  Words used here:

    * **target library**: the `priv/native/*openagents_policy_nif*.so` of
      the library version the relup installs, under the release's `lib/`
      (`openagents_policy-<vsn>`, unpacked by `release_handler`).
    * **refuse**: throw `{:error, {:openagents_policy, reason}}`, which
      `:release_handler.install_release/1` returns as `{:error, reason'}`
      with nothing loaded and the running release untouched. After the point
      of no return a module that fails to load makes `release_handler`
      restart the VM: that is what the check exists to prevent.

  Deliberately absent: any check of the Erlang side (the relup's own checks
  already refuse a module with processes still in its old code, with
  `soft_purge`), and any state to carry over: the NIF library has no
  resource types, and its `upgrade` callback
  (`native/openagents_policy_nif/src/lib.rs`) only leaves its mark in
  `priv_data` and answers success, so the VM takes the new library as it is
  (the atoms it uses are made on first use, not by any callback). It refuses
  one upgrade: onto the very library already loaded (the same path again,
  which the VM would serve from the old file). That callback, and the
  `openagents_policy_nif_entry` crate that makes room for it, exist only
  because this kind of load needs one and `rustler::init!` does not emit it.

  The load itself is `OpenAgentsPolicy.LoadCheck.module/3`, in a VM of its
  own.
  """

  alias OpenAgentsPolicy.LoadCheck

  # rustler_precompiled's `libopenagents_policy_nif-v<vsn>-nif-<nif>-<target>.so`,
  # or a source build: rustler's `libopenagents_policy_nif.so` (0.36) or
  # `openagents_policy_nif.so` (0.37 and later).
  @nif "*openagents_policy_nif"

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
  corrupt file and a NIF table that does not match the module; a load that
  has not finished after 30 s is refused too (its VM killed).

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
    case LoadCheck.module(OpenAgentsPolicy.Native, [ebin]) do
      :ok -> :ok
      {:error, why} -> refuse({:does_not_load, file, why})
    end
  end
end
