defmodule HostApp.SchemaTest do
  @moduledoc "The host's own invariant: every column is scheduled or never-listed, never both, never neither."
  use ExUnit.Case, async: true

  alias OpenAgents.Transparency.WorkDisclosure

  @schemas [
    attempt: OpenAgents.Forge.Assignment,
    work_job: OpenAgents.Work.Job,
    evidence: OpenAgents.Forge.IssueEvidence,
    trace: OpenAgents.Traces.Trace
  ]

  for {family, schema} <- @schemas do
    @family family
    @schema schema
    test "#{family}: #{inspect(schema)} columns are exactly classified" do
      columns = @schema.__schema__(:fields)

      assert WorkDisclosure.classify(@family, columns) == %{
               unclassified: [],
               doubly_classified: []
             }

      sources = WorkDisclosure.source_columns(@family)
      never = WorkDisclosure.never(@family)
      assert Enum.sort(sources ++ never) == Enum.sort(columns)
      assert MapSet.disjoint?(MapSet.new(sources), MapSet.new(never))
    end
  end

  test "the attempt struct carries 25 columns, __meta__ and 8 associations, as Ecto's would" do
    keys = Map.keys(Map.from_struct(%OpenAgents.Forge.Assignment{}))
    assert length(OpenAgents.Forge.Assignment.__schema__(:fields)) == 25
    assert length(OpenAgents.Forge.Assignment.__schema__(:associations)) == 8
    assert length(keys) == 25 + 1 + 8
  end

  test "a column the schedule does not know is reported" do
    columns = OpenAgents.Forge.Assignment.__schema__(:fields) ++ [:prompt]
    assert WorkDisclosure.classify(:attempt, columns).unclassified == [:prompt]
  end
end
