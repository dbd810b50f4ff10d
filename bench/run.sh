#!/usr/bin/env bash
# ringdns benchmark harness: server CPU time per answered query, on loopback.
# Server pinned to SERVER_CPU, dnsperf pinned to CLIENT_CPU; servers alternate round by round;
# each row's ratio is against the bare echo responder of the same round. See bench/README.md.
# WORKLOAD=whoami (default): every server answers by itself. WORKLOAD=forward: forwarders with
# their caches off in front of one NSD (authoritative for a generated zone, pinned to
# UPSTREAM_CPU), asked names that are each asked once, so every query goes upstream.
# WORKLOAD=cache: caching forwarders in front of the same NSD, each first asked every one of
# CACHE_NAMES existing names once (unmeasured), then measured on those names looped: all hits.
# WORKLOAD=auth: authoritative servers (ringdns's file, NSD, Knot) answering from one
# generated zone (auth_zone.py, auth.sh): names, CNAMEs, wildcards, referrals, NXDOMAIN.
# WORKLOAD=cluster: ringdns as a cluster's DNS (kubernetes from kubeapi.py, forward to the
# NSD, cache, loadbalance; cluster.sh): CLUSTER_QUERIES=service|headless|srv|walk|autopath.
set -euo pipefail

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH")
# shellcheck source=lib.sh
source "$BENCH/lib.sh"
# shellcheck source=auth.sh
source "$BENCH/auth.sh"
# shellcheck source=cluster.sh
source "$BENCH/cluster.sh"

# ---- knobs (environment) --------------------------------------------------------------------
WORKLOAD=${WORKLOAD:-whoami} # whoami | forward | cache | auth | cluster
case $WORKLOAD in
  whoami) DEFAULT_SERVERS="echo ringdns-whoami" DEFAULT_LATENCY=0 ;;
  forward) DEFAULT_SERVERS="echo ringdns-fwd dnsdist-fwd unbound-fwd" DEFAULT_LATENCY=1 ;;
  cache) DEFAULT_SERVERS="echo echo-df ringdns-cache dnsdist-cache unbound-cache" DEFAULT_LATENCY=1 ;;
  auth) DEFAULT_SERVERS="echo ringdns-auth nsd-auth knot-auth" DEFAULT_LATENCY=1 ;;
  cluster) DEFAULT_SERVERS="echo ringdns-cluster" DEFAULT_LATENCY=1 ;;
  *) echo "run.sh: WORKLOAD must be whoami, forward, cache, auth or cluster (got '$WORKLOAD')" >&2; exit 1 ;;
esac
SERVERS=${SERVERS:-$DEFAULT_SERVERS}      # run order within a round; keep echo first
DURATION=${DURATION:-10}                  # dnsperf -l, seconds per measured run
RUNS=${RUNS:-3}                           # rounds
WARMUP=${WARMUP:-1}                       # seconds of unmeasured load per run (0 = none)
CLIENTS=${CLIENTS:-4}                     # dnsperf -c (sockets = flows)
THREADS=${THREADS:-1}                     # dnsperf -T
OUTSTANDING=${OUTSTANDING:-100}           # dnsperf -q
QUERIES=${QUERIES:-10000}                 # whoami: lines in the query file
FWD_ZONE_A=${FWD_ZONE_A:-100000}          # forward: hI A records in the zone (more by wildcard)
FWD_NAMES=${FWD_NAMES:-2000000}           # forward: distinct names hI queried, each once
FWD_WARM_NAMES=${FWD_WARM_NAMES:-200000}  # forward: of those, the ones kept for warm-ups
CACHE_NAMES=${CACHE_NAMES:-2000}          # cache: distinct names (all in the zone), looped
AUTH_NAMES=${AUTH_NAMES:-100000}          # auth: names of the generated zone (auth_zone.py)
AUTH_QUERIES=${AUTH_QUERIES:-200000}      # auth: lines of the query file, looped
CLUSTER_LINES=${CLUSTER_LINES:-200000}    # cluster: lines of each query file, looped
LATENCY=${LATENCY:-$DEFAULT_LATENCY}      # 1: dnsperf -v, for p50/p99 latency
DNSPERF_EXTRA=${DNSPERF_EXTRA:-}          # extra dnsperf args, word-split
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
UPSTREAM_CPU=${UPSTREAM_CPU:-$CLIENT_CPU} # forward: the NSD's CPU (with dnsperf; see README)
BASE_PORT=${BASE_PORT:-5350} # server i (0-based in SERVERS) listens on BASE_PORT+i
UPSTREAM_PORT=${UPSTREAM_PORT:-$((BASE_PORT + 49))} # forward: the NSD
KUBEAPI_PORT=${KUBEAPI_PORT:-$((BASE_PORT + 48))}  # cluster: kubeapi.py
BUILD=${BUILD:-1}            # 0: use existing binaries
KEEP=${KEEP:-0}              # 1: keep the work dir (dnsperf reports, server logs)
ECHO_BATCH=${ECHO_BATCH:-32}
TARGET=${CARGO_TARGET_DIR:-}
ECHO_BIN=${ECHO_BIN:-${TARGET:-$BENCH/echo/target}/release/echo}
RINGDNS_BIN=${RINGDNS_BIN:-${TARGET:-$ROOT/target}/release/ringdns}
export ECHO_BIN RINGDNS_BIN ECHO_BATCH UPSTREAM_PORT

read -r -a EXTRA <<<"$DNSPERF_EXTRA"

die() { echo "run.sh: $*" >&2; exit 1; }
note() { echo "run.sh: $*" >&2; }

for v in DURATION RUNS WARMUP CLIENTS THREADS OUTSTANDING QUERIES BASE_PORT UPSTREAM_PORT \
  FWD_ZONE_A FWD_NAMES FWD_WARM_NAMES CACHE_NAMES LATENCY AUTH_NAMES AUTH_QUERIES \
  CLUSTER_LINES CLUSTER_SERVICES CLUSTER_HEADLESS KUBEAPI_PORT; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer (got '${!v}')"
done
((RUNS >= 1 && DURATION >= 1 && QUERIES >= 1)) || die "RUNS, DURATION and QUERIES must be >= 1"
if [[ $WORKLOAD == forward ]]; then
  ((FWD_NAMES > FWD_WARM_NAMES)) || die "FWD_NAMES must be larger than FWD_WARM_NAMES"
  ((WARMUP == 0 || FWD_WARM_NAMES > 0)) || die "WARMUP needs FWD_WARM_NAMES > 0"
fi
if [[ $WORKLOAD == cache ]]; then
  ((CACHE_NAMES >= 1 && CACHE_NAMES <= FWD_ZONE_A)) || die "CACHE_NAMES must be 1..FWD_ZONE_A (names must exist in the zone)"
fi
if [[ $WORKLOAD == cluster ]]; then
  case $CLUSTER_QUERIES in
    service | headless | srv | walk | autopath) ;;
    *) die "CLUSTER_QUERIES must be service, headless, srv, walk or autopath (got '$CLUSTER_QUERIES')" ;;
  esac
  ((CLUSTER_LINES >= 1 && CLUSTER_SERVICES >= 1 && CLUSTER_HEADLESS >= 1)) ||
    die "CLUSTER_LINES, CLUSTER_SERVICES and CLUSTER_HEADLESS must be >= 1"
fi

# ---- tools ----------------------------------------------------------------------------------
# Debian packages for the commands this run needs; the missing ones are installed in one go.
# Installing nsd, dnsdist or unbound enables (and, where services may start, starts) a service
# on port 53: disable and stop the ones this install brought in.
PKGS=()
need() { command -v "$1" >/dev/null || PKGS+=("$2"); }
need dnsperf dnsperf
need dig bind9-dnsutils
need pgrep procps
if [[ $WORKLOAD != whoami ]]; then
  need nsd nsd
  [[ " $SERVERS " == *" dnsdist-"* ]] && need dnsdist dnsdist
  [[ " $SERVERS " == *" unbound-"* ]] && need unbound unbound
  [[ " $SERVERS " == *" knot-"* ]] && need knotd knot
fi
[[ $WORKLOAD == auth || $WORKLOAD == cluster ]] && need python3 python3
stop_services() {
  local svc
  for svc in "$@"; do
    if [[ -d /run/systemd/system ]] && command -v systemctl >/dev/null; then
      systemctl disable --now "$svc" >/dev/null 2>&1 || true
    elif [[ -x /etc/init.d/$svc ]] && "/etc/init.d/$svc" status >/dev/null 2>&1; then
      "/etc/init.d/$svc" stop >/dev/null 2>&1 || true # the init scripts stop by pidfile
    fi
  done
}
if ((${#PKGS[@]})); then
  ((EUID == 0)) || die "missing: ${PKGS[*]}; install them (apt-get install ${PKGS[*]}) or run as root"
  note "installing ${PKGS[*]}"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${PKGS[@]}" >/dev/null
  for p in "${PKGS[@]}"; do
    case $p in
      nsd | dnsdist | knot) stop_services "$p" ;;
      unbound) stop_services unbound unbound-resolvconf ;;
    esac
  done
fi
for t in taskset awk getconf cargo dnsperf dig pgrep; do command -v "$t" >/dev/null || die "$t not found"; done
taskset -c "$SERVER_CPU" true 2>/dev/null || die "cannot pin to SERVER_CPU=$SERVER_CPU (see nproc)"
taskset -c "$CLIENT_CPU" true 2>/dev/null || die "cannot pin to CLIENT_CPU=$CLIENT_CPU (see nproc)"
taskset -c "$UPSTREAM_CPU" true 2>/dev/null || die "cannot pin to UPSTREAM_CPU=$UPSTREAM_CPU (see nproc)"
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
export RINGDNS_BUILD_FAILED # read by ringdns_ok in lib.sh

# ---- work dir, cleanup ----------------------------------------------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ringdns-bench.XXXXXX")
DNSPERF_PID='' UPSTREAM_PID=''
UPSTREAM_TREE=()
cleanup() {
  [[ -n $DNSPERF_PID ]] && stop_pid "$DNSPERF_PID"
  stop_all
  [[ -n $UPSTREAM_PID ]] && stop_tree "$UPSTREAM_PID"
  [[ -n $KUBEAPI_PID ]] && stop_pid "$KUBEAPI_PID"
  if ((KEEP)); then note "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Query files. whoami: QUERIES names, looped by dnsperf -l. forward: FWD_NAMES distinct names
# (the zone's hN, then hN answered by its wildcard) in random order; the first FWD_WARM_NAMES
# go to the warm-ups, the rest to the measured runs, and a forwarder's dnsperf reads its file
# at most once (-n 1), so no name repeats within a run, warm-up included; a run that uses up
# its file ends early and says so.
QFILE=$WORK/queries.txt WFILE=$WORK/queries.txt
PASSES=()
if [[ $WORKLOAD == forward ]]; then
  note "generating bench.test. ($FWD_ZONE_A A names + 45k others + a wildcard) and $FWD_NAMES query names"
  fwd_zone "$FWD_ZONE_A" >"$WORK/bench.test.zone"
  fwd_queries "$FWD_NAMES" >"$WORK/names.txt"
  WFILE=$WORK/warmup.txt
  head -n "$FWD_WARM_NAMES" "$WORK/names.txt" >"$WFILE"
  tail -n +"$((FWD_WARM_NAMES + 1))" "$WORK/names.txt" >"$QFILE"
  rm -f "$WORK/names.txt"
  PASSES=(-n 1)
elif [[ $WORKLOAD == cache ]]; then
  note "generating bench.test. ($FWD_ZONE_A A names + 45k others + a wildcard, TTL 3600) and $CACHE_NAMES query names"
  fwd_zone "$FWD_ZONE_A" >"$WORK/bench.test.zone"
  fwd_queries "$CACHE_NAMES" >"$QFILE" # h0..h(CACHE_NAMES-1), all A records of the zone
elif [[ $WORKLOAD == cluster ]]; then
  note "generating bench.test. ($FWD_ZONE_A A names) and the cluster's query files ($CLUSTER_SERVICES services, $CLUSTER_HEADLESS headless)"
  fwd_zone "$FWD_ZONE_A" >"$WORK/bench.test.zone"
  cluster_files "$WORK" "$CLUSTER_LINES"
  QFILE=$WORK/$CLUSTER_QUERIES.txt WFILE=$QFILE
elif [[ $WORKLOAD == auth ]]; then
  note "generating bench.test. ($AUTH_NAMES names: A/AAAA, MX, CNAMEs, TXT, wildcards, delegations with glue) and $AUTH_QUERIES queries"
  auth_files "$WORK" "$AUTH_NAMES" "$AUTH_QUERIES"
  AUTH_ZONE=$WORK/auth.zone
else
  awk -v n="$QUERIES" 'BEGIN { for (i = 0; i < n; i++) printf "name%d.bench.test A\n", i }' >"$QFILE"
fi
MEASURED_NAMES=$(wc -l <"$QFILE")

# ---- which servers run ----------------------------------------------------------------------
read -r -a ALL <<<"$SERVERS"
pick_servers "${ALL[@]}"

# ---- forward, cache: the upstream, one NSD for the whole run ---------------------------------
# Not counted: only the forwarder's own CPU time is. Its CPU time is shown as up_us/q.
if [[ $WORKLOAD == forward || $WORKLOAD == cache || $WORKLOAD == cluster ]]; then
  ! port_answers "$UPSTREAM_PORT" || die "something already answers on 127.0.0.1:$UPSTREAM_PORT (set UPSTREAM_PORT)"
  SRV_CMD=()
  nsd_cmd "$UPSTREAM_PORT" "$WORK"
  note "starting NSD on 127.0.0.1:$UPSTREAM_PORT, CPU $UPSTREAM_CPU"
  taskset -c "$UPSTREAM_CPU" "${SRV_CMD[@]}" >"$WORK/nsd.out" 2>&1 &
  UPSTREAM_PID=$!
  if ! wait_answers "$UPSTREAM_PORT" "$UPSTREAM_PID" 127.0.0.2 100; then
    tail -n 5 "$WORK/nsd.out" "$WORK/nsd.log" >&2 2>/dev/null || true
    die "NSD did not answer ready.bench.test on 127.0.0.1:$UPSTREAM_PORT"
  fi
  mapfile -t UPSTREAM_TREE < <(proc_tree "$UPSTREAM_PID")
fi
if [[ $WORKLOAD == cluster ]]; then
  note "starting kubeapi.py on 127.0.0.1:$KUBEAPI_PORT, CPU $CLIENT_CPU"
  cluster_api_start "$WORK" || die "kubeapi.py did not start; see $WORK/kubeapi.log (KEEP=1)"
fi

# measure NAME PORT ROUND -> one TSV line on stdout:
#   round name qps avg_ms p50_ms p99_ms max_ms lost cpu% us/q up_us/q si_us/q
measure() {
  local name=$1 port=$2 round=$3 fn=srv_${1//-/_} pid out t0 t1 u0 u1 s0 s1 completed rc=0 expect='' lat
  local -a passes=()
  local -a SRV_CMD=()
  if [[ -n $UPSTREAM_PID ]] && ! kill -0 "$UPSTREAM_PID" 2>/dev/null; then
    note "the NSD upstream is gone; log tail:"
    tail -n 5 "$WORK/nsd.out" "$WORK/nsd.log" >&2 2>/dev/null || true
    return 1
  fi
  # forwarders must resolve the probe name through the upstream before the load starts,
  # and read the query file once (the echo has no cache: it may loop the file); an
  # authoritative server must answer it from its zone (loaded).
  if [[ $WORKLOAD != whoami && $name != echo* ]]; then
    expect=127.0.0.2 passes=("${PASSES[@]}")
  fi
  "${fn}_cmd" "$port" "$WORK"
  taskset -c "$SERVER_CPU" "${SRV_CMD[@]}" >"$WORK/$name.$round.log" 2>&1 &
  pid=$!
  if srv_forks "$name"; then STARTED_TREES+=("$pid"); else STARTED_PIDS+=("$pid"); fi
  if ! wait_answers "$port" "$pid" "$expect"; then
    note "$name did not answer${expect:+ ready.bench.test} on 127.0.0.1:$port; log tail:"
    tail -n 5 "$WORK/$name.$round.log" >&2 || true
    stop_all
    return 1
  fi
  # cache: ask every name once (checked: all answered) before any load, so that the warm-up
  # and the measured run only hit the cache
  if [[ $WORKLOAD == cache && $name != echo* ]] && ! cache_fill "$port" "$QFILE" "$CLIENT_CPU"; then
    note "$name: cache fill failed; log tail:"
    tail -n 5 "$WORK/$name.$round.log" >&2 || true
    stop_all
    return 1
  fi
  local -a perf=(taskset -c "$CLIENT_CPU" dnsperf -s 127.0.0.1 -p "$port"
    -c "$CLIENTS" -T "$THREADS" -q "$OUTSTANDING" "${passes[@]}" "${EXTRA[@]}")
  if ((WARMUP)); then
    "${perf[@]}" -d "$WFILE" -l "$WARMUP" >/dev/null 2>&1 &
    DNSPERF_PID=$!
    wait "$DNSPERF_PID" || true
    DNSPERF_PID=
  fi
  ((LATENCY)) && perf+=(-v)
  out=$WORK/dnsperf.$name.$round.txt
  t0=$(srv_ticks "$name" "$pid")
  u0=$(tree_cpu_ticks "${UPSTREAM_TREE[@]}")
  s0=$(softirq_ticks "$SERVER_CPU")
  "${perf[@]}" -d "$QFILE" -l "$DURATION" >"$out" 2>&1 &
  DNSPERF_PID=$!
  wait "$DNSPERF_PID" || rc=$?
  DNSPERF_PID=
  if ! kill -0 "$pid" 2>/dev/null; then
    note "$name died during the run; log tail:"
    tail -n 5 "$WORK/$name.$round.log" >&2 || true
    stop_all
    return 1
  fi
  t1=$(srv_ticks "$name" "$pid")
  u1=$(tree_cpu_ticks "${UPSTREAM_TREE[@]}")
  s1=$(softirq_ticks "$SERVER_CPU")
  stop_all
  # unbound's own count of cache answers, logged at exit (verbosity 1), kept with the report
  grep -h 'answers from cache' "$WORK/$name.$round.log" >>"$out" 2>/dev/null || true
  completed=$(dnsperf_field "$out" "Queries completed")
  if ((rc != 0)) || [[ -z $completed ]] || ((completed == 0)); then
    note "dnsperf failed against $name (rc=$rc):"
    grep -v '^> ' "$out" | tail -n 5 >&2 || true
    return 1
  fi
  lat="- -"
  if ((LATENCY)); then
    lat=$(latency_stats "$out")
    # keep the report, drop the per-query lines (tens of MB per run)
    grep -v '^> ' "$out" >"$out.tmp" || true
    mv "$out.tmp" "$out"
  fi
  grep -q 'Testing complete (end of file)' "$out" &&
    note "$name used up the $MEASURED_NAMES names before ${DURATION}s (raise FWD_NAMES); its figures cover a shorter run"
  awk -v r="$round" -v n="$name" -v c="$completed" -v d=$((t1 - t0)) -v hz="$CLK_TCK" \
    -v up="${UPSTREAM_PID:+$((u1 - u0))}" -v si=$((s1 - s0)) -v lat="$lat" \
    -v qps="$(dnsperf_field "$out" "Queries per second")" \
    -v avg="$(dnsperf_field "$out" "Average Latency (s)")" \
    -v max="$(awk '/Average Latency/ { for (i = 1; i < NF; i++) if ($i == "max") { print $(i + 1) + 0; exit } }' "$out")" \
    -v lost="$(dnsperf_field "$out" "Queries lost")" \
    -v rt="$(dnsperf_field "$out" "Run time (s)")" \
    'BEGIN { s = d / hz; split(lat, l, " ")
             printf "%d\t%s\t%.0f\t%.3f\t%s\t%s\t%.3f\t%d\t%.0f\t%.2f\t%s\t%.2f\n",
               r, n, qps, avg * 1000, l[1], l[2], max * 1000, lost,
               (rt > 0 ? 100 * s / rt : 0), s * 1e6 / c,
               (up == "" ? "-" : sprintf("%.2f", up / hz * 1e6 / c)), si / hz * 1e6 / c }'
}

# ---- header ---------------------------------------------------------------------------------
echo "# ringdns bench $(date -u +%Y-%m-%dT%H:%M:%SZ)  $(uname -r)  $(nproc) CPUs: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
echo "# dnsperf $(dnsperf -h 2>&1 | awk '/^Version/ { print $2; exit }')"
echo "# workload $WORKLOAD; server on CPU $SERVER_CPU, dnsperf on CPU $CLIENT_CPU: -c $CLIENTS -T $THREADS -q $OUTSTANDING -l $DURATION${PASSES[*]:+ (forwarders: ${PASSES[*]})}${DNSPERF_EXTRA:+ $DNSPERF_EXTRA}$( ((LATENCY)) && echo ' -v'); warm-up ${WARMUP}s; $RUNS rounds of: ${NAMES[*]}"
if [[ $WORKLOAD == forward ]]; then
  echo "# upstream: NSD $(nsd -v 2>&1 | awk '/^NSD version/ { print $3; exit }') on 127.0.0.1:$UPSTREAM_PORT, CPU $UPSTREAM_CPU, bench.test. with $FWD_ZONE_A A names, 45k others and a wildcard; $MEASURED_NAMES unique names per measured run, $FWD_WARM_NAMES for warm-ups"
elif [[ $WORKLOAD == cache ]]; then
  echo "# upstream: NSD $(nsd -v 2>&1 | awk '/^NSD version/ { print $3; exit }') on 127.0.0.1:$UPSTREAM_PORT, CPU $UPSTREAM_CPU, bench.test. with $FWD_ZONE_A A names (TTL 3600), 45k others and a wildcard; $CACHE_NAMES existing names, each asked once before the warm-up (cache fill), then looped: every measured query a cache hit"
elif [[ $WORKLOAD == auth ]]; then
  echo "# zone bench.test.: $(grep -vc '^\$' "$AUTH_ZONE") records from $AUTH_NAMES names (auth_zone.py); $MEASURED_NAMES queries looped: 45 % existing names, 15 % CNAMEs, 15 % wildcard expansions, 15 % referrals, 10 % NXDOMAIN${NAMES[*]:+; $(for n in "${NAMES[@]}"; do case $n in nsd-*) printf 'NSD %s ' "$(nsd -v 2>&1 | awk '/^NSD version/ { print $3; exit }')" ;; knot-*) printf 'Knot %s ' "$(knotd -V 2>&1 | awk '{ print $NF; exit }')" ;; esac; done)}"
elif [[ $WORKLOAD == cluster ]]; then
  echo "# cluster: $CLUSTER_SERVICES services, $CLUSTER_HEADLESS headless (4 endpoints), listed from kubeapi.py; queries: $CLUSTER_QUERIES ($MEASURED_NAMES lines, looped); resolved names per query: $(cluster_names_per_query) (us per resolved name = us/q / that); outside names forwarded to NSD $(nsd -v 2>&1 | awk '/^NSD version/ { print $3; exit }') on 127.0.0.1:$UPSTREAM_PORT, cache 30 in front"
else
  echo "# $QUERIES names, looped"
fi
echo "# us/q = server user+sys CPU time / answered queries; ratio = us/q / echo's us/q in the same round"
echo "# si_us/q = softirq time on the server's CPU / answered queries (not in us/q)${UPSTREAM_PID:+; up_us/q = CPU time of the NSD upstream / answered queries (not counted)}"
echo "# latencies in ms (p50/p99 need LATENCY=1: dnsperf -v)"
HDR='%-5s %-16s %8s %7s %7s %7s %7s %5s %5s %6s %7s %7s %6s\n'
# shellcheck disable=SC2059 # HDR is the format
printf "$HDR" round server qps avg p50 p99 max lost cpu% us/q up_us/q si_us/q ratio

ROWS=$WORK/rows.tsv
: >"$ROWS"
for ((round = 1; round <= RUNS; round++)); do
  : >"$WORK/round.tsv"
  for i in "${!NAMES[@]}"; do
    measure "${NAMES[i]}" "${PORTS[i]}" "$round" >>"$WORK/round.tsv" || true
  done
  # ratio to the echo row of this round ("-" if echo did not run)
  awk -F'\t' -v OFS='\t' '
    { row[NR] = $0; if ($2 == "echo") e = $10 }
    END { for (i = 1; i <= NR; i++) { split(row[i], f, "\t")
            print row[i], (e > 0 ? sprintf("%.2f", f[10] / e) : "-") } }' "$WORK/round.tsv" |
    tee -a "$ROWS" |
    awk -F'\t' -v fmt="$HDR" '{ printf fmt, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13 }'
done

# ---- summary: medians per server ------------------------------------------------------------
# median FMT: median of the numbers on stdin ("-" and empty lines ignored), "-" if none
median() {
  grep -E '^[0-9.]+$' | sort -g |
    awk -v f="$1" '{ v[NR] = $1 } END { if (!NR) print "-"; else printf f "\n", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
col() { awk -F'\t' -v n="$1" -v c="$2" '$2 == n { print $c }' "$ROWS" | median "$3"; }
echo "# median over rounds (lost: total)"
# shellcheck disable=SC2059
printf "$HDR" "#" server qps avg p50 p99 max lost cpu% us/q up_us/q si_us/q ratio
for name in "${NAMES[@]}"; do
  if ! awk -F'\t' -v n="$name" '$2 == n { found = 1 } END { exit !found }' "$ROWS"; then
    echo "#     $name: no successful run"
    continue
  fi
  # shellcheck disable=SC2059
  printf "$HDR" "#" "$name" "$(col "$name" 3 %.0f)" "$(col "$name" 4 %.3f)" "$(col "$name" 5 %.3f)" \
    "$(col "$name" 6 %.3f)" "$(col "$name" 7 %.3f)" \
    "$(awk -F'\t' -v n="$name" '$2 == n { s += $8 } END { print s + 0 }' "$ROWS")" \
    "$(col "$name" 9 %.0f)" "$(col "$name" 10 %.2f)" "$(col "$name" 11 %.2f)" "$(col "$name" 12 %.2f)" \
    "$(col "$name" 13 %.2f)"
done
