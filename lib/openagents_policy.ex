defmodule OpenAgentsPolicy do
  @moduledoc """
  What this VM's copy of the library is: `fingerprint/0`.

  A cluster that replaces its nodes one at a time serves two versions of the
  library at once, old nodes beside new ones. Which decisions a node serves
  is what an operator watching that window needs, and a version string
  cannot say it (two builds of one version may differ, two versions may
  answer alike). The fingerprint says three things, each computed here
  rather than read from a manifest:

    * `:version`: the library's version, as this module was compiled with it;
    * `:nif`: the NIF library this VM loaded: its path (under
      `priv/native/`, named as rustler_precompiled or rustler names it) and
      the SHA-256 of that file's bytes as read now;
    * `:decision_digest`: the SHA-256 of the decision document
      (`decisions_json/0`): every decision the library makes over a finite
      domain, written by the Rust core (`openagents_policy::fingerprint`, see
      the Rust guide). Two nodes have the same decision digest exactly when
      they answer every finite-domain question alike: a changed rule is
      another digest; a rebuild of the same rules is the same one.

  `decision_digest/0` alone is cheap, for a host that names it on every
  response; `mix openagents_policy.gate` compares two documents before a
  rollout.
  """

  @version Mix.Project.config()[:version]

  @typedoc "The NIF library this VM loaded, as read from disk now."
  @type nif :: %{file: Path.t(), sha256: String.t()}

  @typedoc "See the module docs."
  @type t :: %{version: String.t(), decision_digest: String.t(), nif: nif()}

  @doc """
  The fingerprint of the library running in this VM (see the module docs).

      iex> %{version: version, decision_digest: digest, nif: nif} = OpenAgentsPolicy.fingerprint()
      iex> version == to_string(Application.spec(:openagents_policy, :vsn))
      true
      iex> String.length(digest) == 64 and digest == OpenAgentsPolicy.fingerprint().decision_digest
      true
      iex> Path.basename(nif.file) =~ ~r/^(lib)?openagents_policy_nif(-v.+-nif-2\\.15-.+)?\\.so$/
      true
  """
  @spec fingerprint() :: t()
  def fingerprint do
    %{version: @version, decision_digest: decision_digest(), nif: nif()}
  end

  @doc """
  The `:decision_digest` of `fingerprint/0` alone: cheap (computed once per
  loaded NIF library), for a host that names it on every response.

      iex> OpenAgentsPolicy.decision_digest() == OpenAgentsPolicy.fingerprint().decision_digest
      true
  """
  @spec decision_digest() :: String.t()
  def decision_digest, do: from_core(OpenAgentsPolicy.Native.decision_digest())

  @doc """
  The canonical JSON document `:decision_digest` is the SHA-256 of: every
  finite-domain decision, as the Rust core writes it.

      iex> json = OpenAgentsPolicy.decisions_json()
      iex> Base.encode16(:crypto.hash(:sha256, json), case: :lower) == OpenAgentsPolicy.decision_digest()
      true
  """
  @spec decisions_json() :: String.t()
  def decisions_json, do: from_core(OpenAgentsPolicy.Native.decision_json())

  defp from_core(answer) when is_binary(answer), do: answer

  defp from_core({:error, why}),
    do: raise("the core could not write its decision tables: #{why}")

  defp nif do
    file = OpenAgentsPolicy.Native.library_file()
    %{file: file, sha256: Base.encode16(:crypto.hash(:sha256, File.read!(file)), case: :lower)}
  end
end
