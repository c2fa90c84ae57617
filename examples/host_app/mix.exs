defmodule HostApp.MixProject do
  use Mix.Project

  def project do
    [
      app: :host_app,
      version: "0.1.0",
      elixir: "~> 1.14",
      start_permanent: Mix.env() == :prod,
      elixirc_paths: elixirc_paths(Mix.env()),
      deps: deps(),
      releases: [
        host_app: [include_executables_for: [:unix]]
      ]
    ]
  end

  def application do
    [
      mod: {HostApp.Application, []},
      extra_applications: [:logger, :crypto]
    ]
  end

  defp elixirc_paths(:test), do: ["lib", "test/support"]
  defp elixirc_paths(_), do: ["lib"]

  # The library under test, from the repository this example lives in. Its own
  # Mix compiler builds (or, with OPENAGENTS_POLICY_NIF_PATH, installs) the NIF.
  defp deps do
    [{:openagents_policy, path: "../.."}]
  end
end
