# A minimal HTTP/1.1 client over :gen_tcp, no pool between the clients and the
# host: the status line and headers by the VM's packet parser, then exactly
# Content-Length bytes (or the chunks): a body cut short is an error.
defmodule Faults.HTTP do
  @moduledoc false

  @timeout 30_000

  @doc "Opens a connection to 127.0.0.1:`port`."
  def connect(port) do
    :gen_tcp.connect(~c"127.0.0.1", port, [:binary, active: false, nodelay: true], 5_000)
  end

  @doc """
  Sends one request and reads its response: `{:ok, status, headers, body}`
  or `{:error, reason}` (after which the connection must be closed).
  """
  def request(socket, method, path, handle \\ nil, body \\ nil) do
    auth = if handle, do: ["authorization: Bearer ", handle, "\r\n"], else: []

    payload =
      if body,
        do: ["content-type: application/json\r\ncontent-length: ", "#{byte_size(body)}\r\n"],
        else: []

    request = [method, " ", path, " HTTP/1.1\r\nhost: localhost\r\n", auth, payload, "\r\n"]

    with :ok <- :gen_tcp.send(socket, [request, body || ""]),
         :ok <- :inet.setopts(socket, packet: :http_bin),
         {:ok, {:http_response, _, status, _}} <- :gen_tcp.recv(socket, 0, @timeout),
         {:ok, headers} <- headers(socket, %{}),
         :ok <- :inet.setopts(socket, packet: :raw),
         {:ok, body} <- body(socket, headers) do
      {:ok, status, headers, body}
    else
      {:ok, other} -> {:error, {:unexpected, other}}
      {:error, reason} -> {:error, reason}
    end
  end

  defp headers(socket, acc) do
    case :gen_tcp.recv(socket, 0, @timeout) do
      {:ok, {:http_header, _, name, _, value}} ->
        headers(socket, Map.put(acc, name |> to_string() |> String.downcase(), value))

      {:ok, :http_eoh} ->
        {:ok, acc}

      {:ok, other} ->
        {:error, {:bad_header, other}}

      {:error, reason} ->
        {:error, reason}
    end
  end

  defp body(socket, %{"content-length" => length}) do
    case String.to_integer(length) do
      0 -> {:ok, ""}
      n -> :gen_tcp.recv(socket, n, @timeout)
    end
  end

  defp body(socket, %{"transfer-encoding" => "chunked"}), do: chunks(socket, [])
  defp body(_socket, _headers), do: {:error, :no_length}

  defp chunks(socket, acc) do
    :inet.setopts(socket, packet: :line)

    with {:ok, line} <- :gen_tcp.recv(socket, 0, @timeout),
         {size, _} <- Integer.parse(String.trim(line), 16),
         :ok <- :inet.setopts(socket, packet: :raw),
         {:ok, data} <- recv(socket, size + 2) do
      if size == 0,
        do: {:ok, IO.iodata_to_binary(Enum.reverse(acc))},
        else: chunks(socket, [binary_part(data, 0, size) | acc])
    else
      :error -> {:error, :bad_chunk}
      {:error, reason} -> {:error, reason}
    end
  end

  defp recv(socket, n), do: :gen_tcp.recv(socket, n, @timeout)
end
