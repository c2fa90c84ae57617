#!/usr/bin/env bash
# Dialyzer over the library's BEAM files.
#
#     scripts/dialyzer.sh
#
# Compiles the library (MIX_ENV, default dev; MIX_BUILD_ROOT is honoured),
# then runs Dialyzer over _build/<env>/lib/openagents_policy/ebin against a
# PLT of erts, kernel, stdlib, compiler and elixir, plus logger and mix when the
# library's BEAM files reference them. The PLT is built once and cached under
# OPENAGENTS_PLT_DIR (default: _build/plt, or $MIX_BUILD_ROOT/plt), named
# after the OTP and Elixir versions and the app set; a later run only checks
# it, which takes seconds. Exits non-zero on any warning (Dialyzer's own exit
# status: 2 for warnings, 1 for an error).
#
# Extra warning flags: DIALYZER_FLAGS (default "-Wunmatched_returns
# -Werror_handling -Wunknown").
#
# Dialyzer comes from Debian's erlang-dialyzer; scripts/ensure_tools.sh
# installs it on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v dialyzer >/dev/null 2>&1 || {
  echo "dialyzer not found: run scripts/ensure_tools.sh (apt-get install erlang-dialyzer)" >&2
  exit 1
}

export MIX_ENV="${MIX_ENV:-dev}"
build_root="${MIX_BUILD_ROOT:-_build}"
plt_dir="${OPENAGENTS_PLT_DIR:-$build_root/plt}"
flags="${DIALYZER_FLAGS:--Wunmatched_returns -Werror_handling -Wunknown}"

mix compile >&2

# Where Mix put the BEAM files, and the versions and library dirs the PLT
# is built from, all as Mix and the VM see them.
read -r ebin elixir_libs otp elixir_version < <(
  mix run --no-compile --no-start -e '
    IO.puts(Enum.join([
      Mix.Project.compile_path(),
      Path.dirname(:code.lib_dir(:elixir)),
      :erlang.system_info(:otp_release),
      System.version()
    ], " "))'
)

# The apps the PLT needs: the base five (compiler: the load check VM's
# module compiles its stub there), and logger and mix when a BEAM
# file's atom table names one of their modules.
apps=(erts kernel stdlib compiler elixir)
grep -qa "Elixir\.Logger" "$ebin"/*.beam && apps+=(logger)
grep -qa "Elixir\.Mix\." "$ebin"/*.beam && apps+=(mix)

# Dialyzer reads Elixir's debug info through elixir_erl, from Elixir's ebin;
# ERL_LIBS also lets the VM find elixir, logger and mix by name.
export ERL_LIBS="$elixir_libs${ERL_LIBS:+:$ERL_LIBS}"

app_dirs=()
for app in "${apps[@]}"; do
  app_dirs+=("$(erl -noshell -eval "io:format(\"~s\", [code:lib_dir($app, ebin)]), halt().")")
done

mkdir -p "$plt_dir"
plt="$plt_dir/otp${otp}-elixir${elixir_version}-$(IFS=-; echo "${apps[*]}").plt"

if [ ! -f "$plt" ]; then
  echo "==> building the PLT (${apps[*]}) at $plt; this takes minutes, once" >&2
  start=$(date +%s)
  # Dialyzer's exit status 2 here is warnings about the PLT's own apps.
  dialyzer --build_plt --output_plt "$plt.tmp" -r "${app_dirs[@]}" >&2 || [ $? -eq 2 ]
  mv "$plt.tmp" "$plt"
  echo "==> PLT built in $(( $(date +%s) - start )) s" >&2
fi

echo "==> dialyzer $flags: $ebin" >&2
# shellcheck disable=SC2086 # flags are words
dialyzer --plt "$plt" $flags "$ebin"
