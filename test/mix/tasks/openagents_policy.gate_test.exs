defmodule Mix.Tasks.OpenagentsPolicy.GateTest do
  # Not async: the task's statuses and its stderr are captured globally.
  use ExUnit.Case, async: false

  import ExUnit.CaptureIO

  alias OpenAgentsPolicy.Decisions

  @work Path.join(Mix.Project.build_path(), "gate_test")

  # Three documents: the core's own (decisions_json/0), and that document
  # with its first field scheduled at `ledger` moved up to `glass` (narrows)
  # and down to `pulse` (widens), one row, as the core writes that one-word
  # edit of its rule (the rolling replacement drill builds such a candidate
  # with the core itself).
  setup_all do
    File.mkdir_p!(@work)
    live = OpenAgentsPolicy.decisions_json()

    line =
      Enum.find(String.split(live, "\n"), fn line ->
        String.starts_with?(line, ~s(["schedule.fields",)) and line =~ ~s("tier":"ledger",)
      end)

    [_table, %{"family" => family, "field" => field}, _answer] =
      Jason.decode!(String.trim_trailing(line, ","))

    for {name, tier} <- [same: "ledger", narrowed: "glass", widened: "pulse"],
        into: %{field: "#{family}.#{field}"} do
      moved = String.replace(line, ~s("tier":"ledger",), ~s("tier":"#{tier}",))
      path = Path.join(@work, "#{name}.json")
      File.write!(path, String.replace(live, line, moved))
      {name, path}
    end
  end

  # A fresh directory per test, under the build path (not the working tree).
  setup context do
    dir = Path.join([@work, "tests", "#{:erlang.phash2({context.module, context.test})}"])
    File.rm_rf!(dir)
    File.mkdir_p!(dir)
    %{dir: dir}
  end

  # Runs the task in-process: its exit status (0 when it returns), stdout, stderr.
  defp gate(args) do
    parent = self()

    err =
      capture_io(:stderr, fn ->
        out =
          capture_io(fn ->
            status =
              try do
                Mix.Task.rerun("openagents_policy.gate", args)
                0
              catch
                :exit, {:shutdown, status} -> status
              end

            send(parent, {:status, status})
          end)

        send(parent, {:out, out})
      end)

    assert_received {:status, status}
    assert_received {:out, out}
    {status, out, err}
  end

  defp receipt(args) do
    {status, out, _err} = gate(args ++ ["--format", "json"])
    {status, Jason.decode!(out)}
  end

  defp sha(path), do: Base.encode16(:crypto.hash(:sha256, File.read!(path)), case: :lower)

  # What the core's diff makes of two documents: its changes, their counts per class.
  defp changes(old, new) do
    {:ok, changes} = Decisions.diff(File.read!(old), File.read!(new))
    changes
  end

  defp tally(changes) do
    counts = Enum.frequencies_by(changes, & &1.class)
    Enum.map_join([:widens, :narrows, :changes], ", ", &"#{Map.get(counts, &1, 0)} #{&1}")
  end

  defp markdown(old, new) do
    {:ok, markdown} = Decisions.diff(File.read!(old), File.read!(new), format: :markdown)
    String.trim_trailing(markdown)
  end

  describe "the verdict" do
    test "the same document passes", %{same: same} do
      {status, out, _err} = gate([same, same])
      assert status == 0
      assert out =~ "no decision changes"
      assert out =~ "gate: pass (0 widens, 0 narrows, 0 changes)"
    end

    test "a digest is the SHA-256 of the document, the build's decision digest", %{dir: dir} do
      live = Path.join(dir, "live.json")
      File.write!(live, OpenAgentsPolicy.decisions_json())
      {0, receipt} = receipt([live, live])
      assert receipt["deployed"]["digest"] == OpenAgentsPolicy.decision_digest()
      assert receipt["candidate"]["digest"] == sha(live)
    end

    test "a narrowing passes, with the diff's Markdown", %{same: same, narrowed: narrowed} do
      {status, out, err} = gate([same, narrowed])
      assert status == 0
      assert out =~ markdown(same, narrowed)
      changes = changes(same, narrowed)
      assert Enum.any?(changes) and Enum.all?(changes, &(&1.class == :narrows))
      assert out =~ "gate: pass (#{tally(changes)})"
      refute err =~ "--accept"
    end

    test "a widening is refused, printing the candidate's digest to accept",
         %{same: same, widened: widened, field: field} do
      {status, out, err} = gate([same, widened])
      assert status == 1
      assert out =~ markdown(same, widened)
      assert out =~ "`#{field}` is now disclosed from `pulse` (was `ledger`)"
      assert out =~ "gate: refused (#{tally(changes(same, widened))})"
      assert [digest] = Regex.run(~r/--accept ([0-9a-f]{64})$/m, err, capture: :all_but_first)
      assert digest == sha(widened)

      assert {1, %{"verdict" => "refused"}} = receipt([same, widened])
    end

    test "a widening is accepted by the candidate's exact digest", %{same: same, widened: widened} do
      {status, out, _err} = gate([same, widened, "--accept", sha(widened)])
      assert status == 0
      assert out =~ "gate: accepted (#{tally(changes(same, widened))})"
      assert {0, %{"verdict" => "accepted"}} = receipt([same, widened, "--accept", sha(widened)])
    end

    test "a wrong, partial or other side's digest accepts nothing", %{
      same: same,
      widened: widened
    } do
      digest = sha(widened)

      for wrong <- [String.slice(digest, 0, 12), String.upcase(digest), sha(same), digest <> "0"] do
        {status, _out, err} = gate([same, widened, "--accept", wrong])
        assert status == 1, "accepted by #{wrong}"
        assert err =~ "--accept #{inspect(wrong)} is not the candidate's digest"
        assert err =~ "--accept #{digest}"
      end
    end
  end

  describe "where a document is found" do
    # A release as `mix release` lays it out, holding `document` in the library's priv.
    defp release!(dir, document, vsn) do
      lib = Path.join(dir, "lib/openagents_policy-#{vsn}")
      File.mkdir_p!(Path.join(lib, "ebin"))
      File.mkdir_p!(Path.join(lib, "priv/native"))
      File.cp!(document, Path.join(lib, "priv/decisions.json"))
      File.mkdir_p!(Path.join(dir, "lib/jason-1.4.4/priv"))
      File.write!(Path.join(dir, "lib/jason-1.4.4/priv/decisions.json"), "not this one")
      File.mkdir_p!(Path.join(dir, "releases/1.0.0"))
      File.write!(Path.join(dir, "releases/start_erl.data"), "13.1.5 1.0.0")
      File.mkdir_p!(Path.join(dir, "bin"))
      File.write!(Path.join(dir, "bin/app"), "#!/bin/sh\n")
      dir
    end

    # The release's tarball as `mix release`'s :tar step writes it.
    defp release_tar!(release, tar) do
      files = for dir <- ~w(bin lib releases), do: {~c"#{dir}", ~c"#{Path.join(release, dir)}"}
      :ok = :erl_tar.create(~c"#{tar}", files, [:dereference, :compressed])
      tar
    end

    # A Hex package: VERSION, CHECKSUM, metadata.config, contents.tar.gz.
    defp package!(dir, document, vsn) do
      contents = Path.join(dir, "contents.tar.gz")

      :ok =
        :erl_tar.create(
          ~c"#{contents}",
          [
            {~c"mix.exs", "defmodule OpenAgentsPolicy.MixProject do end"},
            {~c"lib/openagents_policy.ex", "defmodule OpenAgentsPolicy do end"},
            {~c"priv/decisions.json", File.read!(document)}
          ],
          [:compressed]
        )

      meta = ~s({<<"name">>,<<"openagents_policy">>}.\n{<<"version">>,<<"#{vsn}">>}.\n)
      tar = Path.join(dir, "openagents_policy-#{vsn}.tar")

      :ok =
        :erl_tar.create(
          ~c"#{tar}",
          [
            {~c"VERSION", "3"},
            {~c"CHECKSUM", String.duplicate("0", 64)},
            {~c"metadata.config", meta},
            {~c"contents.tar.gz", File.read!(contents)}
          ],
          []
        )

      tar
    end

    defp sides(deployed, candidate) do
      {status, receipt} = receipt([deployed, candidate])
      {status, receipt["deployed"], receipt["candidate"]}
    end

    test "a release directory, by its lib/openagents_policy-<vsn>", %{dir: dir} = docs do
      release = release!(Path.join(dir, "rel/app"), docs.same, "0.1.0")
      assert {1, side, _} = sides(release, docs.widened)
      assert side == %{"digest" => sha(docs.same), "version" => "0.1.0"}
      candidate = release!(Path.join(dir, "rel/next"), docs.widened, "0.2.0")
      assert {1, _, %{"version" => "0.2.0", "digest" => digest}} = sides(release, candidate)
      assert digest == sha(docs.widened)
    end

    test "a release tarball made by :erl_tar", %{dir: dir} = docs do
      release = release!(Path.join(dir, "rel/app"), docs.widened, "0.2.0")
      tar = release_tar!(release, Path.join(dir, "app-1.0.0.tar.gz"))
      assert {1, _, side} = sides(docs.same, tar)
      assert side == %{"digest" => sha(docs.widened), "version" => "0.2.0"}
      {status, _out, _err} = gate([docs.same, tar, "--accept", sha(docs.widened)])
      assert status == 0
    end

    test "a Hex package tarball, through its contents.tar.gz", %{dir: dir} = docs do
      tar = package!(dir, docs.same, "0.3.0")
      assert {1, side, _} = sides(tar, docs.widened)
      assert side == %{"digest" => sha(docs.same), "version" => "0.3.0"}
    end

    test "a host project, by its deps/openagents_policy", %{dir: dir} = docs do
      dep = Path.join(dir, "host/deps/openagents_policy")
      File.mkdir_p!(Path.join(dep, "priv"))
      File.cp!(docs.widened, Path.join(dep, "priv/decisions.json"))
      File.write!(Path.join(dir, "host/mix.exs"), "")
      host = Path.join(dir, "host")
      assert {1, _, %{"version" => nil, "digest" => digest}} = sides(docs.same, host)
      assert digest == sha(docs.widened)

      File.write!(Path.join(dep, "hex_metadata.config"), ~s({<<"version">>,<<"0.4.0">>}.\n))
      assert {1, _, %{"version" => "0.4.0"}} = sides(docs.same, host)
    end

    test "a checkout or an unpacked package, by its priv/decisions.json", %{dir: dir} = docs do
      File.mkdir_p!(Path.join(dir, "checkout/priv"))
      File.cp!(docs.widened, Path.join(dir, "checkout/priv/decisions.json"))
      assert {1, _, side} = sides(docs.same, Path.join(dir, "checkout"))
      assert side == %{"digest" => sha(docs.widened), "version" => nil}
    end
  end

  describe "an argument that is not a readable document" do
    # Status 2, naming the argument, never "no decision changes".
    defp refused!(args, named) do
      {status, out, err} = gate(args)
      assert status == 2, "status #{status}: #{err}"
      refute out =~ "no decision changes"
      assert err =~ named
      err
    end

    test "a missing file or a directory without a document", %{dir: dir, same: same} do
      missing = Path.join(dir, "missing.json")
      assert refused!([same, missing], "candidate (#{missing})") =~ "no such file"
      assert refused!([dir, same], "deployed (#{dir})") =~ "no lib/openagents_policy-<vsn>/"
    end

    test "an unreadable tarball, or one without a document", %{dir: dir, same: same} do
      broken = Path.join(dir, "broken.tar.gz")
      File.write!(broken, :crypto.strong_rand_bytes(4096))
      assert refused!([same, broken], "candidate (#{broken})") =~ "not a readable tarball"

      empty = Path.join(dir, "empty.tar.gz")
      :ok = :erl_tar.create(~c"#{empty}", [{~c"lib/other-1.0.0/priv/x", "x"}], [:compressed])
      assert refused!([empty, same], "deployed (#{empty})") =~ "neither a release"
    end

    test "a document over the limit, as a file or in a tarball", %{dir: dir, same: same} do
      big = Path.join(dir, "big.json")
      File.write!(big, String.duplicate(" ", 1024 * 1024 + 1))
      assert refused!([big, same], "deployed (#{big})") =~ "over the limit of 1048576 bytes"

      release = release!(Path.join(dir, "rel/app"), big, "0.1.0")
      tar = release_tar!(release, Path.join(dir, "app.tar.gz"))
      assert refused!([same, tar], "candidate (#{tar})") =~ "over the limit of 1048576"
    end

    test "what is not a decision document", %{dir: dir, same: same} do
      array = Path.join(dir, "array.json")
      File.write!(array, "[]")
      assert refused!([same, array], "candidate (#{array})") =~ "not a decision document"
      assert refused!([array, same], "deployed (#{array})") =~ "not a decision document"

      other = Path.join(dir, "format3.json")
      File.write!(other, String.replace(File.read!(same), ~s({"format":3,), ~s({"format":4,)))
      assert refused!([same, other], "candidate (#{other})") =~ "format"
    end

    test "a usage error" do
      refused!(["one.json"], "usage")
      refused!(["a", "b", "--format", "yaml"], "usage")
    end
  end

  describe "the JSON receipt" do
    test "stays within 64 KiB and 32 changes when hundreds differ", %{dir: dir} = docs do
      # Every tier a ladder row answers swapped (dark and glass, pulse and
      # ledger) in the widened document: a change set of hundreds (this
      # transforms the real document to test the bound, not a rule). On
      # both sides, a live link's `revoked_at` reads in 3-byte characters,
      # so that sentences are cut inside one.
      multibyte = &String.replace(&1, "revoked_at: nil}", "revoked_at: ✓✓✓✓✓}")
      same = multibyte.(File.read!(docs.same))

      swap = fn text, a, b ->
        text
        |> String.replace(~s(},"#{a}"]), ~s(},"SWAP"]))
        |> String.replace(~s(},"#{b}"]), ~s(},"#{a}"]))
        |> String.replace(~s(},"SWAP"]), ~s(},"#{b}"]))
      end

      flipped =
        docs.widened
        |> File.read!()
        |> multibyte.()
        |> swap.("dark", "glass")
        |> swap.("pulse", "ledger")

      [deployed, candidate] = [Path.join(dir, "same.json"), Path.join(dir, "flipped.json")]
      File.write!(deployed, same)
      File.write!(candidate, flipped)
      {:ok, changes} = Decisions.diff(same, flipped)
      assert length(changes) > 500
      # In document order, narrowings come among the first 32.
      assert Enum.any?(Enum.take(changes, 32), &(&1.class == :narrows))

      {status, out, _err} = gate([deployed, candidate, "--format", "json"])
      assert status == 1
      assert byte_size(out) <= 65_536
      receipt = Jason.decode!(out)

      counts = Enum.frequencies_by(changes, &"#{&1.class}")

      assert receipt["counts"] ==
               Map.merge(%{"widens" => 0, "narrows" => 0, "changes" => 0}, counts)

      assert length(receipt["changes"]) == 32
      assert receipt["left_out"] == length(changes) - 32
      assert Enum.all?(receipt["changes"], &(&1["class"] == "widens"))

      for change <- receipt["changes"] do
        assert Map.keys(change) == ["class", "says", "table"]
        assert byte_size(change["says"]) <= 128 and String.valid?(change["says"])
      end

      # Some were cut before a character that would have crossed 128 bytes.
      says = for change <- receipt["changes"], do: change["says"]
      assert Enum.any?(says, &(String.ends_with?(&1, "…") and byte_size(&1) < 128))
      assert Enum.any?(says, &String.contains?(&1, "✓"))

      {:ok, host} = :inet.gethostname()
      refute out =~ dir
      refute out =~ List.to_string(host)
    end

    test "holds the verdict, each side's digest and version, the counts and the changes",
         %{dir: dir} = docs do
      {1, receipt} = receipt([docs.same, docs.widened])
      changes = changes(docs.same, docs.widened)
      counts = Enum.frequencies_by(changes, &"#{&1.class}")

      assert receipt == %{
               "verdict" => "refused",
               "deployed" => %{"digest" => sha(docs.same), "version" => nil},
               "candidate" => %{"digest" => sha(docs.widened), "version" => nil},
               "counts" => Map.merge(%{"widens" => 0, "narrows" => 0, "changes" => 0}, counts),
               "changes" =>
                 for(
                   c <- changes,
                   do: %{"class" => "#{c.class}", "table" => c.table, "says" => c.says}
                 ),
               "left_out" => 0
             }

      assert String.starts_with?(
               hd(receipt["changes"])["says"],
               "`#{docs.field}` is now disclosed from `pulse` (was `ledger`)"
             )

      refute inspect(receipt) =~ dir
    end
  end
end
