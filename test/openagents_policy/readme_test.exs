defmodule OpenAgentsPolicy.ReadmeTest do
  use ExUnit.Case, async: true

  alias OpenAgentsPolicy.Report

  @readme Path.expand("../../README.md", __DIR__)

  test "the README's disclosure schedule is the one the code decides" do
    section = @readme |> File.read!() |> Report.readme_schedule()

    assert section, "README.md lost its schedule markers"

    assert section == String.trim(Report.schedule_markdown()),
           "README.md's schedule drifted from the code: run `mix openagents_policy.show --readme`"
  end

  test "the schedule table names every scheduled field with its tier and every never-listed column" do
    markdown = Report.schedule_markdown()

    for {family, fields} <- OpenAgents.Transparency.WorkDisclosure.schedule() do
      assert markdown =~ "#### #{family}"

      for {field, tier} <- fields do
        assert markdown =~ ~r/\| #{field} +\| #{tier} +\|/,
               "#{family}.#{field} missing at #{tier}"
      end

      for column <- OpenAgents.Transparency.WorkDisclosure.never(family) do
        assert markdown =~ "`#{column}`"
      end
    end
  end
end
