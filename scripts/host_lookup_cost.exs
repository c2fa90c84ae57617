# What reading the host modules from the application environment on every
# call (OpenAgentsPolicy.Host) costs viewer/2, against the cache a14bde8 kept
# in :persistent_term (read once, so blind to Application.put_env/3), and
# against the seed. One VM, the three interleaved, median of the rounds; the
# users are bench/run.exs's four (operator, member, stranger, nil).
#
#     MIX_ENV=prod mix run scripts/host_lookup_cost.exs        (ROUNDS=15, N=200000)
#
# Needs ../shared/reference (the seeds, which also define the host modules
# in prod). Prints; asserts nothing.
Code.require_file(Path.expand("../../shared/reference/load.exs", __DIR__))
Code.require_file(Path.expand("../bench/support/fixtures.exs", __DIR__))

defmodule HostLookupCost do
  @moduledoc false
  alias OpenAgentsPolicy.{Host, Native}

  @cache {__MODULE__, :modules}
  @user Host.user_struct()

  # a14bde8's lookup: the modules read once and kept in :persistent_term.
  def cached_viewer(repository, %{__struct__: @user} = user) do
    %{accounts: accounts, repositories: repositories} = :persistent_term.get(@cache)

    relationship =
      cond do
        accounts.admin?(user) -> :operator
        repositories.member?(repository, user) -> :member
        true -> :stranger
      end

    Native.viewer(relationship, user.id)
  end

  def cached_viewer(_repository, _not_a_user), do: Native.viewer(:anonymous, nil)

  def cache!, do: :persistent_term.put(@cache, Host.modules())

  # ns per call of `fun` over every user, over `n` iterations.
  def time(fun, repository, users, n) do
    {us, _} =
      :timer.tc(fn ->
        for _ <- 1..n, user <- users, do: fun.(repository, user)
        :ok
      end)

    us * 1000 / (n * length(users))
  end
end

rounds = String.to_integer(System.get_env("ROUNDS", "15"))
n = String.to_integer(System.get_env("N", "200000"))
repository = Bench.Fixtures.repository()
users = Bench.Fixtures.users()
HostLookupCost.cache!()

sides = [
  seed: &Reference.WorkDisclosure.viewer/2,
  cached: &HostLookupCost.cached_viewer/2,
  env: &OpenAgents.Transparency.WorkDisclosure.viewer/2
]

# The three agree before anything is timed.
for user <- users do
  answers = for {_, fun} <- sides, do: fun.(repository, user)
  1 = answers |> Enum.uniq() |> length()
end

samples =
  for _ <- 1..rounds do
    for {side, fun} <- sides,
        into: %{},
        do: {side, HostLookupCost.time(fun, repository, users, n)}
  end

median = fn side ->
  samples |> Enum.map(& &1[side]) |> Enum.sort() |> Enum.at(div(rounds, 2))
end

[seed, cached, env] = Enum.map([:seed, :cached, :env], median)
load = File.read!("/proc/loadavg") |> String.split() |> Enum.take(3) |> Enum.join(" ")
IO.puts("viewer/2, ns per call (median of #{rounds} rounds x #{n} x 4 users), load #{load}")
IO.puts("  seed                                  #{Float.round(seed, 1)}")

IO.puts(
  "  host modules cached (a14bde8)         #{Float.round(cached, 1)}  seed/this #{Float.round(seed / cached, 3)}"
)

IO.puts(
  "  host modules from the app env (now)   #{Float.round(env, 1)}  seed/this #{Float.round(seed / env, 3)}"
)

IO.puts("  cost of following the environment     #{Float.round(env - cached, 1)} ns per call")
