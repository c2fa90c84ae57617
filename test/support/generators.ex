defmodule OpenAgentsPolicy.Test.Generators do
  @moduledoc false
  # StreamData generators for the property tests (ExUnitProperties'
  # `check all`). StreamData draws from ExUnit's own seed, so a failure
  # reproduces with the same `mix test --seed N`, and it shrinks a failing
  # input to the smallest one that still fails before reporting it.
  #
  # The inputs are biased the way an attacker or a careless caller would
  # bias them: towards the words the library reads and their near misses,
  # not uniformly over all binaries, where a vocabulary word would almost
  # never come up.

  import StreamData

  # Near misses of a word: each turns a word the library reads into one it
  # must not read as that word (the last leaves a word without `_` as it
  # is). A function, because closures cannot be module attributes.
  defp near_misses do
    [
      &String.upcase/1,
      &String.capitalize/1,
      &(" " <> &1),
      &(&1 <> " "),
      &(&1 <> <<0>>),
      &binary_part(&1, 0, max(byte_size(&1) - 1, 0)),
      &(&1 <> "s"),
      &(<<0xFF>> <> &1),
      &String.replace(&1, "_", "-")
    ]
  end

  @doc """
  A binary: sometimes one of `words`, often a near miss of one (case,
  padding, a stray byte, truncation, a neighbour's suffix), otherwise random
  bytes or random UTF-8 (line separators and astral characters included).
  Empty and invalid UTF-8 binaries are included.
  """
  @spec word([String.t()]) :: StreamData.t(binary())
  def word(words \\ []) do
    vocabulary =
      case words do
        [] -> []
        _ -> [{3, member_of(words)}, {3, near_miss(words)}]
      end

    frequency(
      vocabulary ++
        [
          {1, binary(max_length: 12)},
          {1, string([0..0x7F, 0xE9, 0x4E2D, 0x1F600, 0x2028], max_length: 8)},
          {1, constant("")},
          {2, map({binary(max_length: 3), member_of(["", "\0", <<0xFF>>, " ", "é"])}, &join/1)}
        ]
    )
  end

  defp near_miss(words) do
    map({member_of(words), member_of(near_misses())}, fn {word, miss} -> miss.(word) end)
  end

  defp join({left, right}), do: left <> right

  @doc """
  Any term, down to `depth` levels of nesting: atoms (the tier words,
  booleans, vocabulary words as atoms, strangers), integers, floats, binaries
  (as `word/1` draws them), bitstrings, charlists, lists, tuples and maps.
  """
  @spec term(non_neg_integer()) :: StreamData.t(term())
  def term(depth \\ 2)

  def term(0), do: leaf()

  def term(depth) when depth > 0 do
    child = term(depth - 1)
    pairs = list_of({child, child}, max_length: 3)

    frequency([
      {8, leaf()},
      {1, list_of(child, max_length: 3)},
      {1, map(list_of(child, max_length: 3), &List.to_tuple/1)},
      {2, map(pairs, &Map.new/1)}
    ])
  end

  defp leaf do
    one_of([
      constant(nil),
      boolean(),
      member_of([:dark, :pulse, :ledger, :glass, :bogus, :GLASS, :active, :box, :computer]),
      integer(-500..500),
      # Not float/1: bounded, it slows down as the generation size grows.
      map(integer(0..10_000_000), &(&1 / 1_000_000)),
      word(~w(dark pulse ledger glass box computer active running)),
      member_of([<<1::3>>, <<255, 1::1>>]),
      member_of([~c"glass", ~c"active", ~c"box"])
    ])
  end

  @doc "One of `words` three times in four, otherwise any term (`term/1` at depth 1)."
  @spec word_or_term([term()]) :: StreamData.t(term())
  def word_or_term(words), do: frequency([{3, member_of(words)}, {1, term(1)}])
end
