defmodule OpenAgentsPolicy.Upgrade do
  @moduledoc """
  The library's part in a hot-code upgrade (a relup): `check/3`, before the
  relup's point of no return, refuses a NIF library this VM could not swap
  in, and a version whose decisions widen what some reader or caller gets
  unless an operator accepts that version's decisions by name.

  Every build carries `ebin/openagents_policy.appup` (the Mix compiler
  `compile.openagents_policy_appup` writes it). For any other version, up
  or down, it says `{apply, {OpenAgentsPolicy.Upgrade, :check, [direction,
  version]}}`, then `point_of_no_return`, then loads `OpenAgentsPolicy.Native`
  (the new version's library, under a new path), the modules that call it
  or hold tables computed from it (`use OpenAgentsPolicy.Native`), and every
  other module: tables and NIF are from one build once the relup is done.

  A refusal throws `{:error, {:openagents_policy, reason}}`, which
  `:release_handler.install_release/1` returns with nothing loaded. Refused:
  a target library that is missing, not alone, the very one this VM runs, or
  that a fresh VM does not load (`OpenAgentsPolicy.LoadCheck.module/3`); a
  target whose `priv/decisions.json` is not what its library decides; and a
  target whose decisions widen (`decision_diff/2`), unless
  `OPENAGENTS_POLICY_ACCEPT_WIDENING` names its decision digest, for that
  one install. Not checked: the Erlang side (the relup's `soft_purge`
  refuses a module with processes in its old code) and state to carry over
  (the NIF library keeps none).
  """

  alias OpenAgentsPolicy.{Decisions, LoadCheck}

  # The operator's acceptance: a variable of this VM (`System.put_env/2`
  # through `bin/APP rpc`), not the application environment, which
  # release_handler replaces before the check runs.
  @accept "OPENAGENTS_POLICY_ACCEPT_WIDENING"
  @regenerate "cargo run -q --locked -p openagents_policy --example decisions -- document > priv/decisions.json"

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
  has not finished after 30 s is refused too (its VM killed). In that VM,
  once loaded, its `Native.decision_digest/0` is asked for: the digest of
  what the target library decides.

  Then its decisions: its `priv/decisions.json` must have that digest for
  its SHA-256, else it is refused, and an error logged says how to write it
  anew from that version's source; a target whose
  decisions widen is refused unless `OPENAGENTS_POLICY_ACCEPT_WIDENING`
  names its decision digest, and the Markdown of every change is logged.
  The variable is taken: removed from this VM by this call, whatever it
  answers, so it accepts one install's widening and no later one's.

  Before any load, a target library that is the one this VM runs (the same
  device and inode as `OpenAgentsPolicy.Native`'s library, under any path:
  a hard link, a symlink) is refused: this VM would not load it again.

  Reasons: `{:no_library, dir}` (no unpacked version or no `.so`),
  `{:several_libraries, files}`, `{:running_library, file, why}` (`why`
  names both paths), `{:does_not_load, file, why}` (`why` says
  so too when the library loaded but its decision digest could not be
  had), `{:decision_document_mismatch, file, %{document: digest, library:
  digest}}` (the SHA-256 of `file`, the target's `priv/decisions.json`,
  and the target library's own decision digest), and the reasons of
  `decision_diff/2` and `{:widens, digest, says}` (the target's decision
  digest, and each widened answer in words).
  """
  @spec check(direction(), String.t(), Path.t()) :: :ok
  def check(direction, version, lib_root \\ Path.join(:code.root_dir(), "lib"))
      when direction in [:up, :down] and is_binary(version) do
    # Taken before anything can refuse: an acceptance left in the VM would
    # accept the same decisions again at a later install nobody meant.
    accepted = System.get_env(@accept)
    System.delete_env(@accept)

    lib_root
    |> targets(direction, version)
    |> Enum.each(&check_dir!(&1, accepted))
  end

  defp targets(lib_root, :up, version), do: [Path.join(lib_root, "openagents_policy-#{version}")]

  defp targets(lib_root, :down, version) do
    case Path.wildcard(Path.join(lib_root, "openagents_policy-*")) --
           [Path.join(lib_root, "openagents_policy-#{version}")] do
      [] -> refuse({:no_library, Path.join(lib_root, "openagents_policy-*")})
      dirs -> dirs
    end
  end

  defp check_dir!(dir, accepted) do
    case Path.wildcard(Path.join([dir, "priv", "native", @nif <> "*.so"])) do
      [file] ->
        file
        |> check_not_running!()
        |> check_loads!(Path.join(dir, "ebin"))
        |> check_document!(dir)

      [] ->
        refuse({:no_library, dir})

      files ->
        refuse({:several_libraries, files})
    end

    check_decisions!(dir, accepted)
  end

  # A target library that is the running one under another path (a hard
  # link or a symlink to it: `cp -al`, `rsync --link-dest`, store-style
  # trees) loads in a fresh VM, but this VM's loader hands back the library
  # it has mapped (the same device and inode), which the NIF's upgrade
  # callback refuses: after the point of no return, when release_handler
  # restarts the VM. Refused here instead, before any load.
  defp check_not_running!(file) do
    running = OpenAgentsPolicy.Native.library_file()

    with {:ok, %File.Stat{major_device: device, inode: inode}} <- File.stat(file),
         {:ok, %File.Stat{major_device: ^device, inode: ^inode}} <- File.stat(running) do
      refuse(
        {:running_library, file,
         "#{file} is #{running}, the NIF library this VM runs, under another path " <>
           "(the same device and inode), which this VM cannot load again: " <>
           "the release needs a copy of its own, not a link"}
      )
    else
      _ -> file
    end
  end

  # The target's document must be what its library decides: else the diff
  # below would read a widening off a file the library does not follow (a
  # package whose document was not written anew after a rule changed, or
  # was edited).
  defp check_document!(library, dir) do
    file = Path.join([dir, "priv", "decisions.json"])

    case File.read(file) do
      {:ok, json} ->
        case OpenAgentsPolicy.Native.sha256(json) do
          ^library ->
            :ok

          document ->
            :logger.error(
              "OpenAgentsPolicy.Upgrade: #{file} is not the decision document of the library " <>
                "beside it (its SHA-256 is #{document}; the library's decision digest is " <>
                "#{library}): the package was built without writing it anew after a rule " <>
                "changed, or it was edited. Write it from that version's source, " <>
                "`#{@regenerate}`, and build the release again."
            )

            refuse({:decision_document_mismatch, file, %{document: document, library: library}})
        end

      {:error, _} ->
        refuse({:no_decision_document, file})
    end
  end

  defp check_decisions!(dir, accepted) do
    case diff_dir(dir) do
      {:ok, %{changes: []}} ->
        :ok

      {:ok, %{widened: [], markdown: markdown}} ->
        log(dir, markdown)

      {:ok, %{digest: digest, widened: widened, markdown: markdown}} ->
        log(dir, markdown)

        unless accepted == digest,
          do: refuse({:widens, digest, Enum.map(widened, & &1.says)})

      {:error, reason} ->
        refuse(reason)
    end
  end

  defp log(dir, markdown),
    do: :logger.notice("OpenAgentsPolicy.Upgrade: the decisions of #{dir}:\n#{markdown}")

  @typedoc "What `decision_diff/2` finds (see there)."
  @type decision_diff :: %{
          digest: String.t(),
          changes: [Decisions.change()],
          widened: [Decisions.change()],
          markdown: String.t(),
          json: String.t()
        }

  @doc """
  What installing the library of `version` would change in this VM's
  decisions: the live document (`OpenAgentsPolicy.decisions_json/0`)
  against the target's `priv/decisions.json` under `lib_root` (the target
  version must be unpacked, as for `check/3`).

  Answers the target's decision digest (the SHA-256 of its document: what
  `OPENAGENTS_POLICY_ACCEPT_WIDENING` names to accept it), every change,
  those that widen, and the changes as Markdown and as JSON (what a
  coordinator prints and records).

  Reasons: `{:no_library, dir}` (the version is not unpacked),
  `{:no_decision_document, file}`, and `{:decision_document, refusal}`
  (`t:OpenAgentsPolicy.Decisions.refusal/0`): a target whose decisions
  cannot be read is refused, never taken as "no changes".
  """
  @spec decision_diff(String.t(), Path.t()) :: {:ok, decision_diff()} | {:error, term()}
  def decision_diff(version, lib_root \\ Path.join(:code.root_dir(), "lib"))
      when is_binary(version) do
    dir = Path.join(lib_root, "openagents_policy-#{version}")
    if File.dir?(dir), do: diff_dir(dir), else: {:error, {:no_library, dir}}
  end

  defp diff_dir(dir) do
    file = Path.join([dir, "priv", "decisions.json"])
    live = OpenAgentsPolicy.decisions_json()

    with {:read, {:ok, target}} <- {:read, File.read(file)},
         {:ok, changes} <- Decisions.diff(live, target),
         {:ok, markdown} <- Decisions.diff(live, target, format: :markdown),
         {:ok, json} <- Decisions.diff(live, target, format: :json) do
      {:ok,
       %{
         digest: OpenAgentsPolicy.Native.sha256(target),
         changes: changes,
         widened: Decisions.widened(changes),
         markdown: markdown,
         json: json
       }}
    else
      {:read, {:error, _}} -> {:error, {:no_decision_document, file}}
      {:error, refusal} -> {:error, {:decision_document, refusal}}
    end
  end

  @spec refuse(term()) :: no_return()
  defp refuse(reason), do: throw({:error, {:openagents_policy, reason}})

  # The target version's own Native, loaded by a fresh VM from the target's
  # ebin: its on_load finds the library through the code path exactly as the
  # relup's load will (release_handler points the code path at the new
  # version before it loads any module). Then, in that VM, the target
  # library's own decision digest: what it decides, from the library.
  defp check_loads!(file, ebin) do
    case LoadCheck.module(OpenAgentsPolicy.Native, [ebin], ask: :decision_digest) do
      {:ok, digest} when is_binary(digest) ->
        digest

      {:ok, other} ->
        refuse(
          {:does_not_load, file,
           "OpenAgentsPolicy.Native.decision_digest/0 answered #{inspect(other)}, not a decision digest"}
        )

      {:error, why} ->
        refuse({:does_not_load, file, why})
    end
  end
end
