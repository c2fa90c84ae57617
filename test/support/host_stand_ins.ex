# Test-only stand-ins for the host application's modules that the library
# recognises or calls (see OpenAgentsPolicy.Host). Each is defined only when
# the VM has none, so a host that runs this suite against its own modules
# keeps them. Their behaviour follows upstream.md and nothing more.

defmodule OpenAgentsPolicy.Test.Changeset do
  @moduledoc false
  # What the ArtifactLink stand-in's `changeset/2` returns.
  defstruct [:data, changes: %{}]
end

unless Code.ensure_loaded?(OpenAgents.Machines.Machine) do
  defmodule OpenAgents.Machines.Machine do
    @moduledoc false
    # `Target.computer_lifecycle/2` reads only `status` and `revoked_at`.
    defstruct Enum.map(
                OpenAgentsPolicy.Test.Upstream.machine_fields(),
                fn
                  :scoped_forge_credentials_enabled = field -> {field, false}
                  field -> {field, nil}
                end
              )
  end
end

unless Code.ensure_loaded?(OpenAgents.Accounts.User) do
  defmodule OpenAgents.Accounts.User do
    @moduledoc false
    # `member_of` lists the repository ids the user is a member of.
    defstruct [:id, admin: false, member_of: []]
  end
end

unless Code.ensure_loaded?(OpenAgents.Accounts) do
  defmodule OpenAgents.Accounts do
    @moduledoc false
    @behaviour OpenAgentsPolicy.Host.Accounts
    def admin?(%OpenAgents.Accounts.User{admin: admin}), do: admin == true
  end
end

unless Code.ensure_loaded?(OpenAgents.Repositories) do
  defmodule OpenAgents.Repositories do
    @moduledoc false
    @behaviour OpenAgentsPolicy.Host.Repositories
    def member?(%{id: repository_id}, %OpenAgents.Accounts.User{member_of: repositories}),
      do: repository_id in repositories
  end
end

unless Code.ensure_loaded?(OpenAgents.Transparency.ArtifactLink) do
  defmodule OpenAgents.Transparency.ArtifactLink do
    @moduledoc false
    @behaviour OpenAgentsPolicy.Host.ArtifactLink
    defstruct OpenAgentsPolicy.Test.Upstream.artifact_link_fields()

    # Something inspectable in place of an Ecto changeset.
    def changeset(link, attrs), do: %OpenAgentsPolicy.Test.Changeset{data: link, changes: attrs}
  end
end

unless Code.ensure_loaded?(OpenAgents.Repo) do
  defmodule OpenAgents.Repo do
    @moduledoc false
    @behaviour OpenAgentsPolicy.Host.Repo
    # Tells the calling process what it was asked to insert, so a test can
    # see exactly what reached persistence.
    def insert(%OpenAgentsPolicy.Test.Changeset{data: data, changes: changes} = changeset) do
      send(self(), {:repo_insert, changeset})
      {:ok, %{struct(data, changes) | id: "link-#{System.unique_integer([:positive])}"}}
    end
  end
end

unless Code.ensure_loaded?(Ecto.Association.NotLoaded) do
  defmodule Ecto.Association.NotLoaded do
    @moduledoc false
    defstruct [:__field__, :__owner__, :__cardinality__]
  end
end

defmodule OpenAgentsPolicy.Test.Assignment do
  @moduledoc false
  # The shape of the host's `%Forge.Assignment{}`: its 25 columns, `__meta__`
  # and its eight associations, which is what `Map.from_struct/1` hands to
  # `project(:attempt, ...)` (plus `:requester_kind`).
  alias OpenAgentsPolicy.Test.Upstream

  defstruct [__meta__: :loaded] ++
              Upstream.columns(:attempt) ++
              Enum.map(Upstream.attempt_associations(), &{&1, %Ecto.Association.NotLoaded{}})
end

defmodule OpenAgentsPolicy.Test.WorkJob do
  @moduledoc false
  # The shape of the host's `%Work.Job{}`: its columns and `__meta__`.
  defstruct [__meta__: :loaded] ++ OpenAgentsPolicy.Test.Upstream.columns(:work_job)
end

defmodule OpenAgentsPolicy.Test.Evidence do
  @moduledoc false
  # The shape of the host's issue evidence edge, with its link association.
  defstruct [__meta__: :loaded, artifact_link: %Ecto.Association.NotLoaded{}] ++
              OpenAgentsPolicy.Test.Upstream.columns(:evidence)
end
