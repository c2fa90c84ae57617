defmodule OpenAgentsPolicy.Test.JSON do
  @moduledoc false
  # A small JSON reader and writer, for holding what the Rust core's
  # serde_json writes to what the Elixir side returns. The project has no
  # hex packages (no Jason), and this is all the tests need: RFC 8259 values,
  # with objects read either as maps or, to see key order, as
  # `{:object, [{key, value}]}`.

  @doc "Decodes `json`, objects as maps. Raises `ArgumentError` on anything that is not JSON."
  def decode!(json) when is_binary(json), do: json |> decode_ordered!() |> to_maps()

  @doc "Decodes `json`, objects as `{:object, [{key, value}, ...]}` in document order."
  def decode_ordered!(json) when is_binary(json) do
    case json |> skip() |> value() do
      {value, rest} ->
        case skip(rest) do
          "" -> value
          trailing -> raise ArgumentError, "trailing bytes after JSON value: #{inspect(trailing)}"
        end
    end
  end

  @doc "The keys of the top-level object of `json`, in document order."
  def keys!(json) do
    case decode_ordered!(json) do
      {:object, pairs} -> Enum.map(pairs, &elem(&1, 0))
      other -> raise ArgumentError, "not a JSON object: #{inspect(other)}"
    end
  end

  @doc """
  Encodes `value` compactly, as serde_json does: `{:object, pairs}` keeps its
  order, a map is written with its keys sorted, `nil` is `null`.
  """
  def encode(nil), do: "null"
  def encode(true), do: "true"
  def encode(false), do: "false"
  def encode(value) when is_integer(value), do: Integer.to_string(value)
  def encode(value) when is_binary(value), do: string(value)
  def encode(value) when is_atom(value), do: value |> Atom.to_string() |> string()
  def encode(list) when is_list(list), do: "[" <> Enum.map_join(list, ",", &encode/1) <> "]"

  def encode({:object, pairs}),
    do:
      "{" <>
        Enum.map_join(pairs, ",", fn {k, v} -> string(to_string(k)) <> ":" <> encode(v) end) <>
        "}"

  def encode(map) when is_map(map),
    do: encode({:object, map |> Enum.map(fn {k, v} -> {to_string(k), v} end) |> Enum.sort()})

  defp string(text) do
    escaped =
      for <<char::utf8 <- text>>, into: "" do
        case char do
          ?" -> "\\\""
          ?\\ -> "\\\\"
          ?\n -> "\\n"
          ?\r -> "\\r"
          ?\t -> "\\t"
          ?\b -> "\\b"
          ?\f -> "\\f"
          c when c < 0x20 -> "\\u" <> String.pad_leading(Integer.to_string(c, 16), 4, "0")
          c -> <<c::utf8>>
        end
      end

    "\"" <> escaped <> "\""
  end

  defp to_maps({:object, pairs}), do: Map.new(pairs, fn {k, v} -> {k, to_maps(v)} end)
  defp to_maps(list) when is_list(list), do: Enum.map(list, &to_maps/1)
  defp to_maps(value), do: value

  # ── reader ────────────────────────────────────────────────────────────

  defp skip(<<c, rest::binary>>) when c in [?\s, ?\t, ?\n, ?\r], do: skip(rest)
  defp skip(rest), do: rest

  defp value(<<"null", rest::binary>>), do: {nil, rest}
  defp value(<<"true", rest::binary>>), do: {true, rest}
  defp value(<<"false", rest::binary>>), do: {false, rest}
  defp value(<<?", rest::binary>>), do: string_body(rest, [])
  defp value(<<?{, rest::binary>>), do: object(skip(rest), [])
  defp value(<<?[, rest::binary>>), do: array(skip(rest), [])
  defp value(<<c, _::binary>> = text) when c == ?- or c in ?0..?9, do: number(text)
  defp value(text), do: raise(ArgumentError, "unexpected JSON at #{inspect(text)}")

  defp object(<<?}, rest::binary>>, []), do: {{:object, []}, rest}

  defp object(<<?", rest::binary>>, acc) do
    {key, rest} = string_body(rest, [])

    case skip(rest) do
      <<?:, rest::binary>> ->
        {value, rest} = rest |> skip() |> value()

        case skip(rest) do
          <<?,, rest::binary>> -> object(skip(rest), [{key, value} | acc])
          <<?}, rest::binary>> -> {{:object, Enum.reverse([{key, value} | acc])}, rest}
          other -> raise ArgumentError, "expected , or } in object at #{inspect(other)}"
        end

      other ->
        raise ArgumentError, "expected : in object at #{inspect(other)}"
    end
  end

  defp object(text, _acc), do: raise(ArgumentError, "expected a key at #{inspect(text)}")

  defp array(<<?], rest::binary>>, []), do: {[], rest}

  defp array(text, acc) do
    {value, rest} = value(text)

    case skip(rest) do
      <<?,, rest::binary>> -> array(skip(rest), [value | acc])
      <<?], rest::binary>> -> {Enum.reverse([value | acc]), rest}
      other -> raise ArgumentError, "expected , or ] in array at #{inspect(other)}"
    end
  end

  defp string_body(<<?", rest::binary>>, acc),
    do: {acc |> Enum.reverse() |> IO.iodata_to_binary(), rest}

  defp string_body(<<?\\, escape, rest::binary>>, acc) when escape != ?u do
    char =
      case escape do
        ?" -> "\""
        ?\\ -> "\\"
        ?/ -> "/"
        ?b -> "\b"
        ?f -> "\f"
        ?n -> "\n"
        ?r -> "\r"
        ?t -> "\t"
        other -> raise ArgumentError, "bad escape \\#{<<other>>}"
      end

    string_body(rest, [char | acc])
  end

  defp string_body(<<"\\u", code::binary-size(4), rest::binary>>, acc) do
    case {String.to_integer(code, 16), rest} do
      {high, <<"\\u", low::binary-size(4), rest::binary>>} when high in 0xD800..0xDBFF ->
        low = String.to_integer(low, 16)
        char = 0x10000 + (high - 0xD800) * 0x400 + (low - 0xDC00)
        string_body(rest, [<<char::utf8>> | acc])

      {char, rest} ->
        string_body(rest, [<<char::utf8>> | acc])
    end
  end

  defp string_body(<<c, _::binary>>, _acc) when c < 0x20,
    do: raise(ArgumentError, "unescaped control character in JSON string")

  defp string_body(<<c, rest::binary>>, acc), do: string_body(rest, [c | acc])
  defp string_body(<<>>, _acc), do: raise(ArgumentError, "unterminated JSON string")

  defp number(text) do
    [literal] = Regex.run(~r/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/, text)
    rest = binary_part(text, byte_size(literal), byte_size(text) - byte_size(literal))

    parsed =
      if String.contains?(literal, [".", "e", "E"]),
        do: literal |> Float.parse() |> elem(0),
        else: String.to_integer(literal)

    {parsed, rest}
  end
end
