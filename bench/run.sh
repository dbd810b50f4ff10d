#!/usr/bin/env bash
# ringdns benchmark harness: server CPU time per answered query, on loopback.
# Server pinned to SERVER_CPU, dnsperf pinned to CLIENT_CPU; servers alternate round by round;
# each row's ratio is against the bare echo responder of the same round. See bench/README.md.
set -euo pipefail

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH")
# shellcheck source=lib.sh
source "$BENCH/lib.sh"

# ---- knobs (environment) --------------------------------------------------------------------
SERVERS=${SERVERS:-"echo ringdns-whoami"} # run order within a round; keep echo first
DURATION=${DURATION:-10}                  # dnsperf -l, seconds per measured run
RUNS=${RUNS:-3}                           # rounds
WARMUP=${WARMUP:-1}                       # seconds of unmeasured load per run (0 = none)
CLIENTS=${CLIENTS:-4}                     # dnsperf -c (sockets = flows)
THREADS=${THREADS:-1}                     # dnsperf -T
OUTSTANDING=${OUTSTANDING:-100}           # dnsperf -q
QUERIES=${QUERIES:-10000}                 # lines in the query file
DNSPERF_EXTRA=${DNSPERF_EXTRA:-}          # extra dnsperf args, word-split
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
BASE_PORT=${BASE_PORT:-5350} # server i (0-based in SERVERS) listens on BASE_PORT+i
BUILD=${BUILD:-1}            # 0: use existing binaries
KEEP=${KEEP:-0}              # 1: keep the work dir (dnsperf reports, server logs)
ECHO_BATCH=${ECHO_BATCH:-32}
TARGET=${CARGO_TARGET_DIR:-}
ECHO_BIN=${ECHO_BIN:-${TARGET:-$BENCH/echo/target}/release/echo}
RINGDNS_BIN=${RINGDNS_BIN:-${TARGET:-$ROOT/target}/release/ringdns}
export ECHO_BIN RINGDNS_BIN ECHO_BATCH

read -r -a EXTRA <<<"$DNSPERF_EXTRA"

die() { echo "run.sh: $*" >&2; exit 1; }
note() { echo "run.sh: $*" >&2; }

for v in DURATION RUNS WARMUP CLIENTS THREADS OUTSTANDING QUERIES BASE_PORT; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer (got '${!v}')"
done
((RUNS >= 1 && DURATION >= 1 && QUERIES >= 1)) || die "RUNS, DURATION and QUERIES must be >= 1"

# ---- tools ----------------------------------------------------------------------------------
apt_install() {
  ((EUID == 0)) || die "$1 missing; install it (apt-get install $2) or run as root"
  note "installing $2"
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
}
command -v dnsperf >/dev/null || apt_install dnsperf dnsperf
command -v dig >/dev/null || apt_install dig dnsutils
for t in taskset awk getconf cargo; do command -v "$t" >/dev/null || die "$t not found"; done
taskset -c "$SERVER_CPU" true 2>/dev/null || die "cannot pin to SERVER_CPU=$SERVER_CPU (see nproc)"
taskset -c "$CLIENT_CPU" true 2>/dev/null || die "cannot pin to CLIENT_CPU=$CLIENT_CPU (see nproc)"
[[ $SERVER_CPU != "$CLIENT_CPU" ]] || note "warning: server and dnsperf share CPU $SERVER_CPU"
CLK_TCK=$(getconf CLK_TCK)

# ---- build ----------------------------------------------------------------------------------
RINGDNS_BUILD_FAILED=0
if ((BUILD)); then
  note "building echo responder"
  cargo build --release --quiet --manifest-path "$BENCH/echo/Cargo.toml"
  if [[ " $SERVERS " == *" ringdns"* && -f $ROOT/Cargo.toml ]]; then
    note "building ringdns in $ROOT"
    if ! (cd "$ROOT" && cargo build --release --quiet); then
      note "ringdns build failed: skipping ringdns servers (not measuring a stale binary)"
      RINGDNS_BUILD_FAILED=1
    fi
  fi
fi
if ((RINGDNS_BUILD_FAILED)); then
  srv_ringdns_whoami_check() { echo "ringdns build failed: skipping" >&2; return 1; }
fi

# ---- work dir, cleanup ----------------------------------------------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ringdns-bench.XXXXXX")
DNSPERF_PID=
cleanup() {
  [[ -n $DNSPERF_PID ]] && stop_pid "$DNSPERF_PID"
  stop_all
  if ((KEEP)); then note "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

QFILE=$WORK/queries.txt
awk -v n="$QUERIES" 'BEGIN { for (i = 0; i < n; i++) printf "name%d.bench.test A\n", i }' >"$QFILE"

# ---- which servers run ----------------------------------------------------------------------
read -r -a ALL <<<"$SERVERS"
NAMES=() PORTS=()
for i in "${!ALL[@]}"; do
  name=${ALL[i]} fn=srv_${ALL[i]//-/_}
  declare -F "${fn}_check" >/dev/null || die "unknown server '$name' (no ${fn}_check in lib.sh)"
  if "${fn}_check"; then
    NAMES+=("$name") PORTS+=($((BASE_PORT + i)))
  fi
done
((${#NAMES[@]})) || die "no server can run"

# measure NAME PORT ROUND -> one TSV line on stdout: round name qps lat_ms lost cpu% us/q
measure() {
  local name=$1 port=$2 round=$3 fn=srv_${1//-/_} pid out t0 t1 completed rc=0
  local -a SRV_CMD=()
  "${fn}_cmd" "$port" "$WORK"
  taskset -c "$SERVER_CPU" "${SRV_CMD[@]}" >"$WORK/$name.$round.log" 2>&1 &
  pid=$!
  STARTED_PIDS+=("$pid")
  if ! wait_answers "$port" "$pid"; then
    note "$name did not answer on 127.0.0.1:$port; log tail:"
    tail -n 5 "$WORK/$name.$round.log" >&2 || true
    stop_all
    return 1
  fi
  local -a perf=(taskset -c "$CLIENT_CPU" dnsperf -s 127.0.0.1 -p "$port" -d "$QFILE"
    -c "$CLIENTS" -T "$THREADS" -q "$OUTSTANDING" "${EXTRA[@]}")
  if ((WARMUP)); then
    "${perf[@]}" -l "$WARMUP" >/dev/null 2>&1 &
    DNSPERF_PID=$!
    wait "$DNSPERF_PID" || true
    DNSPERF_PID=
  fi
  out=$WORK/dnsperf.$name.$round.txt
  t0=$(cpu_ticks "$pid")
  "${perf[@]}" -l "$DURATION" >"$out" 2>&1 &
  DNSPERF_PID=$!
  wait "$DNSPERF_PID" || rc=$?
  DNSPERF_PID=
  if ! kill -0 "$pid" 2>/dev/null; then
    note "$name died during the run; log tail:"
    tail -n 5 "$WORK/$name.$round.log" >&2 || true
    stop_all
    return 1
  fi
  t1=$(cpu_ticks "$pid")
  stop_all
  completed=$(dnsperf_field "$out" "Queries completed")
  if ((rc != 0)) || [[ -z $completed ]] || ((completed == 0)); then
    note "dnsperf failed against $name (rc=$rc):"
    tail -n 5 "$out" >&2 || true
    return 1
  fi
  awk -v r="$round" -v n="$name" -v c="$completed" -v d=$((t1 - t0)) -v hz="$CLK_TCK" \
    -v qps="$(dnsperf_field "$out" "Queries per second")" \
    -v lat="$(dnsperf_field "$out" "Average Latency (s)")" \
    -v lost="$(dnsperf_field "$out" "Queries lost")" \
    -v rt="$(dnsperf_field "$out" "Run time (s)")" \
    'BEGIN { s = d / hz; printf "%d\t%s\t%.0f\t%.3f\t%d\t%.0f\t%.2f\n",
             r, n, qps, lat * 1000, lost, (rt > 0 ? 100 * s / rt : 0), s * 1e6 / c }'
}

# ---- header ---------------------------------------------------------------------------------
echo "# ringdns bench $(date -u +%Y-%m-%dT%H:%M:%SZ)  $(uname -r)  $(nproc) CPUs: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
echo "# dnsperf $(dnsperf -h 2>&1 | awk '/^Version/ { print $2; exit }')"
echo "# server on CPU $SERVER_CPU, dnsperf on CPU $CLIENT_CPU: -c $CLIENTS -T $THREADS -q $OUTSTANDING -l $DURATION${DNSPERF_EXTRA:+ $DNSPERF_EXTRA}; warm-up ${WARMUP}s; $QUERIES names; $RUNS rounds of: ${NAMES[*]}"
echo "# us/q = server user+sys CPU time / answered queries; ratio = us/q / echo's us/q in the same round"
printf '%-5s %-16s %9s %8s %6s %6s %7s %6s\n' round server qps avg_ms lost cpu% us/q ratio

ROWS=$WORK/rows.tsv
: >"$ROWS"
for ((round = 1; round <= RUNS; round++)); do
  : >"$WORK/round.tsv"
  for i in "${!NAMES[@]}"; do
    measure "${NAMES[i]}" "${PORTS[i]}" "$round" >>"$WORK/round.tsv" || true
  done
  # ratio to the echo row of this round ("-" if echo did not run)
  awk -F'\t' -v OFS='\t' '
    { row[NR] = $0; if ($2 == "echo") e = $7 }
    END { for (i = 1; i <= NR; i++) { split(row[i], f, "\t")
            print row[i], (e > 0 ? sprintf("%.2f", f[7] / e) : "-") } }' "$WORK/round.tsv" |
    tee -a "$ROWS" |
    awk -F'\t' '{ printf "%-5s %-16s %9s %8s %6s %6s %7s %6s\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
done

# ---- summary: medians per server ------------------------------------------------------------
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%.2f\n", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
echo "# median over rounds"
for name in "${NAMES[@]}"; do
  us=$(awk -F'\t' -v n="$name" '$2 == n { print $7 }' "$ROWS" | median)
  ratio=$(awk -F'\t' -v n="$name" '$2 == n && $8 != "-" { print $8 }' "$ROWS" | median)
  [[ -n $us ]] || { echo "#   $name: no successful run"; continue; }
  if [[ $name == echo || -z $ratio ]]; then
    printf '#   %-16s us/q %s\n' "$name" "$us"
  else
    printf '#   %-16s us/q %s  ratio to echo %s\n' "$name" "$us" "$ratio"
  fi
done
