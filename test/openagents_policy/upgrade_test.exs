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

  # The live document with one answer narrowed: an attempt's terminal_commit
  # disclosed from glass, not ledger.
  defp narrowed,
    do:
      String.replace(
        live(),
        ~s("field":"terminal_commit","tier":"ledger"),
        ~s("field":"terminal_commit","tier":"glass")
      )

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
      Keyword.has_key?(module.module_info(:attributes), :openagents_policy_tables)
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

        {:link, link} ->
          link.(
            @native.library_file(),
            Path.join(dir, "priv/native/#{Path.basename(@native.library_file())}")
          )

        :none ->
          :ok
      end

      dir
    end

    # A target whose library decides `json`: the check VM's load and its
    # question are the same, but the Native it loads is a stand-in that
    # answers `json`'s digest (one build of the NIF is at hand here; a
    # target whose core really changed is hot_upgrade.sh's release B).
    defp decides(dir, json) do
      native_stand_in!(dir, """
      -export([decision_digest/0]).
      decision_digest() -> <<"#{@native.sha256(json)}">>.
      """)
    end

    # The target's Native replaced by an Erlang module of that name, of
    # `forms` (compiled here, never loaded here).
    defp native_stand_in!(dir, forms) do
      source = Path.join(dir, "Elixir.OpenAgentsPolicy.Native.erl")
      File.write!(source, "-module('Elixir.OpenAgentsPolicy.Native').\n" <> forms)
      {:ok, @native, beam} = :compile.file(String.to_charlist(source), [:binary, :return_errors])
      File.rm!(source)
      File.write!(Path.join(dir, "ebin/Elixir.OpenAgentsPolicy.Native.beam"), beam)
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

    test "refuses a target whose decisions widen, unless OPENAGENTS_POLICY_ACCEPT_WIDENING names them for this install",
         %{lib_root: root} do
      # An attempt's terminal_commit disclosed from pulse, not ledger.
      widened =
        String.replace(
          live(),
          ~s("field":"terminal_commit","tier":"ledger"),
          ~s("field":"terminal_commit","tier":"pulse")
        )

      assert widened != live()
      root |> unpack("9.9.9", :this_build, widened) |> decides(widened)
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

      # Taken by the install it accepted: a later one is refused again.
      assert System.get_env(@accept) == nil

      assert catch_throw(Upgrade.check(:up, "9.9.9", root)) ==
               {:error, {:openagents_policy, {:widens, digest, [says]}}}

      # Taken by a check that refuses for another reason, too: the install
      # it was set for was this one.
      System.put_env(@accept, digest)

      assert catch_throw(Upgrade.check(:up, "9.9.5", root)) ==
               {:error,
                {:openagents_policy, {:no_library, Path.join(root, "openagents_policy-9.9.5")}}}

      assert System.get_env(@accept) == nil
    end

    test "passes a target whose decisions narrow, and says what moved", %{lib_root: root} do
      narrowed = narrowed()
      root |> unpack("9.9.9", :this_build, narrowed) |> decides(narrowed)
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
      decides(dir, "[]")

      assert {:error, {:openagents_policy, {:decision_document, {:not_a_document, :new, _}}}} =
               catch_throw(Upgrade.check(:up, "9.9.9", root))

      assert Upgrade.decision_diff("9.9.7", root) ==
               {:error, {:no_library, Path.join(root, "openagents_policy-9.9.7")}}
    end

    test "refuses a target whose decision document is of a format this library does not read",
         %{lib_root: root} do
      # The first format wrote one record per table: a rolling upgrade's
      # coordinator stops on this before touching any node.
      first = ~s({"format":1,"vocabularies":[]})
      unpack(root, "9.9.9", :this_build, first)

      assert {:error, {:decision_document, {:unknown_format, :new, message}}} =
               Upgrade.decision_diff("9.9.9", root)

      assert message =~ "of format 1, and this library reads format 2 only"
    end

    test "refuses a target whose decision document is not what its library decides",
         %{lib_root: root} do
      # This build's library, which decides what this VM does, packaged with
      # a document that says otherwise (terminal_commit narrowed to glass):
      # read alone, a narrowing that would pass without anyone's word.
      edited = narrowed()
      assert edited != live()
      dir = unpack(root, "9.9.9", :this_build, edited)
      file = Path.join(dir, "priv/decisions.json")
      mismatch = %{document: @native.sha256(edited), library: @native.sha256(live())}

      log =
        ExUnit.CaptureLog.capture_log(fn ->
          assert catch_throw(Upgrade.check(:up, "9.9.9", root)) ==
                   {:error, {:openagents_policy, {:decision_document_mismatch, file, mismatch}}}
        end)

      assert log =~ file
      assert log =~ "cargo run -q --locked -p openagents_policy --example decisions -- document"

      # Accepting the document's decisions by name accepts nothing: the
      # library does not follow them.
      System.put_env(@accept, mismatch.document)
      on_exit(fn -> System.delete_env(@accept) end)

      assert catch_throw(Upgrade.check(:up, "9.9.9", root)) ==
               {:error, {:openagents_policy, {:decision_document_mismatch, file, mismatch}}}

      # The document written anew from what the library decides: passes.
      File.write!(file, live())
      assert Upgrade.check(:up, "9.9.9", root) == :ok
    end

    test "a downgrade checks every other unpacked version's document against its library",
         %{lib_root: root} do
      unpack(root, "9.9.9")
      unpack(root, "0.0.2")
      assert Upgrade.check(:down, "9.9.9", root) == :ok

      stale = unpack(root, "0.0.1", :this_build, narrowed())
      file = Path.join(stale, "priv/decisions.json")

      assert {:error,
              {:openagents_policy,
               {:decision_document_mismatch, ^file, %{document: d, library: l}}}} =
               catch_throw(Upgrade.check(:down, "9.9.9", root))

      assert l == @native.sha256(live()) and d == @native.sha256(File.read!(file))
    end

    test "refuses a target whose Native cannot say what it decides", %{lib_root: root} do
      # A Native that loads but has no decision_digest/0.
      root |> unpack("9.9.9") |> native_stand_in!("")

      assert {:error, {:openagents_policy, {:does_not_load, file, why}}} =
               catch_throw(Upgrade.check(:up, "9.9.9", root))

      assert Path.basename(file) == Path.basename(@native.library_file())
      assert why =~ "OpenAgentsPolicy.Native.decision_digest/0, asked after the load"
      assert why =~ "UndefinedFunctionError"
    end

    test "refuses the library this VM runs under another path: a hard link, a symlink" do
      # Beside the running library, on its file system: a hard link
      # cannot cross to another.
      root =
        Path.join(Mix.Project.build_path(), "upgrade-test-#{System.unique_integer([:positive])}")

      on_exit(fn -> File.rm_rf!(root) end)
      running = @native.library_file()

      for {version, link} <- [{"9.9.8", &File.ln!/2}, {"9.9.7", &File.ln_s!/2}] do
        dir = unpack(root, version, {:link, link})
        file = Path.join(dir, "priv/native/#{Path.basename(running)}")

        assert catch_throw(Upgrade.check(:up, version, root)) ==
                 {:error,
                  {:openagents_policy,
                   {:running_library, file,
                    "#{file} is #{running}, the NIF library this VM runs, under another path " <>
                      "(the same device and inode), which this VM cannot load again: " <>
                      "the release needs a copy of its own, not a link"}}}
      end

      # A copy of it is another file, which a relup can load.
      unpack(root, "9.9.6")
      assert Upgrade.check(:up, "9.9.6", root) == :ok
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
