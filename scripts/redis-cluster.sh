#!/usr/bin/env bash
# A local Redis Cluster for tests and trials: three masters on 127.0.0.1 (ports BASE, BASE+1, BASE+2), with REPLICAS
# replicas each (default 0; 1 adds BASE+3..BASE+5), no persistence, every file under DIR. `start` returns once the
# cluster reports cluster_state:ok (and every replica is in sync); `stop` ends it. CLUSTER_NODE_TIMEOUT_MS (default
# 5000) is how long a master may be unreachable before its replica takes over. CLUSTER_REPLICA_VALIDITY_FACTOR (default
# 10, Redis's own) bounds how stale a replica may be to take over: one whose link to its master has been down longer
# than the factor times the node timeout (plus 10 s) does not try; 0 lets a replica take over however stale it is.
#
#   scripts/redis-cluster.sh start 7100 /tmp/a2a-cluster   # prints the seed nodes: 127.0.0.1:7100,127.0.0.1:7101,...
#   scripts/redis-cluster.sh start 7100 /tmp/a2a-cluster 1 # the same with a replica per master
#   scripts/redis-cluster.sh restart 7101 /tmp/a2a-cluster # one node again (it rejoins; failed over, as a replica)
#   A2A_REDIS_CLUSTER=127.0.0.1:7100,127.0.0.1:7101,127.0.0.1:7102 a2a-runtime gateway
#   scripts/redis-cluster.sh stop 7100 /tmp/a2a-cluster
set -euo pipefail

usage() {
  echo "usage: $0 start|stop|restart <base-port (restart: the node's port)> <dir> [replicas-per-master: 0|1]" >&2
  exit 64
}

[ $# -eq 3 ] || [ $# -eq 4 ] || usage
action=$1
base=$2
dir=$3
replicas=${4:-0}
[[ "$replicas" =~ ^[01]$ ]] || usage
timeout_ms=${CLUSTER_NODE_TIMEOUT_MS:-5000}
validity_factor=${CLUSTER_REPLICA_VALIDITY_FACTOR:-10}
[[ "$validity_factor" =~ ^[0-9]+$ ]] || usage
# Each node also listens on its port + 10000 (the cluster bus).
[[ "$base" =~ ^[0-9]+$ ]] && [ "$base" -ge 1 ] && [ "$base" -le 55533 ] || usage
ports=("$base" "$((base + 1))" "$((base + 2))")
if [ "$replicas" -eq 1 ]; then ports+=("$((base + 3))" "$((base + 4))" "$((base + 5))"); fi

# Whether the node on port $1 reports that every slot is served.
state_ok() {
  local info
  info=$(redis-cli -h 127.0.0.1 -p "$1" cluster info 2>/dev/null) || return 1
  [[ "$info" == *"cluster_state:ok"* ]]
}

# Starts (or starts again, with its nodes.conf: it rejoins as it was, or as a replica when it was failed over) one node.
start_node() {
  mkdir -p "$dir/$1"
  redis-server --port "$1" --bind 127.0.0.1 --cluster-enabled yes \
    --cluster-config-file "$dir/$1/nodes.conf" --cluster-node-timeout "$timeout_ms" \
    --cluster-replica-validity-factor "$validity_factor" \
    --dir "$dir/$1" --save "" --appendonly no --repl-diskless-sync-delay 0 --daemonize yes \
    --pidfile "$dir/$1/redis.pid" --logfile "$dir/$1/redis.log"
}

start() {
  for cmd in redis-server redis-cli; do
    command -v "$cmd" >/dev/null 2>&1 || { echo "$cmd is not on the PATH" >&2; exit 69; }
  done
  mkdir -p "$dir"
  for port in "${ports[@]}"; do start_node "$port"; done
  for port in "${ports[@]}"; do
    for _ in $(seq 100); do
      redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1 && break
      sleep 0.05
    done
    redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null || { echo "redis-server on port $port did not start" >&2; exit 1; }
  done
  local nodes=()
  for port in "${ports[@]}"; do nodes+=("127.0.0.1:$port"); done
  redis-cli --cluster create "${nodes[@]}" --cluster-replicas "$replicas" --cluster-yes >"$dir/create.log" 2>&1 || {
    cat "$dir/create.log" >&2
    exit 1
  }
  # Every node must see every slot covered before a client may rely on it.
  for port in "${ports[@]}"; do
    for _ in $(seq 200); do
      state_ok "$port" && break
      sleep 0.05
    done
    state_ok "$port" || {
      echo "cluster did not reach cluster_state:ok on port $port" >&2
      exit 1
    }
  done
  # A replica that has not finished its first sync would not take over: wait until every master sees its replica online.
  if [ "$replicas" -eq 1 ]; then
    for _ in $(seq 200); do
      local online=0
      for port in "${ports[@]}"; do
        redis-cli -h 127.0.0.1 -p "$port" info replication 2>/dev/null | grep -q "state=online" && online=$((online + 1))
      done
      [ "$online" -eq 3 ] && break
      sleep 0.05
    done
  fi
  (IFS=,; echo "${nodes[*]}")
}

# Whether a process runs; a zombie (a daemonized server that nothing reaps) counts as gone.
alive() {
  if [ -r "/proc/$1/stat" ]; then
    [ "$(cut -d' ' -f3 "/proc/$1/stat")" != "Z" ]
  else
    kill -0 "$1" 2>/dev/null
  fi
}

# Stops only the servers this script started in DIR (by their pid files), never another server on the same port.
stop() {
  for port in "${ports[@]}"; do
    local pidfile="$dir/$port/redis.pid"
    [ -f "$pidfile" ] || continue
    local pid
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 100); do
      alive "$pid" || break
      sleep 0.05
    done
    if alive "$pid"; then kill -9 "$pid" 2>/dev/null || true; fi
  done
  rm -rf "$dir"
}

case "$action" in
  start) start ;;
  # restart <port> <dir> [replicas]: one node of a running cluster again, e.g. after it was killed.
  restart) start_node "$base" ;;
  stop) stop ;;
  *) usage ;;
esac
