#!/usr/bin/env bash
# A throw-away ttstore cluster on loopback, from Debian packages, as root, without systemd:
# PostgreSQL, Redis, an S3 endpoint (Ceph radosgw over one mon and one memstore OSD), three ttstore
# nodes and nginx round-robin in front (docs/deploy.md has the same topology for docker compose).
#
#   bash scripts/cluster.sh start      # install what is missing, start what is not running, print the exports
#   bash scripts/cluster.sh services   # PostgreSQL, Redis and radosgw only (tests); prints their env file
#   bash scripts/cluster.sh stop       # stop everything it started, by PID
#   bash scripts/cluster.sh balance    # nginx over TTSTORE_NODE_PORTS on TTSTORE_LB_PORT, files in TTSTORE_LB_DIR
#                                      # (default <state>/nginx): started, or its upstreams rewritten and reloaded
#   bash scripts/cluster.sh balance-stop  # stops that nginx
#   bash scripts/cluster.sh drain PORT    # that nginx stops choosing 127.0.0.1:PORT (marked down, reloaded);
#                                         # returns once no nginx worker that could still choose it is left
#   bash scripts/cluster.sh undrain PORT  # puts it back (rewritten and reloaded)
#   bash scripts/cluster.sh stop-node N   # node N (0-based) drained, then SIGTERM, waits until it has exited
#   bash scripts/cluster.sh restart-node N  # stop-node N, start it again, undrain it: a graceful restart
#
# Idempotent: what already runs from the state folder is left alone; a state folder with nothing
# running is thrown away and made anew (memstore and fsync=off data are throw-away by design).
# The last lines of `start` are
#   export TTSTORE_URL=<nginx url>  export TTSTORE_SERVICE_KEY=<key>  export TTSTORE_NODE_URLS=<u1>,<u2>,<u3>
#
# Settings (environment): TTSTORE_CLUSTER_DIR (state folder, default /tmp/ttstore-cluster; user postgres
# must be able to enter it), TTSTORE_PG_PORT (5432), TTSTORE_REDIS_PORT (6379), TTSTORE_S3_PORT (7480),
# TTSTORE_NODE_PORTS ("8091 8092 8093"), TTSTORE_LB_PORT (8090), TTSTORE_LB_DIR (<state>/nginx),
# TTSTORE_CEPH_MON_PORT (Ceph's 3300 and 6789), TTSTORE_SERVICE_KEY (default: generated),
# TTSTORE_CLUSTER_SQLITE=1 (nodes share one SQLite file on this machine instead of PostgreSQL; chosen by
# itself while the build does not know SVC_GATE_DATABASE_URL).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)

STATE=${TTSTORE_CLUSTER_DIR:-/tmp/ttstore-cluster}
PG_PORT=${TTSTORE_PG_PORT:-5432}
REDIS_PORT=${TTSTORE_REDIS_PORT:-6379}
S3_PORT=${TTSTORE_S3_PORT:-7480}
read -r -a NODE_PORTS <<<"${TTSTORE_NODE_PORTS:-8091 8092 8093}"
LB_PORT=${TTSTORE_LB_PORT:-8090}
NGINX_DIR=${TTSTORE_LB_DIR:-$STATE/nginx}
# Ceph's monitor: its own ports 3300 and 6789 unless TTSTORE_CEPH_MON_PORT names one (msgr2 only), so two clusters fit one machine
MON_PORT=${TTSTORE_CEPH_MON_PORT:-}
S3_ACCESS_KEY=TTSTORECLUSTERKEY000
S3_SECRET_KEY=ttstoreclustersecret0000000000000000000000
S3_BUCKET=ttstore
PGBIN=/usr/lib/postgresql/15/bin
PGDATA=$STATE/pg
CEPHDIR=$STATE/ceph
export CEPH_CONF=$CEPHDIR/ceph.conf

log() { printf '[cluster %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# wait_for SECONDS CMD...: poll every 0.2 s until CMD succeeds
wait_for() { local n=$(($1 * 5)); shift; while ! "$@" >/dev/null 2>&1; do ((n--)) || return 1; sleep 0.2; done; }
# a daemon whose parent is PID 1 may stay a zombie until reaped: count that as stopped
running() { local st; st=$(ps -o stat= -p "$1" 2>/dev/null) && [[ $st != Z* ]]; }
alive() { [ -s "$1" ] && running "$(cat "$1")"; }
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# stop_pidfile FILE [SECONDS]: SIGTERM, then SIGKILL after SECONDS (default 10) if it still runs
stop_pidfile() {
  local f=$1 p
  alive "$f" || { rm -f "$f"; return 0; }
  p=$(cat "$f")
  kill "$p" 2>/dev/null || true
  for _ in $(seq $((${2:-10} * 10))); do running "$p" || break; sleep 0.1; done
  running "$p" && kill -9 "$p" 2>/dev/null || true
  rm -f "$f"
}

stop_all() {
  local i
  [ -f "$NGINX_DIR/nginx.pid" ] && stop_pidfile "$NGINX_DIR/nginx.pid"
  for i in "${!NODE_PORTS[@]}"; do stop_pidfile "$STATE/node$i.pid"; done
  # radosgw and the OSD before the monitor (an OSD whose monitor is gone waits to exit)
  for f in "$CEPHDIR/run/client.rgw.tts.pid" "$CEPHDIR/run/osd.0.pid" "$CEPHDIR/run/mon.a.pid" "$STATE/redis/redis.pid"; do
    stop_pidfile "$f"
  done
  if [ -f "$PGDATA/postmaster.pid" ]; then
    runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -f "$CEPHDIR/ready"
  log "stopped"
}

install_packages() {
  local need=()
  [ -x "$PGBIN/initdb" ] || need+=(postgresql-15)
  command -v redis-server >/dev/null || need+=(redis-server)
  for c in ceph-mon ceph-osd radosgw; do command -v $c >/dev/null || need+=($c); done
  command -v curl >/dev/null || need+=(curl)
  command -v ps >/dev/null || need+=(procps)
  command -v uuidgen >/dev/null || need+=(uuid-runtime)
  if [ "${1:-}" = nginx ]; then command -v nginx >/dev/null || need+=(nginx); fi
  ((${#need[@]})) || return 0
  log "installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # nginx's package would start the system's own nginx on port 80: keep its service from starting
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  rm -f /usr/sbin/policy-rc.d
}

start_postgres() {
  if runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; then return 0; fi
  port_busy "$PG_PORT" && die "port $PG_PORT is taken by another server (TTSTORE_PG_PORT picks another)"
  if [ ! -s "$PGDATA/PG_VERSION" ]; then
    rm -rf "$PGDATA"
    install -d -o postgres -g postgres -m 700 "$PGDATA"
    runuser -u postgres -- "$PGBIN/initdb" -D "$PGDATA" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync >"$STATE/pg-initdb.log"
  fi
  runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" -l "$PGDATA/server.log" -w -t 60 \
    -o "-p $PG_PORT -k $PGDATA -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    start >/dev/null || { tail -20 "$PGDATA/server.log" >&2; die "postgres did not start"; }
  wait_for 30 "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" || die "postgres does not answer"
  log "postgres on 127.0.0.1:$PG_PORT"
}

start_redis() {
  mkdir -p "$STATE/redis"
  if alive "$STATE/redis/redis.pid"; then return 0; fi
  port_busy "$REDIS_PORT" && die "port $REDIS_PORT is taken by another server (TTSTORE_REDIS_PORT picks another)"
  redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --dir "$STATE/redis" \
    --pidfile "$STATE/redis/redis.pid" --logfile "$STATE/redis/redis.log" --save '' --appendonly no
  wait_for 30 sh -c "redis-cli -h 127.0.0.1 -p $REDIS_PORT ping | grep -q PONG" || die "redis does not answer"
  log "redis on 127.0.0.1:$REDIS_PORT"
}

s3_up() { curl -sf -o /dev/null --max-time 5 "http://127.0.0.1:$S3_PORT/"; }
start_s3() {
  if [ -f "$CEPHDIR/ready" ] && alive "$CEPHDIR/run/mon.a.pid" && alive "$CEPHDIR/run/osd.0.pid" \
    && alive "$CEPHDIR/run/client.rgw.tts.pid" && s3_up; then return 0; fi
  # memstore keeps nothing across restarts: a partial cluster is rebuilt from scratch
  local f
  for f in client.rgw.tts osd.0 mon.a; do stop_pidfile "$CEPHDIR/run/$f.pid" 2>/dev/null || true; done
  for p in ${MON_PORT:-3300 6789} "$S3_PORT"; do port_busy "$p" && die "port $p is taken by another server (TTSTORE_CEPH_MON_PORT and TTSTORE_S3_PORT pick others)"; done
  rm -rf "$CEPHDIR"
  mkdir -p "$CEPHDIR"/{log,run,mon,osd,rgw}
  # Without cephx, "ms mon client mode = crc" is what lets radosgw fetch its config (it hangs
  # otherwise); a short paxos interval brings the monitor up in seconds.
  cat >"$CEPH_CONF" <<EOF
[global]
fsid = $(uuidgen)
mon host = ${MON_PORT:+v2:}127.0.0.1${MON_PORT:+:$MON_PORT}
public addr = 127.0.0.1
run dir = $CEPHDIR/run
admin socket = $CEPHDIR/run/\$cluster-\$name.asok
log file = $CEPHDIR/log/\$name.log
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc
client mount timeout = 30
rados mon op timeout = 60
rados osd op timeout = 60
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd crush chooseleaf type = 0
mon allow pool size one = true
mon max pg per osd = 1000
mon warn on pool no redundancy = false
mon data avail warn = 1
mon data avail crit = 0
paxos propose interval = 0.05
[mon.a]
mon data = $CEPHDIR/mon
${MON_PORT:+public addr = v2:127.0.0.1:$MON_PORT}
mon cluster log file = $CEPHDIR/log/mon-cluster.log
pid file = $CEPHDIR/run/mon.a.pid
[osd.0]
osd data = $CEPHDIR/osd
osd objectstore = memstore
memstore device bytes = 2147483648
osd class load list = *
osd class default list = *
pid file = $CEPHDIR/run/osd.0.pid
[client.rgw.tts]
rgw frontends = beast endpoint=127.0.0.1:$S3_PORT
rgw data = $CEPHDIR/rgw
pid file = $CEPHDIR/run/client.rgw.tts.pid
EOF
  local ceph_=(timeout 60 ceph --connect-timeout 30)
  ceph-mon --id a --mkfs --keyring /dev/null 2>>"$CEPHDIR/log/mkfs.log"
  ceph-mon --id a
  [ "$("${ceph_[@]}" osd create)" = 0 ] || die "ceph osd create did not give osd 0"
  "${ceph_[@]}" osd crush add osd.0 1 root=default host="$(hostname -s)" 2>/dev/null
  ceph-osd --id 0 --mkfs 2>>"$CEPHDIR/log/mkfs.log"
  ceph-osd --id 0 2>>"$CEPHDIR/log/mkfs.log"
  wait_for 60 sh -c 'ceph --connect-timeout 10 osd stat 2>/dev/null | grep -q "1 up"' || die "ceph-osd did not come up"
  radosgw -n client.rgw.tts
  wait_for 90 s3_up || { tail -20 "$CEPHDIR/log/client.rgw.tts.log" >&2; die "radosgw does not answer"; }
  timeout 60 radosgw-admin user create --uid=ttstore --display-name=ttstore \
    --access-key="$S3_ACCESS_KEY" --secret-key="$S3_SECRET_KEY" >/dev/null 2>>"$CEPHDIR/log/admin.log"
  # The bucket, and a signed round trip: radosgw makes its data pools now, not in the first test
  local s3c=(curl -sf --max-time 60 --aws-sigv4 "aws:amz:us-east-1:s3" --user "$S3_ACCESS_KEY:$S3_SECRET_KEY"
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD")
  echo ok >"$CEPHDIR/warmup.txt"
  "${s3c[@]}" -X PUT "http://127.0.0.1:$S3_PORT/$S3_BUCKET" >/dev/null \
    && "${s3c[@]}" -T "$CEPHDIR/warmup.txt" "http://127.0.0.1:$S3_PORT/$S3_BUCKET/warmup" >/dev/null \
    && [ "$("${s3c[@]}" "http://127.0.0.1:$S3_PORT/$S3_BUCKET/warmup")" = ok ] \
    && "${s3c[@]}" -X DELETE "http://127.0.0.1:$S3_PORT/$S3_BUCKET/warmup" >/dev/null \
    || die "S3 round trip failed (see $CEPHDIR/log/client.rgw.tts.log)"
  touch "$CEPHDIR/ready"
  log "radosgw on 127.0.0.1:$S3_PORT, bucket $S3_BUCKET"
}

# What the nodes and the tests read (no secrets beyond this throw-away cluster's).
write_env() {
  cat >"$STATE/env" <<EOF
# this cluster's settings: \`bash scripts/cluster.sh start\` with them restarts a node a test stopped
export TTSTORE_CLUSTER_DIR=$STATE TTSTORE_PG_PORT=$PG_PORT TTSTORE_REDIS_PORT=$REDIS_PORT TTSTORE_S3_PORT=$S3_PORT
export TTSTORE_NODE_PORTS="${NODE_PORTS[*]}" TTSTORE_LB_PORT=$LB_PORT TTSTORE_CEPH_MON_PORT=$MON_PORT
export TTSTORE_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:$PG_PORT/postgres
export TTSTORE_TEST_REDIS_URL=redis://127.0.0.1:$REDIS_PORT
export TTSTORE_TEST_S3_ENDPOINT=http://127.0.0.1:$S3_PORT
export TTSTORE_TEST_S3_BUCKET=$S3_BUCKET
export TTSTORE_TEST_S3_ACCESS_KEY_ID=$S3_ACCESS_KEY
export TTSTORE_TEST_S3_SECRET_ACCESS_KEY=$S3_SECRET_KEY
EOF
}

services() {
  [ "$(id -u)" = 0 ] || die "run as root (it installs packages and starts PostgreSQL as user postgres)"
  install_packages "${1:-}"
  # A folder with nothing of ours running is left over from an earlier run: start afresh.
  if ! alive "$STATE/redis/redis.pid" && ! alive "$CEPHDIR/run/mon.a.pid" && [ ! -f "$PGDATA/postmaster.pid" ]; then
    rm -rf "$STATE"
  fi
  mkdir -p "$STATE"
  chmod 755 "$STATE"
  start_postgres
  start_redis
  start_s3
  write_env
}

start_nodes() {
  [ -f "$ROOT/dist/src/main.js" ] && [ -f "$ROOT/build/cmake/Release/ttstore.node" ] || (cd "$ROOT" && bash scripts/setup.sh)
  [ -s "$STATE/service.key" ] || { printf '%s' "${TTSTORE_SERVICE_KEY:-svc_$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')}" >"$STATE/service.key"; chmod 600 "$STATE/service.key"; }
  local key sqlite=${TTSTORE_CLUSTER_SQLITE:-}
  key=$(cat "$STATE/service.key")
  if [ -z "$sqlite" ]; then
    # A build from before the shared engines runs its nodes on one SQLite file; a --help that fails
    # (a broken build, a bad NODE_OPTIONS) stops here rather than quietly choosing SQLite.
    local help
    help=$(cd "$ROOT" && node dist/src/main.js --help 2>&1) || die "node dist/src/main.js --help failed: $help"
    if ! grep -q SVC_GATE_DATABASE_URL <<<"$help"; then
      log "this build does not know SVC_GATE_DATABASE_URL: the nodes share one SQLite file on this machine"
      sqlite=1
    fi
  fi
  # SVC_GATE_* settings given to the first start are kept for every restart of a node, so that a node
  # started again (after a crash, by a test) runs as its peers do.
  [ -f "$STATE/node.env" ] || (umask 077 && export -p | grep -E '^declare -x SVC_GATE_[A-Z0-9_]+=' >"$STATE/node.env" || true)
  local i port dir
  for i in "${!NODE_PORTS[@]}"; do
    port=${NODE_PORTS[$i]}
    alive "$STATE/node$i.pid" && continue
    port_busy "$port" && die "port $port is taken by another server (TTSTORE_NODE_PORTS picks others)"
    # one data folder for all nodes on SQLite (the database file); a folder each otherwise
    if [ "$sqlite" = 1 ]; then dir=$STATE/data; else dir=$STATE/node$i; fi
    mkdir -p "$dir"
    (
      # shellcheck disable=SC1091
      . "$STATE/node.env"
      export SVC_GATE_HOST=127.0.0.1 SVC_GATE_PORT=$port SVC_GATE_DATA_DIR=$dir SVC_GATE_ENGINE_SERVICE_KEY=$key
      # idle keep-alive connections outlive nginx's keepalive_timeout on SIGTERM (deploy/nginx.conf says why)
      export SVC_GATE_SHUTDOWN_IDLE_S=3
      export SVC_GATE_REDIS_URL=redis://127.0.0.1:$REDIS_PORT SVC_GATE_BLOB_URL=s3://$S3_BUCKET/cluster
      export SVC_GATE_S3_ENDPOINT=http://127.0.0.1:$S3_PORT SVC_GATE_S3_ACCESS_KEY_ID=$S3_ACCESS_KEY SVC_GATE_S3_SECRET_ACCESS_KEY=$S3_SECRET_KEY
      [ "$sqlite" = 1 ] || export SVC_GATE_DATABASE_URL=postgres://postgres@127.0.0.1:$PG_PORT/postgres
      cd "$ROOT"
      exec setsid node --initial-old-space-size=128 dist/src/main.js </dev/null >>"$STATE/node$i.log" 2>&1
    ) &
    echo $! >"$STATE/node$i.pid"
    # one at a time: the first migrates the schema the others then find
    wait_for 60 curl -sf -o /dev/null "http://127.0.0.1:$port/gate/health" || { tail -20 "$STATE/node$i.log" >&2; die "node $i did not start"; }
    log "ttstore node $i on 127.0.0.1:$port"
  done
}

# nginx round-robin over NODE_PORTS on LB_PORT, its files in NGINX_DIR; running already: the config is
# rewritten and reloaded (bench/cluster.ts changes the node set this way under a separate NGINX_DIR).
# Ports listed in NGINX_DIR/down are marked `down`: nginx no longer opens connections to them.
write_nginx_conf() {
  local servers="" p mark
  for p in "${NODE_PORTS[@]}"; do
    mark=""
    grep -qx "$p" "$NGINX_DIR/down" 2>/dev/null && mark=" down"
    servers+="    server 127.0.0.1:$p max_fails=0$mark;"$'\n'
  done
  cat >"$NGINX_DIR/nginx.conf" <<EOF
worker_processes 1;
pid $NGINX_DIR/nginx.pid;
error_log $NGINX_DIR/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $NGINX_DIR/body;
  proxy_temp_path $NGINX_DIR/proxy;
  fastcgi_temp_path $NGINX_DIR/fastcgi;
  uwsgi_temp_path $NGINX_DIR/uwsgi;
  scgi_temp_path $NGINX_DIR/scgi;
  upstream ttstore {
$servers    # as deploy/nginx.conf, which says why
    keepalive 256;
    keepalive_timeout 2s;
  }
  server {
    listen 127.0.0.1:$LB_PORT;
    # as deploy/nginx.conf: no client keep-alive, so that a reload (a drain) fails no client request
    keepalive_timeout 0;
    client_max_body_size 0;
    proxy_request_buffering off;
    proxy_buffering off;
    location / {
      proxy_pass http://ttstore;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$host;
      proxy_read_timeout 600s;
      proxy_next_upstream error timeout;
    }
  }
}
EOF
}

# nginx's worker PIDs (the children of its master), one a line
nginx_workers() { ps -o pid= --ppid "$(cat "$NGINX_DIR/nginx.pid")" 2>/dev/null | tr -d ' '; }

# The config rewritten and reloaded; returns once every worker of the old config has exited (they
# finish the requests they hold, then go), so no request is sent by the old upstream list after it.
reload_nginx() {
  local old w left
  write_nginx_conf
  nginx -t -q -c "$NGINX_DIR/nginx.conf" -p "$NGINX_DIR" || die "nginx refuses $NGINX_DIR/nginx.conf"
  old=$(nginx_workers)
  # (its notice "signal process started" is noise; an error is in the log)
  nginx -c "$NGINX_DIR/nginx.conf" -p "$NGINX_DIR" -s reload 2>>"$NGINX_DIR/signal.log" || { cat "$NGINX_DIR/signal.log" >&2; die "nginx -s reload failed"; }
  for _ in $(seq 300); do
    left=0
    for w in $old; do running "$w" && left=1; done
    # the old workers gone and new ones started: the new config serves every request from now on
    if [ "$left" = 0 ] && [ -n "$(nginx_workers)" ]; then return 0; fi
    sleep 0.1
  done
  die "nginx's old workers ($old) still run 30 s after the reload"
}

start_nginx() {
  mkdir -p "$NGINX_DIR"
  if alive "$NGINX_DIR/nginx.pid"; then
    [ "${1:-}" = reload ] || return 0
    reload_nginx
    return 0
  fi
  port_busy "$LB_PORT" && die "port $LB_PORT is taken by another server (TTSTORE_LB_PORT picks another)"
  write_nginx_conf
  nginx -c "$NGINX_DIR/nginx.conf" -p "$NGINX_DIR"
  wait_for 20 curl -sf -o /dev/null "http://127.0.0.1:$LB_PORT/gate/health" || die "nginx does not answer on $LB_PORT"
  log "nginx on 127.0.0.1:$LB_PORT in front of ${NODE_PORTS[*]}"
}

# drain PORT / undrain PORT: mark the upstream down in (or back into) the running nginx. Idempotent.
set_down() {
  local port=$1 on=$2
  [[ " ${NODE_PORTS[*]} " == *" $port "* ]] || die "port $port is not one of TTSTORE_NODE_PORTS (${NODE_PORTS[*]})"
  alive "$NGINX_DIR/nginx.pid" || die "no nginx runs from $NGINX_DIR"
  local was=0
  grep -qx "$port" "$NGINX_DIR/down" 2>/dev/null && was=1
  [ "$was" = "$on" ] && return 0
  { grep -vx "$port" "$NGINX_DIR/down" 2>/dev/null || true; [ "$on" = 1 ] && echo "$port"; } >"$NGINX_DIR/down.new"
  mv "$NGINX_DIR/down.new" "$NGINX_DIR/down"
  reload_nginx
  if [ "$on" = 1 ]; then log "nginx no longer sends to 127.0.0.1:$port"; else log "nginx sends to 127.0.0.1:$port again"; fi
}

node_index() {
  [[ ${1:-} =~ ^[0-9]+$ ]] && [ "$1" -lt "${#NODE_PORTS[@]}" ] || die "node index: 0 to $((${#NODE_PORTS[@]} - 1))"
}

# Drained first: nginx opens no connection to it any more, so closing its listener resets none that a
# request was written on (the kernel's accept queue is empty); then SIGTERM and its graceful stop.
stop_node() {
  node_index "$1"
  set_down "${NODE_PORTS[$1]}" 1
  # its grace period (SVC_GATE_SHUTDOWN_GRACE_S, 10 s by default) and room to close its stores
  stop_pidfile "$STATE/node$1.pid" 30
  log "ttstore node $1 stopped"
}

case "${1:-}" in
  stop) stop_all ;;
  services) services && cat "$STATE/env" ;;
  balance) # nginx over TTSTORE_NODE_PORTS on TTSTORE_LB_PORT (TTSTORE_LB_DIR), started or reloaded
    command -v nginx >/dev/null || install_packages nginx
    start_nginx reload
    ;;
  balance-stop) stop_pidfile "$NGINX_DIR/nginx.pid" ;;
  drain) set_down "${2:?usage: $0 drain PORT}" 1 ;;
  undrain) set_down "${2:?usage: $0 undrain PORT}" 0 ;;
  stop-node) stop_node "${2:-}" ;;
  restart-node)
    stop_node "${2:-}"
    start_nodes
    set_down "${NODE_PORTS[$2]}" 0
    ;;
  start)
    services nginx
    start_nodes
    # every node runs again: none stays drained (one rewrite and reload of a running nginx puts back all)
    if [ -s "$NGINX_DIR/down" ]; then
      rm -f "$NGINX_DIR/down"
      start_nginx reload
    else
      start_nginx
    fi
    urls=""
    for p in "${NODE_PORTS[@]}"; do urls+="${urls:+,}http://127.0.0.1:$p"; done
    echo "export TTSTORE_URL=http://127.0.0.1:$LB_PORT"
    echo "export TTSTORE_SERVICE_KEY=$(cat "$STATE/service.key")"
    echo "export TTSTORE_NODE_URLS=$urls"
    ;;
  *) echo "usage: $0 start|services|stop|balance|balance-stop|drain PORT|undrain PORT|stop-node N|restart-node N" >&2; exit 2 ;;
esac
