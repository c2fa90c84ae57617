defmodule OpenAgentsPolicy.Test.Gen do
  @moduledoc false
  # A small seeded generator for property-style tests (the project has no
  # StreamData). `check/4` runs a property over `runs` generated inputs from a
  # seed derived from ExUnit's own `--seed` and the property's name, so a
  # failure reproduces with the same `mix test --seed N` and says which input
  # and which seed failed.

  @doc """
  Runs `property` on `runs` values drawn by `generate`. `property` fails by
  raising (an `assert` inside it) or by returning `false`; on failure the
  input and the seed are in the message.
  """
  def check(name, runs, generate, property) do
    seed = seed(name)
    :rand.seed(:exsss, seed)

    Enum.each(1..runs, fn run ->
      input = generate.()

      try do
        if property.(input) == false,
          do: raise(ExUnit.AssertionError, message: "property #{inspect(name)} returned false")
      rescue
        error ->
          context =
            "  property: #{name}\n  run #{run} of #{runs}, :rand seed #{inspect(seed)} " <>
              "(mix test --seed #{ExUnit.configuration()[:seed]})\n" <>
              "  input: #{inspect(input, limit: :infinity)}"

          case error do
            %ExUnit.AssertionError{} ->
              reraise %{error | message: error.message <> "\n" <> context}, __STACKTRACE__

            other ->
              message = "raised " <> Exception.format(:error, other, __STACKTRACE__)
              reraise ExUnit.AssertionError, [message: message <> context], __STACKTRACE__
          end
      end
    end)
  end

  defp seed(name) do
    {ExUnit.configuration()[:seed] || 0, :erlang.phash2(name), 0x5EED}
  end

  @doc "One element of `list`."
  def pick(list), do: Enum.at(list, :rand.uniform(length(list)) - 1)

  @doc "A boolean."
  def boolean, do: :rand.uniform(2) == 1

  @doc "An integer in `0..max`."
  def upto(max), do: :rand.uniform(max + 1) - 1

  @doc """
  A binary: sometimes one of `words`, often a near miss of one (case, padding,
  a stray byte, truncation, a neighbour's suffix), otherwise random bytes or
  random UTF-8. Empty and invalid UTF-8 binaries are included.
  """
  def binary(words \\ []) do
    case {words, upto(9)} do
      {[_ | _], n} when n <= 2 -> pick(words)
      {[_ | _], n} when n <= 5 -> near_miss(pick(words))
      {_, 6} -> random_bytes(upto(12))
      {_, 7} -> random_utf8(upto(8))
      {_, 8} -> ""
      _ -> random_bytes(upto(3)) <> pick(["", "\0", <<0xFF>>, " ", "é"])
    end
  end

  defp near_miss(word) do
    case upto(8) do
      0 -> String.upcase(word)
      1 -> String.capitalize(word)
      2 -> " " <> word
      3 -> word <> " "
      4 -> word <> <<0>>
      5 -> binary_part(word, 0, max(byte_size(word) - 1, 0))
      6 -> word <> "s"
      7 -> <<0xFF>> <> word
      8 -> String.replace(word, "_", "-")
    end
  end

  defp random_bytes(n), do: for(_ <- 1..n//1, into: "", do: <<upto(255)>>)

  defp random_utf8(n) do
    for _ <- 1..n//1, into: "" do
      <<pick([upto(0x7F), 0xE9, 0x4E2D, 0x1F600, 0x2028])::utf8>>
    end
  end

  @doc """
  Any term, down to `depth` levels of nesting: atoms (including the tier words
  and booleans), numbers, binaries, bitstrings, charlists, lists, tuples, maps.
  """
  def term(depth \\ 2) do
    case upto(if depth > 0, do: 11, else: 7) do
      0 -> nil
      1 -> boolean()
      2 -> pick([:dark, :pulse, :ledger, :glass, :bogus, :GLASS, :active, :box, :computer])
      3 -> upto(1000) - 500
      4 -> :rand.uniform() * 10
      5 -> binary(~w(dark pulse ledger glass box computer active running))
      6 -> pick([<<1::3>>, <<255, 1::1>>])
      7 -> pick([~c"glass", ~c"active", ~c"box"])
      8 -> for(_ <- 1..upto(3)//1, do: term(depth - 1))
      9 -> List.to_tuple(for(_ <- 1..upto(3)//1, do: term(depth - 1)))
      _ -> Map.new(1..upto(3)//1, fn _ -> {term(depth - 1), term(depth - 1)} end)
    end
  end
end
