# Differential run of every public function of OpenAgents.Delegations.Target
# and OpenAgents.Transparency.WorkDisclosure against the Elixir seeds they
# replace (compiled into this VM as Reference.Target and
# Reference.WorkDisclosure by ../shared/reference/load.exs, with the host
# stand-ins both sides then share).
#
#     mix run scripts/parity.exs [calls per function] [seed]    (make parity)
#
# Inputs: every vocabulary word and thousands of near misses of each (case
# changes, affixes, truncations, byte flips, deletions) through every
# function of one word; then `calls` (default 4_000) arguments per function
# from the fuzzer's generator (test/support/fuzz.ex), which covers machines,
# users, links, viewers, records, sources and arbitrary terms. Each call is
# made on both sides and compared as `{:ok, value}` (===) or
# `{:raise, exception_module}` (with `original` for an ErlangError). Prints
# one line per function and the first differing inputs; exits 1 on any
# difference.
#
# One kind of difference is known and counted apart, not failed: upstream.md
# says a User struct whose `id` equals a live link's `account_id` owns the
# link (glass); a reference stand-in that only recognises a viewer's
# `account_id` answers otherwise. Maps that claim a struct (`__struct__` of
# User, ArtifactLink or Machine) while lacking some of its fields are inputs
# like any other: the seed's KeyError is ours too.
#
# A script, not a test: the test suite must not depend on the seeds.

started = System.monotonic_time(:millisecond)
root = Path.expand("..", __DIR__)

unless Code.ensure_loaded?(Ecto.Association.NotLoaded) do
  defmodule Ecto.Association.NotLoaded do
    defstruct [:__field__, :__owner__, :__cardinality__]
  end
end

Code.require_file(Path.expand("../shared/reference/load.exs", root))
Code.require_file("test_support.exs", __DIR__)

defmodule Parity do
  @moduledoc false
  alias OpenAgentsPolicy.Fuzz
  alias OpenAgentsPolicy.Fuzz.Gen

  @user OpenAgents.Accounts.User
  @link OpenAgents.Transparency.ArtifactLink
  @examples 5

  def reference(OpenAgents.Delegations.Target), do: Reference.Target
  def reference(OpenAgents.Transparency.WorkDisclosure), do: Reference.WorkDisclosure
  def reference(_module), do: nil

  @doc "Every function both sides have, as `{ours, seed, fun, arity}`."
  def pairs do
    for {module, fun, arity} <- Fuzz.functions(),
        seed = reference(module),
        seed && function_exported?(seed, fun, arity),
        do: {module, seed, fun, arity}
  end

  def outcome(fun) do
    {:ok, fun.()}
  rescue
    error ->
      case error do
        %ErlangError{original: original} -> {:raise, ErlangError, original}
        %module{} -> {:raise, module}
      end
  catch
    kind, value -> {:caught, kind, value}
  end

  @doc "Calls both sides and records the outcome under `label`."
  def check({ours, seed, fun, _arity}, args) do
    label = "#{inspect(ours) |> String.split(".") |> List.last()}.#{fun}/#{length(args)}"
    reference = outcome(fn -> apply(seed, fun, args) end)
    mine = outcome(fn -> apply(ours, fun, args) end)

    kind =
      cond do
        reference === mine -> :same
        user_owns?(args) -> :expected
        true -> :diffs
      end

    stats = Process.get({:stats, label}, %{same: 0, diffs: 0, expected: 0})
    Process.put({:stats, label}, Map.update!(stats, kind, &(&1 + 1)))

    if kind != :same and length(Process.get({kind, label}, [])) < @examples,
      do: Process.put({kind, label}, Process.get({kind, label}, []) ++ [{args, reference, mine}])
  end

  # A User among the arguments whose id is the account of a live link among them.
  defp user_owns?(args) do
    terms = flatten(args)
    ids = for %{__struct__: @user, id: id} <- terms, id != nil, do: id

    Enum.any?(terms, fn
      # `==`, as the seeds compare owners: a float account is its integer's.
      %{__struct__: @link, revoked_at: nil, account_id: id} -> Enum.any?(ids, &(&1 == id))
      _ -> false
    end)
  end

  defp flatten(term) when is_map(term), do: [term | Enum.flat_map(Map.values(term), &flatten/1)]
  defp flatten([head | tail]), do: flatten(head) ++ flatten(tail)
  defp flatten(_term), do: []

  # Near misses of a word: case changes, affixes, truncations, byte flips,
  # insertions and deletions.
  def mutations(word) do
    size = byte_size(word)

    flip = fn pos ->
      <<binary_part(word, 0, pos)::binary,
        Bitwise.bxor(:binary.at(word, pos), 1 + :rand.uniform(254))>> <>
        binary_part(word, pos + 1, size - pos - 1)
    end

    [String.upcase(word), String.capitalize(word), word <> word] ++
      for(
        affix <- [" ", "_", "x", "s", "\t", "\n", <<0>>, <<255>>, "é", "-", ":"],
        w <- [affix <> word, word <> affix],
        do: w
      ) ++
      for(
        n <- 0..(size - 1)//1,
        w <- [binary_part(word, 0, n), binary_part(word, size - n, n)],
        do: w
      ) ++
      for(pos <- 0..(size - 1)//1, do: flip.(pos)) ++
      for(
        pos <- 0..(size - 1)//1,
        do: binary_part(word, 0, pos) <> binary_part(word, pos + 1, size - pos - 1)
      )
  end

  def run(calls, seed) do
    Gen.seed(seed)
    words = Gen.words()

    inputs =
      Enum.uniq(words ++ Enum.flat_map(words, &mutations/1)) ++ Enum.map(words, &String.to_atom/1)

    for {_, _, _, 1} = pair <- pairs(), input <- inputs, do: check(pair, [input])

    for {module, _, fun, arity} = pair <- pairs(),
        _ <- 1..calls//1,
        do: check(pair, Gen.args(module, fun, arity))
  end

  def report do
    labels = for {{:stats, label}, _} <- Process.get(), do: label
    width = labels |> Enum.map(&String.length/1) |> Enum.max()
    IO.puts("\n== parity: ours vs seed ==")

    totals =
      for label <- Enum.sort(labels), reduce: %{same: 0, diffs: 0, expected: 0} do
        acc ->
          s = Process.get({:stats, label})
          calls = s.same + s.diffs + s.expected

          IO.puts(
            "#{String.pad_trailing(label, width)}  calls: #{pad(calls)}  differences: #{pad(s.diffs)}" <>
              if(s.expected > 0, do: "  expected: #{s.expected}", else: "")
          )

          Map.merge(acc, s, fn _, a, b -> a + b end)
      end

    for {kind, title} <- [
          diffs: "differences",
          expected: "expected (upstream.md User-id ownership)"
        ],
        label <- Enum.sort(labels),
        examples = Process.get({kind, label}, []),
        examples != [] do
      IO.puts("\n-- #{label}: first #{length(examples)} #{title}")

      for {args, reference, ours} <- examples do
        IO.puts("  args: #{show(args)}\n    seed: #{show(reference)}\n    ours: #{show(ours)}")
      end
    end

    IO.puts("""

    total compared calls: #{totals.same + totals.diffs + totals.expected}
    differences: #{totals.diffs}
    expected (upstream.md User-id ownership): #{totals.expected}\
    """)

    totals.diffs
  end

  defp pad(n), do: String.pad_leading(Integer.to_string(n), 7)
  defp show(term), do: inspect(term, limit: 12, printable_limit: 80, structs: true)
end

{calls, seed} =
  case Enum.map(System.argv(), &String.to_integer/1) do
    [] -> {4_000, 20_260_825}
    [calls] -> {calls, 20_260_825}
    [calls, seed | _] -> {calls, seed}
  end

Parity.run(calls, seed)
diffs = Parity.report()
IO.puts("elapsed: #{System.monotonic_time(:millisecond) - started} ms")
if diffs > 0, do: System.halt(1)
