defmodule Mix.OpenAgentsPolicy.Describe do
  @moduledoc """
  What a file's header says it is, for the install's error message: the
  loader's own message for a NIF library of another architecture is often
  just "No such file or directory".

  Owns the ELF and Mach-O header reading and the ELF machine names; refuses
  nothing itself and is never asked whether a file loads (that is
  `OpenAgentsPolicy.LoadCheck`'s).
  """

  @machines %{
    3 => "x86",
    8 => "mips",
    20 => "ppc",
    21 => "ppc64",
    22 => "s390x",
    40 => "arm",
    62 => "x86_64",
    183 => "aarch64",
    243 => "riscv"
  }

  @doc ~S'A phrase naming what `file` is: "an ELF 64-bit file for aarch64", "a Mach-O file", ...'
  @spec file(Path.t()) :: String.t()
  def file(file) do
    case File.open(file, [:read, :binary], &IO.binread(&1, 20)) do
      {:ok, <<0x7F, "ELF", class, endian, _::binary-12, machine::binary-2>>} ->
        machine =
          if endian == 2,
            do: :binary.decode_unsigned(machine),
            else: :binary.decode_unsigned(machine, :little)

        bits = if class == 2, do: "64-bit", else: "32-bit"
        "an ELF #{bits} file for #{Map.get(@machines, machine, "machine #{machine}")}"

      {:ok, <<magic::little-32, _::binary>>} when magic in [0xFEEDFACF, 0xFEEDFACE] ->
        "a Mach-O file"

      {:ok, _} ->
        "not a shared library (no ELF or Mach-O header)"

      {:error, reason} ->
        "unreadable (#{:file.format_error(reason)})"
    end
  end
end
