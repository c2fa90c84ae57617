defmodule OpenAgentsPolicy.Native.Cargo do
  @moduledoc false

  # rustler 0.36 (the newest whose Mix package runs on Elixir 1.14) builds
  # into _build, one target directory per Mix env, unless given
  # `target_dir:`; so with 0.36 that option names the directory cargo itself
  # builds into (CARGO_TARGET_DIR, CARGO_BUILD_TARGET_DIR,
  # .cargo/config.toml, else the workspace's target/), and every Mix env of
  # a checkout and `cargo test` share one build. rustler 0.37 drops the
  # option and leaves the directory to cargo: this goes when the library
  # requires Elixir 1.15. Without rustler 0.36 or cargo, no option. Jason
  # is rustler 0.36's own dependency, so there whenever this decodes, but
  # not one a host's build or Dialyzer's PLT can assume: hence `apply/3`.
  def rustler_0_36_target_dir(root) do
    with _ <- Application.load(:rustler),
         [_ | _] = vsn <- Application.spec(:rustler, :vsn),
         :lt <- Version.compare(to_string(vsn), "0.37.0"),
         cargo when is_binary(cargo) <- System.find_executable("cargo"),
         {json, 0} <- System.cmd(cargo, ~w(metadata --format-version=1 --no-deps), cd: root) do
      [target_dir: Map.fetch!(apply(Jason, :decode!, [json]), "target_directory")]
    else
      _ -> []
    end
  end
end
