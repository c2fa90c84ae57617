defmodule OpenAgentsPolicy.UpgradeTest do
  # The library's part in a relup: the appup its compiler writes into ebin,
  # and OpenAgentsPolicy.Upgrade.check/3, which the appup runs before the
  # relup's point of no return, watched passing and refusing. The relup
  # itself, in a running release under load, is examples/host_app/scripts/hot_upgrade.sh.
  use ExUnit.Case, async: true

  # check/3 logs the Markdown of a target's decision changes.
  @moduletag :capture_log

  alias OpenAgentsPolicy.Upgrade

  @native OpenAgentsPolicy.Native
  @accept "OPENAGENTS_POLICY_ACCEPT_WIDENING"

  defp live, do: OpenAgentsPolicy.decisions_json()

  # Each test's own release lib/ directory, outside the source tree.
  setup do
    root = Path.join(System.tmp_dir!(), "upgrade-test-#{System.unique_integer([:positive])}")
    File.mkdir_p!(root)
    on_exit(fn -> File.rm_rf!(root) end)
    %{lib_root: root}
  end

  defp appup do
    file = Path.join(Application.app_dir(:openagents_policy, "ebin"), "openagents_policy.appup")
    {:ok, [appup]} = :file.consult(String.to_charlist(file))
    appup
  end

  describe "ebin/openagents_policy.appup" do
    test "is for this version, from and to any other, and names every module" do
      {vsn, [{".*", up}], [{".*", down}]} = appup()
      assert vsn == to_charlist(Mix.Project.config()[:version])
      {:ok, modules} = :application.get_key(:openagents_policy, :modules)

      for {direction, script} <- [up: up, down: down] do
        assert [{:apply, {Upgrade, :check, [^direction, version]}}, :point_of_no_return | loads] =
                 script

        assert version == Mix.Project.config()[:version]
        loaded = for {:load_module, mod, :soft_purge, :soft_purge, []} <- loads, do: mod
        assert length(loaded) == length(loads)
        assert Enum.sort(loaded) == Enum.sort(modules)
        # Native first, then every module that calls it or holds its tables,
        # then the rest.
        assert [@native | next] = loaded
        callers = Enum.filter(modules, &calls_native?/1)
        assert Enum.sort(Enum.take(next, length(callers))) == Enum.sort(callers)
      end
    end

    test "loads every module whose tables come from the core right after Native" do
      {_vsn, [{".*", [_check, :point_of_no_return | loads]}], _down} = appup()
      callers = Enum.filter(Enum.map(loads, &elem(&1, 1)), &calls_native?/1)

      tables =
        for file <- Path.wildcard(Path.expand("../../lib/**/*.ex", __DIR__)),
            source = File.read!(file),
            source =~ ~r/^\s*use OpenAgentsPolicy\.Native$/m,
            [_, name] = Regex.run(~r/defmodule ([\w.]+) do/, source),
            do: Module.concat([name])

      assert length(tables) == 3
      assert tables -- callers == []
    end
  end

  defp calls_native?(module) do
    {:ok, {^module, [imports: imports]}} = :beam_lib.chunks(:code.which(module), [:imports])

    Enum.any?(imports, &match?({@native, _, _}, &1)) or
      Keyword.has_key?(module.__info__(:attributes), :openagents_policy_tables)
  end

  describe "Upgrade.check/3" do
    # A release's lib/ with the library at `version`: this build's ebin, NIF
    # library and decision document, or `nif` for the library file and
    # `decisions` for the document.
    defp unpack(lib_root, version, nif \\ :this_build, decisions \\ live()) do
      dir = Path.join(lib_root, "openagents_policy-#{version}")
      File.mkdir_p!(Path.join(dir, "priv/native"))
      File.cp_r!(Application.app_dir(:openagents_policy, "ebin"), Path.join(dir, "ebin"))
      if decisions, do: File.write!(Path.join(dir, "priv/decisions.json"), decisions)

      case nif do
        :this_build ->
          File.cp!(
            @native.library_file(),
            Path.join(dir, "priv/native/#{Path.basename(@native.library_file())}")
          )

        {:bytes, name, bytes} ->
          File.write!(Path.join(dir, "priv/native/#{name}"), bytes)

        :none ->
          :ok
      end

      dir
    end

    test "passes a target library that a fresh VM loads into Native", %{lib_root: root} do
      unpack(root, "9.9.9")
      assert Upgrade.check(:up, "9.9.9", root) == :ok
      unpack(root, "0.0.1")
      assert Upgrade.check(:down, "9.9.9", root) == :ok
    end

    test "refuses a version that is not unpacked", %{lib_root: root} do
      dir = Path.join(root, "openagents_policy-9.9.9")

      assert catch_throw(Upgrade.check(:up, "9.9.9", root)) ==
               {:error, {:openagents_policy, {:no_library, dir}}}

      unpack(root, "9.9.9")
      pattern = Path.join(root, "openagents_policy-*")

      assert catch_throw(Upgrade.check(:down, "9.9.9", root)) ==
               {:error, {:openagents_policy, {:no_library, pattern}}}
    end

    test "refuses a version with no NIF library, or with two", %{lib_root: root} do
      dir = unpack(root, "9.9.9", :none)

      assert catch_throw(Upgrade.check(:up, "9.9.9", root)) ==
               {:error, {:openagents_policy, {:no_library, dir}}}

      # This build's library and, beside it, one under the other name a
      # library takes (rustler builds `libopenagents_policy_nif.so`,
      # rustler_precompiled downloads its artifact's name).
      unpack(root, "9.9.8")

      other =
        if Path.basename(@native.library_file()) == "libopenagents_policy_nif.so",
          do: "libopenagents_policy_nif-v9.9.8-nif-2.15-x86_64-unknown-linux-gnu.so",
          else: "libopenagents_policy_nif.so"

      unpack(root, "9.9.8", {:bytes, other, "x"})

      assert {:error, {:openagents_policy, {:several_libraries, [_, _]}}} =
               catch_throw(Upgrade.check(:up, "9.9.8", root))
    end

    test "refuses a target whose decisions widen, unless OPENAGENTS_POLICY_ACCEPT_WIDENING names them",
         %{lib_root: root} do
      # An attempt's terminal_commit disclosed from pulse, not ledger.
      widened =
        String.replace(
          live(),
          ~s("terminal_commit","tier":"ledger"),
          ~s("terminal_commit","tier":"pulse")
        )

      assert widened != live()
      unpack(root, "9.9.9", :this_build, widened)
      digest = @native.sha256(widened)
      says = "`attempt.terminal_commit` is now disclosed from `pulse` (was `ledger`)"

      assert catch_throw(Upgrade.check(:up, "9.9.9", root)) ==
               {:error, {:openagents_policy, {:widens, digest, [says]}}}

      # Accepting other decisions accepts nothing here.
      System.put_env(@accept, @native.sha256(live()))
      on_exit(fn -> System.delete_env(@accept) end)

      assert catch_throw(Upgrade.check(:up, "9.9.9", root)) ==
               {:error, {:openagents_policy, {:widens, digest, [says]}}}

      System.put_env(@accept, digest)
      assert Upgrade.check(:up, "9.9.9", root) == :ok
    end

    test "passes a target whose decisions narrow, and says what moved", %{lib_root: root} do
      narrowed =
        String.replace(
          live(),
          ~s("terminal_commit","tier":"ledger"),
          ~s("terminal_commit","tier":"glass")
        )

      unpack(root, "9.9.9", :this_build, narrowed)
      assert Upgrade.check(:up, "9.9.9", root) == :ok

      assert {:ok,
              %{digest: digest, changes: [change], widened: [], markdown: markdown, json: json}} =
               Upgrade.decision_diff("9.9.9", root)

      assert digest == @native.sha256(narrowed)
      assert change.class == :narrows
      assert markdown =~ "terminal_commit"
      assert %{"changes" => [%{"class" => "narrows"}]} = Jason.decode!(json)

      assert {:ok, %{changes: []}} =
               (
                 unpack(root, "9.9.8")
                 Upgrade.decision_diff("9.9.8", root)
               )
    end

    test "refuses a target whose decisions cannot be read, never taking it as no change",
         %{lib_root: root} do
      dir = unpack(root, "9.9.9", :this_build, nil)
      file = Path.join(dir, "priv/decisions.json")

      assert catch_throw(Upgrade.check(:up, "9.9.9", root)) ==
               {:error, {:openagents_policy, {:no_decision_document, file}}}

      File.write!(file, "[]")

      assert {:error, {:openagents_policy, {:decision_document, {:not_a_document, :new, _}}}} =
               catch_throw(Upgrade.check(:up, "9.9.9", root))

      assert Upgrade.decision_diff("9.9.7", root) ==
               {:error, {:no_library, Path.join(root, "openagents_policy-9.9.7")}}
    end

    test "refuses a library the VM cannot load: cut short, or not a library", %{lib_root: root} do
      whole = File.read!(@native.library_file())

      for {version, bytes} <- [{"9.9.7", binary_part(whole, 0, 65_536)}, {"9.9.6", "not ELF"}] do
        # The name this build's Native loads, so only the content is wrong.
        name = Path.basename(@native.library_file())
        unpack(root, version, {:bytes, name, bytes})

        assert {:error, {:openagents_policy, {:does_not_load, file, why}}} =
                 catch_throw(Upgrade.check(:up, version, root))

        assert Path.basename(file) == name
        assert is_binary(why) and why != ""
        # The loader's own words come with it (Native's on_load returns
        # them; the code server reports them).
        if bytes == "not ELF", do: assert(why =~ "Failed to load NIF library", why)
      end
    end
  end
end
