#!/usr/bin/env bash
# A throw-away PostgreSQL 15 cluster for tests and demos (Debian's postgresql-15, run as root):
#
#   scripts/pg.sh start   # initdb if needed, start on 127.0.0.1:$PGPORT, print the URL
#   scripts/pg.sh url     # print the URL (postgres://postgres@127.0.0.1:$PGPORT/postgres)
#   scripts/pg.sh stop    # stop the cluster this script started, by its PID
#
# State lives in $TTSTORE_PG_DIR (default /tmp/ttstore-pg-$PGPORT; the postgres user must be able to
# enter it, so not under /root). Data is throw-away: fsync is off and trust authentication on loopback.
set -euo pipefail

PGPORT=${PGPORT:-5432}
STATE=${TTSTORE_PG_DIR:-/tmp/ttstore-pg-$PGPORT}
PGDATA=$STATE/data
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
URL="postgres://postgres@127.0.0.1:$PGPORT/postgres"

die() { echo "pg.sh: $*" >&2; exit 1; }
as_pg() { if [ "$(id -un)" = postgres ]; then "$@"; else runuser -u postgres -- "$@"; fi; }
pid_of() { [ -s "$PGDATA/postmaster.pid" ] && head -1 "$PGDATA/postmaster.pid"; }
running() { local pid; pid=$(pid_of) && kill -0 "$pid" 2>/dev/null; }

case "${1:-}" in
  start)
    [ -x "$PGBIN/initdb" ] || die "postgresql-15 is not installed (apt-get install postgresql-15)"
    if ! running; then
      if [ ! -s "$PGDATA/PG_VERSION" ]; then
        rm -rf "$PGDATA"
        install -d -m 755 "$STATE"
        install -d -o postgres -g postgres -m 700 "$PGDATA"
        as_pg "$PGBIN/initdb" -D "$PGDATA" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync >"$STATE/initdb.log"
      fi
      as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -l "$PGDATA/server.log" -w -t 60 \
        -o "-p $PGPORT -k $PGDATA -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
        start >/dev/null || { tail -20 "$PGDATA/server.log" >&2; die "postgres did not start"; }
    fi
    for _ in $(seq 150); do "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$PGPORT" && break; sleep 0.2; done
    "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$PGPORT" || die "postgres does not answer on port $PGPORT"
    echo "$URL"
    ;;
  url)
    echo "$URL"
    ;;
  stop)
    if pid=$(pid_of) && kill -0 "$pid" 2>/dev/null; then
      kill -INT "$pid" # fast shutdown
      for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    ;;
  *)
    die "usage: scripts/pg.sh start|stop|url"
    ;;
esac
