# shellcheck shell=bash
# Helpers and the server registry for bench/run.sh. Sourced, not executed.
#
# Adding a server NAME (e.g. "unbound"; '-' in NAME maps to '_' in function names):
#   srv_NAME_check            return 0 if it can run; else print why (stderr) and return 1
#   srv_NAME_cmd PORT DIR     write any config under DIR, then set the array SRV_CMD to the
#                             foreground command line (no daemonising: the PID we start must
#                             be the server, because its CPU time is read from /proc/PID/stat)
# then list NAME in SERVERS. The harness pins the command to SERVER_CPU itself.

# ---- process bookkeeping --------------------------------------------------------------------

STARTED_PIDS=()
# Servers whose started PID is the root of a process tree (NSD forks: the PID started becomes
# xfrd, whose child "main" forks the server process): their CPU time is the whole tree's, and
# stop_all stops them with stop_tree.
STARTED_TREES=()

# stop_pid PID: TERM, wait up to ~3 s, then KILL. Only ever PIDs this script started.
stop_pid() {
  local pid=$1 i
  kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 30; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null || true
}

# proc_tree PID: PID and all its descendants, one per line (bounded by the tree's depth).
proc_tree() {
  local c
  echo "$1"
  for c in $(pgrep -P "$1" 2>/dev/null); do proc_tree "$c"; done
}

# stop_tree PID: stop a server that forks (NSD: the PID started becomes xfrd, its child
# "main" forks the "server" processes). TERM the root, which shuts the rest down; wait up
# to ~5 s for every process of the tree, then KILL the survivors, each by its own PID.
stop_tree() {
  local root=$1 p i alive
  local -a tree
  mapfile -t tree < <(proc_tree "$root")
  kill -TERM "$root" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    alive=0
    for p in "${tree[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.1
  done
  for p in "${tree[@]}"; do kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null; done
  wait "$root" 2>/dev/null || true
}

stop_all() {
  local pid
  for pid in "${STARTED_PIDS[@]}"; do
    stop_pid "$pid"
  done
  STARTED_PIDS=()
  for pid in "${STARTED_TREES[@]}"; do
    stop_tree "$pid"
  done
  STARTED_TREES=()
}

# pick_servers NAMES...: NAMES and PORTS (BASE_PORT + position) of the servers whose
# srv_NAME_check passes; dies when a name is unknown, none can run, or a port is taken.
pick_servers() {
  local i name fn all=("$@")
  NAMES=() PORTS=()
  for i in "${!all[@]}"; do
    name=${all[i]} fn=srv_${all[i]//-/_}
    declare -F "${fn}_check" >/dev/null || die "unknown server '$name' (no ${fn}_check)"
    if "${fn}_check"; then
      NAMES+=("$name") PORTS+=($((BASE_PORT + i)))
    fi
  done
  ((${#NAMES[@]})) || die "no server can run"
  for i in "${!NAMES[@]}"; do
    ! port_answers "${PORTS[i]}" || die "something already answers on 127.0.0.1:${PORTS[i]} (set BASE_PORT)"
  done
}

# cpu_ticks PID: utime+stime of all the process's threads, in clock ticks.
# Fields after the "(comm)" (which may contain spaces): $12 = utime (14), $13 = stime (15).
cpu_ticks() {
  local stat
  stat=$(<"/proc/$1/stat")
  awk '{ print $12 + $13 }' <<<"${stat##*) }"
}

# softirq_ticks CPU: softirq time of that CPU so far (/proc/stat "cpuN", 7th value), in ticks.
# Packet work the kernel does in softirq (with IRQ time accounting, as here) is not in any
# process's utime+stime; on loopback it mostly lands on the CPU of the process that sent.
softirq_ticks() {
  awk -v c="cpu$1" '$1 == c { print $8; exit }' /proc/stat
}

# tree_cpu_ticks PID...: cpu_ticks summed over the given PIDs (those still alive).
tree_cpu_ticks() {
  local p t sum=0
  for p in "$@"; do
    t=$(cpu_ticks "$p" 2>/dev/null) || continue
    sum=$((sum + t))
  done
  echo "$sum"
}

# wait_answers PORT PID [EXPECT] [TRIES]: bounded wait (TRIES probes, default 25, each at
# most ~1.2 s) until a DNS query on PORT gets any reply or, with EXPECT, until
# `dig +short ready.bench.test A` prints EXPECT (the whole chain, upstream included, works).
wait_answers() {
  local port=$1 pid=$2 expect=${3:-} tries=${4:-25} i
  for ((i = 0; i < tries; i++)); do
    kill -0 "$pid" 2>/dev/null || return 1
    if [[ -n $expect ]]; then
      [[ $(dig @127.0.0.1 -p "$port" +short +tries=1 +time=1 +retry=0 ready.bench.test A 2>/dev/null) == "$expect" ]] && return 0
    elif dig @127.0.0.1 -p "$port" +tries=1 +time=1 +retry=0 probe.bench.test A >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.2
  done
  return 1
}

# port_answers PORT: something already answers DNS on 127.0.0.1:PORT (one probe, <= 1 s).
port_answers() {
  dig @127.0.0.1 -p "$1" +tries=1 +time=1 +retry=0 probe.bench.test A >/dev/null 2>&1
}

# latency_stats FILE: "p50_ms p99_ms" from the per-response lines of `dnsperf -v`
# ("> RCODE NAME TYPE SECONDS"; timeouts are "> T ..." and carry no latency). dnsperf 2.10
# has no latency histogram option, so this is the only way to percentiles. One pass, a
# histogram in 1 µs buckets (dnsperf prints 6 decimals); "- -" if there are no such lines.
latency_stats() {
  awk '$1 == ">" && $2 != "T" && $2 != "I" && $NF ~ /^[0-9.]+$/ {
         b = int($NF * 1e6 + 0.5); h[b]++; n++; if (b > m) m = b }
       END {
         if (!n) { print "- -"; exit }
         t50 = 0.50 * n; t99 = 0.99 * n; c = 0; p50 = p99 = -1
         for (b = 0; b <= m; b++) {
           if (!(b in h)) continue
           c += h[b]
           if (p50 < 0 && c >= t50) p50 = b
           if (c >= t99) { p99 = b; break }
         }
         printf "%.3f %.3f\n", p50 / 1000, p99 / 1000
       }' "$1"
}

# dnsperf_field FILE LABEL: first number after "LABEL:" in a dnsperf report.
dnsperf_field() {
  awk -v l="$2:" 'i = index($0, l) { $0 = substr($0, i + length(l)); print $1 + 0; exit }' "$1"
}

# ---- server registry ------------------------------------------------------------------------

# echo: bare recvmmsg/sendmmsg responder (bench/echo), the machine's physical limit.
srv_echo_check() {
  [[ -x $ECHO_BIN ]] || { echo "echo responder not built: $ECHO_BIN" >&2; return 1; }
}
srv_echo_cmd() {
  # shellcheck disable=SC2034 # SRV_CMD is read by run.sh
  SRV_CMD=("$ECHO_BIN" "$1" "${ECHO_BATCH:-32}")
}
# echo-df: the echo with DF set on its replies, as ringdns's listeners send them (the kernel
# then skips the IP ID hash: the limit for a server that sets DF). Ratios stay against `echo`.
srv_echo_df_check() { srv_echo_check; }
srv_echo_df_cmd() {
  # shellcheck disable=SC2034 # SRV_CMD is read by run.sh
  SRV_CMD=("$ECHO_BIN" "$1" "${ECHO_BATCH:-32}" df)
}

# ringdns_ok NAME: the ringdns binary can be measured (built, and not a stale binary left
# over from a build that failed in this run).
ringdns_ok() {
  if ((${RINGDNS_BUILD_FAILED:-0})); then
    echo "ringdns build failed: skipping $1 (not measuring a stale binary)" >&2
    return 1
  fi
  if [[ ! -x $RINGDNS_BIN ]]; then
    echo "ringdns not built ($RINGDNS_BIN missing): skipping $1" >&2
    return 1
  fi
}

# whoami_conf NAME PORT DIR [GLOBAL]: a whoami Corefile (with GLOBAL as the global block's
# lines when given) and SRV_CMD for it.
whoami_conf() {
  local name=$1 port=$2 dir=$3 global=${4:-}
  if [[ -n $global ]]; then
    printf '{\n %s\n}\n.:%s {\n whoami\n}\n' "$global" "$port" >"$dir/Corefile.$name"
  else
    printf '.:%s {\n whoami\n}\n' "$port" >"$dir/Corefile.$name"
  fi
  # shellcheck disable=SC2034
  SRV_CMD=("$RINGDNS_BIN" -conf "$dir/Corefile.$name")
}

# ringdns-whoami: ringdns with the whoami plugin (answers any name). RINGDNS_GLOBAL: lines for
# its global block (e.g. "udp_batch 8"), to measure a tuning knob.
srv_ringdns_whoami_check() { ringdns_ok ringdns-whoami; }
srv_ringdns_whoami_cmd() { whoami_conf ringdns-whoami "$1" "$2" "${RINGDNS_GLOBAL:-}"; }

# ringdns-whoami-glommio: the same with glommio's one-datagram-per-syscall UDP backend, to
# measure what the batched recvmmsg/sendmmsg backend buys.
srv_ringdns_whoami_glommio_check() { ringdns_ok ringdns-whoami-glommio; }
srv_ringdns_whoami_glommio_cmd() { whoami_conf ringdns-whoami-glommio "$1" "$2" "udp_backend glommio"; }

# ringdns-whoami-base: ringdns-whoami served by RINGDNS_BASE_BIN (A/B of two builds in the same
# rounds; with DNSPERF_EXTRA="-m tcp", of the TCP path).
srv_ringdns_whoami_base_check() { srv_ringdns_fwd_base_check; }
srv_ringdns_whoami_base_cmd() {
  whoami_conf ringdns-whoami-base "$1" "$2" "${RINGDNS_GLOBAL:-}"
  SRV_CMD[0]=$RINGDNS_BASE_BIN
}

# ---- forward workload: the upstream and the forwarders --------------------------------------
# All forwarders send to the one NSD that run.sh starts on 127.0.0.1:UPSTREAM_PORT, which is
# authoritative for bench.test. (fwd_zone). Caches are off or as cold as the server allows,
# and the query file holds each name once, so every query goes upstream.

# fwd_zone N: the bench.test. zone on stdout: hI A for I < N, then 20k AAAA, 10k CNAME, 10k
# TXT, 5k MX (the zone of bench/README.md's forward workload); ready.bench.test (the readiness
# probe, never in a query file), and a wildcard A that answers every other name directly under
# bench.test., so that a run can ask millions of distinct names (hI for I >= N too) while NSD
# keeps a zone of that size.
fwd_zone() {
  awk -v n="$1" 'BEGIN {
    print "$ORIGIN bench.test."
    print "$TTL 3600"
    print "@ IN SOA ns.bench.test. hostmaster.bench.test. 1 3600 900 604800 300"
    print "@ IN NS ns"
    print "ns IN A 127.0.0.1"
    print "ready IN A 127.0.0.2"
    print "* IN A 10.255.255.255"
    for (i = 0; i < n; i++) printf "h%d IN A 10.%d.%d.%d\n", i, int(i / 65536) % 256, int(i / 256) % 256, i % 256
    for (i = 0; i < 20000; i++) printf "v%d IN AAAA fd00::%x\n", i, i
    for (i = 0; i < 10000; i++) printf "c%d IN CNAME h%d\n", i, i % n
    for (i = 0; i < 10000; i++) printf "t%d IN TXT \"bench %d\"\n", i, i
    for (i = 0; i < 5000; i++) printf "m%d IN MX 10 h%d\n", i, i % n
  }'
}

# fwd_queries N: "hI.bench.test A" for every I < N, each once, in a fixed pseudo-random order
# (Fisher-Yates, seed 42). Names beyond the zone's hI are answered by its wildcard.
fwd_queries() {
  awk -v n="$1" 'BEGIN {
    srand(42)
    for (i = 0; i < n; i++) a[i] = i
    for (i = n - 1; i > 0; i--) { j = int(rand() * (i + 1)); t = a[i]; a[i] = a[j]; a[j] = t }
    for (i = 0; i < n; i++) printf "h%d.bench.test A\n", a[i]
  }'
}

# nsd_cmd PORT DIR: NSD authoritative for DIR/bench.test.zone on 127.0.0.1:PORT, one server
# process, no RRL (its default per-/24 rate limit drops answers to 127.0.0.1 under load), no
# database file, no remote control, everything under DIR. nsd -d stays in the foreground but
# still forks (the PID started becomes xfrd): stop it with stop_tree.
nsd_cmd() {
  local port=$1 dir=$2
  cat >"$dir/nsd.conf" <<EOF
server:
  ip-address: 127.0.0.1@$port
  do-ip6: no
  server-count: 1
  username: ""
  chroot: ""
  zonesdir: "$dir"
  database: ""
  zonelistfile: "$dir/nsd.zonelist"
  xfrdfile: "$dir/nsd.xfrd.state"
  xfrdir: "$dir"
  pidfile: "$dir/nsd.pid"
  logfile: "$dir/nsd.log"
  verbosity: 1
  hide-version: yes
  rrl-ratelimit: 0
  rrl-whitelist-ratelimit: 0
remote-control:
  control-enable: no
zone:
  name: "bench.test."
  zonefile: "bench.test.zone"
EOF
  # shellcheck disable=SC2034
  SRV_CMD=(nsd -d -c "$dir/nsd.conf")
}

# ringdns-fwd: ringdns's forward plugin to the NSD upstream. Skipped until the binary has it.
srv_ringdns_fwd_check() {
  local plugins
  ringdns_ok ringdns-fwd || return 1
  # read the whole list first: `| grep -q` may exit before ringdns has written the rest, and
  # the SIGPIPE fails the pipeline under pipefail
  plugins=$("$RINGDNS_BIN" -plugins 2>/dev/null) || plugins=
  if ! grep -qx '[[:space:]]*dns\.forward' <<<"$plugins"; then
    echo "ringdns has no forward plugin yet ('ringdns -plugins' lacks dns.forward): skipping ringdns-fwd" >&2
    return 1
  fi
}
srv_ringdns_fwd_cmd() {
  local port=$1 dir=$2
  printf '.:%s {\n forward . 127.0.0.1:%s\n}\n' "$port" "$UPSTREAM_PORT" >"$dir/Corefile.ringdns-fwd"
  # shellcheck disable=SC2034
  SRV_CMD=("$RINGDNS_BIN" -conf "$dir/Corefile.ringdns-fwd")
}

# ringdns-fwd-log: ringdns-fwd with `log` in front (one line per query, to the server's
# stdout, which run.sh keeps in a file): what CoreDNS users who log every query pay.
srv_ringdns_fwd_log_check() { srv_ringdns_fwd_check; }
srv_ringdns_fwd_log_cmd() {
  local port=$1 dir=$2
  printf '.:%s {\n log\n forward . 127.0.0.1:%s\n}\n' "$port" "$UPSTREAM_PORT" >"$dir/Corefile.ringdns-fwd-log"
  # shellcheck disable=SC2034
  SRV_CMD=("${RINGDNS_LOG_BIN:-$RINGDNS_BIN}" -conf "$dir/Corefile.ringdns-fwd-log")
}

# ringdns-fwd-base: the same Corefile served by another ringdns binary (RINGDNS_BASE_BIN), to
# compare two builds in the same rounds (A/B) instead of across runs.
srv_ringdns_fwd_base_check() {
  [[ -x ${RINGDNS_BASE_BIN:-} ]] || { echo "RINGDNS_BASE_BIN is not an executable: skipping ringdns-fwd-base" >&2; return 1; }
}
srv_ringdns_fwd_base_cmd() {
  srv_ringdns_fwd_cmd "$@"
  SRV_CMD[0]=$RINGDNS_BASE_BIN
}

# dnsdist-fwd: dnsdist with one backend (the NSD) and no packet cache (none is configured),
# no console (no controlSocket; --supervised keeps it from reading one on stdin), no security
# polling (it would query the outside), health checks on the zone's SOA once a second.
srv_dnsdist_fwd_check() {
  command -v dnsdist >/dev/null || { echo "dnsdist not installed: skipping dnsdist-fwd" >&2; return 1; }
}
# dnsdist_conf NAME PORT DIR: dnsdist in front of the NSD, written to DIR/NAME.conf with the
# extra lines read from stdin, and SRV_CMD for it.
dnsdist_conf() {
  local name=$1 port=$2 dir=$3
  {
    cat <<EOF
setLocal("127.0.0.1:$port")
newServer({address="127.0.0.1:$UPSTREAM_PORT", checkName="bench.test.", checkType="SOA"})
setSecurityPollSuffix("")
EOF
    cat
  } >"$dir/$name.conf"
  # shellcheck disable=SC2034
  SRV_CMD=(dnsdist --supervised --disable-syslog -C "$dir/$name.conf")
}
srv_dnsdist_fwd_cmd() { dnsdist_conf dnsdist-fwd "$1" "$2" </dev/null; }

# unbound-fwd: unbound forwarding bench.test. to the NSD. Its caches can't be switched off: a
# size of 0 leaves one entry (the most recent) per slab, since its LRU reclaim never evicts
# the newest entry; with one slab each that is a cache of one message and one RRset, evicted
# on every insert. Only the iterator module (no validator: there is no trust anchor, and the
# others forward without validating); qname minimisation off (unbound does not minimise
# toward a forwarder anyway). localhost must be allowed as a target (do-not-query-localhost
# defaults to yes: SERVFAIL) and test. un-blocked (the built-in RFC 6761 local zone answers
# NXDOMAIN for it). Outgoing queries are bound to 127.0.0.1, so nothing leaves the machine.
srv_unbound_fwd_check() {
  command -v unbound >/dev/null || { echo "unbound not installed: skipping unbound-fwd" >&2; return 1; }
}
# unbound_conf NAME PORT DIR: unbound forwarding bench.test. to the NSD, written to
# DIR/NAME.conf with the cache lines read from stdin, and SRV_CMD for it.
unbound_conf() {
  local name=$1 port=$2 dir=$3 cache_lines
  cache_lines=$(cat)
  cat >"$dir/$name.conf" <<EOF
server:
  interface: 127.0.0.1@$port
  port: $port
  outgoing-interface: 127.0.0.1
  do-ip6: no
  num-threads: 1
  do-daemonize: no
  use-syslog: no
  logfile: ""
  verbosity: 1
  username: ""
  chroot: ""
  directory: "$dir"
  pidfile: ""
  module-config: "iterator"
  qname-minimisation: no
  do-not-query-localhost: no
  local-zone: "test." nodefault
$cache_lines
  prefetch: no
remote-control:
  control-enable: no
forward-zone:
  name: "bench.test."
  forward-addr: 127.0.0.1@$UPSTREAM_PORT
EOF
  # shellcheck disable=SC2034
  SRV_CMD=(unbound -d -c "$dir/$name.conf")
}

srv_unbound_fwd_cmd() {
  unbound_conf unbound-fwd "$1" "$2" <<EOF
  msg-cache-size: 0
  msg-cache-slabs: 1
  rrset-cache-size: 0
  rrset-cache-slabs: 1
  key-cache-size: 0
  key-cache-slabs: 1
  neg-cache-size: 0
EOF
}

# ---- cache workload: the same upstream, caching forwarders ----------------------------------
# run.sh starts the NSD as for forward (same zone, $TTL 3600, so nothing expires in a run);
# the query file holds CACHE_NAMES names that all exist in the zone (hI A), looped. Before
# anything is measured, cache_fill asks each name once and checks that every one was
# answered, so every measured query is a hit (up_us/q, the NSD's CPU during the measured
# run, shows whether any went upstream).

# cache_fill PORT FILE CPU: one pass over FILE (dnsperf -n 1, 1 socket, 10 in flight),
# repeated up to 3 times until a pass has every name answered and none lost; 1 if none did.
# Each pass is bounded (-l 30).
cache_fill() {
  local port=$1 file=$2 cpu=$3 out=$2.fill.$1 i completed='' lost='' n
  n=$(wc -l <"$file")
  for ((i = 0; i < 3; i++)); do
    # in the background under DNSPERF_PID, as run.sh's own dnsperf runs (its cleanup stops it)
    taskset -c "$cpu" dnsperf -s 127.0.0.1 -p "$port" -c 1 -T 1 -q 10 -n 1 -l 30 -t 2 -d "$file" >"$out" 2>&1 &
    DNSPERF_PID=$!
    wait "$DNSPERF_PID" || true
    DNSPERF_PID=
    completed=$(dnsperf_field "$out" "Queries completed")
    lost=$(dnsperf_field "$out" "Queries lost")
    [[ $completed == "$n" && $lost == 0 ]] && return 0
  done
  echo "cache fill on 127.0.0.1:$port: $completed of $n answered, $lost lost" >&2
  return 1
}

# ringdns-cache: ringdns's cache plugin (defaults) in front of its forward plugin. Pinned to
# one CPU like every server, so one worker and one (per-core) cache.
srv_ringdns_cache_check() {
  local plugins
  ringdns_ok ringdns-cache || return 1
  plugins=$("$RINGDNS_BIN" -plugins 2>/dev/null) || plugins=
  if ! grep -qx '[[:space:]]*dns\.cache' <<<"$plugins" || ! grep -qx '[[:space:]]*dns\.forward' <<<"$plugins"; then
    echo "ringdns lacks dns.cache or dns.forward ('ringdns -plugins'): skipping ringdns-cache" >&2
    return 1
  fi
}
srv_ringdns_cache_cmd() {
  local port=$1 dir=$2
  printf '.:%s {\n cache\n forward . 127.0.0.1:%s\n}\n' "$port" "$UPSTREAM_PORT" >"$dir/Corefile.ringdns-cache"
  # shellcheck disable=SC2034
  SRV_CMD=("$RINGDNS_BIN" -conf "$dir/Corefile.ringdns-cache")
}

# ringdns-cache-base: the same with RINGDNS_BASE_BIN (A/B in the same rounds, as ringdns-fwd-base).
srv_ringdns_cache_base_check() { srv_ringdns_fwd_base_check; }
srv_ringdns_cache_base_cmd() {
  srv_ringdns_cache_cmd "$@"
  # shellcheck disable=SC2034 # SRV_CMD is read by run.sh
  SRV_CMD[0]=$RINGDNS_BASE_BIN
}

# ringdns-cache-rrl: ringdns-cache with rrl in front of the cache, allowances no run reaches
# (a million identical answers a second per /24; the load is ~2 000 names at a few hundred
# queries a second each), so every hit is accounted and sent: what rrl costs a cache hit.
# Run it in the same rounds as ringdns-cache.
srv_ringdns_cache_rrl_check() {
  local plugins
  srv_ringdns_cache_check || return 1
  plugins=$("$RINGDNS_BIN" -plugins 2>/dev/null) || plugins=
  if ! grep -qx '[[:space:]]*dns\.rrl' <<<"$plugins"; then
    echo "ringdns lacks dns.rrl ('ringdns -plugins'): skipping ringdns-cache-rrl" >&2
    return 1
  fi
}
srv_ringdns_cache_rrl_cmd() {
  local port=$1 dir=$2
  printf '.:%s {\n rrl . {\n  responses-per-second 1000000\n }\n cache\n forward . 127.0.0.1:%s\n}\n' \
    "$port" "$UPSTREAM_PORT" >"$dir/Corefile.ringdns-cache-rrl"
  # shellcheck disable=SC2034
  SRV_CMD=("$RINGDNS_BIN" -conf "$dir/Corefile.ringdns-cache-rrl")
}

# ringdns-cache-policy: ringdns-cache behind issue 17's policy plugins as an operator's block
# has them: acl letting 127.0.0.0/8 through (after a block rule for other networks), rewrite
# rules that no measured name matches (a suffix, a regex TTL rule, a type rule), minimal,
# then the cache. What a policy-shaped block costs a cache hit. Run it in the same rounds as
# ringdns-cache.
srv_ringdns_cache_policy_check() {
  local plugins p
  srv_ringdns_cache_check || return 1
  plugins=$("$RINGDNS_BIN" -plugins 2>/dev/null) || plugins=
  for p in acl rewrite minimal; do
    if ! grep -qx "[[:space:]]*dns\.$p" <<<"$plugins"; then
      echo "ringdns lacks dns.$p ('ringdns -plugins'): skipping ringdns-cache-policy" >&2
      return 1
    fi
  done
}
srv_ringdns_cache_policy_cmd() {
  local port=$1 dir=$2
  printf '.:%s {\n acl {\n  block net 198.51.100.0/24\n  allow net 127.0.0.0/8\n }\n rewrite continue name suffix .nomatch.test. .other.test.\n rewrite continue ttl regex ^nomatch\\. 30\n rewrite type HINFO TXT\n minimal\n cache\n forward . 127.0.0.1:%s\n}\n' \
    "$port" "$UPSTREAM_PORT" >"$dir/Corefile.ringdns-cache-policy"
  # shellcheck disable=SC2034
  SRV_CMD=("$RINGDNS_BIN" -conf "$dir/Corefile.ringdns-cache-policy")
}

# dnsdist-cache: dnsdist-fwd plus a packet cache of 100 000 entries on the default pool.
srv_dnsdist_cache_check() {
  command -v dnsdist >/dev/null || { echo "dnsdist not installed: skipping dnsdist-cache" >&2; return 1; }
}
srv_dnsdist_cache_cmd() {
  dnsdist_conf dnsdist-cache "$1" "$2" <<'EOF'
pc = newPacketCache(100000)
getPool(""):setCache(pc)
EOF
}

# unbound-cache: unbound-fwd with its caches at their default sizes (msg-cache and
# rrset-cache), prefetch off (the default). At verbosity 1 it logs, when it stops,
# "server stats for thread 0: N queries, M answers from cache, K recursions".
srv_unbound_cache_check() {
  command -v unbound >/dev/null || { echo "unbound not installed: skipping unbound-cache" >&2; return 1; }
}
srv_unbound_cache_cmd() { unbound_conf unbound-cache "$1" "$2" </dev/null; }
