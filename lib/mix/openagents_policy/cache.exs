defmodule Mix.OpenAgentsPolicy.Cache do
  @moduledoc """
  The download cache's files, kept so that no other user of the machine can
  bend them, even when the cache directory is in a shared place
  (`RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH=/tmp/...`, say).

    * The directory is this user's (or root's: a Nix store path) and
      writable by no group and no other user. One the library creates is
      made mode 0700 before it appears under its name (made under a random
      name beside it, then renamed). One that is not so, or is not a
      directory, or is a symbolic link another user owns, is refused with
      its name and the way out: `RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH`
      naming a directory of the user's own.
    * A cached entry is looked at with `File.lstat/1` first, and only a
      regular file is opened. A FIFO (which would block the compile on
      its open), a directory, a symbolic link or a device is refused
      unopened, with the way out (delete it).
    * A file is written under a random name (`:crypto.strong_rand_bytes/1`)
      and created exclusively (`O_EXCL`: a file or symbolic link already at
      that name is never followed or written through), then renamed into
      place, so a cached file appears whole or not at all.

  Since the directory is only this user's, nothing can swap an entry
  between its `lstat` and its read.

  Owns the cache directory and the writing of files that no other process
  may plant or follow. Absent: what is cached and whether its digest is
  right (`Mix.OpenAgentsPolicy.Precompiled`), and any check on the cache
  directory's parents (a parent another user can rename entries in, without
  the sticky bit, can still swap the directory away).
  """

  import Bitwise

  alias Mix.OpenAgentsPolicy.Source
  alias Mix.Tasks.Compile.OpenagentsPolicyNif, as: Nif

  @doc """
  The cache directory's path: `RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH`, else
  `:filename.basedir(:user_cache, "openagents_policy")`. Not checked; see `dir!/1`.
  """
  @spec dir() :: Path.t()
  def dir do
    System.get_env("RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH") ||
      :filename.basedir(:user_cache, ~c"openagents_policy") |> List.to_string()
  end

  @doc """
  The cache directory `path`, made (mode 0700) if it does not exist; raises
  if it is not a directory that only this user (or root) can write.
  """
  @spec dir!(Path.t()) :: Path.t()
  def dir!(path \\ dir()) do
    path = Path.expand(path)
    if File.lstat(path) == {:error, :enoent}, do: create_private!(path)
    check!(path)
    path
  end

  defp create_private!(path) do
    parent = Path.dirname(path)
    fresh = Path.join(parent, ".#{Path.basename(path)}.#{token()}.new")

    with :ok <- File.mkdir_p(parent),
         :ok <- File.mkdir(fresh),
         :ok <- File.chmod(fresh, 0o700) do
      # Someone else's directory made meanwhile stays, and is checked.
      if File.rename(fresh, path) != :ok, do: File.rmdir(fresh)
    else
      {:error, reason} ->
        File.rmdir(fresh)
        refuse_dir!(path, "cannot be created (#{:file.format_error(reason)})")
    end
  end

  defp check!(path) do
    with {:ok, link} <- File.lstat(path),
         {:ok, stat} <- File.stat(path) do
      me = uid()

      cond do
        stat.type != :directory ->
          refuse_dir!(path, "is not a directory (it is #{kind(stat.type)})")

        me == :none ->
          :ok

        link.type == :symlink and link.uid not in [me, 0] ->
          refuse_dir!(path, "is a symbolic link owned by another user (uid #{link.uid})")

        stat.uid not in [me, 0] ->
          refuse_dir!(path, "is owned by another user (uid #{stat.uid}; this user is #{me})")

        (stat.mode &&& 0o022) != 0 ->
          refuse_dir!(
            path,
            "can be written by its group or by others (mode #{Integer.to_string(stat.mode &&& 0o7777, 8)})"
          )

        true ->
          :ok
      end
    else
      {:error, reason} -> refuse_dir!(path, "cannot be read (#{:file.format_error(reason)})")
    end
  end

  defp refuse_dir!(path, why) do
    Mix.raise("""
    The cache directory #{path} #{why}, so it is not used: another user could \
    plant files the compile reads, or links it writes through. Nothing was installed.
    Make it a directory of your own that only you can write (chmod 700 #{path}), \
    or set RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH to one (one that does not exist \
    yet is created with mode 0700).
    #{Source.ways_out()}
    """)
  end

  # This process's effective uid; :none where there are no uids (Windows).
  defp uid do
    with {:ok, status} <- File.read("/proc/self/status"),
         [_, uid] <- Regex.run(~r/^Uid:\s+\d+\s+(\d+)/m, status) do
      String.to_integer(uid)
    else
      _ ->
        if match?({:win32, _}, :os.type()) do
          :none
        else
          {out, 0} = System.cmd("id", ["-u"])
          String.to_integer(String.trim(out))
        end
    end
  end

  @doc """
  The cached file `name` in the checked directory `dir`: its content, or
  `:none` when there is none (or it cannot be read). Raises, without opening
  it, when the entry is not a regular file.
  """
  @spec read!(Path.t(), String.t()) :: {:ok, binary()} | :none
  def read!(dir, name) do
    path = Path.join(dir, name)

    case File.lstat(path) do
      {:ok, %File.Stat{type: :regular}} ->
        case File.read(path) do
          {:ok, data} -> {:ok, data}
          {:error, _} -> :none
        end

      {:ok, %File.Stat{type: type}} ->
        Mix.raise("""
        The cached #{path} is #{kind(type)}, not a regular file, so it was not opened. \
        Nothing was installed.
        Delete it (rm -r #{path}) and compile again: the artifact is downloaded anew.
        #{Source.ways_out()}
        """)

      {:error, _} ->
        :none
    end
  end

  defp kind(:symlink), do: "a symbolic link"
  defp kind(:directory), do: "a directory"
  defp kind(:device), do: "a device"
  defp kind(:other), do: "a FIFO or socket"
  defp kind(type), do: "of type #{type}"

  @doc """
  Puts `data` in the checked directory `dir` as `name`: written to a new
  file under a random name, then renamed into place. Returns its path.
  """
  @spec put!(Path.t(), String.t(), binary()) :: Path.t()
  def put!(dir, name, data) do
    path = Path.join(dir, name)
    tmp = Path.join(dir, ".#{name}.#{token()}.tmp")

    with :ok <- create_new(tmp, data),
         :ok <- File.rename(tmp, path) do
      path
    else
      {:error, reason} ->
        File.rm(tmp)
        Mix.raise("cannot write #{path} (via #{tmp}): #{:file.format_error(reason)}")
    end
  end

  @doc """
  Creates the file `path` holding `data`, exclusively: `{:error, :eexist}`
  when anything (a file, a symbolic link, even one that dangles) is there.
  """
  @spec create_new(Path.t(), iodata()) :: :ok | {:error, File.posix()}
  def create_new(path, data) do
    case File.open(path, [:write, :exclusive, :binary]) do
      {:ok, file} ->
        written = :file.write(file, data)
        closed = File.close(file)
        if written == :ok, do: closed, else: written

      {:error, reason} ->
        {:error, reason}
    end
  end

  @doc "16 random bytes as hex: a name no other process can guess."
  @spec token() :: String.t()
  def token do
    Nif.ensure_otp_apps([:crypto])
    :crypto.strong_rand_bytes(16) |> Base.encode16(case: :lower)
  end
end
