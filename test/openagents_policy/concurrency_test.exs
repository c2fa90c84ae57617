defmodule OpenAgentsPolicy.ConcurrencyTest do
  # Thousands of processes calling every public function of the three modules
  # at once each get the answer the same call gave alone, before any of them
  # ran (value or exception class, and the same host effects): the NIF keeps
  # no state between calls that a concurrent call could disturb, and the host
  # calls (Accounts.admin?/1, Repositories.member?/2, Repo.insert/1) are made
  # in the caller's own process. Each answer also holds its function's
  # invariants (test/support/fuzz.ex).
  use ExUnit.Case, async: true

  alias OpenAgentsPolicy.Fuzz
  alias OpenAgentsPolicy.Fuzz.Gen

  @seed 4_242
  @cases_per_function 12
  @processes 5_000
  @calls_per_process 40

  # Inputs for every public function, generated as the fuzzer generates them.
  # A case whose answer is a NIF panic is left out: it would only repeat,
  # 200_000 times, a failure the fuzz test already reports.
  setup_all do
    Gen.seed(@seed)

    cases =
      for {module, fun, arity} <- Fuzz.functions(),
          _ <- 1..@cases_per_function,
          args = Gen.args(module, fun, arity),
          not match?(
            {:raise, %ErlangError{}, _},
            Fuzz.outcome(fn -> apply(module, fun, args) end)
          ),
          do: {{module, fun, args}, Fuzz.observe({module, fun, args})}

    # In persistent_term, so 5_000 processes read the cases (1 MB binaries,
    # maps of 2_000 keys) without each copying them onto its heap.
    key = {__MODULE__, make_ref()}
    :persistent_term.put(key, List.to_tuple(cases))
    on_exit(fn -> :persistent_term.erase(key) end)
    %{key: key, count: length(cases)}
  end

  # Runs `@calls_per_process` cases starting at `offset`, each observed in
  # the calling process (host calls and their side effects included) and
  # held to what it did alone, then to its invariants; returns the
  # disagreements.
  defp run_slice(key, count, offset) do
    cases = :persistent_term.get(key)

    for i <- offset..(offset + @calls_per_process - 1),
        {call, alone} = elem(cases, rem(i, count)),
        disagreement = disagreement(call, alone),
        disagreement != nil,
        do: disagreement
  end

  defp disagreement(call, alone) do
    case Fuzz.observe(call) do
      ^alone ->
        case Fuzz.check(call) do
          {_class, nil} -> nil
          {_class, {_why, text}} -> text
        end

      concurrent ->
        {call, alone: alone, concurrent: concurrent}
    end
  end

  defp assert_none(disagreements) do
    assert disagreements == [],
           "#{length(disagreements)} answers differed from the same call alone, e.g. " <>
             inspect(Enum.take(disagreements, 3), limit: 8, printable_limit: 64)
  end

  test "every function was covered by the cases", %{count: count} do
    assert count >= div(length(Fuzz.functions()) * @cases_per_function, 2)
  end

  test "#{@processes} processes released at once each get the answer the call gave alone", %{
    key: key,
    count: count
  } do
    parent = self()

    tasks =
      for p <- 1..@processes do
        Task.async(fn ->
          send(parent, {:ready, self()})

          receive do
            :go -> run_slice(key, count, p * 7)
          end
        end)
      end

    # Every process is alive and waiting before any of them calls.
    pids = for _ <- tasks, do: receive(do: ({:ready, pid} -> pid))
    assert length(pids) == @processes
    Enum.each(pids, &send(&1, :go))

    tasks |> Task.await_many(120_000) |> List.flatten() |> assert_none()
  end

  test "#{@processes} processes through Task.async_stream each get the answer the call gave alone",
       %{
         key: key,
         count: count
       } do
    1..@processes
    |> Task.async_stream(&run_slice(key, count, &1 * 13),
      max_concurrency: 1_000,
      ordered: false,
      timeout: 120_000
    )
    |> Enum.flat_map(fn {:ok, disagreements} -> disagreements end)
    |> assert_none()
  end
end
