defmodule HostAppWeb.AttemptController do
  @moduledoc """
  The attempts of a repository, per reader (see `HostApp.Disclosure`):

  - `GET /api/repositories/:slug/attempts`: `{"data": [item]}`, every attempt
    oldest first, dark ones left out; an item is `{"tier", "attempt",
    "work_job"}`. `?preload=false` leaves `:artifact_link` not loaded, so the
    tier column decides.
  - `GET /api/attempts/:id`: `{"data": item}` plus `"evidence"` and
    `"traces"`, each at its own tier; 404 when the attempt is dark to the
    reader, exactly as when it does not exist.
  - `POST /api/repositories/:slug/attempts` with `{"issue_number": n,
    "target_kind": "box" | "computer"}`: inserts the attempt and mints its
    link in one transaction; 201 with the item and `"link": {"id", "tier"}`;
    401 for an anonymous reader; 422 with the changeset's errors (and
    nothing kept) when either insert fails or the body is not that shape.
  """
  use HostAppWeb, :controller

  import Ecto.Changeset
  alias HostApp.{Attempts, Disclosure}
  alias OpenAgents.Delegations.Target
  alias OpenAgents.Repositories

  @max_issue_number 2_147_483_647

  @doc false
  def index(conn, %{"slug" => slug} = params) do
    with {:ok, preload?} <- preload_param(params),
         %{} = repository <- Repositories.get_by_slug(slug) || {:error, 404} do
      viewer = Disclosure.viewer(repository, conn.assigns.current_user)

      items =
        for assignment <- Attempts.list(repository, preload?),
            item = Disclosure.item(assignment, viewer),
            item != nil,
            do: item

      json(conn, %{data: items})
    else
      {:error, status} -> ErrorJSON.send(conn, status)
    end
  end

  defp preload_param(%{"preload" => "false"}), do: {:ok, false}
  defp preload_param(%{"preload" => "true"}), do: {:ok, true}
  defp preload_param(%{"preload" => _other}), do: {:error, 400}
  defp preload_param(_params), do: {:ok, true}

  @doc false
  def show(conn, %{"id" => id}) do
    with %{} = assignment <- Attempts.get(id),
         viewer = Disclosure.viewer(assignment.repository, conn.assigns.current_user),
         %{tier: tier} = item <- Disclosure.item(assignment, viewer) do
      evidence = Disclosure.evidence(Attempts.evidence(assignment), viewer)
      traces = Disclosure.traces(Attempts.traces(assignment), tier)
      json(conn, %{data: Map.merge(item, %{evidence: evidence, traces: traces})})
    else
      nil -> ErrorJSON.send(conn, 404)
    end
  end

  @doc false
  def create(%{assigns: %{current_user: nil}} = conn, _params), do: ErrorJSON.send(conn, 401)

  def create(%{assigns: %{current_user: user}} = conn, %{"slug" => slug} = params) do
    with %{} = repository <- Repositories.get_by_slug(slug) || {:error, 404},
         {:ok, attrs} <- request(params),
         {:ok, assignment} <- Attempts.create(repository, user, attrs, %{"via" => "api"}) do
      item = Disclosure.item(assignment, Disclosure.viewer(repository, user))

      link =
        assignment.artifact_link &&
          %{id: assignment.artifact_link.id, tier: assignment.artifact_link.tier}

      conn
      |> put_status(201)
      |> json(%{data: Map.put(item, :link, link)})
    else
      {:error, %Ecto.Changeset{} = changeset} -> ErrorJSON.changeset(conn, changeset)
      {:error, status} -> ErrorJSON.send(conn, status)
    end
  end

  # The body's shape: a positive integer issue number that fits the `issues.number`
  # column (an int4: a larger one would reach Postgrex and raise) and a target
  # kind of the library's vocabulary.
  defp request(params) do
    {%{}, %{issue_number: :integer, target_kind: :string}}
    |> cast(params, [:issue_number, :target_kind])
    |> validate_required([:issue_number, :target_kind])
    |> validate_number(:issue_number, greater_than: 0, less_than_or_equal_to: @max_issue_number)
    |> validate_inclusion(:target_kind, Target.kinds())
    |> apply_action(:insert)
  end
end
