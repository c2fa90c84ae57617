# Measurement harness shared by the bench scripts. Not part of the library.
#
# A "side" is one implementation of a workload (the seed, the project, a raw
# NIF call, ...). Every side is compiled into its own module from the same
# template, so all sides pay exactly the same loop overhead:
#
#     defmodule Bench.Gen.<case>.<side> do
#       def run(n), do: loop(n)
#       defp loop(0), do: :ok
#       defp loop(n) do
#         <expr 1>; <expr 2>; ... <expr k>     # unrolled: k calls per iteration
#         loop(n - 1)
#       end
#       def once, do: [<expr 1>, ..., <expr k>] # for the parity check
#     end
#
# Inputs are embedded as literals (Macro.escape), identically on every side.
# Each sample runs in a fresh process (so no side inherits another's heap),
# timed with :erlang.monotonic_time(:nanosecond) around run(n).
defmodule Bench.Harness do
  @moduledoc false

  @type spec ::
          {:calls, [{module(), atom(), [term()]}]}
          | {:quoted, defs :: [Macro.t()], exprs :: [Macro.t()]}

  # ── code generation ────────────────────────────────────────────────────

  @doc "A side that calls `fun` of `mod` once per argument list, unrolled."
  def calls(mod, fun, arglists), do: {:calls, Enum.map(arglists, &{mod, fun, &1})}

  @doc "Compiles `spec` as module `name`. Returns `{name, calls_per_iteration}`."
  def compile(name, spec) do
    {defs, exprs} = quoted(spec)

    ast =
      quote do
        defmodule unquote(name) do
          @moduledoc false
          def run(n), do: loop(n)
          defp loop(0), do: :ok

          defp loop(n) do
            unquote({:__block__, [], exprs})
            loop(n - 1)
          end

          def once, do: unquote(exprs)
          unquote_splicing(defs)
        end
      end

    Code.compiler_options(ignore_module_conflict: true)
    Code.compile_quoted(ast, "bench_generated_#{inspect(name)}")
    {name, length(exprs)}
  end

  defp quoted({:calls, calls}) do
    exprs =
      for {m, f, args} <- calls do
        quote do: unquote(m).unquote(f)(unquote_splicing(Enum.map(args, &Macro.escape/1)))
      end

    {[], exprs}
  end

  defp quoted({:quoted, defs, exprs}), do: {defs, exprs}

  @doc """
  The host's page workload as a side: per attempt, as the host does it (never
  batched), `effective_tier/2` on the record, then `project/3` of the attempt
  source and of the work job source at that tier; the results are collected
  as a page would be. `eff` and `proj` are the modules called.
  """
  def page(eff, proj, attempts, viewer) do
    defs = [
      quote do
        defp page([], _viewer, acc), do: acc

        defp page([{record, source, job} | rest], viewer, acc) do
          tier = unquote(eff).effective_tier(record, viewer)
          attempt = unquote(proj).project(:attempt, source, tier)
          work_job = unquote(proj).project(:work_job, job, tier)
          page(rest, viewer, [{tier, attempt, work_job} | acc])
        end
      end
    ]

    {:quoted, defs,
     [quote(do: page(unquote(Macro.escape(attempts)), unquote(Macro.escape(viewer)), []))]}
  end

  # ── timing ─────────────────────────────────────────────────────────────

  @doc "Nanoseconds for one `mod.run(n)`, in a fresh process."
  def sample(mod, n) do
    parent = self()
    ref = make_ref()

    {_pid, mref} =
      :erlang.spawn_opt(
        fn ->
          t0 = :erlang.monotonic_time(:nanosecond)
          mod.run(n)
          t1 = :erlang.monotonic_time(:nanosecond)
          send(parent, {ref, t1 - t0})
        end,
        [:monitor]
      )

    receive do
      {^ref, dt} ->
        receive do
          {:DOWN, ^mref, _, _, _} -> dt
        end

      {:DOWN, ^mref, _, _, reason} ->
        raise "benchmark sample of #{inspect(mod)} died: #{inspect(reason)}"
    end
  end

  @doc "Iterations of `mod` that take about `target_ns`."
  def calibrate(mod, target_ns) do
    sample(mod, 1)
    grow(mod, 1, target_ns)
  end

  defp grow(mod, n, target_ns) do
    t = sample(mod, n)

    cond do
      t >= div(target_ns, 8) or n >= 4_294_967_296 -> max(1, round(n * target_ns / max(t, 1)))
      t < div(target_ns, 256) -> grow(mod, n * 16, target_ns)
      true -> grow(mod, n * 4, target_ns)
    end
  end

  @doc """
  Measures `sides` (`[{label, {module, calls_per_iteration}}]`): each side is
  calibrated to `target_ms`, then `rounds` rounds are run, each round taking
  one sample of every side, in an order rotated every round (A B, B A, ...).
  Returns `%{label => [ns_per_call, ...]}`, one entry per round, round order.
  """
  def measure(sides, rounds, target_ms) do
    target_ns = target_ms * 1_000_000
    iterations = Map.new(sides, fn {label, {mod, _k}} -> {label, calibrate(mod, target_ns)} end)
    count = length(sides)

    per_round =
      for r <- 0..(rounds - 1) do
        order = rotate(sides, rem(r, count))

        Map.new(order, fn {label, {mod, k}} ->
          n = Map.fetch!(iterations, label)
          {label, sample(mod, n) / (n * k)}
        end)
      end

    Map.new(sides, fn {label, _} -> {label, Enum.map(per_round, &Map.fetch!(&1, label))} end)
  end

  defp rotate(list, 0), do: list
  defp rotate([h | t], k), do: rotate(t ++ [h], k - 1)

  # ── statistics and formatting ──────────────────────────────────────────

  def median([]), do: nil

  def median(list) do
    sorted = Enum.sort(list)
    n = length(sorted)
    mid = div(n, 2)

    if rem(n, 2) == 1,
      do: Enum.at(sorted, mid),
      else: (Enum.at(sorted, mid - 1) + Enum.at(sorted, mid)) / 2
  end

  def ns(nil), do: "—"
  def ns(x) when x >= 100, do: group(round(x))
  def ns(x), do: :erlang.float_to_binary(x / 1, decimals: 1)

  def ratio(x) when x >= 100, do: :erlang.float_to_binary(x / 1, decimals: 0)
  def ratio(x) when x >= 10, do: :erlang.float_to_binary(x / 1, decimals: 1)
  def ratio(x) when x >= 1, do: :erlang.float_to_binary(x / 1, decimals: 2)
  def ratio(x), do: :erlang.float_to_binary(x / 1, decimals: 3)

  defp group(int) do
    int
    |> Integer.to_string()
    |> String.reverse()
    |> String.graphemes()
    |> Enum.chunk_every(3)
    |> Enum.join(",")
    |> String.reverse()
  end

  @doc "Prints rows (lists of strings) as an aligned table; `right` lists right-aligned column indexes."
  def table(header, rows, right) do
    all = [header | rows]

    widths =
      for i <- 0..(length(header) - 1),
          do: all |> Enum.map(&String.length(Enum.at(&1, i))) |> Enum.max()

    line = fn row ->
      row
      |> Enum.zip(widths)
      |> Enum.with_index()
      |> Enum.map(fn {{cell, w}, i} ->
        if i in right, do: String.pad_leading(cell, w), else: String.pad_trailing(cell, w)
      end)
      |> Enum.join("  ")
      |> String.trim_trailing()
    end

    IO.puts(line.(header))
    IO.puts(widths |> Enum.map(&String.duplicate("-", &1)) |> Enum.join("  "))
    Enum.each(rows, &IO.puts(line.(&1)))
  end

  # ── environment ────────────────────────────────────────────────────────

  def loadavg do
    case File.read("/proc/loadavg") do
      {:ok, text} -> text |> String.split() |> Enum.take(3) |> Enum.join(" ")
      _ -> "?"
    end
  end

  def load1 do
    case File.read("/proc/loadavg") do
      {:ok, text} -> text |> String.split() |> hd() |> String.to_float()
      _ -> 0.0
    end
  end

  @doc """
  With BENCH_MAX_LOAD set, waits (up to BENCH_MAX_WAIT seconds, default 300)
  until the 1-minute load average is at most that, so a final run starts on a
  quiet machine.
  """
  def wait_for_quiet do
    case System.get_env("BENCH_MAX_LOAD") do
      nil ->
        :ok

      max ->
        {max, _} = Float.parse(max)

        deadline =
          System.monotonic_time(:second) +
            String.to_integer(System.get_env("BENCH_MAX_WAIT", "300"))

        wait(max, deadline)
    end
  end

  defp wait(max, deadline) do
    load = load1()

    cond do
      load <= max ->
        :ok

      System.monotonic_time(:second) >= deadline ->
        IO.puts("(load #{load} still above #{max}; starting anyway)")

      true ->
        IO.puts("(load #{load} above #{max}; waiting)")
        Process.sleep(10_000)
        wait(max, deadline)
    end
  end

  @doc "The project's git revision, and whether lib/ or native/ differ from it."
  def revision do
    root = Path.expand("../..", __DIR__)

    case System.cmd("git", ["rev-parse", "--short", "HEAD"], cd: root, stderr_to_stdout: true) do
      {rev, 0} ->
        {status, _} =
          System.cmd(
            "git",
            [
              "status",
              "--porcelain",
              "--",
              "lib",
              "native",
              "mix.exs",
              "Cargo.toml",
              "Cargo.lock"
            ],
            cd: root
          )

        dirty = status |> String.split("\n", trim: true) |> length()

        "revision #{String.trim(rev)}" <>
          if(dirty > 0,
            do: " + #{dirty} uncommitted change(s) in lib/native",
            else: " (lib/native clean)"
          )

      _ ->
        "revision unknown"
    end
  end

  def env_int(name, default) do
    case System.get_env(name) do
      nil -> default
      value -> String.to_integer(value)
    end
  end
end
