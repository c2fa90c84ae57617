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

  The library is built by the :openagents_policy_nif compiler (mix.exs) into
  #{Path.join(Mix.Project.app_path(), "priv/native/libopenagents_policy_nif.so")}.
  Rebuild it with `MIX_ENV=test mix compile --force` (cargo must be on PATH),
  or point OPENAGENTS_POLICY_NIF_PATH at a prebuilt library and recompile.
  The loader's own error is in the log above.
  """)

  System.halt(1)
end

# Mix 1.15 and later keep the OTP applications a project does not declare
# off the code path; the library declares none. The precompiled test serves
# artifacts with :inets' httpd. On the path before any test file compiles,
# so the compiler never warns that :inets is undefined (Elixir 1.18 compiles
# test files while others run, so whether it warned depended on the order).
if function_exported?(Mix, :ensure_application!, 1),
  do: Enum.each([:inets, :ssl, :public_key], &apply(Mix, :ensure_application!, [&1]))

# The precompiled tests' served directory (test/support/served.exs): a
# script, not compiled with test/support, since it calls :inets, which the
# library does not depend on (compiled, it would warn on every lane).
Code.require_file("support/served.exs", __DIR__)

# A message a test waits for may come late on a loaded machine (a CI lane
# beside another): assert_receive waits up to a minute, where ExUnit's
# default is 100 ms. A message that comes at once is still taken at once.
ExUnit.start(assert_receive_timeout: 60_000)
