defmodule OpenAgentsPolicy.ScheduleTableTest do
  use ExUnit.Case, async: true
  @moduletag :repo

  alias OpenAgents.Transparency.WorkDisclosure
  alias OpenAgentsPolicy.Report

  @guide Path.expand("../../guides/disclosure-model.md", __DIR__)

  # The core's schedule as its serde JSON says it: per family, each field's
  # name, tier, source column and reason, and each never-listed column with
  # its reason, sorted.
  defp core_schedule do
    for %{"family" => family, "fields" => fields, "never" => never} <-
          Jason.decode!(WorkDisclosure.schedule_json()),
        into: %{} do
      rows =
        for %{"field" => f, "tier" => t, "column" => c, "reason" => r} <- fields, do: [f, t, c, r]

      never = for %{"column" => column, "reason" => reason} <- never, do: [column, reason]
      {family, {Enum.sort(rows), Enum.sort(never)}}
    end
  end

  test "the disclosure guide's schedule table is the one the code decides" do
    section = @guide |> File.read!() |> Report.schedule_section()

    assert section, "guides/disclosure-model.md lost its schedule markers"

    assert section == String.trim(Report.schedule_markdown()),
           "the guide's schedule drifted from the code: run `mix openagents_policy.show --write-schedule`"
  end

  test "the guide's tables say what the core's JSON says: every field, its tier, column and reason, every never-listed column and its reason" do
    guide =
      for part <-
            @guide
            |> File.read!()
            |> Report.schedule_section()
            |> String.split("#### ", trim: true),
          into: %{} do
        [family | lines] = String.split(part, "\n", trim: true)
        # The table's rows, after its header, by their four cells.
        [_header | rows] =
          for "| " <> _ = line <- lines, not String.starts_with?(line, "|-"), do: line

        rows =
          for row <- rows,
              do: row |> String.split("|", trim: true) |> Enum.map(&String.trim/1)

        # The never list's items: "- `column`: reason".
        never =
          for line <- lines,
              [_, column, reason] <- [Regex.run(~r/^- `([^`]+)`: (.*)$/, line)],
              do: [column, reason]

        {family, {Enum.sort(rows), Enum.sort(never)}}
      end

    assert guide == core_schedule()
  end

  test "json_rows/1 adds only whitespace, and puts each field of the schedule on a line of its own" do
    json = WorkDisclosure.schedule_json()
    rows = Report.json_rows(json)

    assert Jason.decode!(rows) == Jason.decode!(json)
    assert String.replace(rows, ~r/\s+/, "") == String.replace(json, ~r/\s+/, "")

    # Each line that is a whole JSON object with a "field", decoded.
    lines =
      for line <- String.split(rows, "\n"),
          {:ok, %{"field" => _} = field} <- [
            line |> String.trim() |> String.trim_trailing(",") |> Jason.decode()
          ],
          do: field

    assert Enum.sort(lines) ==
             Enum.sort(
               for %{"fields" => fields} <- Jason.decode!(json), field <- fields, do: field
             )
  end
end
