defmodule OpenAgentsPolicy do
  @moduledoc """
  What this VM's copy of the library is: `fingerprint/0`.

  A cluster that replaces its nodes one at a time serves two versions of the library
  at once, and an operator watching that window needs which decisions each node
  serves, which a version string cannot say (two builds of one version may differ,
  two versions may answer alike). The fingerprint, computed here, not read from a
  manifest, says:

    * `:version`: the library's version, as this module was compiled with it;
    * `:nif`: the NIF library this VM loaded (its path, as rustler_precompiled
      or rustler names it) and the SHA-256 of its bytes, read on the first
      call and kept in `:persistent_term`;
    * `:decision_digest`: the SHA-256 of the decision document (`decisions_json/0`),
      equal on two nodes exactly when they answer every finite-domain question
      alike. The NIF library loads only when its rules digest to the package's own
      `priv/decisions.json`.

  `mix openagents_policy.gate` compares two documents before a rollout.
  """

  @version Mix.Project.config()[:version]
  @decision_digest OpenAgentsPolicy.Native.decision_digest()
  @nif {__MODULE__, :nif}

  @typedoc "The NIF library this VM loaded, as read from disk on the first call."
  @type nif :: %{file: Path.t(), sha256: String.t()}

  @typedoc "See the module docs."
  @type t :: %{version: String.t(), decision_digest: String.t(), nif: nif()}

  @doc """
  The fingerprint of the library running in this VM (see the module docs).

      iex> %{version: version, decision_digest: digest, nif: nif} = OpenAgentsPolicy.fingerprint()
      iex> sha256 = &Base.encode16(:crypto.hash(:sha256, &1), case: :lower)
      iex> version == to_string(Application.spec(:openagents_policy, :vsn))
      true
      iex> {digest, nif.sha256} == {sha256.(OpenAgentsPolicy.decisions_json()), sha256.(File.read!(nif.file))}
      true
      iex> Path.basename(nif.file) =~ ~r/^(lib)?openagents_policy_nif(-v.+-nif-2\\.15-.+)?\\.so$/
      true
  """
  @spec fingerprint() :: t()
  def fingerprint, do: %{version: @version, decision_digest: @decision_digest, nif: nif()}

  @doc """
  The `:decision_digest` of `fingerprint/0` alone, a constant read from the NIF as
  this module compiled: the SHA-256 of the package's `priv/decisions.json`.

      iex> json = File.read!(Application.app_dir(:openagents_policy, "priv/decisions.json"))
      iex> OpenAgentsPolicy.decision_digest() == Base.encode16(:crypto.hash(:sha256, json), case: :lower)
      true
  """
  @spec decision_digest() :: String.t()
  def decision_digest, do: @decision_digest

  @doc """
  The canonical JSON document `:decision_digest` is the SHA-256 of: every finite-domain
  decision, as the Rust core writes it (`fingerprint/0`'s example holds the two together).
  """
  @spec decisions_json() :: String.t()
  def decisions_json, do: OpenAgentsPolicy.Native.decision_json()

  # Read once: the library a VM loaded is never replaced while it runs.
  defp nif do
    with nil <- :persistent_term.get(@nif, nil) do
      file = OpenAgentsPolicy.Native.library_file()
      sha256 = Base.encode16(:crypto.hash(:sha256, File.read!(file)), case: :lower)
      :ok = :persistent_term.put(@nif, %{file: file, sha256: sha256})
      %{file: file, sha256: sha256}
    end
  end
end
