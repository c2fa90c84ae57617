# Sourced by the scripts that run the example host's release. The release is
# castle's: `bin/host_app start` first writes releases/<vsn>/sys.config from
# build.config and runtime.exs (with the environment it runs in), and
# `bin/host_app eval` reads that file. A release that has never started has
# none, so eval needs this first.
#
#   castle_sys_config RELEASE_ROOT VSN
castle_sys_config() {
  local root=$1 vsn=$2
  (cd "$root" && RELEASE_ROOT="$root" "releases/$vsn/elixir" --cookie "castle_sys_config_$$" \
    --erl-config "releases/$vsn/build" --boot "releases/$vsn/preboot" \
    --boot-var RELEASE_LIB "$root/lib" --vm-args "releases/$vsn/vm.args" \
    --eval "Castle.generate(\"$vsn\")")
}
