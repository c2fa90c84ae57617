defmodule OpenAgentsPolicy.Native.Cargo do
  @moduledoc false

  # A source build of the checkout at `root`, in the directory `cargo metadata` names.
  # cargo names builds without the checkout's path and calls older sources fresh, so
  # after another checkout built there this library would hold the other's rules: the
  # last checkout is written beside the builds, and when it was another, our crates'
  # fingerprints go. rustler 0.36 (Elixir 1.14) needs `target_dir:`; Jason via apply/3.
  def source_build(root) do
    with _ <- Application.load(:rustler),
         true <- Code.ensure_loaded?(Jason),
         cargo when is_binary(cargo) <- System.find_executable("cargo"),
         {json, 0} <- System.cmd(cargo, ~w(metadata --format-version=1 --no-deps), cd: root) do
      target = Map.fetch!(apply(Jason, :decode!, [json]), "target_directory")
      stamp = Path.join(target, "openagents_policy.checkout")

      unless File.read(stamp) == {:ok, root} do
        fingerprints = Path.join(target, "*/.fingerprint/openagents_policy*-*")
        Enum.each(Path.wildcard(fingerprints, match_dot: true), &File.rm_rf!/1)
        File.mkdir_p!(target)
        File.write!(stamp, root)
      end

      old? = Version.compare(to_string(Application.spec(:rustler, :vsn) || "0.37.0"), "0.37.0")
      if old? == :lt, do: [target_dir: target], else: []
    else
      _ -> []
    end
  end
end
