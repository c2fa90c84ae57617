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

  # The verdict line's counts, those above zero, against the diff's own.
  defp tally!(out, verdict, changes) do
    [tally] =
      Regex.run(~r/^gate: #{verdict} \(([^)]*)\); candidate [0-9a-f]{64}$/m, out,
        capture: :all_but_first
      )

    counts =
      for [n, class] <- Regex.scan(~r/(\d+) (\w+)/, tally, capture: :all_but_first),
          n != "0",
          into: %{},
          do: {class, String.to_integer(n)}

    assert counts == Enum.frequencies_by(changes, &"#{&1.class}")
  end

  # A receipt's counts above zero.
  defp counted(receipt), do: Map.reject(receipt["counts"], fn {_, n} -> n == 0 end)

  defp markdown(old, new) do
    {:ok, markdown} = Decisions.diff(File.read!(old), File.read!(new), format: :markdown)
    String.trim_trailing(markdown)
  end

  describe "the verdict" do
    test "the same document passes", %{same: same} do
      {status, out, _err} = gate([same, same])
      assert status == 0
      assert out =~ "no decision changes"
      tally!(out, "pass", [])
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
      tally!(out, "pass", changes)
      refute err =~ "--accept"
      {:ok, host} = :inet.gethostname()
      refute out =~ Path.dirname(same) or out =~ List.to_string(host)
    end

    test "a widening is refused, printing the candidate's digest to accept",
         %{same: same, widened: widened, field: field} do
      {status, out, err} = gate([same, widened])
      assert status == 1
      assert out =~ markdown(same, widened)
      assert out =~ "`#{field}` is now disclosed from `pulse` (was `ledger`)"
      tally!(out, "refused", changes(same, widened))
      assert [digest] = Regex.run(~r/--accept ([0-9a-f]{64})$/m, err, capture: :all_but_first)
      assert digest == sha(widened)

      assert {1, %{"verdict" => "refused"}} = receipt([same, widened])
    end

    test "a widening is accepted by the candidate's exact digest", %{same: same, widened: widened} do
      {status, out, _err} = gate([same, widened, "--accept", sha(widened)])
      assert status == 0
      tally!(out, "accepted", changes(same, widened))
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

  describe "one candidate, one document, read within a budget" do
    # A ustar header as tar writes it: `size` is what it claims, whatever follows.
    defp header(name, size, type \\ ?0) do
      field = fn text, n -> text <> :binary.copy(<<0>>, n - byte_size(text)) end
      octal = &String.pad_leading(Integer.to_string(&1, 8), &2, "0")

      blank =
        IO.iodata_to_binary([
          field.(name, 100),
          field.("0000644", 8),
          field.("0", 8),
          field.("0", 8),
          field.(octal.(size, 11), 12),
          field.("0", 12),
          "        ",
          type,
          field.("", 100),
          "ustar\0",
          "00",
          field.("", 247)
        ])

      sum = blank |> :binary.bin_to_list() |> Enum.sum()
      <<before::binary-148, _::binary-8, rest::binary>> = blank
      before <> octal.(sum, 6) <> <<0, 32>> <> rest
    end

    defp entry(name, body, type \\ ?0),
      do: [
        header(name, byte_size(body), type),
        body,
        :binary.copy(<<0>>, rem(512 - rem(byte_size(body), 512), 512))
      ]

    # A PAX extended header naming the next member's path.
    defp pax_path(path) do
      record = fn len -> "#{len} path=#{path}\n" end
      len = Enum.reduce(1..3, 0, fn _, n -> byte_size(record.(n)) end)
      entry("PaxHeader", record.(len), ?x)
    end

    defp tar!(dir, name, entries) do
      path = Path.join(dir, name)
      tar = IO.iodata_to_binary([entries, :binary.copy(<<0>>, 1024)])
      File.write!(path, if(String.ends_with?(name, ".tar"), do: tar, else: :zlib.gzip(tar)))
      path
    end

    defp doc_member(vsn, doc),
      do: entry("lib/openagents_policy-#{vsn}/priv/decisions.json", File.read!(doc))

    # Status 2, and the bytes of tar stream read before the refusal.
    defp refused_after!(args, named) do
      {status, out, err} = gate(args)
      assert {status, out} == {2, ""}, err
      assert err =~ named

      [read] =
        Regex.run(~r/refused after (\d+) bytes of tar stream/, err, capture: :all_but_first)

      String.to_integer(read)
    end

    test "two versions of the library, in a directory or a tarball, or a release and a package",
         %{dir: dir} = docs do
      release = release!(Path.join(dir, "rel/app"), docs.same, "0.1.0")
      release!(release, docs.widened, "0.2.0")

      named =
        "2 openagents_policy libraries, one allowed: \"lib/openagents_policy-0.1.0\", \"lib/openagents_policy-0.2.0\""

      assert {2, "", err} = gate([docs.same, release])
      assert err =~ named
      tar = release_tar!(release, Path.join(dir, "two.tar.gz"))
      refused_after!([docs.same, tar], named)

      package = package!(dir, docs.same, "0.1.0")

      both =
        tar!(dir, "both.tar", [
          entry("contents.tar.gz", File.read!(Path.join(dir, "contents.tar.gz"))),
          doc_member("0.2.0", docs.widened)
        ])

      refused_after!([docs.same, both], "a Hex package's contents.tar.gz")

      assert {0, _, _} = gate([docs.same, package])
    end

    test "a member named twice, however written", %{dir: dir} = docs do
      for second <- [
            "lib/openagents_policy-0.1.0/priv/decisions.json",
            "./lib//openagents_policy-0.1.0/./priv/decisions.json"
          ] do
        tar =
          tar!(dir, "twice.tar.gz", [
            doc_member("0.1.0", docs.same),
            entry(second, File.read!(docs.widened))
          ])

        refused_after!(
          [docs.same, tar],
          "\"lib/openagents_policy-0.1.0/priv/decisions.json\" is in it twice"
        )
      end

      dotted =
        tar!(dir, "dotted.tar", [
          doc_member("0.1.0", docs.same),
          entry("lib/x/../openagents_policy-0.1.0/priv/decisions.json", "{}")
        ])

      refused_after!([docs.same, dotted], "a member name with ..")
    end

    test "a FIFO or a device where a file is expected, refused before it is opened",
         %{dir: dir} = docs do
      for name <- ["fifo.tar.gz", "fifo.json"] do
        fifo = Path.join(dir, name)
        {_, 0} = System.cmd("mkfifo", [fifo])
        assert {2, "", err} = gate([docs.same, fifo])
        assert err =~ "not a file, a directory or a tarball (other)"
      end

      assert {2, "", err} = gate(["/dev/null", docs.same])
      assert err =~ "not a file, a directory or a tarball (device)"
      File.mkdir_p!(Path.join(dir, "priv/decisions.json"))
      assert {2, "", err} = gate([docs.same, dir])
      assert err =~ "not a file, a directory or a tarball (directory)"
    end

    test "a header claiming a huge member is refused from the header, before its data",
         %{dir: dir} = docs do
      doc = "lib/openagents_policy-0.1.0/priv/decisions.json"

      huge =
        tar!(dir, "huge.tar.gz", [
          header(doc, 1_073_741_824),
          entry(doc, File.read!(docs.widened))
        ])

      assert refused_after!([docs.same, huge], "1073741824 bytes, over the limit of 1048576") <=
               65_536

      other =
        tar!(dir, "other.tar.gz", [
          header("lib/big-1.0.0/blob", 2_147_483_648),
          doc_member("0.1.0", docs.widened)
        ])

      assert refused_after!(
               [docs.same, other],
               "a member of 2147483648 bytes, over the budget of 268435456"
             ) <= 65_536

      contents = Path.join(dir, "contents.tar.gz")

      File.write!(
        contents,
        :zlib.gzip(
          IO.iodata_to_binary([
            header("priv/decisions.json", 1_073_741_824),
            :binary.copy(<<0>>, 1024)
          ])
        )
      )

      hex =
        tar!(dir, "openagents_policy-0.1.0.tar", [
          entry("metadata.config", ""),
          entry("contents.tar.gz", File.read!(contents))
        ])

      assert refused_after!([docs.same, hex], "1073741824 bytes, over the limit of 1048576") <=
               65_536
    end

    test "a stream that inflates past the budget is refused as it inflates", %{dir: dir} = docs do
      z = :zlib.open()
      :ok = :zlib.deflateInit(z, :default, :deflated, 31, 8, :default)
      mib = :binary.copy(<<0>>, 1_048_576)
      head = :zlib.deflate(z, IO.iodata_to_binary(doc_member("0.1.0", docs.widened)))
      body = for _ <- 1..257, do: :zlib.deflate(z, mib)
      File.write!(Path.join(dir, "bomb.tar.gz"), [head, body, :zlib.deflate(z, [], :finish)])
      :zlib.close(z)

      read =
        refused_after!(
          [docs.same, Path.join(dir, "bomb.tar.gz")],
          "over the budget of 268435456 bytes"
        )

      # Past it by at most one read: 1 KiB of gzip, inflated at most 1032 to 1.
      assert read > 268_435_456 and read <= 268_435_456 + 1024 * 1032
    end

    test "more members than the budget, each empty", %{dir: dir} = docs do
      entries = for n <- 1..65_537, do: header("m/#{n}", 0)
      many = tar!(dir, "many.tar.gz", entries)
      assert refused_after!([docs.same, many], "over 65536 members") <= 65_537 * 512 + 65_536
    end

    test "a version over 64 bytes: in a name, in a PAX path, in Hex metadata",
         %{dir: dir} = docs do
      long = "1.0.0-" <> String.duplicate("a", 60_000)

      over = "lib/openagents_policy-1.0.0-#{String.duplicate("a", 59)}/priv/decisions.json"
      named = tar!(dir, "named.tar.gz", [pax_path(over), doc_member("0.1.0", docs.same)])

      refused_after!([docs.same, named], "a version of 65 bytes, over 64")

      path = "lib/openagents_policy-#{long}/priv/decisions.json"

      paxed =
        tar!(dir, "pax.tar.gz", [
          pax_path(path),
          doc_member("0.1.0", docs.same)
        ])

      {2, "", err} = gate([docs.same, paxed])

      assert err =~ "a member name of #{byte_size(path)} bytes, over 4096" and
               byte_size(err) < 1024

      dir = Path.join(dir, "hex")
      File.mkdir_p!(dir)
      tar = package!(dir, docs.same, "0.1.0")
      meta = ~s({<<"version">>,<<"#{long}">>}.\n)

      hex =
        tar!(dir, "openagents_policy-0.1.0.tar", [
          entry("metadata.config", meta),
          entry("contents.tar.gz", File.read!(Path.join(dir, "contents.tar.gz")))
        ])

      assert hex == tar
      {2, "", err} = gate([docs.same, hex, "--format", "json"])
      assert err =~ "a version of 60006 bytes, over 64" and byte_size(err) < 1024
    end

    test "an empty document, or one missing a row its vocabularies imply, is incomplete",
         %{dir: dir, same: same} do
      live = File.read!(same)
      empty = Path.join(dir, "empty.json")
      File.write!(empty, ~s({"format":3,"rows":[]}))
      [never] = Regex.run(~r/^\["schedule\.never",\{"family":"attempt"\}.*\n/m, live)
      removed = Path.join(dir, "removed.json")
      File.write!(removed, String.replace(live, never, ""))

      for candidate <- [empty, removed] do
        assert {2, "", err} = gate([same, candidate])
        assert err =~ "candidate (#{candidate}): the new document is incomplete"
      end

      assert {2, "", _} = gate([empty, same])
    end

    test "a question the candidate no longer answers is refused, and acceptable",
         %{dir: dir, same: same} do
      live = File.read!(same)
      [field] = Regex.run(~r/^\["schedule\.fields",.*\n/m, live)
      removed = Path.join(dir, "removed.json")
      File.write!(removed, String.replace(live, field, ""))
      assert [%{class: :removed}] = changes(same, removed)
      {status, out, err} = gate([same, removed])
      assert status == 1 and err =~ "--accept #{sha(removed)}"
      tally!(out, "refused", changes(same, removed))
      assert {0, %{"verdict" => "accepted"}} = receipt([same, removed, "--accept", sha(removed)])
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

      assert counted(receipt) == counts

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

      assert counted(receipt) == counts

      assert Map.delete(receipt, "counts") == %{
               "verdict" => "refused",
               "deployed" => %{"digest" => sha(docs.same), "version" => nil},
               "candidate" => %{"digest" => sha(docs.widened), "version" => nil},
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
