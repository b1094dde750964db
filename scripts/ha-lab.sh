#!/usr/bin/env bash
# The reference production topology on one machine, loopback only, everything under one folder:
#
#   clients -> HAProxy (app, health-checks /readyz) -> N plantstore instances
#           -> PgBouncer (transaction pooling)    -> HAProxy (db, routes to Patroni's primary)
#           -> PostgreSQL 15 primary + synchronous hot standby, each run by Patroni, with etcd as the DCS
#   (each instance's LISTEN connection goes to HAProxy (db) directly: DATABASE_LISTEN_URL)
#
# Usage: scripts/ha-lab.sh up|down|status|env|primary|kill-primary|switchover|restart-db|pooler-stop|pooler-start|
#                          wait-sync [seconds]
# Settings (environment):
#   HA_LAB_DIR        the folder everything lives in (default: $TMPDIR/plantstore-ha-lab); `down` deletes it
#   HA_LAB_PORT       the first of the ports it uses, base .. base+69 (default 26400)
#   HA_LAB_INSTANCES  how many plantstore instances `up` starts behind the balancer (default 2; 0: none, the
#                     balancer still lists base+50.. so a test can start its own there)
# Needs Debian's packages: patroni etcd-server haproxy pgbouncer postgresql-15. As root, the daemons run as the
# `postgres` user (initdb and PgBouncer refuse root); the plantstore instances run as the caller.
# See docs/high-availability.md.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
DIR=${HA_LAB_DIR:-${TMPDIR:-/tmp}/plantstore-ha-lab}
BASE=${HA_LAB_PORT:-26400}
INSTANCES=${HA_LAB_INSTANCES:-2}
PG_BIN=${HA_LAB_PG_BIN:-/usr/lib/postgresql/15/bin}
# The instances run on the Node.js `npm ci` installed (the system's may be older).
NODE_BIN=${HA_LAB_NODE:-$REPO/node_modules/.bin/node}

ETCD_CLIENT=$BASE ETCD_PEER=$((BASE + 1))
PG_PORT=($((BASE + 10)) $((BASE + 11)))
REST_PORT=($((BASE + 20)) $((BASE + 21)))
DB_PORT=$((BASE + 30)) DB_STATS_PORT=$((BASE + 31))
POOLER_PORT=$((BASE + 40))
APP_FIRST_PORT=$((BASE + 50)) APP_PORT=$((BASE + 60)) APP_STATS_PORT=$((BASE + 61))
NODES=(node1 node2)
DB_NAME=plantstore DB_USER=plantstore

log() { printf '[ha-lab] %s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

# As root, daemons run as postgres (and the folder is theirs); otherwise as the caller.
if [ "$(id -u)" = 0 ]; then
  # setpriv and env exec (no process in between), so a pid file holds the daemon's own pid.
  AS_DAEMON=(setpriv --reuid=postgres --regid=postgres --init-groups env HOME="$DIR")
  DAEMON_USER=postgres
else
  AS_DAEMON=(env)
  DAEMON_USER=$(id -un)
fi

# Starts a daemon in the background, its output in $DIR/<name>.log, its pid in $DIR/<name>.pid.
start_daemon() {
  local name=$1
  shift
  own
  setsid "${AS_DAEMON[@]}" "$@" >>"$DIR/$name.log" 2>&1 </dev/null &
  echo $! >"$DIR/$name.pid"
}

# The daemons' files are theirs (PostgreSQL wants its data folder 0700 and its own).
own() { if [ "$DAEMON_USER" != "$(id -un)" ]; then chown -R "$DAEMON_USER" "$DIR"; fi; }

pid_of() { [ -f "$DIR/$1.pid" ] && cat "$DIR/$1.pid"; }
alive() {
  local pid
  pid=$(pid_of "$1") && kill -0 "$pid" 2>/dev/null
}

# Stops a daemon started here: SIGTERM, then SIGKILL after `patience` seconds.
stop_daemon() {
  local name=$1 patience=${2:-10} pid
  pid=$(pid_of "$name") || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 $((patience * 10))); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$DIR/$name.pid"
}

wait_for() {
  local what=$1 seconds=$2
  shift 2
  local deadline=$((SECONDS + seconds))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.25
  done
  die "$what: not ready after ${seconds}s (logs in $DIR)"
}

http_ok() { curl -fsS -o /dev/null --max-time 2 "$1"; }
psql_at() { psql "postgres://postgres@127.0.0.1:$1/${2:-postgres}" -XAtq -v ON_ERROR_STOP=1 -c "$3"; }

# The Patroni node that holds the leader key, from either node's REST API.
leader() {
  local port
  for port in "${REST_PORT[@]}"; do
    curl -fsS --max-time 2 "http://127.0.0.1:$port/cluster" 2>/dev/null |
      python3 -c 'import json,sys; print(next(m["name"] for m in json.load(sys.stdin)["members"] if m["role"] == "leader"))' \
        2>/dev/null && return 0
  done
  return 1
}

# HAProxy (db) routes to exactly one node (it counts servers as up until their checks have failed).
one_route() {
  [ "$(curl -fsS --max-time 2 "http://127.0.0.1:$DB_STATS_PORT/;csv" | awk -F, '$1 == "primary" && $2 ~ /^node/ && $18 == "UP"' |
    wc -l)" = 1 ]
}
# The primary accepts writes through HAProxy (db).
primary_writable() { [ "$(psql_at "$DB_PORT" postgres 'SELECT NOT pg_is_in_recovery()')" = t ]; }
# Both nodes streaming, the standby synchronous.
sync_standby() {
  curl -fsS --max-time 2 "http://127.0.0.1:${REST_PORT[0]}/cluster" |
    python3 -c 'import json,sys; m=json.load(sys.stdin)["members"]; sys.exit(0 if any(x["role"] == "sync_standby" and x["state"] in ("running", "streaming") for x in m) and any(x["role"] == "leader" and x["state"] == "running" for x in m) else 1)'
}

write_etcd() {
  mkdir -p "$DIR/etcd"
  start_daemon etcd etcd --name lab --data-dir "$DIR/etcd/data" \
    --listen-client-urls "http://127.0.0.1:$ETCD_CLIENT" --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER" \
    --initial-cluster "lab=http://127.0.0.1:$ETCD_PEER" --initial-cluster-state new
}

# One Patroni node. ttl/loop_wait are short so a failover takes seconds; primary_start_timeout 0 makes a
# crashed primary fail over to the synchronous standby at once instead of restarting in place.
write_patroni() {
  local i=$1 name=${NODES[$1]}
  mkdir -p "$DIR/$name"
  chmod 700 "$DIR/$name"
  cat >"$DIR/$name.yml" <<EOF
scope: plantstore-lab
name: $name
log:
  level: INFO
restapi:
  listen: 127.0.0.1:${REST_PORT[$i]}
  connect_address: 127.0.0.1:${REST_PORT[$i]}
etcd3:
  hosts: 127.0.0.1:$ETCD_CLIENT
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 1
    retry_timeout: 4
    maximum_lag_on_failover: 1048576
    master_start_timeout: 0
    primary_start_timeout: 0
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      parameters:
        max_connections: 200
        wal_level: replica
        hot_standby: 'on'
        max_wal_senders: 5
        max_replication_slots: 5
        wal_keep_size: 256MB
        synchronous_commit: 'on'
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
    - data-checksums
postgresql:
  listen: 127.0.0.1:${PG_PORT[$i]}
  connect_address: 127.0.0.1:${PG_PORT[$i]}
  data_dir: $DIR/$name/data
  bin_dir: $PG_BIN
  pgpass: $DIR/$name/pgpass
  # A fast checkpoint: the standby's copy starts at once rather than after a spread one (minutes).
  basebackup:
    - checkpoint: fast
  authentication:
    superuser: {username: postgres, password: postgres}
    replication: {username: replicator, password: replicator}
    rewind: {username: rewinder, password: rewinder}
  parameters:
    unix_socket_directories: '$DIR/$name'
    shared_buffers: 32MB
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 trust
    - host all all 127.0.0.1/32 trust
EOF
  start_daemon "$name" patroni "$DIR/$name.yml"
}

# HAProxy (db): one TCP port that leads to whichever node Patroni's REST API calls primary. Sessions to a node
# marked down are cut, so nothing keeps writing to a demoted primary.
write_db_balancer() {
  cat >"$DIR/haproxy-db.cfg" <<EOF
global
  maxconn 1000
  stats socket $DIR/haproxy-db.sock mode 600 level admin
defaults
  mode tcp
  timeout connect 2s
  timeout client 1h
  timeout server 1h
  timeout check 1s
listen primary
  bind 127.0.0.1:$DB_PORT
  option httpchk GET /primary
  http-check expect status 200
  default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
  server node1 127.0.0.1:${PG_PORT[0]} check port ${REST_PORT[0]}
  server node2 127.0.0.1:${PG_PORT[1]} check port ${REST_PORT[1]}
listen stats
  mode http
  bind 127.0.0.1:$DB_STATS_PORT
  stats enable
  stats uri /
EOF
  start_daemon haproxy-db haproxy -W -db -f "$DIR/haproxy-db.cfg"
}

# PgBouncer in transaction pooling mode in front of HAProxy (db). A server that cannot be reached is retried
# after 1 s (not 15), and a client waits at most 5 s for a server connection, so a failover surfaces to the
# instances as quick, retryable errors (SQLSTATE 08P01) rather than as hangs.
write_pooler() {
  mkdir -p "$DIR/pgbouncer"
  printf '"%s" ""\n"postgres" ""\n' "$DB_USER" >"$DIR/pgbouncer/userlist.txt"
  cat >"$DIR/pgbouncer/pgbouncer.ini" <<EOF
[databases]
$DB_NAME = host=127.0.0.1 port=$DB_PORT dbname=$DB_NAME
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $POOLER_PORT
unix_socket_dir =
auth_type = trust
auth_file = $DIR/pgbouncer/userlist.txt
admin_users = postgres
pool_mode = transaction
default_pool_size = 20
max_client_conn = 1000
server_connect_timeout = 2
server_login_retry = 1
query_wait_timeout = 5
server_lifetime = 600
pidfile = $DIR/pgbouncer/pgbouncer.pid
EOF
  start_pooler
}

start_pooler() { start_daemon pgbouncer pgbouncer "$DIR/pgbouncer/pgbouncer.ini"; }

pooler_url() { echo "postgres://$DB_USER@127.0.0.1:$POOLER_PORT/$DB_NAME"; }
direct_url() { echo "postgres://$DB_USER@127.0.0.1:$DB_PORT/$DB_NAME"; }

# The role and database the instances use. A pooler in transaction mode cannot pass session settings in the
# start-up packet, so the statement and idle-transaction timeouts are the role's own defaults.
create_database() {
  psql_at "$DB_PORT" postgres "DO \$\$ BEGIN
      IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$DB_USER') THEN CREATE ROLE $DB_USER LOGIN; END IF;
    END \$\$;
    ALTER ROLE $DB_USER SET statement_timeout = '5s';
    ALTER ROLE $DB_USER SET idle_in_transaction_session_timeout = '10s';"
  if [ "$(psql_at "$DB_PORT" postgres "SELECT count(*) FROM pg_database WHERE datname = '$DB_NAME'")" = 0 ]; then
    psql_at "$DB_PORT" postgres "CREATE DATABASE $DB_NAME OWNER $DB_USER ENCODING 'UTF8' TEMPLATE template0"
  fi
}

instance_env() {
  echo "DATABASE_URL=$(pooler_url) DATABASE_POOLER=transaction DATABASE_LISTEN_URL=$(direct_url)"
}

start_instances() {
  local i port
  for ((i = 0; i < INSTANCES; i++)); do
    port=$((APP_FIRST_PORT + i))
    # From the clone (where `--import tsx` is found), whatever the caller's folder.
    # shellcheck disable=SC2046
    (cd "$REPO" && exec env $(instance_env) HOST=127.0.0.1 PORT=$port LOG_LEVEL=info \
      setsid "$NODE_BIN" --import tsx src/cli/main.ts serve >>"$DIR/instance-$i.log" 2>&1 </dev/null) &
    echo $! >"$DIR/instance-$i.pid"
    # The first one migrates the empty database; the others find it done.
    if [ "$i" = 0 ]; then wait_for "instance 0" 90 http_ok "http://127.0.0.1:$port/readyz"; fi
  done
}

# HAProxy (app): round robin over the instances, each checked on /readyz (a 503 there takes it out).
write_app_balancer() {
  local i servers=''
  for ((i = 0; i < ${HA_LAB_BALANCED:-$((INSTANCES > 0 ? INSTANCES : 2))}; i++)); do
    servers+="  server instance$i 127.0.0.1:$((APP_FIRST_PORT + i)) check"$'\n'
  done
  # With every instance out (none ready), the balancer answers as an instance would: 503, Retry-After, an Error record.
  local body='{"error":50301,"message":"the store is unavailable right now; retry shortly"}'
  printf 'HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 2\r\n' >"$DIR/503.http"
  printf 'Content-Length: %s\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n%s' "${#body}" "$body" >>"$DIR/503.http"
  cat >"$DIR/haproxy-app.cfg" <<EOF
global
  maxconn 2000
  stats socket $DIR/haproxy-app.sock mode 600 level admin
defaults
  mode http
  timeout connect 2s
  timeout client 5m
  timeout server 5m
  timeout check 2s
  option redispatch
  retries 2
  errorfile 503 $DIR/503.http
listen plantstore
  bind 127.0.0.1:$APP_PORT
  balance roundrobin
  option httpchk GET /readyz
  http-check expect status 200
  default-server inter 1s fall 2 rise 1
${servers}listen stats
  bind 127.0.0.1:$APP_STATS_PORT
  stats enable
  stats uri /
EOF
  start_daemon haproxy-app haproxy -W -db -f "$DIR/haproxy-app.cfg"
}

cmd_env() {
  cat <<EOF
HA_LAB_DIR=$DIR
DATABASE_URL=$(pooler_url)
DATABASE_POOLER=transaction
DATABASE_LISTEN_URL=$(direct_url)
DIRECT_URL=$(direct_url)
PLANTSTORE_URL=http://127.0.0.1:$APP_PORT
INSTANCE_FIRST_PORT=$APP_FIRST_PORT
NODE_PORTS=${PG_PORT[0]},${PG_PORT[1]}
EOF
}

cmd_up() {
  for tool in etcd patroni haproxy pgbouncer psql curl python3 "$PG_BIN/postgres"; do
    command -v "$tool" >/dev/null || die "$tool not found (apt-get install patroni etcd-server haproxy pgbouncer)"
  done
  if alive etcd; then die "a lab is already running in $DIR (scripts/ha-lab.sh down first)"; fi
  mkdir -p "$DIR"
  chmod 755 "$DIR"
  own
  "${AS_DAEMON[@]}" test -w "$DIR" || die "$DAEMON_USER cannot write $DIR (are its parent folders searchable?)"
  log "etcd on 127.0.0.1:$ETCD_CLIENT"
  write_etcd
  wait_for etcd 30 http_ok "http://127.0.0.1:$ETCD_CLIENT/health"
  log "Patroni: ${NODES[0]} (PostgreSQL on ${PG_PORT[0]}), then ${NODES[1]} (${PG_PORT[1]})"
  write_patroni 0
  wait_for "the first node's bootstrap" 120 http_ok "http://127.0.0.1:${REST_PORT[0]}/primary"
  write_patroni 1
  log "HAProxy (db) on 127.0.0.1:$DB_PORT -> the primary"
  write_db_balancer
  wait_for "HAProxy (db) routing to one node" 60 one_route
  wait_for "the primary through HAProxy (db)" 60 primary_writable
  create_database
  log "waiting for the standby to stream synchronously"
  wait_for "the synchronous standby" 180 sync_standby
  log "PgBouncer (transaction pooling) on 127.0.0.1:$POOLER_PORT"
  write_pooler
  wait_for PgBouncer 30 psql_at "$POOLER_PORT" "$DB_NAME" 'SELECT 1'
  if [ "$INSTANCES" -gt 0 ]; then
    log "$INSTANCES plantstore instance(s) on 127.0.0.1:$APP_FIRST_PORT.."
    start_instances
  fi
  log "HAProxy (app) on 127.0.0.1:$APP_PORT -> the instances' /readyz"
  write_app_balancer
  log "up. Environment:"
  cmd_env
  local token
  token=$(grep -ho 'pst_[A-Za-z0-9_-]\{43\}' "$DIR"/instance-*.log 2>/dev/null | head -n 1 || true)
  if [ -n "$token" ]; then log "first-start token: $token"; fi
}

cmd_down() {
  [ -d "$DIR" ] || return 0
  local i
  stop_daemon haproxy-app 5
  for i in "$DIR"/instance-*.pid; do
    [ -e "$i" ] || continue
    i=$(basename "$i" .pid)
    stop_daemon "$i" 10
  done
  stop_daemon pgbouncer 5
  stop_daemon haproxy-db 5
  for i in "${NODES[@]}"; do stop_daemon "$i" 20; done
  # A postmaster whose Patroni was killed is stopped through its own pid file.
  for i in "${NODES[@]}"; do
    if [ -f "$DIR/$i/data/postmaster.pid" ]; then
      kill -9 "$(head -n 1 "$DIR/$i/data/postmaster.pid")" 2>/dev/null || true
    fi
  done
  stop_daemon etcd 5
  if [ "${HA_LAB_KEEP:-0}" != 1 ]; then rm -rf "$DIR"; fi
  log "down"
}

cmd_status() {
  local name
  for name in etcd node1 node2 haproxy-db pgbouncer haproxy-app; do
    if alive "$name"; then echo "$name: running (pid $(pid_of "$name"))"; else echo "$name: stopped"; fi
  done
  for name in "$DIR"/instance-*.pid; do
    [ -e "$name" ] || continue
    name=$(basename "$name" .pid)
    if alive "$name"; then echo "$name: running (pid $(pid_of "$name"))"; else echo "$name: stopped"; fi
  done
  echo "leader: $(leader || echo none)"
  [ -f "$DIR/node1.yml" ] && "${AS_DAEMON[@]}" patronictl -c "$DIR/node1.yml" list 2>/dev/null || true
}

# The current primary's postmaster, killed with SIGKILL (Patroni then fails over to the synchronous standby).
cmd_kill_primary() {
  local name
  name=$(leader) || die "no leader"
  kill -9 "$(head -n 1 "$DIR/$name/data/postmaster.pid")"
  echo "$name"
}

cmd_switchover() {
  local name
  name=$(leader) || die "no leader"
  "${AS_DAEMON[@]}" patronictl -c "$DIR/node1.yml" switchover --leader "$name" --force plantstore-lab >&2
}

cmd_restart_db() {
  local name
  name=$(leader) || die "no leader"
  "${AS_DAEMON[@]}" patronictl -c "$DIR/node1.yml" restart --force plantstore-lab "$name" >&2
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  env) cmd_env ;;
  primary) leader ;;
  kill-primary) cmd_kill_primary ;;
  switchover) cmd_switchover ;;
  restart-db) cmd_restart_db ;;
  pooler-stop) stop_daemon pgbouncer 5 ;;
  pooler-start) start_pooler ;;
  wait-sync) wait_for "the synchronous standby" "${2:-180}" sync_standby ;;
  *)
    echo "usage: $0 up|down|status|env|primary|kill-primary|switchover|restart-db|pooler-stop|pooler-start|wait-sync" >&2
    exit 2
    ;;
esac
