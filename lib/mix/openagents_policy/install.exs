defmodule Mix.OpenAgentsPolicy.Install do
  @moduledoc """
  Installs a NIF library into `priv/native`, under its content name, after
  the load check.

  The NIF library is copied into the run's work directory and loaded there
  by `OpenAgentsPolicy.LoadCheck.library/3` (a fresh VM, the same check the
  upgrade runs), so one that does not load never reaches `priv/native`: the
  previous build stays current, and the compile fails with the loader's
  error, what the file's header says it is (`Mix.OpenAgentsPolicy.Describe`)
  and the way out for its source. One that loads is copied in under a
  temporary name and renamed (never a half-written file under the final
  name); then every other file in `priv/native` is deleted.

  `OpenAgentsPolicy.LoadCheck` is a module of the library, compiled by the
  Elixir compiler that runs after this one; so here it is compiled from its
  source into this VM for the check, and unloaded again afterwards (the
  Elixir compiler then compiles the library's own, unwarned).

  Owns the install and its load check. Absent: the lock (the caller holds
  it), where the NIF library came from, and the manifest.
  """

  alias Mix.OpenAgentsPolicy.{Describe, Source, Target}

  @load_check OpenAgentsPolicy.LoadCheck

  @doc "Whether `installed` is there and its SHA-256 is `digest`."
  @spec installed?(Path.t(), String.t()) :: boolean()
  def installed?(installed, digest) do
    case File.read(installed) do
      {:ok, data} -> Mix.Tasks.Compile.OpenagentsPolicyNif.sha256(data) == digest
      {:error, _} -> false
    end
  end

  @doc """
  Installs `library` (from `origin`) as `installed`, after a load check run
  in `work`, for the checkout at `root`; raises if it does not load.
  """
  @spec install!(Source.origin(), Path.t(), Path.t(), Path.t(), Path.t()) :: :ok
  def install!(origin, library, installed, root, work) do
    dir = Path.dirname(installed)
    File.mkdir_p!(dir)

    case origin do
      {:prebuilt, _} -> Mix.shell().info("Installing prebuilt NIF #{library}")
      {:precompiled, url} -> Mix.shell().info("Installing precompiled NIF #{url}")
      _ -> :ok
    end

    checked = Path.join([work, "check", Path.basename(installed)])
    File.mkdir_p!(Path.dirname(checked))
    File.cp!(library, checked)

    case load_check(root, checked) do
      :ok ->
        # Under a random name, created exclusively, then renamed.
        Mix.OpenAgentsPolicy.Cache.put!(dir, Path.basename(installed), File.read!(checked))

      {:error, why} ->
        Mix.raise("""
        The NIF library #{describe_origin(origin, library)} cannot be loaded by this VM \
        (OTP #{System.otp_release()}, #{:erlang.system_info(:system_architecture)}):

            #{why}

        The file is #{Describe.file(library)}.
        #{hint(origin)}\
        """)
    end

    # Under the lock, everything else here is a previous build or a file a
    # killed compile left behind.
    for file <- File.ls!(dir),
        Path.join(dir, file) != installed,
        do: File.rm_rf!(Path.join(dir, file))

    Mix.shell().info(
      "Installed NIF #{Path.basename(installed)} (from #{describe_origin(origin, library)})"
    )
  end

  defp load_check(root, library) do
    source = Path.join(root, "lib/openagents_policy/load_check.ex")
    ignore? = Code.get_compiler_option(:ignore_module_conflict)
    Code.put_compiler_option(:ignore_module_conflict, true)

    try do
      Code.compile_file(source)
      apply(@load_check, :library, [library, OpenAgentsPolicy.Native])
    after
      :code.purge(@load_check)
      :code.delete(@load_check)
      :code.purge(@load_check)
      Code.put_compiler_option(:ignore_module_conflict, ignore?)
    end
  end

  defp describe_origin({:precompiled, url}, _library), do: url
  defp describe_origin(_origin, library), do: library

  defp hint({:prebuilt, _}),
    do: "OPENAGENTS_POLICY_NIF_PATH names it: point it at a library built for this machine."

  defp hint({:precompiled, _}),
    do:
      "It is the precompiled artifact for #{Target.triple()}; build from source instead " <>
        "with OPENAGENTS_POLICY_BUILD=1 (needs cargo), or set OPENAGENTS_POLICY_NIF_PATH."

  defp hint({:cargo, _}),
    do: "It was built by cargo here; check the Rust toolchain's target and the NIF version."
end
