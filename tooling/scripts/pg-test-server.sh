#!/usr/bin/env bash
# A throwaway PostgreSQL 15 for the cluster-mode tests.
#
#   pg-test-server.sh start   installs Debian's postgresql-15 when missing (root and apt-get
#                             needed for that), initialises a cluster in a new temporary directory
#                             (trust auth, superuser `agentd`), starts it on a free loopback port
#                             and prints `AGENTD_TEST_PG_URL=postgres://agentd@127.0.0.1:PORT/postgres`
#                             on its last line of standard output, after
#                             `AGENTD_TEST_PG_DIR=DIR` (the directory `stop` takes). Source the
#                             script instead (`. pg-test-server.sh start`) to export both.
#   pg-test-server.sh stop [DIR]  stops the server started from DIR (default: the directory the
#                             last start recorded in $PG_TEST_STATE) and removes DIR.
#
# The server runs with fsync=off: it is thrown away after the run, and the tests measure
# behaviour, not durability; PG_TEST_FSYNC=on keeps fsync (the storage benchmark sets it).
# initdb refuses to run as root, so under root the server runs as the `postgres` user (through
# runuser or su); otherwise it runs as the calling user. pg_ctlcluster is not used: it needs the
# root-owned /etc/postgresql.
set -uo pipefail

PG_TEST_STATE=${PG_TEST_STATE:-${TMPDIR:-/tmp}/agentd-pg-test.dir}

pg_bindir() {
  local dir
  for dir in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
    [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] && { echo "$dir"; return 0; }
  done
  command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1 && {
    dirname "$(command -v initdb)"
    return 0
  }
  return 1
}

install_pg() {
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "installing Debian package postgresql-15" >&2
    apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql-15 >&2 && return 0
    echo "apt-get install postgresql-15 failed" >&2
    return 1
  fi
  echo "PostgreSQL 15 is missing; install it with: sudo apt-get install -y postgresql-15" >&2
  return 1
}

# as_owner <command...>: runs a command as the user that owns the cluster.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    if command -v runuser >/dev/null; then
      runuser -u postgres -- "$@"
    else
      su postgres -s /bin/sh -c "$(printf '%q ' "$@")"
    fi
  else
    "$@"
  fi
}

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

start() {
  local bin dir port tries
  bin=$(pg_bindir) || { install_pg && bin=$(pg_bindir); } || {
    echo "pg-test-server: no PostgreSQL binaries found" >&2
    return 1
  }
  dir=$(mktemp -d "${TMPDIR:-/tmp}/agentd-pg.XXXXXX") || return 1
  chmod 755 "$dir"
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || { echo "pg-test-server: no postgres user to run the server as" >&2; return 1; }
    chown postgres "$dir"
  fi
  as_owner "$bin/initdb" -D "$dir/data" -A trust -U agentd -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 || {
    echo "pg-test-server: initdb failed:" >&2
    cat "$dir/initdb.log" >&2
    return 1
  }
  for tries in 1 2 3; do
    port=$(free_port) || return 1
    if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=${PG_TEST_FSYNC:-off}" start >&2; then
      echo "$dir" >"$PG_TEST_STATE"
      echo "$port" >"$dir/port"
      export AGENTD_TEST_PG_DIR=$dir
      export AGENTD_TEST_PG_URL="postgres://agentd@127.0.0.1:$port/postgres"
      echo "AGENTD_TEST_PG_DIR=$AGENTD_TEST_PG_DIR"
      echo "AGENTD_TEST_PG_URL=$AGENTD_TEST_PG_URL"
      return 0
    fi
    echo "pg-test-server: start on port $port failed (attempt $tries)" >&2
    tail -n 20 "$dir/server.log" >&2 2>/dev/null
  done
  rm -rf "$dir"
  return 1
}

stop() {
  local dir=${1:-}
  [ -n "$dir" ] || dir=$(cat "$PG_TEST_STATE" 2>/dev/null) || true
  [ -n "$dir" ] && [ -d "$dir/data" ] || { echo "pg-test-server: nothing to stop" >&2; return 0; }
  local bin
  bin=$(pg_bindir) || return 1
  as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true
  rm -rf "$dir"
  [ "$(cat "$PG_TEST_STATE" 2>/dev/null)" = "$dir" ] && rm -f "$PG_TEST_STATE"
  return 0
}

case "${1:-}" in
start) start ;;
stop) stop "${2:-}" ;;
*)
  echo "usage: pg-test-server.sh start|stop [DIR]" >&2
  false
  ;;
esac
