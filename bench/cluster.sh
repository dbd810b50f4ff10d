# shellcheck shell=bash
# The cluster workload of bench/run.sh (WORKLOAD=cluster): ringdns as a cluster's DNS, with
# kubeadm's plugins (kubernetes, forward, cache, loadbalance), its table listed from
# bench/kubeapi.py (a plain-HTTP stand-in for the API server: CLUSTER_SERVICES ClusterIP
# services, CLUSTER_HEADLESS headless ones of 4 endpoints, one pod at 127.0.0.1 in `default`)
# and outside names forwarded to the run's NSD. CLUSTER_QUERIES picks what is asked:
#   service   `svc-N.ns-M.svc.cluster.local A`
#   headless  `hdls-N.ns-M.svc.cluster.local A` (4 answers each)
#   srv       `_http._tcp.svc-N.ns-M.svc.cluster.local SRV` (with glue)
#   walk      the ndots:5 search-path walk of outside names hN.bench.test from a pod of
#             `default`: three NXDOMAINs (default.svc, svc, the zone) then the name: 4
#             queries per resolved name
#   autopath  the same names with `autopath @kubernetes` in the block: the first query of
#             each walk only, resolved along the path by the server: 1 query per name
# Sourced by run.sh after lib.sh. See bench/README.md, "Cluster DNS".

CLUSTER_QUERIES=${CLUSTER_QUERIES:-service}
CLUSTER_SERVICES=${CLUSTER_SERVICES:-3000}
CLUSTER_HEADLESS=${CLUSTER_HEADLESS:-500}
KUBEAPI_PID=''

# cluster_files DIR COUNT: the query files of every CLUSTER_QUERIES kind in DIR.
cluster_files() {
  python3 "$BENCH/kubeapi.py" --queries "$1" --count "$2" --services "$CLUSTER_SERVICES" \
    --headless "$CLUSTER_HEADLESS" --outside "$FWD_ZONE_A"
}

# cluster_api_start DIR: starts bench/kubeapi.py on 127.0.0.1:KUBEAPI_PORT (on the client's
# CPU; not counted) and waits until it lists.
cluster_api_start() {
  taskset -c "$CLIENT_CPU" python3 "$BENCH/kubeapi.py" --port "$KUBEAPI_PORT" \
    --services "$CLUSTER_SERVICES" --headless "$CLUSTER_HEADLESS" >"$1/kubeapi.log" 2>&1 &
  KUBEAPI_PID=$!
  local i
  for ((i = 0; i < 50; i++)); do
    kill -0 "$KUBEAPI_PID" 2>/dev/null || return 1
    python3 -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$KUBEAPI_PORT/api/v1/namespaces', timeout=1)" 2>/dev/null && return 0
    sleep 0.2
  done
  return 1
}

# ringdns_has_kubernetes NAME: the ringdns binary lists the kubernetes plugin.
ringdns_has_kubernetes() {
  local plugins
  ringdns_ok "$1" || return 1
  plugins=$("${2:-$RINGDNS_BIN}" -plugins 2>/dev/null) || plugins=
  if ! grep -qx '[[:space:]]*dns\.kubernetes' <<<"$plugins"; then
    echo "ringdns has no kubernetes plugin ('ringdns -plugins' lacks dns.kubernetes): skipping $1" >&2
    return 1
  fi
}

# ringdns-cluster: kubeadm's Corefile (errors, health, ready, prometheus and reload left out:
# they are not on the query path; loop too: its probe is one query at start) with its
# `pods insecure`; for CLUSTER_QUERIES=autopath, `autopath @kubernetes` added and `pods
# verified`, which autopath needs to know a client's namespace.
srv_ringdns_cluster_check() { ringdns_has_kubernetes ringdns-cluster; }
srv_ringdns_cluster_cmd() {
  local port=$1 dir=$2 autopath='' pods=insecure
  if [[ $CLUSTER_QUERIES == autopath ]]; then
    autopath=' autopath @kubernetes'
    pods=verified
  fi
  cat >"$dir/Corefile.ringdns-cluster" <<EOC
.:$port {
$autopath
 kubernetes cluster.local in-addr.arpa ip6.arpa {
  endpoint http://127.0.0.1:$KUBEAPI_PORT
  pods $pods
  fallthrough in-addr.arpa ip6.arpa
  ttl 30
 }
 forward . 127.0.0.1:$UPSTREAM_PORT
 cache 30
 loadbalance
}
EOC
  # shellcheck disable=SC2034 # SRV_CMD is read by run.sh
  SRV_CMD=("$RINGDNS_BIN" -conf "$dir/Corefile.ringdns-cluster")
}

# ringdns-cluster-base: the same served by RINGDNS_BASE_BIN (A/B of two builds).
srv_ringdns_cluster_base_check() {
  [[ -x ${RINGDNS_BASE_BIN:-} ]] || { echo "RINGDNS_BASE_BIN is not an executable: skipping ringdns-cluster-base" >&2; return 1; }
  ringdns_has_kubernetes ringdns-cluster-base "$RINGDNS_BASE_BIN"
}
srv_ringdns_cluster_base_cmd() {
  srv_ringdns_cluster_cmd "$@"
  SRV_CMD[0]=$RINGDNS_BASE_BIN
}

# cluster_names_per_query: resolved names per answered query of the CLUSTER_QUERIES file.
cluster_names_per_query() {
  if [[ $CLUSTER_QUERIES == walk ]]; then echo 0.25; else echo 1; fi
}
