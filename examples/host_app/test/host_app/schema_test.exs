defmodule HostApp.SchemaTest do
  @moduledoc "The host's own invariant, held on its real Ecto schemas: every column scheduled or never-listed."
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

  test "the schemas carry the host's columns in its order: 25, 29, 15 and 8" do
    assert Enum.map(@schemas, fn {_, schema} -> length(schema.__schema__(:fields)) end) == [
             25,
             29,
             15,
             8
           ]

    assert List.last(OpenAgents.Forge.Assignment.__schema__(:fields)) == :updated_at
    assert hd(OpenAgents.Work.Job.__schema__(:fields)) == :id
  end

  test "an attempt struct carries 25 columns, __meta__ and 8 associations, not loaded" do
    assignment = %OpenAgents.Forge.Assignment{}
    associations = OpenAgents.Forge.Assignment.__schema__(:associations)
    assert length(associations) == 8
    assert map_size(Map.from_struct(assignment)) == 25 + 1 + 8
    assert %Ecto.Association.NotLoaded{} = assignment.artifact_link
  end

  test "the library calls the host's own modules, at their default names; unloaded links raise" do
    assert OpenAgentsPolicy.Host.modules() == %{
             accounts: OpenAgents.Accounts,
             repositories: OpenAgents.Repositories,
             artifact_link: OpenAgents.Transparency.ArtifactLink,
             repo: OpenAgents.Repo,
             user: OpenAgents.Accounts.User,
             # The one setting: config/test.exs sets it, as config/dev.exs does.
             unloaded_link: :raise
           }

    assert OpenAgents.Repo.__adapter__() == Ecto.Adapters.Postgres
    assert OpenAgents.Transparency.ArtifactLink.__schema__(:source) == "artifact_links"
  end

  test "a column the schedule does not know is reported" do
    columns = OpenAgents.Forge.Assignment.__schema__(:fields) ++ [:prompt]
    assert WorkDisclosure.classify(:attempt, columns).unclassified == [:prompt]
  end
end
