#!/usr/bin/env bash
# A throwaway PostgreSQL 15 for the example host app's tests and demo, on a
# Debian or Ubuntu machine. Prints the DATABASE_URL to use.
#
#   postgres.sh start [PORT]   install PostgreSQL with apt if missing, create a cluster
#                              in $OPENAGENTS_PG_DIR (default /tmp/openagents-pg-PORT),
#                              start it on localhost:PORT (5432); a no-op when it runs
#   postgres.sh stop [PORT]    stop it (its data stays; remove the directory to reset)
#   postgres.sh url [PORT]     print the DATABASE_URL
#   postgres.sh stop-started   stop every server listed in $OPENAGENTS_PG_STARTED
#
# With OPENAGENTS_PG_STARTED naming a file, `start` appends there the data
# directory of a server it started, so its caller stops exactly that. Account
# postgres/postgres, no fsync: keep nothing in it. As root, the server runs as
# the `postgres` OS user.
set -euo pipefail

cmd=${1:-start}
port=${2:-5432}
# PostgreSQL 15, as on Debian bookworm; where the distribution packages another
# major version instead (Debian trixie: 17), that one.
server_bin() {
  local found
  for found in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
    [[ -x $found/initdb ]] && { echo "$found"; return; }
  done
  echo /usr/lib/postgresql/15/bin
}
bin=$(server_bin)
dir=${OPENAGENTS_PG_DIR:-/tmp/openagents-pg-$port}
url="postgres://postgres:postgres@localhost:$port/host_app"

say() { echo "postgres.sh: $*" >&2; }

# Run as the server's OS user.
if [[ $(id -u) == 0 ]]; then
  as_server() { (cd / && runuser -u postgres -- "$@"); }
else
  as_server() { "$@"; }
fi

sudo_if_needed() { if [[ $(id -u) == 0 ]]; then "$@"; else sudo "$@"; fi; }

running() { [[ -f $dir/data/PG_VERSION ]] && as_server "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; }

install() {
  [[ -x $bin/initdb ]] && return
  # The package must not create and start a "main" cluster of its own on 5432.
  if [[ ! -e /etc/postgresql-common/createcluster.conf ]]; then
    sudo_if_needed mkdir -p /etc/postgresql-common
    echo "create_main_cluster = false" | sudo_if_needed tee /etc/postgresql-common/createcluster.conf >/dev/null
  fi
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  local package=postgresql-15
  apt-cache show postgresql-15 >/dev/null 2>&1 || package=postgresql
  say "installing $package"
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$package" >/dev/null
  bin=$(server_bin)
}

start() {
  if running; then say "already running on port $port"; echo "$url"; return; fi
  install
  if "$bin/pg_isready" -q -h localhost -p "$port"; then
    # Not ours: use it if it takes the same account, else give up.
    if PGPASSWORD=postgres "$bin/psql" -h localhost -p "$port" -U postgres -d postgres -Atqc 'select 1' >/dev/null 2>&1; then
      say "a server already runs on port $port and takes postgres/postgres: using it"
      echo "$url"
      return
    fi
    say "another server already listens on port $port ($(ss -Hltnp "sport = :$port" 2>/dev/null | head -1)); pass another port"
    exit 1
  fi
  mkdir -p "$dir"
  [[ $(id -u) == 0 ]] && chown postgres:postgres "$dir"
  chmod 700 "$dir"
  if [[ ! -f $dir/data/PG_VERSION ]]; then
    say "initdb $dir/data"
    as_server bash -c "umask 077 && echo postgres >'$dir/password' && '$bin/initdb' -D '$dir/data' -U postgres \
      --pwfile='$dir/password' --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --no-locale >/dev/null && rm '$dir/password'"
    as_server bash -c "cat >>'$dir/data/postgresql.conf'" <<CONF
listen_addresses = 'localhost'
port = $port
unix_socket_directories = '$dir'
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
CONF
  fi
  as_server "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null ||
    { say "could not start; the end of $dir/server.log:"; tail -20 "$dir/server.log" >&2; exit 1; }
  say "running on localhost:$port ($dir)"
  [[ -z ${OPENAGENTS_PG_STARTED:-} ]] || echo "$dir" >>"$OPENAGENTS_PG_STARTED"
  echo "$url"
}

case $cmd in
  start) start ;;
  stop) if running; then as_server "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null; say "stopped"; fi ;;
  url) echo "$url" ;;
  stop-started)
    [[ -f ${OPENAGENTS_PG_STARTED:-} ]] || exit 0
    sort -u "$OPENAGENTS_PG_STARTED" | while read -r started; do
      as_server "$bin/pg_ctl" -D "$started/data" -m fast -w stop >/dev/null 2>&1 && say "stopped $started"
    done
    rm -f "$OPENAGENTS_PG_STARTED"
    ;;
  *) echo "usage: $0 start|stop|url [PORT] | stop-started" >&2; exit 2 ;;
esac
