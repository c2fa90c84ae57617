defmodule OpenAgentsPolicy.ScheduleTableTest do
  use ExUnit.Case, async: true
  @moduletag :repo

  alias OpenAgentsPolicy.Report

  @guide Path.expand("../../guides/disclosure-model.md", __DIR__)

  test "the disclosure guide's schedule table is the one the code decides" do
    section = @guide |> File.read!() |> Report.schedule_section()

    assert section, "guides/disclosure-model.md lost its schedule markers"

    assert section == String.trim(Report.schedule_markdown()),
           "the guide's schedule drifted from the code: run `mix openagents_policy.show --write-schedule`"
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
