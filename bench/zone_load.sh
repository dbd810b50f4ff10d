#!/usr/bin/env bash
# Zone load: how long an authoritative server takes to load a large zone (from its start
# until it answers the zone's SOA) and how much memory it then holds (VmRSS from
# /proc/PID/status, read after the load), for ringdns (`file`), NSD and Knot in the same
# run, round after round. The zone is bench/auth_zone.py's, scaled to RECORDS records
# (default 1 000 000); each server is also started once on a 10-name zone, so that the
# memory the large zone costs is the difference ("zone_MB"). See bench/README.md,
# "Authoritative".
#
# NSD forks once the zone is read (xfrd, main, one server process), the three sharing most
# of the zone's pages: "rss_MB" is the process started, "tree_MB" the sum of the tree's PSS
# (/proc/PID/smaps_rollup: shared pages split between the processes that map them), which is
# what the tree holds in all; for a server that does not fork the two are its own.
#
# Every wait is bounded (LOAD_LIMIT seconds per load), every process started is stopped by
# PID on exit.
set -euo pipefail

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH")
# shellcheck source=lib.sh
source "$BENCH/lib.sh"
# shellcheck source=auth.sh
source "$BENCH/auth.sh"

RECORDS=${RECORDS:-1000000}
RUNS=${RUNS:-3}
SERVERS=${SERVERS:-ringdns-auth nsd-auth knot-auth}
BASE_PORT=${BASE_PORT:-5370}
SERVER_CPU=${SERVER_CPU:-1}
LOAD_LIMIT=${LOAD_LIMIT:-300} # seconds
KEEP=${KEEP:-0}
TARGET=${CARGO_TARGET_DIR:-}
RINGDNS_BIN=${RINGDNS_BIN:-${TARGET:-$ROOT/target}/release/ringdns}
export RINGDNS_BIN

die() { echo "zone_load.sh: $*" >&2; exit 1; }
note() { echo "zone_load.sh: $*" >&2; }

for v in RECORDS RUNS BASE_PORT LOAD_LIMIT; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer (got '${!v}')"
done
((RUNS >= 1 && RECORDS >= 100)) || die "RUNS must be >= 1 and RECORDS >= 100"
for t in taskset dig python3 awk; do command -v "$t" >/dev/null || die "$t not found (bench/run.sh installs dnsperf, dig, nsd, knot; apt-get install bind9-dnsutils nsd knot)"; done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ringdns-zone-load.XXXXXX")
cleanup() {
  stop_all
  if ((KEEP)); then note "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

note "generating a zone of about $RECORDS records"
python3 "$BENCH/auth_zone.py" --zone "$WORK/big.zone" --records "$RECORDS"
python3 "$BENCH/auth_zone.py" --zone "$WORK/small.zone" --names 100

read -r -a ALL <<<"$SERVERS"
pick_servers "${ALL[@]}"

# kb FIELD PID: a field of /proc/PID/status, in kB (0 if gone).
kb() { awk -v f="$1:" '$1 == f { print $2; found = 1 } END { if (!found) print 0 }' "/proc/$2/status" 2>/dev/null || echo 0; }
# pss_tree PID: the sum of Pss over PID's process tree, in kB.
pss_tree() {
  local p sum=0 v
  for p in $(proc_tree "$1"); do
    v=$(awk '$1 == "Pss:" { print $2; exit }' "/proc/$p/smaps_rollup" 2>/dev/null) || v=0
    sum=$((sum + ${v:-0}))
  done
  echo "$sum"
}

# load NAME PORT ZONE: starts NAME on ZONE, waits for the SOA, stops it; LOADED is then
# "load_ms rss_kB tree_pss_kB"; returns 1 when it did not load. Not in a subshell, so that
# the exit trap knows what to stop.
load() {
  local name=$1 port=$2 zone=$3 fn=srv_${1//-/_} pid t0 t1 i deadline answered=0
  local -a SRV_CMD=()
  AUTH_ZONE=$zone "${fn}_cmd" "$port" "$WORK"
  t0=$(date +%s%N)
  taskset -c "$SERVER_CPU" "${SRV_CMD[@]}" >"$WORK/$name.log" 2>&1 &
  pid=$!
  if srv_forks "$name"; then STARTED_TREES+=("$pid"); else STARTED_PIDS+=("$pid"); fi
  deadline=$((t0 + LOAD_LIMIT * 1000000000))
  # bounded: at most LOAD_LIMIT seconds, each probe at most ~1 s
  for ((i = 0; i < LOAD_LIMIT * 100; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    # the SOA record itself (dig +short prints its errors, "connection refused", on stdout)
    if [[ $(dig @127.0.0.1 -p "$port" +short +tries=1 +time=1 +retry=0 +norec bench.test SOA 2>/dev/null) == "ns1.bench.test. "* ]]; then
      answered=1
      break
    fi
    (($(date +%s%N) < deadline)) || break
    sleep 0.01
  done
  t1=$(date +%s%N)
  if ((!answered)); then
    note "$name did not answer the SOA within ${LOAD_LIMIT}s; log tail:"
    tail -n 5 "$WORK/$name.log" >&2 || true
    stop_all
    return 1
  fi
  # a name from the middle of the zone must be there too
  if [[ $zone == "$WORK/big.zone" && $(dig @127.0.0.1 -p "$port" +short +tries=2 +time=1 +norec h12345.bench.test A 2>/dev/null) != "10.0.48.57" ]]; then
    note "$name answers the SOA but not h12345.bench.test A"
    stop_all
    return 1
  fi
  sleep 1 # let a server that frees its parse buffers after the load do so
  LOADED="$(((t1 - t0) / 1000000)) $(kb VmRSS "$pid") $(pss_tree "$pid")"
  stop_all
}

echo "# ringdns zone load $(date -u +%Y-%m-%dT%H:%M:%SZ)  $(uname -r)  $(nproc) CPUs: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
echo "# zone bench.test.: $(grep -vc '^\$' "$WORK/big.zone") records ($(du -m "$WORK/big.zone" | cut -f1) MB of zone file); servers on CPU $SERVER_CPU; $RUNS rounds of: ${NAMES[*]}"
echo "# load_s: from the start until the SOA is answered; rss_MB: VmRSS of the process started, 1 s after; tree_MB: PSS summed over its process tree; zone_MB: tree_MB less the same server's on a 10-name zone"
HDR='%-5s %-14s %8s %8s %8s %8s\n'
# shellcheck disable=SC2059
printf "$HDR" round server load_s rss_MB tree_MB zone_MB

LOADED=''
declare -A BASE
for i in "${!NAMES[@]}"; do
  if load "${NAMES[i]}" "${PORTS[i]}" "$WORK/small.zone"; then
    read -r _ _ pss <<<"$LOADED"
    BASE[${NAMES[i]}]=$pss
  else
    BASE[${NAMES[i]}]=0
  fi
done

ROWS=$WORK/rows.tsv
: >"$ROWS"
for ((round = 1; round <= RUNS; round++)); do
  for i in "${!NAMES[@]}"; do
    name=${NAMES[i]}
    load "$name" "${PORTS[i]}" "$WORK/big.zone" || continue
    read -r ms rss pss <<<"$LOADED"
    awk -v r="$round" -v n="$name" -v ms="$ms" -v rss="$rss" -v pss="$pss" -v base="${BASE[$name]}" \
      'BEGIN { printf "%d\t%s\t%.2f\t%.0f\t%.0f\t%.0f\n", r, n, ms / 1000, rss / 1024, pss / 1024, (pss - base) / 1024 }' |
      tee -a "$ROWS" | awk -F'\t' -v fmt="$HDR" '{ printf fmt, $1, $2, $3, $4, $5, $6 }'
  done
done

median() {
  sort -g | awk -v f="$1" '{ v[NR] = $1 } END { if (!NR) print "-"; else printf f "\n", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
col() { awk -F'\t' -v n="$1" -v c="$2" '$2 == n { print $c }' "$ROWS" | median "$3"; }
echo "# median over rounds"
# shellcheck disable=SC2059
printf "$HDR" "#" server load_s rss_MB tree_MB zone_MB
for name in "${NAMES[@]}"; do
  if ! awk -F'\t' -v n="$name" '$2 == n { found = 1 } END { exit !found }' "$ROWS"; then
    echo "#     $name: no successful run"
    continue
  fi
  # shellcheck disable=SC2059
  printf "$HDR" "#" "$name" "$(col "$name" 3 %.2f)" "$(col "$name" 4 %.0f)" "$(col "$name" 5 %.0f)" "$(col "$name" 6 %.0f)"
done
