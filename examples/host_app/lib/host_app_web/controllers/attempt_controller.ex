defmodule HostAppWeb.AttemptController do
  @moduledoc """
  The attempts of a repository, per reader (see `HostApp.Disclosure`). Every
  read preloads each record's `:artifact_link`: no route decides a tier
  without the link.

  - `GET /api/repositories/:slug/attempts`: `{"data": [item], "next": id |
    null}`, a page of the attempts the reader may see, oldest first, dark
    ones left out; an item is `{"tier", "attempt", "work_job"}`. `?limit=`
    (1 to 200, default 50) bounds the page; `?after=<attempt id>`, the id of
    an attempt of this repository the reader may see, starts it after that
    attempt. `"next"` is the cursor of the next page (the last item's id), or
    `null` on the last page. Any other `limit` or `after` is 400.
  - `GET /api/attempts/:id`: `{"data": item}` plus `"evidence"` and
    `"traces"`, each at its own tier; 404 when the attempt is dark to the
    reader, exactly as when it does not exist.
  - `POST /api/repositories/:slug/attempts` with `{"issue_number": n,
    "target_kind": "box" | "computer"}`, by a member of the repository or an
    operator: inserts the attempt and mints its link in one transaction; 201
    with the item and `"link": {"id", "tier"}`; 401 for an anonymous reader,
    403 for any other user; 422 (and nothing kept) when the body is not that
    shape or an insert fails, naming only fields the request sent. Every read
    (the viewer too) comes before the transaction, so nothing can fail after
    it commits.
  """
  use HostAppWeb, :controller

  import Ecto.Changeset
  alias HostApp.{Attempts, Disclosure}
  alias OpenAgents.{Accounts, Repositories}
  alias OpenAgents.Delegations.Target

  @max_issue_number 2_147_483_647
  @default_limit 50
  @max_limit 200

  @doc "The page size when `?limit=` is not given."
  @spec default_limit() :: pos_integer()
  def default_limit, do: @default_limit

  @doc "The largest `?limit=` a page accepts."
  @spec max_limit() :: pos_integer()
  def max_limit, do: @max_limit

  @doc false
  def index(conn, %{"slug" => slug} = params) do
    with %{} = repository <- Repositories.get_by_slug(slug) || {:error, 404},
         viewer = Disclosure.viewer(repository, conn.assigns.current_user),
         {:ok, limit} <- limit_param(params),
         {:ok, cursor} <- after_param(params, repository, viewer) do
      {items, next} = page(repository, viewer, cursor, limit)
      json(conn, %{data: items, next: next})
    else
      {:error, status} when is_integer(status) -> ErrorJSON.send(conn, status)
      {:error, field, message} -> ErrorJSON.fields(conn, 400, %{field => [message]})
    end
  end

  defp limit_param(%{"limit" => given}) do
    case Integer.parse(to_string_or_empty(given)) do
      {limit, ""} when limit in 1..@max_limit -> {:ok, limit}
      _ -> {:error, "limit", "must be an integer from 1 to #{@max_limit}"}
    end
  end

  defp limit_param(_params), do: {:ok, @default_limit}

  # The cursor must be an attempt of this repository that the reader may
  # see: an attempt that is dark to them, of another repository, or of none
  # gets the same answer, so the cursor tells nothing a page would not.
  defp after_param(%{"after" => id}, repository, viewer) do
    with true <- is_binary(id),
         %{} = cursor <- Attempts.get_in_repository(repository, id),
         %{} <- Disclosure.item(cursor, viewer) do
      {:ok, cursor}
    else
      _ -> {:error, "after", "is not an attempt of this list"}
    end
  end

  defp after_param(_params, _repository, _viewer), do: {:ok, nil}

  defp to_string_or_empty(given) when is_binary(given), do: given
  defp to_string_or_empty(_given), do: ""

  # Up to `limit` items the reader may see, and one more to know whether
  # there is a next page: the query reads only the attempts the reader does
  # not read at `dark` (`WorkDisclosure.where_visible/2`), so each row read is
  # an item. The cursor of the next page is the last item's id: never the id
  # of an attempt the reader may not see.
  defp page(repository, viewer, cursor, limit) do
    items =
      for assignment <- Attempts.batch(repository, cursor, limit + 1, viewer),
          item = Disclosure.item(assignment, viewer),
          do: item

    case Enum.split(items, limit) do
      {page, []} -> {page, nil}
      {page, _more} -> {page, List.last(page).attempt.id}
    end
  end

  @doc false
  def show(conn, %{"id" => id}) do
    with %{} = assignment <- Attempts.get(id),
         viewer = Disclosure.viewer(assignment.repository, conn.assigns.current_user),
         %{tier: tier} = item <- Disclosure.item(assignment, viewer) do
      evidence = Disclosure.evidence(Attempts.evidence(assignment), viewer)
      traces = Disclosure.traces(Attempts.trace_sources(assignment), tier)
      json(conn, %{data: Map.merge(item, %{evidence: evidence, traces: traces})})
    else
      nil -> ErrorJSON.send(conn, 404)
    end
  end

  @doc false
  def create(%{assigns: %{current_user: nil}} = conn, _params), do: ErrorJSON.send(conn, 401)

  def create(%{assigns: %{current_user: user}} = conn, %{"slug" => slug} = params) do
    with %{} = repository <- Repositories.get_by_slug(slug) || {:error, 404},
         :ok <- may_create(repository, user),
         viewer = Disclosure.viewer(repository, user),
         {:ok, attrs} <- request(params),
         {:ok, assignment} <- Attempts.create(repository, user, attrs, %{"via" => "api"}) do
      item = Disclosure.item(assignment, viewer)

      link =
        assignment.artifact_link &&
          %{id: assignment.artifact_link.id, tier: assignment.artifact_link.tier}

      conn
      |> put_status(201)
      |> json(%{data: Map.put(item, :link, link)})
    else
      {:error, %Ecto.Changeset{} = changeset} ->
        ErrorJSON.changeset(conn, changeset, sent(conn))

      {:error, status} ->
        ErrorJSON.send(conn, status)
    end
  end

  # Who may request work on a repository: its members and operators.
  defp may_create(repository, user) do
    if Accounts.admin?(user) or Repositories.member?(repository, user),
      do: :ok,
      else: {:error, 403}
  end

  # The body's fields, as the request sent them (a body that is not an
  # object sent none).
  defp sent(%{body_params: %{} = body}), do: Map.keys(body)
  defp sent(_conn), do: []

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
