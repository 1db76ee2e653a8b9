#!/usr/bin/env bash
# Restart one node of docker-compose.yml (beside this file) gracefully: nginx stops choosing it (marked
# `down` in nginx.conf, reloaded, its old workers gone), it is stopped (SIGTERM) and started, and once it
# answers its health check it is put back. docs/deploy.md (graceful restart) says why in that order.
#   bash deploy/restart-node.sh node2
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CONF=$HERE/nginx.conf
NODE=${1:?usage: $0 node1|node2|node3}
dc() { docker compose -f "$HERE/docker-compose.yml" "$@"; }
log() { printf '[restart-node %s] %s\n' "$(date +%T)" "$*" >&2; }
grep -Eq "^ *server $NODE:8080 max_fails=0( down)?;" "$CONF" || { log "no 'server $NODE:8080' line in $CONF"; exit 2; }

# mark " down" or "": the file is rewritten in place, since the container mounts this very file (inode)
mark() {
  local text
  text=$(sed -E "s/^( *server $NODE:8080 max_fails=0)( down)?;/\\1$1;/" "$CONF")
  printf '%s\n' "$text" >"$CONF"
}

# nginx reloaded; returns once every worker of the old config has exited (only they could still send
# a request to a node marked down)
reload() {
  local old
  old=$(dc exec -T nginx sh -c 'for p in /proc/[0-9]*; do grep -qs "worker [p]rocess" "$p/cmdline" && echo "${p#/proc/}"; done' | tr '\n' ' ')
  dc exec -T nginx nginx -t -q
  dc exec -T nginx nginx -s reload
  for _ in $(seq 600); do
    dc exec -T nginx sh -c "for p in $old; do [ -e /proc/\$p ] && exit 0; done; exit 1" || return 0
    sleep 0.1
  done
  log "nginx's old workers ($old) still run 60 s after the reload"
  exit 1
}

mark " down"
reload
log "nginx no longer sends to $NODE"
# SIGTERM; past the node's grace period (SVC_GATE_SHUTDOWN_GRACE_S, 10 s) and the stores' close, SIGKILL
dc stop -t 30 "$NODE"
dc start "$NODE"
for _ in $(seq 120); do
  dc exec -T "$NODE" curl -sf -o /dev/null http://127.0.0.1:8080/gate/health && break
  sleep 0.5
done
dc exec -T "$NODE" curl -sf -o /dev/null http://127.0.0.1:8080/gate/health || { log "$NODE does not answer: it stays marked down in $CONF"; exit 1; }
mark ""
reload
log "$NODE restarted; nginx sends to it again"
