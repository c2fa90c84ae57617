defmodule OpenAgentsPolicy.Test.NifTrace do
  @moduledoc false
  # What a call hands the NIF library: `fun`'s answer and every
  # `OpenAgentsPolicy.Native` call it made, `{name, args}`, traced in a process
  # of its own (a process is not its own tracer). The tests that hold the
  # boundary's bound (no large binary, no account id, no deep term reaches a
  # NIF, so no NIF call holds a normal scheduler long) observe it here rather
  # than time it.
  alias OpenAgentsPolicy.Native

  def traced(fun) do
    parent = self()

    pid =
      spawn_link(fn ->
        receive do
          :go -> send(parent, {:answer, self(), fun.()})
        end
      end)

    :erlang.trace_pattern({Native, :_, :_}, true, [:local])
    :erlang.trace(pid, true, [:call])
    send(pid, :go)

    answer =
      receive do
        {:answer, ^pid, answer} -> answer
      after
        60_000 -> raise "no answer in 60 s"
      end

    ref = :erlang.trace_delivered(pid)

    receive do
      {:trace_delivered, ^pid, ^ref} -> :ok
    end

    :erlang.trace_pattern({Native, :_, :_}, false, [:local])
    {answer, called(pid, [])}
  end

  defp called(pid, acc) do
    receive do
      {:trace, ^pid, :call, {Native, name, args}} -> called(pid, [{name, args} | acc])
    after
      0 -> Enum.reverse(acc)
    end
  end

  @doc "The largest term inside `term`: `{bytes of its largest binary, its deepest nesting, its most elements}`."
  def largest(term), do: largest(term, 0, {0, 0, 0})

  defp largest(term, depth, {bytes, deep, wide}) when is_bitstring(term),
    do: {max(bytes, byte_size(term)), max(deep, depth), wide}

  defp largest(term, depth, acc) when is_map(term),
    do: nested(Map.to_list(term), map_size(term), depth, acc)

  defp largest(term, depth, acc) when is_tuple(term),
    do: nested(Tuple.to_list(term), tuple_size(term), depth, acc)

  defp largest([_ | _] = term, depth, acc) do
    items = list_items(term, [])
    nested(items, length(items), depth, acc)
  end

  defp largest(term, depth, {bytes, deep, wide}) when is_integer(term),
    do: {max(bytes, div(bit_size(:binary.encode_unsigned(abs(term))), 8)), max(deep, depth), wide}

  defp largest(_term, depth, {bytes, deep, wide}), do: {bytes, max(deep, depth), wide}

  defp nested(items, count, depth, {bytes, deep, wide}),
    do: Enum.reduce(items, {bytes, deep, max(wide, count)}, &largest(&1, depth + 1, &2))

  # A list's elements, and the tail of an improper one.
  defp list_items([item | rest], acc), do: list_items(rest, [item | acc])
  defp list_items([], acc), do: acc
  defp list_items(tail, acc), do: [tail | acc]
end
