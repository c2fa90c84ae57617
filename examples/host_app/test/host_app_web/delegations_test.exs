defmodule HostAppWeb.DelegationsTest do
  @moduledoc "GET /api/delegations/:id: the delegation seam of a work job's status."
  use HostAppWeb.ConnCase, async: true

  import Ecto.Query, only: [where: 2]
  alias OpenAgents.Delegations.Target
  alias OpenAgents.Work.Job

  setup :seeded

  test "every job status, and the in-flight cancel word, serves the library's delegation seam",
       ctx do
    [linked | _] = ctx.attempts

    for status <- Job.statuses() ++ ["stopping"] do
      {1, _} = Repo.update_all(where(Job, id: ^linked.work_job_id), set: [status: status])
      seam = status |> Target.job_lifecycle() |> Target.delegation_seam()

      assert request_as(nil, :get, "/api/delegations/#{linked.work_job_id}") |> json!(200) ==
               %{"data" => seam}
    end
  end

  test "the job of an attempt dark to the reader is 404, for every reader", ctx do
    [_, revoked | _] = ctx.attempts

    for reader <- readers() do
      assert json!(
               request_as(ctx.readers[reader], :get, "/api/delegations/#{revoked.work_job_id}"),
               404
             )
    end
  end

  test "a job that serves no attempt is its machine owner's and an operator's", ctx do
    job = Repo.insert!(%Job{kind: "chat", status: "running", machine_id: ctx.world.machine.id})

    for reader <- readers() do
      conn = request_as(ctx.readers[reader], :get, "/api/delegations/#{job.id}")

      if reader in [:owner, :operator],
        do: assert(json!(conn, 200)["data"]["lifecycle"] == "active"),
        else: json!(conn, 404)
    end
  end

  test "a job several attempts serve is decided by the oldest of them, every time", ctx do
    [live, revoked | _] = ctx.attempts
    # Both attempts now serve the revoked attempt's job; the live one is
    # newer, so the revoked (oldest) one decides: 404 for every reader, on
    # every one of many reads, whatever order the database returns rows in.
    older = DateTime.add(live.inserted_at, -3600, :second)

    Repo.update_all(where(OpenAgents.Forge.Assignment, id: ^revoked.id),
      set: [inserted_at: older]
    )

    Repo.update_all(where(OpenAgents.Forge.Assignment, id: ^live.id),
      set: [work_job_id: revoked.work_job_id]
    )

    for reader <- readers(), _ <- 1..5 do
      assert json!(
               request_as(ctx.readers[reader], :get, "/api/delegations/#{revoked.work_job_id}"),
               404
             )
    end

    # The live attempt made the oldest: the job is its, and shown.
    Repo.update_all(where(OpenAgents.Forge.Assignment, id: ^live.id),
      set: [inserted_at: DateTime.add(older, -3600, :second)]
    )

    for reader <- readers() do
      assert json!(
               request_as(ctx.readers[reader], :get, "/api/delegations/#{revoked.work_job_id}"),
               200
             )
    end
  end

  test "a malformed or unknown id is 404" do
    for id <- ["x", Ecto.UUID.generate()],
        do: json!(request_as(nil, :get, "/api/delegations/#{id}"), 404)
  end
end
