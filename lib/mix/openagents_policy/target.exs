defmodule Mix.OpenAgentsPolicy.Target do
  @moduledoc """
  This VM's target triple, as rustler_precompiled reads it, which names the
  precompiled artifact this VM takes: from the system architecture OTP
  reports (x86_64-pc-linux-gnu on Debian, x86_64-alpine-linux-musl on
  Alpine, aarch64-apple-darwin23.4.0 on macOS), with `TARGET_ARCH`,
  `TARGET_VENDOR`, `TARGET_OS` and `TARGET_ABI` overriding its parts, and the
  vendors pc, redhat, suse and alpine read as unknown.

  Owns the triple only: which artifact and NIF version that means is
  `Mix.OpenAgentsPolicy.Precompiled`'s.
  """

  @doc """
  This VM's target triple, e.g. `x86_64-unknown-linux-gnu`; given a system
  architecture as OTP reports one, that architecture's (with the same
  `TARGET_*` overrides): `aarch64-apple-darwin23.4.0` is
  `aarch64-apple-darwin`, and so is `arm-apple-darwin20.1.0`.
  """
  @spec triple(String.t()) :: String.t()
  def triple(architecture \\ List.to_string(:erlang.system_info(:system_architecture))) do
    parts = String.split(architecture, "-")

    keys =
      case length(parts) do
        4 -> [:arch, :vendor, :os, :abi]
        3 -> [:arch, :vendor, :os]
        _ -> []
      end

    detected = keys |> Enum.zip(parts) |> Map.new()

    overridden =
      Enum.reduce(
        [arch: "TARGET_ARCH", vendor: "TARGET_VENDOR", os: "TARGET_OS", abi: "TARGET_ABI"],
        detected,
        fn
          {key, var}, acc ->
            case System.get_env(var) do
              nil -> acc
              value -> Map.put(acc, key, value)
            end
        end
      )

    # An override of other parts on Linux that left the vendor alone means
    # the vendor of the machine doing the build, not of the target.
    overridden =
      if overridden != detected and overridden[:vendor] == detected[:vendor] and
           overridden[:os] == "linux",
         do: Map.put(overridden, :vendor, "unknown"),
         else: overridden

    normalized =
      cond do
        (overridden[:os] || "") =~ "darwin" ->
          arch = if overridden[:arch] == "arm", do: "aarch64", else: overridden[:arch]
          %{overridden | arch: arch, os: "darwin"}

        (overridden[:os] || "") =~ "linux" ->
          arch = if overridden[:arch] == "amd64", do: "x86_64", else: overridden[:arch]

          vendor =
            if overridden[:vendor] in ~w(pc redhat suse alpine),
              do: "unknown",
              else: overridden[:vendor]

          %{overridden | arch: arch, vendor: vendor}

        true ->
          overridden
      end

    for(key <- [:arch, :vendor, :os, :abi], value = normalized[key], do: value) |> Enum.join("-")
  end
end
