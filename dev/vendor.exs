defmodule OpenAgentsPolicy.Vendor do
  @moduledoc false
  # Offline builds, for this library's mix.exs and the example host's: with
  # HEX_VENDOR_DIR naming a directory of unpacked Hex packages (one per
  # dependency name), each dependency found there is taken by path instead of
  # from Hex, keeping its :only, :runtime and :optional. Unset (or empty), the
  # requirements are ordinary Hex ones (`mix deps.get`, mix.lock). A .exs that
  # mix.exs loads when it exists: in dev/, so neither in the Hex package nor
  # compiled into the app, and a host that has the library from Hex never
  # runs it.

  @doc false
  def deps(deps) do
    case System.get_env("HEX_VENDOR_DIR") do
      nil -> deps
      "" -> deps
      dir -> Enum.map(deps, &vendored(&1, dir))
    end
  end

  defp vendored(dep, dir) do
    {name, opts} =
      case dep do
        {name, requirement} when is_binary(requirement) -> {name, []}
        {name, opts} when is_list(opts) -> {name, opts}
        {name, _requirement, opts} -> {name, opts}
      end

    path = Path.expand(Atom.to_string(name), dir)

    if File.dir?(path) and not Keyword.has_key?(opts, :path),
      do:
        {name, [path: path, override: true] ++ Keyword.take(opts, [:only, :runtime, :optional])},
      else: dep
  end
end
