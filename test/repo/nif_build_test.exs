defmodule OpenAgentsPolicy.NifBuildTest do
  # Two checkouts, one cargo target directory (CARGO_TARGET_DIR, which many
  # Rust users set for every project): cargo names a workspace's builds
  # without the checkout's path and judges them fresh by the modification
  # times of the sources, so a checkout whose sources are older than another
  # checkout's build is handed that build, rules and all. The library then
  # refuses to load (its decision digest is not its package's
  # priv/decisions.json), naming both digests, until it is built from its
  # own sources.
  use ExUnit.Case, async: true
  @moduletag :repo
  @moduletag timeout: 900_000

  import OpenAgentsPolicy.Test.ProjectCopy

  # A compile that has not ended after this long is a failure too.
  @hang 420_000

  defp sha256(file), do: Base.encode16(:crypto.hash(:sha256, File.read!(file)), case: :lower)

  test "a checkout handed another checkout's build refuses to load it, and loads its own once rebuilt" do
    # Y is cloned first; then X moves a field up a rung and builds.
    y = fresh!("y")
    x = fresh!("x")
    rules = Path.join(x, "native/openagents_policy/src/disclosure.rs")
    source = File.read!(rules)
    assert source =~ ~s|Field::new("branch", Ledger),|

    File.write!(
      rules,
      String.replace(source, ~s|Field::new("branch", Ledger),|, ~s|Field::new("branch", Glass),|)
    )

    {_status, x_output} = mix(x, ["compile"], [], @hang)
    assert x_output =~ "openagents_policy_nif", "X built no NIF library:\n#{x_output}"

    # Y's build: cargo calls X's build fresh, and the library refuses it.
    own = sha256(Path.join(y, "priv/decisions.json"))
    {status, output} = mix(y, ["compile"], [], @hang)
    assert status != 0, "Y compiled with X's build:\n#{output}"

    assert [_, built, ^own] =
             Regex.run(
               ~r/decision digest is (\w{64}), but its package's priv\/decisions.json is (\w{64})/,
               output
             ),
           "no refusal naming both digests:\n#{output}"

    assert built != own
    assert output =~ "shared with another checkout"

    # Y's sources made newer than X's build: cargo rebuilds, and Y serves its own rules.
    {_, 0} =
      System.cmd("find", [Path.join(y, "native"), "-name", "*.rs", "-exec", "touch", "{}", "+"])

    {status, output} =
      mix(
        y,
        ["run", "-e", "IO.puts(\"digest=\" <> OpenAgentsPolicy.decision_digest())"],
        [],
        @hang
      )

    assert status == 0, "Y did not build from its own sources:\n#{output}"
    assert output =~ "digest=#{own}"
  end
end
