defmodule HostApp.H2Client do
  @moduledoc """
  A plaintext HTTP/2 client (h2c with prior knowledge) made of the frames
  the tests write themselves over `:gen_tcp`, so that what a client does,
  and when, is the test's, not a tool's whose timing varies by version: the
  connection preface and a SETTINGS frame of the test's choosing (a window
  of 0 for a client that never reads), HEADERS encoded with `HPAX` (the
  library Bandit decodes them with), DATA, WINDOW_UPDATE, RST_STREAM.

  Reading: `await/4` reads frames until a stream's response headers, or its
  whole response, have come. On the way it acknowledges the server's
  SETTINGS and answers its PINGs; frames of other streams are dropped, so a
  test reads one stream at a time. Header blocks are taken as Bandit sends
  them: unpadded, with no priority, in one HEADERS frame or followed by
  CONTINUATIONs.
  """

  import Bitwise

  defstruct [:socket, :authority, :encoder, :decoder, next: 1]

  @type t :: %__MODULE__{
          socket: :gen_tcp.socket(),
          authority: String.t(),
          encoder: HPAX.table(),
          decoder: HPAX.table(),
          next: pos_integer()
        }
  @type stream :: pos_integer()

  @preface "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

  @data 0x0
  @headers 0x1
  @rst_stream 0x3
  @settings 0x4
  @ping 0x6
  @goaway 0x7
  @window_update 0x8
  @continuation 0x9

  @end_stream 0x1
  @ack 0x1
  @end_headers 0x4

  @setting_ids [
    header_table_size: 0x1,
    enable_push: 0x2,
    max_concurrent_streams: 0x3,
    initial_window_size: 0x4,
    max_frame_size: 0x5,
    max_header_list_size: 0x6
  ]

  @doc """
  Connects to 127.0.0.1:`port` and sends the preface and a SETTINGS frame
  of `settings` (e.g. `initial_window_size: 0`: the server may send no
  byte of any response body until a WINDOW_UPDATE opens the stream).
  """
  @spec connect(:inet.port_number(), keyword(non_neg_integer())) :: t()
  def connect(port, settings \\ []) do
    {:ok, socket} = :gen_tcp.connect(~c"127.0.0.1", port, [:binary, active: false, packet: :raw])

    payload = for {name, value} <- settings, into: <<>>, do: <<@setting_ids[name]::16, value::32>>
    :ok = :gen_tcp.send(socket, [@preface, frame(@settings, 0, 0, payload)])

    %__MODULE__{
      socket: socket,
      authority: "127.0.0.1:#{port}",
      encoder: HPAX.new(4096),
      decoder: HPAX.new(4096)
    }
  end

  @doc """
  Opens a stream with a request's HEADERS (`headers` after the
  pseudo-headers): ending the stream unless `end_stream: false`, after
  which the body is `data/4`'s.
  """
  @spec request(t(), String.t(), String.t(), [{String.t(), String.t()}], keyword()) ::
          {t(), stream()}
  def request(client, method, path, headers \\ [], opts \\ []) do
    stream = client.next

    {block, encoder} =
      HPAX.encode(
        :no_store,
        [
          {":method", method},
          {":scheme", "http"},
          {":authority", client.authority},
          {":path", path} | headers
        ],
        client.encoder
      )

    flags =
      if Keyword.get(opts, :end_stream, true),
        do: @end_headers ||| @end_stream,
        else: @end_headers

    :ok = :gen_tcp.send(client.socket, frame(@headers, flags, stream, block))
    {%{client | encoder: encoder, next: stream + 2}, stream}
  end

  @doc "Sends `data` on `stream`, the last of its body when `end_stream`."
  @spec data(t(), stream(), iodata(), boolean()) :: :ok
  def data(client, stream, data, end_stream \\ true),
    do:
      :gen_tcp.send(
        client.socket,
        frame(@data, if(end_stream, do: @end_stream, else: 0), stream, data)
      )

  @doc "Lets the server send `increment` more bytes on `stream` (0: the connection)."
  @spec window_update(t(), non_neg_integer(), pos_integer()) :: :ok | {:error, term()}
  def window_update(client, stream, increment),
    do: :gen_tcp.send(client.socket, frame(@window_update, 0, stream, <<0::1, increment::31>>))

  @doc "Cancels `stream` (RST_STREAM, CANCEL)."
  @spec cancel(t(), stream()) :: :ok | {:error, term()}
  def cancel(client, stream),
    do: :gen_tcp.send(client.socket, frame(@rst_stream, 0, stream, <<0x8::32>>))

  @doc "Hangs up: the TCP connection closed, no GOAWAY."
  @spec close(t()) :: :ok
  def close(client), do: :gen_tcp.close(client.socket)

  @doc """
  Reads frames until `stream`'s response headers have come (`:headers`:
  `{status, headers}`) or its whole response (`:response`: `{status,
  headers, body}`), for at most `timeout` ms per frame. `{:error, client,
  reason}` when the server resets the stream, goes away or closes.
  """
  @spec await(t(), stream(), :headers | :response, timeout()) ::
          {:ok, t(), {non_neg_integer(), map()} | {non_neg_integer(), map(), binary()}}
          | {:error, t(), term()}
  def await(client, stream, what, timeout \\ 10_000),
    do: await(client, stream, what, timeout, %{status: nil, headers: nil, body: [], block: nil})

  defp await(client, stream, what, timeout, acc) do
    case read_frame(client.socket, timeout) do
      {:ok, {@headers, flags, ^stream, block}} ->
        headers_block(client, stream, what, timeout, acc, flags, block)

      {:ok, {@continuation, flags, ^stream, block}} ->
        headers_block(client, stream, what, timeout, acc, flags, acc.block <> block)

      {:ok, {@data, flags, ^stream, data}} ->
        acc = %{acc | body: [acc.body, data]}

        if ended?(flags),
          do: done(client, what, acc),
          else: await(client, stream, what, timeout, acc)

      {:ok, {@rst_stream, _flags, ^stream, <<code::32>>}} ->
        {:error, client, {:rst_stream, code}}

      {:ok, {@goaway, _flags, 0, <<_::1, _last::31, code::32, _::binary>>}} ->
        {:error, client, {:goaway, code}}

      {:ok, {@settings, flags, 0, _}} when (flags &&& @ack) == 0 ->
        :ok = :gen_tcp.send(client.socket, frame(@settings, @ack, 0, ""))
        await(client, stream, what, timeout, acc)

      {:ok, {@ping, flags, 0, opaque}} when (flags &&& @ack) == 0 ->
        :ok = :gen_tcp.send(client.socket, frame(@ping, @ack, 0, opaque))
        await(client, stream, what, timeout, acc)

      {:ok, _other} ->
        await(client, stream, what, timeout, acc)

      {:error, reason} ->
        {:error, client, reason}
    end
  end

  # A header block is decoded once its last fragment (END_HEADERS) is in.
  defp headers_block(client, stream, what, timeout, acc, flags, block) do
    if (flags &&& @end_headers) == 0 do
      await(client, stream, what, timeout, %{acc | block: block})
    else
      {:ok, headers, decoder} = HPAX.decode(block, client.decoder)
      client = %{client | decoder: decoder}
      {status, headers} = Enum.split_with(headers, fn {name, _} -> name == ":status" end)
      [{":status", status}] = status
      acc = %{acc | status: String.to_integer(status), headers: Map.new(headers), block: nil}

      if what == :headers or ended?(flags),
        do: done(client, what, acc),
        else: await(client, stream, what, timeout, acc)
    end
  end

  defp ended?(flags), do: (flags &&& @end_stream) != 0

  defp done(client, :headers, acc), do: {:ok, client, {acc.status, acc.headers}}

  defp done(client, :response, acc),
    do: {:ok, client, {acc.status, acc.headers, IO.iodata_to_binary(acc.body)}}

  defp read_frame(socket, timeout) do
    with {:ok, <<length::24, type::8, flags::8, _::1, stream::31>>} <-
           :gen_tcp.recv(socket, 9, timeout),
         {:ok, payload} <- recv_payload(socket, length, timeout) do
      {:ok, {type, flags, stream, payload}}
    end
  end

  defp recv_payload(_socket, 0, _timeout), do: {:ok, ""}
  defp recv_payload(socket, length, timeout), do: :gen_tcp.recv(socket, length, timeout)

  defp frame(type, flags, stream, payload),
    do: [<<IO.iodata_length(payload)::24, type::8, flags::8, 0::1, stream::31>>, payload]
end
