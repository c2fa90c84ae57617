defmodule Mix.OpenAgentsPolicy.Source do
  @moduledoc """
  Chooses where the NIF library comes from, first match wins (the order the
  compiler's moduledoc documents): `OPENAGENTS_POLICY_NIF_PATH`, a forced
  source build, the precompiled artifact the checksum file lists for this
  VM, cargo; else an error that names every option.

  A precompiled library that then fails its load check (an artifact built
  wrong, or for a machine this one only resembles: the macOS and musl
  artifacts are checked by their structure alone when they are built) is
  replaced by a cargo build when cargo is on PATH (`fallback!/4`, called by
  the install), which says so; without cargo the compile fails with the
  loader's error and the ways out. A refused artifact (a digest other than
  the checksum file's, a failed download) never falls back: it was refused
  before anything was loaded.

  Owns that choice, the fallback, the environment variables that steer them
  and the ways out every refusal prints. Absent: the work of each source (in
  `Mix.OpenAgentsPolicy.Precompiled` and `Mix.OpenAgentsPolicy.Cargo`) and
  installing what it yields.
  """

  alias Mix.OpenAgentsPolicy.{Cargo, Precompiled, Target}
  alias Mix.Tasks.Compile.OpenagentsPolicyNif, as: Nif

  @typedoc "Where the NIF library came from: what the manifest records and the messages name."
  @type origin :: {:prebuilt, Path.t()} | {:precompiled, String.t()} | {:cargo, String.t()}

  @doc """
  The NIF library for this machine and where it came from, for the checkout
  at `root`; `work` is the run's own directory for extracted files.
  """
  @spec produce(Path.t(), Path.t()) :: {origin(), Path.t()}
  def produce(root, work) do
    cond do
      path = System.get_env("OPENAGENTS_POLICY_NIF_PATH") ->
        path = Path.expand(path)

        unless File.regular?(path) do
          Mix.raise("OPENAGENTS_POLICY_NIF_PATH is set to #{path}, which is not a file")
        end

        {{:prebuilt, path}, path}

      forced?() ->
        cargo!(root, :forced)

      true ->
        case Precompiled.choose(root) do
          {:ok, artifact, expected} -> Precompiled.fetch!(artifact, expected, work)
          {:unavailable, why} -> cargo!(root, {:unavailable, why})
        end
    end
  end

  @doc """
  A source build in place of the precompiled NIF library at `url`, which
  failed its load check with the loader's error `why`: built by cargo when
  cargo is on PATH, after a line saying so. Without cargo it raises
  `refusal` (the install's account of the failed load) with the ways out.
  """
  @spec fallback!(Path.t(), String.t(), String.t(), String.t()) :: {origin(), Path.t()}
  def fallback!(root, url, why, refusal) do
    case System.find_executable("cargo") do
      nil ->
        Mix.raise("""
        #{refusal}\
        It is the precompiled artifact for #{Target.triple()}, and cargo was not found on \
        PATH, so it cannot be built from source instead.
        #{ways_out()}
        """)

      cargo ->
        Mix.shell().info(
          "The precompiled NIF #{Path.basename(url)} failed its load check " <>
            "(#{why |> String.split("\n", trim: true) |> Enum.join(" ")}): " <>
            "building it from source with cargo instead"
        )

        build!(cargo, root)
    end
  end

  @doc "What every refusal prints after its reason: the other sources, and how to pick one."
  @spec ways_out() :: String.t()
  def ways_out do
    """
    Ways out:
      * build from source: OPENAGENTS_POLICY_BUILD=1 mix compile (needs cargo; \
    RUSTLER_PRECOMPILED_FORCE_BUILD_ALL=1 works too);
      * install a library you have: OPENAGENTS_POLICY_NIF_PATH=/path/to/lib#{Nif.crate()}.so mix compile;
      * fetch from elsewhere: OPENAGENTS_POLICY_NIF_BASE_URL=<url of the directory holding the artifacts>.\
    """
  end

  defp forced? do
    Enum.any?(
      ~w(OPENAGENTS_POLICY_BUILD RUSTLER_PRECOMPILED_FORCE_BUILD_ALL),
      &(System.get_env(&1) in ["1", "true"])
    )
  end

  defp profile do
    case System.get_env("OPENAGENTS_POLICY_NIF_PROFILE", "release") do
      profile when profile in ["release", "debug"] -> profile
      other -> Mix.raise("OPENAGENTS_POLICY_NIF_PROFILE must be release or debug, got: #{other}")
    end
  end

  defp cargo!(root, why) do
    cargo = System.find_executable("cargo")

    if cargo == nil do
      Mix.raise("""
      The #{Nif.crate()} NIF cannot be installed for this machine (#{Target.triple()}, \
      NIF #{:erlang.system_info(:nif_version)}):
        * OPENAGENTS_POLICY_NIF_PATH is not set;
        * #{why_not_precompiled(why)};
        * cargo was not found on PATH, so it cannot be built from source \
      (install Rust with rustup, https://rustup.rs).
      #{ways_out()}
      """)
    end

    build!(cargo, root)
  end

  defp build!(cargo, root) do
    profile = profile()
    {{:cargo, profile}, Cargo.build!(cargo, root, profile)}
  end

  defp why_not_precompiled(:forced),
    do:
      "a source build is forced (OPENAGENTS_POLICY_BUILD or RUSTLER_PRECOMPILED_FORCE_BUILD_ALL)"

  defp why_not_precompiled({:unavailable, why}), do: "no precompiled artifact: #{why}"
end
