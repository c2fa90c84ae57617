defmodule HostApp.Id do
  @moduledoc "Random v4 UUID strings, the shape of the host's primary keys."

  @spec uuid() :: String.t()
  def uuid do
    <<a::48, _::4, b::12, _::2, c::62>> = :crypto.strong_rand_bytes(16)
    <<u::128>> = <<a::48, 4::4, b::12, 2::2, c::62>>

    u
    |> Integer.to_string(16)
    |> String.pad_leading(32, "0")
    |> String.downcase()
    |> then(fn <<p1::binary-8, p2::binary-4, p3::binary-4, p4::binary-4, p5::binary-12>> ->
      Enum.join([p1, p2, p3, p4, p5], "-")
    end)
  end
end
