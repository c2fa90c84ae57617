defmodule Mix.OpenAgentsPolicy.Install do
  @moduledoc """
  Installs a NIF library into `priv/native`, under its content name, after
  the load check.

  The NIF library is copied into the run's work directory and loaded there
  by `OpenAgentsPolicy.LoadCheck.library/3` (a fresh VM, the same check the
  upgrade runs), so one that does not load never reaches `priv/native`: the
  previous build stays current. A precompiled one that does not load is
  replaced by a source build when cargo is there
  (`Mix.OpenAgentsPolicy.Source.fallback!/4`, which says so), itself
  checked the same way; otherwise the compile fails with the loader's
  error, what the file's header says it is (`Mix.OpenAgentsPolicy.Describe`)
  and the way out for its source. One that loads is copied in under a
  temporary name and renamed (never a half-written file under the final
  name); then every other file in `priv/native` is deleted.

  `OpenAgentsPolicy.LoadCheck` is a module of the library, compiled by the
  Elixir compiler that runs after this one; so here it is compiled from its
  source into this VM for the check, and unloaded again afterwards (the
  Elixir compiler then compiles the library's own, unwarned).

  Owns the installed name (`lib<crate>-<digest>.so`), the install and its
  load check. Absent: the lock (the caller holds it), where the NIF library
  came from (and whether to build one from source instead), and the
  manifest.
  """

  alias Mix.OpenAgentsPolicy.{Cache, Describe, Source}
  alias Mix.Tasks.Compile.OpenagentsPolicyNif, as: Nif

  @load_check OpenAgentsPolicy.LoadCheck

  @doc """
  Installs `library` (from `origin`) in `dir`, after a load check run in
  `work`, for the checkout at `root`, unless a library of the same content
  is installed already (`force?` installs it anyway). Answers what is
  installed and where it came from, or `:noop`.

  A precompiled library that fails its load check is never installed:
  `Mix.OpenAgentsPolicy.Source.fallback!/4` builds one from source instead
  (or raises, when there is no cargo), and that one is installed in its
  place. Any other library that fails raises.
  """
  @spec install!(Source.origin(), Path.t(), Path.t(), Path.t(), Path.t(), boolean()) ::
          {:ok, Source.origin(), Path.t()} | :noop
  def install!(origin, library, dir, root, work, force?) do
    digest = Nif.sha256(File.read!(library))
    installed = Path.join(dir, "lib#{Nif.crate()}-#{binary_part(digest, 0, 16)}.so")

    if force? or not installed?(installed, digest) do
      case checked(origin, library, installed, root, work) do
        {:ok, checked} ->
          put!(origin, library, checked, installed)
          {:ok, origin, installed}

        {:error, why} ->
          refusal = refusal(origin, library, why)

          case origin do
            {:precompiled, url} ->
              {origin, library} = Source.fallback!(root, url, why, refusal)
              install!(origin, library, dir, root, work, force?)

            _ ->
              Mix.raise(refusal <> hint(origin))
          end
      end
    else
      :noop
    end
  end

  # Whether `installed` is there and its SHA-256 is `digest`.
  defp installed?(installed, digest) do
    case File.read(installed) do
      {:ok, data} -> Nif.sha256(data) == digest
      {:error, _} -> false
    end
  end

  # The load check of a copy of `library` in the run's work directory, under
  # the installed name (a .so, which the loader asks for even on macOS), so
  # nothing reaches `priv/native` before it loads; the copy checked is the
  # copy installed.
  defp checked(origin, library, installed, root, work) do
    case origin do
      {:prebuilt, _} -> Mix.shell().info("Installing prebuilt NIF #{library}")
      {:precompiled, url} -> Mix.shell().info("Installing precompiled NIF #{url}")
      _ -> :ok
    end

    checked = Path.join([work, "check", Path.basename(installed)])
    File.mkdir_p!(Path.dirname(checked))
    File.cp!(library, checked)

    with :ok <- load_check(root, checked), do: {:ok, checked}
  end

  defp put!(origin, library, checked, installed) do
    dir = Path.dirname(installed)
    File.mkdir_p!(dir)
    # Under a random name, created exclusively, then renamed.
    Cache.put!(dir, Path.basename(installed), File.read!(checked))

    # Under the lock, everything else here is a previous build or a file a
    # killed compile left behind.
    for file <- File.ls!(dir),
        Path.join(dir, file) != installed,
        do: File.rm_rf!(Path.join(dir, file))

    Mix.shell().info(
      "Installed NIF #{Path.basename(installed)} (from #{describe_origin(origin, library)})"
    )
  end

  defp refusal(origin, library, why) do
    """
    The NIF library #{describe_origin(origin, library)} cannot be loaded by this VM \
    (OTP #{System.otp_release()}, #{:erlang.system_info(:system_architecture)}):

        #{why}

    The file is #{Describe.file(library)}.
    """
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

  defp hint({:cargo, _}),
    do: "It was built by cargo here; check the Rust toolchain's target and the NIF version."
end
