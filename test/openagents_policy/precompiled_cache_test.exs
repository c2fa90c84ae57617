defmodule OpenAgentsPolicy.PrecompiledCacheTest do
  # The precompiled path's files, as another user of the machine could
  # bend them: the cache directory, the entries in it, the temporary files
  # written beside them, and the install's temporary file in priv/native.
  # Mix.OpenAgentsPolicy.{Precompiled, Cache, Install} (loaded by mix.exs
  # into this VM) are called directly, the artifact served by :httpd on
  # 127.0.0.1. Not async: the compiler reads its settings from the
  # environment.
  use ExUnit.Case, async: false

  alias Mix.OpenAgentsPolicy.{Cache, Install, Precompiled}

  @moduletag timeout: 300_000
  @root File.read!("/proc/self/status") =~ ~r/^Uid:\s+0\s/m
  @nobody 65_534

  setup_all do
    root = Path.join(System.tmp_dir!(), "precompiled_cache_test-#{System.unique_integer()}")
    served = Path.join(root, "served")
    File.mkdir_p!(served)
    on_exit(fn -> File.rm_rf!(root) end)

    # fetch!/3 extracts the one member named like the artifact; what it
    # holds is never loaded here.
    artifact = "libopenagents_policy_nif-v0.0.0-nif-2.15-cache-test.so.tar.gz"
    library = String.replace_suffix(artifact, ".tar.gz", "")
    content = "the library's bytes"
    tar = pack(root, library, content)
    File.write!(Path.join(served, artifact), tar)

    port = OpenAgentsPolicy.Test.Served.serve!(root, served)

    %{
      artifact: artifact,
      library: library,
      content: content,
      tar: tar,
      digest: Mix.Tasks.Compile.OpenagentsPolicyNif.sha256(tar),
      url: "http://127.0.0.1:#{port}"
    }
  end

  defp pack(root, name, content) do
    file = Path.join(root, "packed.tar.gz")
    :ok = :erl_tar.create(String.to_charlist(file), [{~c"#{name}", content}], [:compressed])
    File.read!(file)
  end

  # Each test's own directory, 0700 like one the library makes, and the
  # compiler's settings pointed at it.
  setup ctx do
    dir = Path.join(System.tmp_dir!(), "cache_test-#{System.unique_integer([:positive])}")
    File.mkdir_p!(dir)
    File.chmod!(dir, 0o700)
    cache = Path.join(dir, "cache")
    on_exit(fn -> File.rm_rf!(dir) end)

    shell = Mix.shell()
    Mix.shell(Mix.Shell.Process)
    on_exit(fn -> Mix.shell(shell) end)

    for {var, value} <- [
          {"OPENAGENTS_POLICY_NIF_BASE_URL", ctx.url},
          {"RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH", cache}
        ] do
      previous = System.get_env(var)
      System.put_env(var, value)

      on_exit(fn ->
        if previous, do: System.put_env(var, previous), else: System.delete_env(var)
      end)
    end

    %{dir: dir, cache: cache, work: Path.join(dir, "nif_work-123-4")}
  end

  defp fetch!(ctx), do: Precompiled.fetch!(ctx.artifact, ctx.digest, ctx.work)

  # The refusal's message; nothing was extracted.
  defp refused(ctx) do
    error = assert_raise Mix.Error, fn -> fetch!(ctx) end
    assert error.message =~ "OPENAGENTS_POLICY_BUILD=1"
    assert error.message =~ "OPENAGENTS_POLICY_NIF_PATH"
    refute File.exists?(Path.join(ctx.work, ctx.library))
    error.message
  end

  defp private_cache!(ctx) do
    File.mkdir!(ctx.cache)
    File.chmod!(ctx.cache, 0o700)
  end

  defp mode(path), do: Bitwise.band(File.stat!(path).mode, 0o7777)

  describe "the cache directory" do
    test "one the library creates is 0700, and made whole under its name", ctx do
      nested = Path.join(ctx.cache, "deeper")
      System.put_env("RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH", nested)

      assert {{:precompiled, _url}, library} = fetch!(ctx)
      assert File.read!(library) == ctx.content
      assert mode(nested) == 0o700
      assert File.read!(Path.join(nested, ctx.artifact)) == ctx.tar
      # Nothing beside it: no directory made under a temporary name is left.
      assert File.ls!(ctx.cache) == ["deeper"]
      assert File.ls!(nested) == [ctx.artifact]
    end

    test "one writable by its group or by others is refused, naming it and the way out", ctx do
      File.mkdir!(ctx.cache)

      for mode <- [0o777, 0o770, 0o703] do
        File.chmod!(ctx.cache, mode)
        message = refused(ctx)

        assert message =~
                 "The cache directory #{ctx.cache} can be written by its group or by others"

        assert message =~ "mode #{Integer.to_string(mode, 8)}"
        assert message =~ "RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH"
        assert message =~ "chmod 700 #{ctx.cache}"
        assert File.ls!(ctx.cache) == []
      end

      # Made private, it serves.
      File.chmod!(ctx.cache, 0o755)
      assert {{:precompiled, _}, _library} = fetch!(ctx)
    end

    @tag skip: not @root && "needs root, to give a directory to another user"
    test "one owned by another user is refused, and so is a link another user owns to one of ours",
         ctx do
      File.mkdir!(ctx.cache)
      File.chown!(ctx.cache, @nobody)
      assert refused(ctx) =~ "#{ctx.cache} is owned by another user (uid #{@nobody}"
      assert File.ls!(ctx.cache) == []

      # A link planted in a shared place, pointing at a private directory of ours.
      ours = Path.join(ctx.dir, "ours")
      File.mkdir!(ours)
      File.chmod!(ours, 0o700)
      link = Path.join(ctx.dir, "planted")
      File.ln_s!(ours, link)
      {_, 0} = System.cmd("chown", ["-h", "#{@nobody}", link])
      System.put_env("RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH", link)
      assert refused(ctx) =~ "#{link} is a symbolic link owned by another user (uid #{@nobody})"
      assert File.ls!(ours) == []
    end

    test "one that is not a directory is refused", ctx do
      File.write!(ctx.cache, "a file")
      assert refused(ctx) =~ "The cache directory #{ctx.cache} is not a directory"
      assert File.read!(ctx.cache) == "a file"
    end
  end

  describe "a cached entry that is not a regular file is refused unopened" do
    test "a FIFO (opening one to read blocks until a writer comes: the compile would hang)",
         ctx do
      private_cache!(ctx)
      fifo = Path.join(ctx.cache, ctx.artifact)
      {_, 0} = System.cmd("mkfifo", [fifo])

      fetch =
        Task.async(fn ->
          try do
            fetch!(ctx)
          rescue
            error in Mix.Error -> {:refused, error.message}
          end
        end)

      case Task.yield(fetch, 60_000) do
        {:ok, {:refused, message}} ->
          assert message =~ "The cached #{fifo} is a FIFO or socket, not a regular file"
          assert message =~ "rm -r #{fifo}"
          assert File.lstat!(fifo).type == :other

        other ->
          # Let the blocked open through: a writer comes (from another OS
          # process: this VM's own open of the FIFO would wait too).
          :os.cmd(~c"echo > '#{fifo}'")
          Task.shutdown(fetch, :brutal_kill)
          flunk("the fetch did not refuse the FIFO: #{inspect(other)}")
      end
    end

    test "a directory, and a symbolic link (even to the right artifact)", ctx do
      private_cache!(ctx)
      cached = Path.join(ctx.cache, ctx.artifact)
      File.mkdir!(cached)
      assert refused(ctx) =~ "The cached #{cached} is a directory, not a regular file"

      File.rmdir!(cached)
      right = Path.join(ctx.dir, "right.tar.gz")
      File.write!(right, ctx.tar)
      File.ln_s!(right, cached)
      assert refused(ctx) =~ "The cached #{cached} is a symbolic link, not a regular file"
      assert File.read!(right) == ctx.tar
    end
  end

  describe "files are created exclusively, under names no one can guess" do
    test "a link planted at the temporary name the cache used to write is not written through",
         ctx do
      private_cache!(ctx)
      victim = Path.join(ctx.dir, "victim")
      File.write!(victim, "the victim's data")
      # The name the compiler wrote the download to before: the cached
      # file's, plus the run's work directory's.
      planted = Path.join(ctx.cache, "#{ctx.artifact}.#{Path.basename(ctx.work)}.tmp")
      File.ln_s!(victim, planted)

      assert {{:precompiled, _}, _library} = fetch!(ctx)
      assert File.read!(victim) == "the victim's data"
      assert File.read!(Path.join(ctx.cache, ctx.artifact)) == ctx.tar
      assert File.lstat!(Path.join(ctx.cache, ctx.artifact)).type == :regular
      # Only the cached file beside the planted link: no temporary file left.
      assert Enum.sort(File.ls!(ctx.cache)) == Enum.sort([ctx.artifact, Path.basename(planted)])

      # Cached: served again offline, from the same file.
      System.put_env("OPENAGENTS_POLICY_NIF_BASE_URL", "http://127.0.0.1:9")
      File.rm_rf!(ctx.work)
      assert {{:precompiled, _}, library} = fetch!(ctx)
      assert File.read!(library) == ctx.content
    end

    test "exclusive creation refuses a planted link, dangling or not, and never follows it",
         ctx do
      victim = Path.join(ctx.dir, "victim")
      File.write!(victim, "the victim's data")
      dangling = Path.join(ctx.dir, "would-be-created")

      for {name, target} <- [{"to-victim", victim}, {"dangling", dangling}] do
        link = Path.join(ctx.dir, name)
        File.ln_s!(target, link)
        assert Cache.create_new(link, "written") == {:error, :eexist}
      end

      assert File.read!(victim) == "the victim's data"
      refute File.exists?(dangling)
      assert Cache.create_new(dangling, "written") == :ok
      assert File.read!(dangling) == "written"
    end

    test "the install's temporary file in priv/native is no link's either", ctx do
      # As the compiler lays it out: priv/native, and the run's work directory.
      native = Path.join(ctx.dir, "priv/native")
      File.mkdir_p!(native)
      library = OpenAgentsPolicy.Native.library_file()
      digest = Mix.Tasks.Compile.OpenagentsPolicyNif.sha256(File.read!(library))
      installed = Path.join(native, "libopenagents_policy_nif-#{binary_part(digest, 0, 16)}.so")
      victim = Path.join(ctx.dir, "victim")
      File.write!(victim, "the victim's data")
      # The name the install wrote to before.
      File.ln_s!(victim, Path.join(native, ".#{Path.basename(ctx.work)}.tmp"))

      root = Path.dirname(Mix.Project.project_file())

      assert Install.install!({:prebuilt, library}, library, native, root, ctx.work, false) ==
               {:ok, {:prebuilt, library}, installed}

      assert File.read!(victim) == "the victim's data"
      assert File.read!(installed) == File.read!(library)
      assert File.ls!(native) == [Path.basename(installed)]
    end
  end
end
