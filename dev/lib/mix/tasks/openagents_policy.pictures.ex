defmodule Mix.Tasks.OpenagentsPolicy.Pictures do
  @shortdoc "Writes the guides' SVG pictures of the schedule and the seams from the core"
  @moduledoc """
  Regenerates the pictures the guides include, from the Rust core:

      mix openagents_policy.pictures           # writes guides/assets/*.svg
      mix openagents_policy.pictures --check   # writes nothing; fails when a file differs

  The `docs` alias runs it before ExDoc, so `mix docs` always publishes the
  pictures of the code it documents. A file is written only when its content
  changes. The test suite makes the same comparison as `--check`, so a change
  to the schedule or the seam that is not followed by this task fails it.
  See `OpenAgentsPolicy.Pictures` for what each picture shows.
  """
  use Mix.Task

  alias OpenAgentsPolicy.Pictures

  @switches [check: :boolean, out: :string]

  @impl true
  def run(args) do
    {opts, _rest} = OptionParser.parse!(args, strict: @switches)
    Mix.Task.run("app.config")
    dir = opts[:out] || Pictures.dir()

    stale =
      for {name, svg} <- Pictures.files(),
          path = Path.join(dir, name),
          File.read(path) != {:ok, svg} do
        unless opts[:check] do
          File.mkdir_p!(dir)
          File.write!(path, svg)
          Mix.shell().info("wrote #{Path.relative_to_cwd(path)}")
        end

        path
      end

    if opts[:check] && stale != [] do
      Mix.raise(
        "pictures differ from the core: #{Enum.join(stale, ", ")}; " <>
          "run `mix openagents_policy.pictures`"
      )
    end
  end
end
