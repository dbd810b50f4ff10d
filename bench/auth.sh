# shellcheck shell=bash
# The auth workload of bench/run.sh (WORKLOAD=auth): authoritative servers answering from one
# generated zone (bench/auth_zone.py) by themselves, no upstream. Sourced by run.sh after
# lib.sh, and by zone_load.sh. See bench/README.md, "Authoritative".
#
# Servers (the usual srv_NAME_check / srv_NAME_cmd pair of lib.sh):
#   ringdns-auth   ringdns's `file` plugin: bench.test.:PORT { file ZONE }
#   nsd-auth       NSD, one server process, RRL off, no database, everything in the work dir
#   knot-auth      knotd, one UDP and one TCP worker, no journal, everything in the work dir
# ZONE is $AUTH_ZONE (run.sh: $WORK/auth.zone).

AUTH_ZONE=${AUTH_ZONE:-}

# srv_forks NAME: whether the server NAME's started PID is the root of a process tree.
srv_forks() {
  [[ $1 == nsd-* ]]
}

# auth_files DIR NAMES COUNT: DIR/auth.zone of NAMES names and DIR/queries.txt of COUNT
# queries (bench/auth_zone.py; deterministic).
auth_files() {
  python3 "$BENCH/auth_zone.py" --zone "$1/auth.zone" --names "$2" --queries "$1/queries.txt" --count "$3"
}

# ringdns_has_file NAME: the ringdns binary lists the file plugin (skip NAME otherwise).
ringdns_has_file() {
  local plugins
  ringdns_ok "$1" || return 1
  # the whole list first: `| grep -q` may exit early and fail the pipeline (README, Quirks)
  plugins=$("${2:-$RINGDNS_BIN}" -plugins 2>/dev/null) || plugins=
  if ! grep -qx '[[:space:]]*dns\.file' <<<"$plugins"; then
    echo "ringdns has no file plugin yet ('ringdns -plugins' lacks dns.file): skipping $1" >&2
    return 1
  fi
}

# ringdns-auth: ringdns serving the zone with `file`.
srv_ringdns_auth_check() { ringdns_has_file ringdns-auth; }
srv_ringdns_auth_cmd() {
  local port=$1 dir=$2
  printf 'bench.test.:%s {\n file %s\n}\n' "$port" "${AUTH_ZONE:-$dir/auth.zone}" >"$dir/Corefile.ringdns-auth"
  # shellcheck disable=SC2034 # SRV_CMD is read by run.sh
  SRV_CMD=("$RINGDNS_BIN" -conf "$dir/Corefile.ringdns-auth")
}

# ringdns-auth-base: the same served by RINGDNS_BASE_BIN (A/B of two builds in the same rounds).
srv_ringdns_auth_base_check() {
  [[ -x ${RINGDNS_BASE_BIN:-} ]] || { echo "RINGDNS_BASE_BIN is not an executable: skipping ringdns-auth-base" >&2; return 1; }
  ringdns_has_file ringdns-auth-base "$RINGDNS_BASE_BIN"
}
srv_ringdns_auth_base_cmd() {
  srv_ringdns_auth_cmd "$@"
  SRV_CMD[0]=$RINGDNS_BASE_BIN
}

# nsd-auth: NSD authoritative for the zone, its defaults otherwise (minimal-responses no:
# the apex NS in the authority section of positive answers, as CoreDNS's file does), one
# server process, RRL off (its per-/24 default drops answers to 127.0.0.1 under load).
srv_nsd_auth_check() {
  command -v nsd >/dev/null || { echo "nsd not installed: skipping nsd-auth" >&2; return 1; }
}
srv_nsd_auth_cmd() {
  local port=$1 dir=$2 d
  d=$dir/nsd-auth.$port
  mkdir -p "$d"
  cat >"$d/nsd.conf" <<EOF
server:
  ip-address: 127.0.0.1@$port
  do-ip6: no
  server-count: 1
  username: ""
  chroot: ""
  zonesdir: "$d"
  database: ""
  zonelistfile: "$d/nsd.zonelist"
  xfrdfile: "$d/nsd.xfrd.state"
  xfrdir: "$d"
  pidfile: "$d/nsd.pid"
  logfile: "$d/nsd.log"
  verbosity: 1
  hide-version: yes
  rrl-ratelimit: 0
  rrl-whitelist-ratelimit: 0
remote-control:
  control-enable: no
zone:
  name: "bench.test."
  zonefile: "${AUTH_ZONE:-$dir/auth.zone}"
EOF
  # a pid file left by a previous run of the same port would stop it from starting
  rm -f "$d/nsd.pid"
  # shellcheck disable=SC2034
  SRV_CMD=(nsd -d -c "$d/nsd.conf")
}

# knot-auth: knotd authoritative for the zone, its defaults otherwise, in the foreground (no
# -d), as whoever runs it (no `user`), one UDP, TCP and background worker (pinned to one CPU
# anyway), the zone read once and never written back, no journal, storage and control
# socket in the work dir.
srv_knot_auth_check() {
  command -v knotd >/dev/null || { echo "knotd not installed: skipping knot-auth" >&2; return 1; }
}
srv_knot_auth_cmd() {
  local port=$1 dir=$2 d
  d=$dir/knot-auth.$port
  mkdir -p "$d"
  cat >"$d/knot.conf" <<EOF
server:
  rundir: "$d"
  listen: 127.0.0.1@$port
  udp-workers: 1
  tcp-workers: 1
  background-workers: 1
database:
  storage: "$d/db"
log:
  - target: stderr
    any: notice
template:
  - id: default
    storage: "$d"
    zonefile-sync: -1
    zonefile-load: whole
    journal-content: none
zone:
  - domain: bench.test.
    file: "${AUTH_ZONE:-$dir/auth.zone}"
EOF
  # shellcheck disable=SC2034
  SRV_CMD=(knotd -c "$d/knot.conf")
}

# srv_ticks NAME PID: the server's CPU time so far (clock ticks): its own, or for a forking
# server the sum over its process tree.
srv_ticks() {
  if srv_forks "$1"; then
    # shellcheck disable=SC2046 # one PID per word
    tree_cpu_ticks $(proc_tree "$2")
  else
    cpu_ticks "$2"
  fi
}
