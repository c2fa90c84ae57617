defmodule OpenAgentsPolicy.NifBuildTest do
  # Two checkouts, one cargo target directory (CARGO_TARGET_DIR, which many
  # Rust users set for every project). cargo names a workspace's builds
  # without the checkout's path and judges them fresh by the modification
  # times of the sources, so a checkout whose sources are older than another
  # checkout's build would be handed that build, rules and all. The source
  # build makes cargo build this checkout's crates anew after another built
  # there (OpenAgentsPolicy.Native.Cargo), and a library whose decision
  # digest is not its package's priv/decisions.json refuses to load, naming
  # both digests.
  use ExUnit.Case, async: true
  @moduletag :repo
  @moduletag timeout: 900_000

  import OpenAgentsPolicy.Test.ProjectCopy

  # A compile that has not ended after this long is a failure too.
  @hang 420_000
  @refusal ~r/decision digest is (\w{64}), but its package's priv\/decisions.json is (\w{64})/
  @ask ["run", "-e", ~s|IO.puts("digest=" <> OpenAgentsPolicy.decision_digest())|]

  defp sha256(file), do: Base.encode16(:crypto.hash(:sha256, File.read!(file)), case: :lower)

  test "a checkout builds its own rules after another built in its target directory, " <>
         "and a library of other rules refuses to load" do
    # Y is cloned first; then X moves a field up a rung (without `make
    # decisions`, so X's own library refuses its package's document) and builds.
    y = fresh!("y")
    x = fresh!("x")
    rules = Path.join(x, "native/openagents_policy/src/disclosure.rs")
    edited = String.replace(File.read!(rules), ~s|"branch", Ledger,|, ~s|"branch", Glass,|)
    assert edited != File.read!(rules), "the rule edit did not apply"
    File.write!(rules, edited)
    {status, output} = mix(x, ["compile"], [], @hang)
    assert status != 0 and output =~ @refusal, "X loaded rules its package lacks:\n#{output}"

    # Y's sources are older than X's build, and Y builds and serves its own rules.
    own = sha256(Path.join(y, "priv/decisions.json"))
    {status, output} = mix(y, @ask, [], @hang)
    assert status == 0, "Y did not build from its own sources:\n#{output}"
    assert output =~ "digest=#{own}"

    # X's library, built anew after Y's, installed in Y: refused, both digests named.
    {_status, _output} = mix(x, ["compile"], [], @hang)
    [installed] = Path.wildcard(Path.join(y, "_build/dev/lib/openagents_policy/priv/native/*.so"))
    File.cp!(Path.join([target_dir(), "debug", "libopenagents_policy_nif.so"]), installed)
    {status, output} = mix(y, ~w(run --no-compile -e OpenAgentsPolicy.decisions_json), [], @hang)
    assert status != 0, "Y loaded X's library:\n#{output}"
    assert [_, built, ^own] = Regex.run(@refusal, output), "no refusal naming both:\n#{output}"
    assert built != own and output =~ "shared with another checkout"
  end
end
