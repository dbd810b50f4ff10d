#!/usr/bin/env python3
"""A Kubernetes API server stand-in for bench/ (WORKLOAD=cluster), plain HTTP on loopback.

It serves the four collections ringdns's kubernetes plugin lists and watches, generated once
at start: SERVICES ClusterIP services (one named port each) over NAMESPACES namespaces,
HEADLESS headless services of ENDPOINTS ready endpoints each, their EndpointSlices, the
namespaces, and one Running pod at POD_IP in namespace `default` (the benchmark client, for
`pods verified` and autopath). Lists answer in one page whatever `limit` says (a list without
`continue` is valid API); a watch stays open, sends a BOOKMARK every 10 s and ends after its
timeoutSeconds, as the real server does. Nothing changes during a run: the benchmark measures
the query path, not the feed.

Also writes the query files of the workload (--queries DIR):
  service.txt   `svc-N.ns-M.svc.cluster.local A` (existing services)
  headless.txt  `hdls-N.ns-M.svc.cluster.local A`
  srv.txt       `_http._tcp.svc-N.ns-M.svc.cluster.local SRV`
  walk.txt      the ndots:5 walk of outside names `hN.bench.test` from a pod of `default`:
                default.svc.cluster.local, svc.cluster.local, cluster.local suffixes, then
                the name itself (4 lines per name)
  autopath.txt  the first line of each walk only (autopath answers it in one query)
"""

import argparse
import json
import os
import random
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

RV = "1000"


def meta(name, ns=None, **extra):
    m = {"name": name, "uid": f"uid-{ns}-{name}", "resourceVersion": RV,
         "creationTimestamp": "2026-12-01T10:00:00Z"}
    if ns is not None:
        m["namespace"] = ns
    m.update(extra)
    return m


def build(args):
    namespaces = [f"ns-{i}" for i in range(args.namespaces)] + ["default", "kube-system"]
    services, slices = [], []
    for i in range(args.services):
        ns = namespaces[i % args.namespaces]
        ip = f"10.96.{(i >> 8) & 255}.{i & 255}"
        services.append({
            "metadata": meta(f"svc-{i}", ns),
            "spec": {"type": "ClusterIP", "clusterIP": ip, "clusterIPs": [ip],
                     "ipFamilies": ["IPv4"], "ports": [
                         {"name": "http", "protocol": "TCP", "port": 80, "targetPort": 8080}]},
            "status": {"loadBalancer": {}},
        })
    for i in range(args.headless):
        ns = namespaces[i % args.namespaces]
        name = f"hdls-{i}"
        services.append({
            "metadata": meta(name, ns),
            "spec": {"type": "ClusterIP", "clusterIP": "None", "clusterIPs": ["None"],
                     "ports": [{"name": "http", "protocol": "TCP", "port": 80}]},
            "status": {"loadBalancer": {}},
        })
        eps = []
        for e in range(args.endpoints):
            n = i * args.endpoints + e
            eps.append({"addresses": [f"10.244.{(n >> 8) & 255}.{n & 255}"],
                        "conditions": {"ready": True, "serving": True, "terminating": False},
                        "nodeName": "node-1"})
        slices.append({
            "metadata": meta(f"{name}-abcde", ns, labels={
                "kubernetes.io/service-name": name,
                "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}),
            "addressType": "IPv4", "endpoints": eps,
            "ports": [{"name": "http", "protocol": "TCP", "port": 80}],
        })
    nss = [{"metadata": meta(n, labels={"kubernetes.io/metadata.name": n}),
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
           for n in namespaces]
    pods = [{"metadata": meta("client", "default"), "spec": {"nodeName": "node-1"},
             "status": {"phase": "Running", "podIP": args.pod_ip,
                        "podIPs": [{"ip": args.pod_ip}]}}]
    return {
        "/api/v1/services": ("ServiceList", "v1", services),
        "/apis/discovery.k8s.io/v1/endpointslices": ("EndpointSliceList", "discovery.k8s.io/v1", slices),
        "/api/v1/namespaces": ("NamespaceList", "v1", nss),
        "/api/v1/pods": ("PodList", "v1", pods),
    }


def queries(args, out):
    rnd = random.Random(1)
    ns_of = lambda i: f"ns-{i % args.namespaces}"
    with open(os.path.join(out, "service.txt"), "w") as f:
        for _ in range(args.count):
            i = rnd.randrange(args.services)
            f.write(f"svc-{i}.{ns_of(i)}.svc.cluster.local A\n")
    with open(os.path.join(out, "headless.txt"), "w") as f:
        for _ in range(args.count):
            i = rnd.randrange(args.headless)
            f.write(f"hdls-{i}.{ns_of(i)}.svc.cluster.local A\n")
    with open(os.path.join(out, "srv.txt"), "w") as f:
        for _ in range(args.count):
            i = rnd.randrange(args.services)
            f.write(f"_http._tcp.svc-{i}.{ns_of(i)}.svc.cluster.local SRV\n")
    with open(os.path.join(out, "walk.txt"), "w") as w, \
            open(os.path.join(out, "autopath.txt"), "w") as a:
        for _ in range(args.count // 4):
            n = f"h{rnd.randrange(args.outside)}.bench.test"
            for suffix in ("default.svc.cluster.local.", "svc.cluster.local.", "cluster.local.", ""):
                w.write(f"{n}.{suffix} A\n" if suffix else f"{n}. A\n")
            a.write(f"{n}.default.svc.cluster.local. A\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    lists = {}

    def log_message(self, *_):
        pass

    def do_GET(self):
        u = urlparse(self.path)
        q = parse_qs(u.query)
        found = self.lists.get(u.path)
        if found is None:
            body = json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {},
                               "status": "Failure", "reason": "NotFound", "code": 404}).encode()
            self.send_response(404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        kind, api, items = found
        if q.get("watch", [""])[0] in ("1", "true"):
            self.watch(kind[:-4], api, int(q.get("timeoutSeconds", ["300"])[0]))
            return
        body = json.dumps({"kind": kind, "apiVersion": api,
                           "metadata": {"resourceVersion": RV}, "items": items}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def watch(self, kind, api, timeout):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        end = time.monotonic() + max(1, min(timeout, 600))
        try:
            while time.monotonic() < end:
                time.sleep(min(10, max(0, end - time.monotonic())))
                ev = json.dumps({"type": "BOOKMARK", "object": {
                    "kind": kind, "apiVersion": api,
                    "metadata": {"resourceVersion": RV}}}).encode() + b"\n"
                self.wfile.write(b"%x\r\n%s\r\n" % (len(ev), ev))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=0, help="0: write queries and exit")
    p.add_argument("--services", type=int, default=3000)
    p.add_argument("--headless", type=int, default=500)
    p.add_argument("--endpoints", type=int, default=4)
    p.add_argument("--namespaces", type=int, default=30)
    p.add_argument("--pod-ip", default="127.0.0.1")
    p.add_argument("--outside", type=int, default=100000, help="outside names hN.bench.test")
    p.add_argument("--count", type=int, default=200000, help="lines per query file")
    p.add_argument("--queries", help="directory for the query files")
    args = p.parse_args()
    if args.queries:
        queries(args, args.queries)
    if args.port:
        Handler.lists = build(args)
        srv = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
        srv.daemon_threads = True
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        print(f"kubeapi: serving on 127.0.0.1:{args.port}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
