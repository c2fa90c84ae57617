# A million calls leave the VM's memory flat.
#
#     mix run scripts/memory.exs [calls] [seed]
#     MIX_ENV=prod mix run scripts/memory.exs 1000000
#
# Calls (default 1_000_000) cycle through a fixed set of cases: every public
# function of Delegations.Target, Transparency.WorkDisclosure and
# Transparency.Ladder on the inputs the host passes (project/3 on sources
# shaped as `Map.from_struct/1` of an attempt and a work job, viewers as
# `viewer/2` builds them, loaded, missing and revoked links, minted links),
# plus 2_000 fuzzer-generated cases, many of which raise. Measured after a
# warm-up and a full garbage collection, and again after the run: the OS's
# resident set (VmRSS, which counts the NIF's Rust allocations too),
# :erlang.memory/1 and the atom count. Prints the figures and the
# differences; exits 1 if the resident set grew by more than 16 MB or the
# atom table grew at all.
#
# Runs in any MIX_ENV; outside MIX_ENV=test it configures the fuzzer's host
# stand-ins (scripts/fuzz_gen.exs).

Code.require_file("fuzz_gen.exs", __DIR__)

alias OpenAgents.Delegations.Target
alias OpenAgents.Transparency.{Ladder, WorkDisclosure}
alias OpenAgentsPolicy.Fuzz
alias OpenAgentsPolicy.Fuzz.Gen

{calls, seed} =
  case System.argv() do
    [] -> {1_000_000, 1}
    [calls] -> {String.to_integer(calls), 1}
    [calls, seed | _] -> {String.to_integer(calls), String.to_integer(seed)}
  end

users? = Fuzz.ensure_host()

defmodule OpenAgentsPolicy.MemoryScript do
  @moduledoc false

  def rss_kb do
    "/proc/self/status"
    |> File.read!()
    |> String.split("\n")
    |> Enum.find_value(fn
      "VmRSS:" <> rest ->
        rest |> String.trim() |> String.trim_trailing(" kB") |> String.to_integer()

      _ ->
        nil
    end)
  end

  def gc do
    Enum.each(Process.list(), &:erlang.garbage_collect/1)
  end

  def snapshot do
    gc()

    %{
      rss_kb: rss_kb(),
      total: :erlang.memory(:total),
      processes: :erlang.memory(:processes),
      binary: :erlang.memory(:binary),
      atoms: :erlang.system_info(:atom_count)
    }
  end

  # One call; the host stand-in repo reports inserts by message, drained here.
  def call({module, fun, args}) do
    try do
      apply(module, fun, args)
    rescue
      _ -> :raised
    end

    drain()
  end

  defp drain do
    receive do
      {:repo_insert, _} -> drain()
    after
      0 -> :ok
    end
  end

  def run(cases, from, to) do
    size = tuple_size(cases)
    Enum.each(from..to//1, fn i -> call(elem(cases, rem(i, size))) end)
  end

  def mb(bytes), do: Float.round(bytes / 1_048_576, 2)
end

alias OpenAgentsPolicy.MemoryScript, as: M

# ── the host's inputs ───────────────────────────────────────────────────

associations = ~w(conversation conversation_box machine repository issue run work_job
                  artifact_link)a

not_loaded = %{
  __struct__: Ecto.Association.NotLoaded,
  __field__: :artifact_link,
  __cardinality__: :one
}

row = fn family ->
  (WorkDisclosure.source_columns(family) ++ WorkDisclosure.never(family))
  |> Map.new(&{&1, "#{&1}-value"})
  |> Map.put(:__meta__, :loaded)
end

attempt =
  row.(:attempt)
  |> Map.merge(Map.new(associations, &{&1, not_loaded}))
  |> Map.merge(%{requester_kind: "user", state: "running", branch: "oa/issue-7"})

job =
  row.(:work_job)
  |> Map.merge(%{
    budget: %{wall_clock_ms: 900_000, report_bytes: 8_192},
    report: String.duplicate("r", 8_192)
  })

evidence = row.(:evidence) |> Map.merge(%{commit: "abc123", recorded_at: "2026-08-25"})
trace = row.(:trace) |> Map.merge(%{schema_version: "ATIF-v1.7", step_count: 42})

link = fn account, revoked_at ->
  %{
    __struct__: OpenAgents.Transparency.ArtifactLink,
    id: "link-1",
    account_id: account,
    repository_id: "repo-1",
    artifact_type: "attempt",
    artifact_ref: "id",
    tier: "ledger",
    consent: %{"granted_by" => "requesting_principal"},
    authority_snapshot: %{},
    revoked_at: revoked_at,
    revocation_tombstone: nil,
    inserted_at: nil
  }
end

user = fn admin, member_of ->
  %{__struct__: OpenAgents.Accounts.User, id: "acct-1", admin: admin, member_of: member_of}
end

machine = fn status, revoked_at ->
  %{__struct__: OpenAgents.Machines.Machine, id: "m-1", status: status, revoked_at: revoked_at}
end

viewers = [
  %{account_id: "acct-1", tier: :glass, admin: true},
  %{account_id: "acct-1", tier: :ledger},
  %{account_id: "acct-2", tier: :pulse},
  %{account_id: nil, tier: :pulse},
  :ledger,
  "glass",
  nil
]

viewers = if users?, do: viewers ++ [user.(false, []), user.(true, [])], else: viewers

records = [
  Map.put(attempt, :artifact_link, link.("acct-1", nil)),
  Map.put(attempt, :artifact_link, link.("acct-1", "2026-08-25")),
  Map.merge(attempt, %{artifact_link: nil, transparency_tier: "pulse"}),
  Map.merge(attempt, %{artifact_link: not_loaded, transparency_tier: "ledger"})
]

sources = [attempt: attempt, work_job: job, evidence: evidence, trace: trace]

host_cases =
  Enum.concat([
    for(f <- [:lifecycles, :delegation_lifecycles, :custodies, :kinds], do: {Target, f, []}),
    for(k <- ~w(box computer), f <- [:custody, :runtime_class], do: {Target, f, [k]}),
    for(
      s <- ~w(init provisioning ready idle running archived error queued bogus),
      do: {Target, :box_lifecycle, [s]}
    ),
    for(s <- ~w(admitted running completed timed_out lost), do: {Target, :run_lifecycle, [s]}),
    for(s <- ~w(queued running budget_exhausted stopping), do: {Target, :job_lifecycle, [s]}),
    for(
      st <- ["active", "revoked"],
      r <- [nil, "2026-08-25"],
      o <- [true, false],
      do: {Target, :computer_lifecycle, [machine.(st, r), o]}
    ),
    for(
      k <- ~w(box computer),
      l <- Target.lifecycles(),
      a <- [true, false],
      do: {Target, :seam, [k, l, a]}
    ),
    for(l <- Target.delegation_lifecycles(), do: {Target, :delegation_seam, [l]}),
    for(
      {family, source} <- sources,
      v <- viewers,
      do: {WorkDisclosure, :project, [family, source, WorkDisclosure.effective_tier(attempt, v)]}
    ),
    for(
      {family, source} <- sources,
      v <- viewers,
      do: {WorkDisclosure, :project, [family, source, v]}
    ),
    for(
      family <- WorkDisclosure.families(),
      v <- viewers,
      do: {WorkDisclosure, :fields_at, [family, v]}
    ),
    for(r <- records, v <- viewers, do: {WorkDisclosure, :effective_tier, [r, v]}),
    for(
      u <-
        [nil] ++
          if(users?, do: [user.(false, ["repo-1"]), user.(false, []), user.(true, [])], else: []),
      do: {WorkDisclosure, :viewer, [%{id: "repo-1"}, u]}
    ),
    for(
      p <- [%{"type" => "user", "id" => "acct-1"}, %{"type" => "agent", "id" => "agent-7"}],
      do: {WorkDisclosure, :link_for_attempt, [%{id: "repo-1"}, p, %{"roots" => ["/src"]}]}
    ),
    for(
      family <- WorkDisclosure.families(),
      do: {WorkDisclosure, :classify, [family, Map.keys(Keyword.fetch!(sources, family))]}
    ),
    for(
      family <- WorkDisclosure.families(),
      f <- [:never, :source_columns],
      do: {WorkDisclosure, f, [family]}
    ),
    [
      {WorkDisclosure, :tier_for, [:work_job, :report]},
      {WorkDisclosure, :families, []},
      {WorkDisclosure, :schedule, []},
      {WorkDisclosure, :schedule_json, []}
    ],
    for(t <- [:glass, "pulse", "GLASS", nil], f <- [:name, :rank], do: {Ladder, f, [t]}),
    for(v <- viewers, do: {Ladder, :viewer_tier, [v]}),
    for(v <- viewers, do: {Ladder, :clamp, [:glass, v]}),
    for(
      v <- viewers,
      s <- [link.("acct-1", nil), "ledger"],
      a <- [:metadata, :full],
      do: {Ladder, :allows?, [s, a, v]}
    ),
    for(v <- viewers, do: {Ladder, :effective_tier, [link.("acct-2", nil), v]})
  ])

# Fuzzer cases, for the refusal paths (a NIF panic is left out: it prints a
# backtrace per call, and the fuzz test reports it).
Gen.seed(seed, users?: users?)

fuzz_cases =
  for _ <- 1..2_000,
      {module, fun, arity} = Enum.random(Fuzz.functions()),
      args = Gen.args(module, fun, arity),
      not match?({:raise, %ErlangError{}, _}, Fuzz.outcome(fn -> apply(module, fun, args) end)),
      do: {module, fun, args}

cases = List.to_tuple(host_cases ++ fuzz_cases)

IO.puts(
  "#{tuple_size(cases)} cases (#{length(host_cases)} host-shaped, #{length(fuzz_cases)} fuzzed), " <>
    "#{calls} calls, MIX_ENV=#{Mix.env()}"
)

# Warm-up: every case once, then 100_000 calls, so allocators, the code and
# the atom table reach their steady state before the first measurement.
M.run(cases, 0, tuple_size(cases) - 1)
M.run(cases, 0, 99_999)
before = M.snapshot()
started = System.monotonic_time()

checkpoints = 4
step = div(calls, checkpoints)

marks =
  for c <- 1..checkpoints do
    last = if c == checkpoints, do: calls - 1, else: c * step - 1
    M.run(cases, (c - 1) * step, last)
    snap = M.snapshot()

    IO.puts(
      "  after #{last + 1} calls: RSS #{snap.rss_kb} kB, erlang total #{M.mb(snap.total)} MB"
    )

    snap
  end

seconds =
  System.convert_time_unit(System.monotonic_time() - started, :native, :millisecond) / 1000

final = List.last(marks)

row_fmt = fn label, a, b, unit ->
  IO.puts(
    "  #{String.pad_trailing(label, 22)} #{String.pad_leading("#{a}", 12)} " <>
      "#{String.pad_leading("#{b}", 12)} #{String.pad_leading("#{b - a}", 10)} #{unit}"
  )
end

IO.puts("\n#{calls} calls in #{Float.round(seconds, 1)} s (#{round(calls / seconds)} calls/s)\n")

IO.puts(
  "  #{String.pad_trailing("", 22)} #{String.pad_leading("before", 12)} #{String.pad_leading("after", 12)} #{String.pad_leading("diff", 10)}"
)

row_fmt.("VmRSS", before.rss_kb, final.rss_kb, "kB")
row_fmt.(":erlang.memory total", before.total, final.total, "bytes")
row_fmt.("  processes", before.processes, final.processes, "bytes")
row_fmt.("  binary", before.binary, final.binary, "bytes")
row_fmt.("atom count", before.atoms, final.atoms, "")

rss_growth = final.rss_kb - before.rss_kb

cond do
  rss_growth > 16 * 1024 ->
    IO.puts("\nFAIL: the resident set grew by #{rss_growth} kB")
    System.halt(1)

  final.atoms != before.atoms ->
    IO.puts("\nFAIL: the atom table grew by #{final.atoms - before.atoms}")
    System.halt(1)

  true ->
    IO.puts("\nflat: RSS #{rss_growth} kB, erlang total #{final.total - before.total} bytes")
end
