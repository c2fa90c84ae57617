# Loads the host's facts, the host stand-ins and the fuzzer (test/support)
# into a VM where test/support is not compiled: the long runs of
# scripts/fuzz.exs and scripts/parity.exs, which run under MIX_ENV=bench (the
# library compiled as a host compiles it). Under MIX_ENV=test these modules
# are compiled already, and each file is loaded only where the VM has no
# such module.

for {module, file} <- [
      {OpenAgentsPolicy.Test.Upstream, "upstream.ex"},
      {OpenAgentsPolicy.Test.Assignment, "host_stand_ins.ex"},
      {OpenAgentsPolicy.Fuzz, "fuzz.ex"}
    ],
    not Code.ensure_loaded?(module),
    do: Code.require_file("../test/support/" <> file, __DIR__)
