defmodule HostApp.DataCase do
  @moduledoc """
  A test against the real PostgreSQL, in an Ecto SQL Sandbox transaction
  rolled back afterwards (a `Phoenix.ConnTest` request runs in the test's
  process, so inside it). `seeded/1` seeds `HostApp.Seeds` there and puts
  `world`, `readers` (the five, anonymous `nil`) and `attempts` (the four
  seeded, with link and work job) in the context.
  """
  use ExUnit.CaseTemplate

  alias Ecto.Adapters.SQL.Sandbox
  alias OpenAgents.Forge.Assignment
  alias OpenAgents.Repo
  alias OpenAgents.Transparency.WorkDisclosure

  using do
    quote do
      import HostApp.DataCase
      alias OpenAgents.Repo
    end
  end

  setup :checkout

  @doc "Checks a sandboxed connection out for the test (shared when the test is not async)."
  def checkout(tags) do
    pid = Sandbox.start_owner!(Repo, shared: not tags[:async])
    on_exit(fn -> Sandbox.stop_owner(pid) end)
    :ok
  end

  @readers [:anonymous, :stranger, :member, :owner, :operator]

  @doc "The five kinds of reader, in the order the tests walk them."
  def readers, do: @readers

  @doc "Seeds the world (see the moduledoc)."
  def seeded(_context) do
    world = HostApp.Seeds.run()

    attempts =
      for id <- world.attempts,
          do: Repo.get!(Assignment, id) |> Repo.preload([:artifact_link, :work_job])

    %{world: world, readers: Map.put(world.users, :anonymous, nil), attempts: attempts}
  end

  @doc "`reader`'s account id, `nil` for the anonymous reader."
  def reader_id(readers, reader), do: readers[reader] && readers[reader].id

  @doc """
  The viewer descriptor a reader of the relationship `role` (`:anonymous`,
  `:stranger`, `:member`, `:owner`, `:operator`) to a repository has, written
  out as the app's `WorkDisclosure.viewer/2` contract states it (upstream.md),
  not asked of the host: the tests compare what the host serves with what the
  library decides for this descriptor. An owner of attempts who is not a
  member reads as any other user.
  """
  def descriptor(:anonymous, _user), do: %{account_id: nil, tier: :pulse}
  def descriptor(:operator, user), do: %{account_id: user.id, tier: :glass, admin: true}
  def descriptor(:member, user), do: %{account_id: user.id, tier: :ledger}
  def descriptor(_stranger_or_owner, user), do: %{account_id: user.id, tier: :pulse}

  @doc """
  The tier the library decides `reader` (of the seeded world, in its
  repository) reads `record` at: `WorkDisclosure.effective_tier/2` of the
  record as loaded, for the reader's descriptor.
  """
  def decided_tier(readers, reader, record),
    do: WorkDisclosure.effective_tier(record, descriptor(reader, readers[reader]))

  @doc "The JSON keys `family` publishes at `tier`: the library's `fields_at/2`, as sorted strings."
  def field_names(family, tier),
    do: family |> WorkDisclosure.fields_at(tier) |> Enum.map(&Atom.to_string/1) |> Enum.sort()

  @doc """
  Every value of a never-listed column in the seeded world that no scheduled
  field republishes (ids of conversations, boxes, machines, runs, issues, the
  repository, the users and the links): no response may carry one.
  """
  def hidden_ids(world, attempts) do
    links = for %{artifact_link: %{id: id}} <- attempts, do: id

    Enum.uniq(
      [world.repository.id, world.issue.id, world.box.id, world.machine.id] ++
        Enum.map(Map.values(world.users), & &1.id) ++
        links ++
        Enum.flat_map(attempts, &[&1.conversation_id, &1.run_id])
    )
    |> Enum.reject(&is_nil/1)
  end
end
