# How long the ownership comparison takes when the caller passes huge account
# ids: effective_tier/2 with a live link and a viewer whose account_id are
# equal (but distinct) 2_000_000-element lists, against the seed and a bare
# `==`. Median of 7. Needs ../shared/reference (the seeds).
#
#     MIX_ENV=prod mix run scripts/big_account_ids.exs
Code.require_file(Path.expand("../../shared/reference/load.exs", __DIR__))

alias OpenAgents.Transparency.WorkDisclosure

big = fn -> Enum.to_list(1..2_000_000) end

link = %{
  __struct__: OpenAgentsPolicy.Host.link_struct(),
  account_id: big.(),
  tier: "ledger",
  revoked_at: nil
}

record = %{artifact_link: link}
viewer = %{account_id: big.(), tier: :pulse}

median = fn f ->
  for(_ <- 1..7, do: elem(:timer.tc(f), 0)) |> Enum.sort() |> Enum.at(3) |> Kernel./(1000)
end

rows = [
  {"project effective_tier/2", fn -> WorkDisclosure.effective_tier(record, viewer) end},
  {"seed effective_tier/2", fn -> Reference.WorkDisclosure.effective_tier(record, viewer) end},
  {"bare ==", fn -> link.account_id == viewer.account_id end}
]

IO.puts(
  "load average: #{File.read!("/proc/loadavg") |> String.split() |> Enum.take(3) |> Enum.join(" ")}"
)

for {label, fun} <- rows do
  IO.puts("#{String.pad_trailing(label, 26)} #{median.(fun)} ms -> #{inspect(fun.())}")
end
