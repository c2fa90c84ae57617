defmodule HostApp.Attempts do
  @moduledoc """
  Creating an attempt, the way the host does: `link_for_attempt/3` once per
  new attempt, in the same unit of work that persists it, with the host's
  (configured) repo inserting the link. A user-requested attempt gets a
  `ledger` link owned by the requesting account; an agent-requested one gets
  `:none` and resolves through its tier column alone.
  """
  alias OpenAgents.Forge.Assignment
  alias OpenAgents.Transparency.{ArtifactLink, WorkDisclosure}

  @spec create(OpenAgents.Repositories.Repository.t(), map(), map(), map()) ::
          {:ok, Assignment.t()} | {:error, term()}
  def create(repository, principal, attrs, authority \\ %{}) do
    with {:ok, link} <- mint(repository, principal, authority) do
      assignment =
        struct(
          Assignment,
          Map.merge(attrs, %{
            repository_id: repository.id,
            requesting_principal: principal,
            state: "admitted",
            transparency_tier: "ledger",
            artifact_link_id: link && link.id,
            artifact_link: link
          })
        )

      OpenAgents.Repo.insert(assignment)
    end
  end

  defp mint(repository, principal, authority) do
    case WorkDisclosure.link_for_attempt(repository, principal, authority) do
      {:ok, %ArtifactLink{} = link} -> {:ok, link}
      :none -> {:ok, nil}
      {:error, changeset} -> {:error, changeset}
    end
  end

  @doc "Revokes a link (the host's `Transparency.revoke/3`, reduced to its stamp)."
  @spec revoke(ArtifactLink.t(), String.t()) :: {:ok, ArtifactLink.t()} | {:error, term()}
  def revoke(%ArtifactLink{} = link, reason),
    do: link |> ArtifactLink.revoke_changeset(reason) |> OpenAgents.Repo.update()
end
