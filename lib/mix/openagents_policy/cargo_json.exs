defmodule Mix.OpenAgentsPolicy.CargoJSON do
  @moduledoc """
  A JSON reader for cargo's `--message-format=json` lines: the compiler may
  use no Hex dependency (no Jason), and OTP 25 has no `:json`.

  Reads one whole document into maps, lists, strings, numbers (as floats),
  booleans and nil. Absent: encoding, streaming, and error positions (a
  line that is not JSON is just `:invalid`).
  """

  @escapes %{?n => "\n", ?t => "\t", ?r => "\r", ?b => "\b", ?f => "\f"}

  @doc "The value `text` holds, or `:invalid`."
  @spec decode(String.t()) :: term() | :invalid
  def decode(text) do
    case value(skip(text)) do
      {value, rest} -> if skip(rest) == "", do: value, else: :invalid
    end
  catch
    :invalid -> :invalid
  end

  defp skip(<<c, rest::binary>>) when c in ~c" \t\r\n", do: skip(rest)
  defp skip(rest), do: rest

  defp value("{" <> rest), do: members(skip(rest), %{})
  defp value("[" <> rest), do: elements(skip(rest), [])
  defp value("\"" <> rest), do: string(rest, [])
  defp value("true" <> rest), do: {true, rest}
  defp value("false" <> rest), do: {false, rest}
  defp value("null" <> rest), do: {nil, rest}

  defp value(text) do
    case Regex.run(~r/^-?\d+(\.\d+)?([eE][-+]?\d+)?/, text) do
      [number | _] ->
        {elem(Float.parse(number), 0),
         binary_part(text, byte_size(number), byte_size(text) - byte_size(number))}

      nil ->
        throw(:invalid)
    end
  end

  defp members("}" <> rest, acc), do: {acc, rest}

  defp members("\"" <> rest, acc) do
    {key, rest} = string(rest, [])
    ":" <> rest = skip(rest)
    {value, rest} = value(skip(rest))
    acc = Map.put(acc, key, value)

    case skip(rest) do
      "," <> rest -> members(skip(rest), acc)
      "}" <> rest -> {acc, rest}
      _ -> throw(:invalid)
    end
  end

  defp members(_text, _acc), do: throw(:invalid)

  defp elements("]" <> rest, acc), do: {Enum.reverse(acc), rest}

  defp elements(text, acc) do
    {value, rest} = value(text)

    case skip(rest) do
      "," <> rest -> elements(skip(rest), [value | acc])
      "]" <> rest -> {Enum.reverse([value | acc]), rest}
      _ -> throw(:invalid)
    end
  end

  defp string("\"" <> rest, acc), do: {IO.iodata_to_binary(Enum.reverse(acc)), rest}

  defp string("\\u" <> <<hex::binary-4, rest::binary>>, acc) do
    case {String.to_integer(hex, 16), rest} do
      {high, "\\u" <> <<low::binary-4, rest::binary>>} when high in 0xD800..0xDBFF ->
        low = String.to_integer(low, 16) - 0xDC00
        string(rest, [<<0x10000 + (high - 0xD800) * 0x400 + low::utf8>> | acc])

      {code, rest} ->
        string(rest, [<<code::utf8>> | acc])
    end
  end

  defp string("\\" <> <<c, rest::binary>>, acc),
    do: string(rest, [Map.get(@escapes, c, <<c>>) | acc])

  defp string(<<c, rest::binary>>, acc), do: string(rest, [<<c>> | acc])
  defp string("", _acc), do: throw(:invalid)
end
