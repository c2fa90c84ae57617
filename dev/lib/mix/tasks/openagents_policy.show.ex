defmodule Mix.Tasks.OpenagentsPolicy.Show do
  @shortdoc "Prints the library's decisions: seam matrix, lifecycles, disclosure schedule"
  @moduledoc """
  Shows the library at work: every table below is computed by calling the
  public modules, so it is what the Rust core decides, not documentation.

      mix openagents_policy.show             # everything, as readable tables
      mix openagents_policy.show --seams     # the seam matrix and lifecycle tables
      mix openagents_policy.show --schedule  # the disclosure schedule
      mix openagents_policy.show --json      # the schedule as the core's JSON, a row a line

  `--write-schedule` rewrites the schedule table of
  guides/disclosure-model.md from the code (the test suite fails when the
  two drift).
  """
  use Mix.Task

  alias OpenAgentsPolicy.Report

  @switches [seams: :boolean, schedule: :boolean, json: :boolean, write_schedule: :boolean]

  @impl true
  def run(args) do
    {opts, _rest} = OptionParser.parse!(args, strict: @switches)
    Mix.Task.run("app.config")
    all? = opts == []

    if all? or opts[:seams] do
      section("Seam matrix: what each caller may do to each target", Report.seam_markdown())
      section("Lifecycle projections", Report.lifecycle_markdown())
    end

    if all? or opts[:schedule], do: section("Disclosure schedule", Report.schedule_markdown())

    if all? or opts[:json] do
      section(
        "Disclosure schedule as JSON",
        Report.json_rows(OpenAgents.Transparency.WorkDisclosure.schedule_json())
      )
    end

    if opts[:write_schedule], do: Report.write_schedule!("guides/disclosure-model.md")
  end

  defp section(title, body), do: Mix.shell().info("## #{title}\n\n#{body}\n")
end
