defmodule OpenAgentsPolicy.TargetTest do
  # Mix.OpenAgentsPolicy.Target.triple/1: the system architectures OTP
  # reports on the machines the artifacts are built for (as erlang:system_info
  # (system_architecture) reads there: Debian, Alpine, macOS on Apple silicon
  # and on Intel) name exactly the triples make precompiled publishes.
  use ExUnit.Case, async: true

  alias Mix.OpenAgentsPolicy.Target

  @build Path.expand("../../scripts/precompiled_build.sh", __DIR__)

  # The build's default target list: the published triples.
  defp published do
    [_, targets] = Regex.run(~r/PRECOMPILED_TARGETS:-([^}]+)\}/, File.read!(@build))
    targets |> String.split() |> Enum.sort()
  end

  test "the architectures of the machines served map onto the published triples" do
    for var <- ~w(TARGET_ARCH TARGET_VENDOR TARGET_OS TARGET_ABI), do: refute(System.get_env(var))

    reported = %{
      "x86_64-pc-linux-gnu" => "x86_64-unknown-linux-gnu",
      "aarch64-unknown-linux-gnu" => "aarch64-unknown-linux-gnu",
      "x86_64-alpine-linux-musl" => "x86_64-unknown-linux-musl",
      "aarch64-alpine-linux-musl" => "aarch64-unknown-linux-musl",
      "aarch64-apple-darwin23.4.0" => "aarch64-apple-darwin",
      "x86_64-apple-darwin21.6.0" => "x86_64-apple-darwin"
    }

    for {architecture, triple} <- reported, do: assert(Target.triple(architecture) == triple)
    assert reported |> Map.values() |> Enum.sort() == published()

    # An Apple silicon VM that calls its CPU arm takes the aarch64 artifact.
    assert Target.triple("arm-apple-darwin20.1.0") == "aarch64-apple-darwin"
  end
end
