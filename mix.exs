# The NIF compiler must exist before lib/ is compiled, so it is a script that
# mix.exs loads rather than a module of the library (.exs: not compiled twice).
Code.require_file("lib/mix/tasks/compile.openagents_policy_nif.exs", __DIR__)

defmodule OpenAgentsPolicy.MixProject do
  use Mix.Project

  @version "0.1.0"

  def project do
    [
      app: :openagents_policy,
      version: @version,
      elixir: "~> 1.14",
      compilers: [:openagents_policy_nif] ++ Mix.compilers(),
      elixirc_paths: elixirc_paths(Mix.env()),
      deps: [],
      description: "OpenAgents delegation and disclosure policy, implemented in Rust as a NIF.",
      package: package(),
      docs: [source_ref: "v#{@version}"]
    ]
  end

  def application, do: []

  defp elixirc_paths(:test), do: ["lib", "test/support"]
  defp elixirc_paths(_), do: ["lib"]

  defp package do
    [
      licenses: ["MIT"],
      # Everything a dependent needs to build the NIF from source.
      files:
        ~w(lib native/*/src native/*/Cargo.toml Cargo.toml Cargo.lock mix.exs .formatter.exs),
      links: %{}
    ]
  end
end
