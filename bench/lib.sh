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

stop_all() {
  local pid
  for pid in "${STARTED_PIDS[@]}"; do
    stop_pid "$pid"
  done
  STARTED_PIDS=()
}

# cpu_ticks PID: utime+stime of all the process's threads, in clock ticks.
# Fields after the "(comm)" (which may contain spaces): $12 = utime (14), $13 = stime (15).
cpu_ticks() {
  local stat
  stat=$(<"/proc/$1/stat")
  awk '{ print $12 + $13 }' <<<"${stat##*) }"
}

# wait_answers PORT PID: bounded wait (at most ~30 s) until a DNS query on PORT gets any reply.
wait_answers() {
  local port=$1 pid=$2 i
  for ((i = 0; i < 25; i++)); do
    kill -0 "$pid" 2>/dev/null || return 1
    if dig @127.0.0.1 -p "$port" +tries=1 +time=1 +retry=0 probe.bench.test A >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.2
  done
  return 1
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

# ringdns-whoami: ringdns with the whoami plugin (answers any name).
srv_ringdns_whoami_check() {
  if [[ ! -x $RINGDNS_BIN ]]; then
    echo "ringdns not built ($RINGDNS_BIN missing): skipping ringdns-whoami" >&2
    return 1
  fi
}
srv_ringdns_whoami_cmd() {
  local port=$1 dir=$2
  printf '.:%s {\n whoami\n}\n' "$port" >"$dir/Corefile.ringdns-whoami"
  # shellcheck disable=SC2034
  SRV_CMD=("$RINGDNS_BIN" -conf "$dir/Corefile.ringdns-whoami")
}

# ringdns-whoami-glommio: the same with glommio's one-datagram-per-syscall UDP backend, to
# measure what the batched recvmmsg/sendmmsg backend buys.
srv_ringdns_whoami_glommio_check() { srv_ringdns_whoami_check; }
srv_ringdns_whoami_glommio_cmd() {
  local port=$1 dir=$2
  printf '{\n udp_backend glommio\n}\n.:%s {\n whoami\n}\n' "$port" >"$dir/Corefile.ringdns-whoami-glommio"
  # shellcheck disable=SC2034
  SRV_CMD=("$RINGDNS_BIN" -conf "$dir/Corefile.ringdns-whoami-glommio")
}
