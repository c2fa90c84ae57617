# Every module under test answers through the Rust NIF. If the library did not
# load, every test would fail with the same undefined-function or
# :nif_not_loaded error; say why once, and stop.
nif_problem =
  try do
    case Code.ensure_loaded(OpenAgentsPolicy.Native) do
      {:module, native} ->
        if function_exported?(native, :kinds, 0) and is_list(native.kinds()),
          do: nil,
          else: "OpenAgentsPolicy.Native.kinds/0 is missing"

      {:error, reason} ->
        "OpenAgentsPolicy.Native could not be loaded (#{inspect(reason)}): its @on_load " <>
          "hook could not load the NIF library"
    end
  rescue
    error in ErlangError ->
      if error.original == :nif_not_loaded,
        do: "OpenAgentsPolicy.Native is loaded but its NIF is not (:nif_not_loaded)",
        else: reraise(error, __STACKTRACE__)

    error in UndefinedFunctionError ->
      "OpenAgentsPolicy.Native is not callable: " <> Exception.message(error)
  end

if nif_problem do
  IO.puts(:stderr, """

  The openagents_policy NIF did not load, so no test can run.

    #{nif_problem}

  In a checkout, rustler builds it with cargo as OpenAgentsPolicy.Native
  compiles, into #{Path.join(Mix.Project.app_path(), "priv/native")}.
  Rebuild it with `MIX_ENV=test mix compile --force` (cargo must be on PATH).
  The loader's own error is in the log above.
  """)

  System.halt(1)
end

# A message a test waits for may come late on a loaded machine (a CI lane
# beside another): assert_receive waits up to a minute, where ExUnit's
# default is 100 ms. A message that comes at once is still taken at once.
#
# test/repo/ (tagged :repo) checks the repository rather than the library:
# the docs' configuration, the crates' manifests, the build scripts, the
# committed pictures and tables, the source build of a checkout. `mix test`
# leaves it out; `make lint-repo` runs it (`mix test --include repo test/repo`).
ExUnit.start(assert_receive_timeout: 60_000, exclude: [:repo])
