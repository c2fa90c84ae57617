# Helpers the bench scripts share: Benchee run quietly, medians, aligned
# tables, the revision measured. Every timing of seed against library is
# Benchee's (bench/run.exs, bench/host_requests.exs).
defmodule Bench.Harness do
  @moduledoc false

  @doc """
  Runs Benchee on `jobs` (a map of name to function) and returns each job's
  run-time statistics (ns) by name. Each job gets BENCH_TIME seconds
  (default 0.4; `opts` may say otherwise), after a quarter of that in warmup,
  with the function-call overhead measured and subtracted. Benchee prints
  that overhead per scenario; the caller's table is the report, so Benchee's
  output goes to a sink.
  """
  def benchee(jobs, opts \\ []) do
    # "1" as well as "0.4".
    {time, ""} = Float.parse(System.get_env("BENCH_TIME", "0.4"))
    {:ok, sink} = StringIO.open("")
    leader = Process.group_leader()
    Process.group_leader(self(), sink)

    defaults = [
      warmup: time / 4,
      time: time,
      memory_time: 0,
      measure_function_call_overhead: true,
      formatters: [],
      print: [benchmarking: false, configuration: false, fast_warning: false]
    ]

    suite =
      try do
        Benchee.run(jobs, Keyword.merge(defaults, opts))
      after
        Process.group_leader(self(), leader)
      end

    Map.new(suite.scenarios, &{&1.name, &1.run_time_data.statistics})
  end

  def median([]), do: nil

  def median(list) do
    sorted = Enum.sort(list)
    mid = div(length(sorted), 2)

    if rem(length(sorted), 2) == 1,
      do: Enum.at(sorted, mid),
      else: Enum.sum(Enum.slice(sorted, mid - 1, 2)) / 2
  end

  def ns(nil), do: "—"
  def ns(x) when x >= 100, do: x |> round() |> Integer.to_string() |> group()
  def ns(x), do: :erlang.float_to_binary(x / 1, decimals: 1)

  def ratio(x) when x >= 10, do: :erlang.float_to_binary(x / 1, decimals: 1)
  def ratio(x), do: :erlang.float_to_binary(x / 1, decimals: 2)

  defp group(digits), do: Regex.replace(~r/\B(?=(\d{3})+$)/, digits, ",")

  @doc "Prints rows (lists of strings) aligned; `right` lists right-aligned column indexes."
  def table(header, rows, right) do
    widths =
      Enum.zip_with([header | rows], fn cells ->
        cells |> Enum.map(&String.length/1) |> Enum.max()
      end)

    line = fn row ->
      Enum.zip([row, widths, 0..(length(row) - 1)])
      |> Enum.map_join("  ", fn {cell, w, i} ->
        if i in right, do: String.pad_leading(cell, w), else: String.pad_trailing(cell, w)
      end)
      |> String.trim_trailing()
    end

    IO.puts(line.(header))
    IO.puts(Enum.map_join(widths, "  ", &String.duplicate("-", &1)))
    Enum.each(rows, &IO.puts(line.(&1)))
  end

  def loadavg do
    case File.read("/proc/loadavg") do
      {:ok, text} -> text |> String.split() |> Enum.take(3) |> Enum.join(" ")
      _ -> "?"
    end
  end

  @doc "The git revision measured, and whether the product differs from it."
  def revision do
    root = Path.expand("../..", __DIR__)
    git = &System.cmd("git", &1, cd: root, stderr_to_stdout: true)

    case git.(["rev-parse", "--short", "HEAD"]) do
      {rev, 0} ->
        {status, 0} = git.(~w(status --porcelain -- lib native mix.exs Cargo.toml Cargo.lock))

        dirty =
          if status == "", do: " (lib/native clean)", else: " + uncommitted changes in lib/native"

        "revision #{String.trim(rev)}" <> dirty

      _ ->
        "revision unknown"
    end
  end

  def env_int(name, default), do: String.to_integer(System.get_env(name, "#{default}"))
end
