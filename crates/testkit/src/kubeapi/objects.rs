//! Object JSON shaped as the API server sends it (core/v1 Service, Pod, Namespace;
//! discovery.k8s.io/v1 EndpointSlice), built field by field. The server fills in
//! `metadata.resourceVersion`, `uid` and `creationTimestamp` when an object is stored.

use serde_json::{Value, json};
use std::net::IpAddr;

fn family(ip: &str) -> &'static str {
    match ip.parse::<IpAddr>() {
        Ok(IpAddr::V6(_)) => "IPv6",
        _ => "IPv4",
    }
}

/// A Service under construction (type ClusterIP, no ports, until told otherwise).
pub struct Service(Value);

/// A ClusterIP service `ns/name` with no IP yet.
pub fn service(ns: &str, name: &str) -> Service {
    Service(json!({
        "kind": "Service",
        "apiVersion": "v1",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"type": "ClusterIP", "sessionAffinity": "None", "internalTrafficPolicy": "Cluster"},
        "status": {"loadBalancer": {}}
    }))
}

impl Service {
    /// clusterIP (the first) and clusterIPs, with ipFamilies and ipFamilyPolicy to match.
    pub fn cluster_ips(mut self, ips: &[&str]) -> Self {
        let s = &mut self.0["spec"];
        s["clusterIP"] = json!(ips.first().copied().unwrap_or(""));
        s["clusterIPs"] = json!(ips);
        let fams: Vec<&str> = ips.iter().map(|i| family(i)).collect();
        s["ipFamilies"] = json!(fams);
        s["ipFamilyPolicy"] = json!(if ips.len() > 1 {
            "RequireDualStack"
        } else {
            "SingleStack"
        });
        self
    }

    /// A headless service: clusterIP "None".
    pub fn headless(mut self) -> Self {
        let s = &mut self.0["spec"];
        s["clusterIP"] = json!("None");
        s["clusterIPs"] = json!(["None"]);
        s["ipFamilies"] = json!(["IPv4"]);
        s["ipFamilyPolicy"] = json!("SingleStack");
        self
    }

    /// type ExternalName pointing at `target` (no cluster IP).
    pub fn external_name(mut self, target: &str) -> Self {
        let s = &mut self.0["spec"];
        s["type"] = json!("ExternalName");
        s["externalName"] = json!(target);
        if let Some(m) = s.as_object_mut() {
            for k in [
                "clusterIP",
                "clusterIPs",
                "ipFamilies",
                "ipFamilyPolicy",
                "internalTrafficPolicy",
            ] {
                m.remove(k);
            }
        }
        self
    }

    /// spec.type (ClusterIP, NodePort, LoadBalancer, ExternalName).
    pub fn type_(mut self, t: &str) -> Self {
        self.0["spec"]["type"] = json!(t);
        self
    }

    /// A port; `targetPort` is the same number.
    pub fn port(mut self, name: &str, protocol: &str, port: i32) -> Self {
        let mut p = json!({"protocol": protocol, "port": port, "targetPort": port});
        if !name.is_empty() {
            p["name"] = json!(name);
        }
        push(&mut self.0["spec"], "ports", p);
        self
    }

    /// spec.externalIPs.
    pub fn external_ips(mut self, ips: &[&str]) -> Self {
        self.0["spec"]["externalIPs"] = json!(ips);
        self
    }

    /// An entry of status.loadBalancer.ingress with an IP (type becomes LoadBalancer).
    pub fn lb_ingress_ip(mut self, ip: &str) -> Self {
        self.0["spec"]["type"] = json!("LoadBalancer");
        push(
            &mut self.0["status"]["loadBalancer"],
            "ingress",
            json!({"ip": ip, "ipMode": "VIP"}),
        );
        self
    }

    /// An entry of status.loadBalancer.ingress with a hostname.
    pub fn lb_ingress_hostname(mut self, host: &str) -> Self {
        self.0["spec"]["type"] = json!("LoadBalancer");
        push(
            &mut self.0["status"]["loadBalancer"],
            "ingress",
            json!({"hostname": host}),
        );
        self
    }

    /// A label.
    pub fn label(mut self, k: &str, v: &str) -> Self {
        self.0["metadata"]["labels"][k] = json!(v);
        self
    }

    /// The JSON.
    pub fn build(self) -> Value {
        self.0
    }
}

fn push(parent: &mut Value, key: &str, v: Value) {
    match parent[key].as_array_mut() {
        Some(a) => a.push(v),
        None => parent[key] = json!([v]),
    }
}

/// One entry of an EndpointSlice's endpoints (ready, serving, not terminating).
pub struct Endpoint(Value);

/// An endpoint with these addresses.
pub fn endpoint(addresses: &[&str]) -> Endpoint {
    Endpoint(json!({
        "addresses": addresses,
        "conditions": {"ready": true, "serving": true, "terminating": false}
    }))
}

impl Endpoint {
    /// conditions.ready (serving follows it unless set after).
    pub fn ready(mut self, r: bool) -> Self {
        self.0["conditions"]["ready"] = json!(r);
        self.0["conditions"]["serving"] = json!(r);
        self
    }

    /// conditions.serving.
    pub fn serving(mut self, s: bool) -> Self {
        self.0["conditions"]["serving"] = json!(s);
        self
    }

    /// conditions.terminating (a terminating endpoint is not ready).
    pub fn terminating(mut self, t: bool) -> Self {
        self.0["conditions"]["terminating"] = json!(t);
        if t {
            self.0["conditions"]["ready"] = json!(false);
        }
        self
    }

    /// Leaves the conditions out entirely (ready then means "unknown", counted as ready).
    pub fn no_conditions(mut self) -> Self {
        self.0["conditions"] = json!({});
        self
    }

    /// hostname.
    pub fn hostname(mut self, h: &str) -> Self {
        self.0["hostname"] = json!(h);
        self
    }

    /// targetRef to a Pod of that name (namespace set by the slice).
    pub fn target_pod(mut self, name: &str) -> Self {
        self.0["targetRef"] =
            json!({"kind": "Pod", "name": name, "uid": format!("uid-pod-{name}")});
        self
    }

    /// nodeName.
    pub fn node(mut self, n: &str) -> Self {
        self.0["nodeName"] = json!(n);
        self
    }

    /// zone.
    pub fn zone(mut self, z: &str) -> Self {
        self.0["zone"] = json!(z);
        self
    }
}

/// An EndpointSlice under construction.
pub struct EndpointSlice(Value);

/// A slice `ns/name` of `service`, with `address_type` IPv4, IPv6 or FQDN.
pub fn endpoint_slice(ns: &str, name: &str, service: &str, address_type: &str) -> EndpointSlice {
    EndpointSlice(json!({
        "kind": "EndpointSlice",
        "apiVersion": "discovery.k8s.io/v1",
        "metadata": {
            "name": name,
            "namespace": ns,
            "generateName": format!("{service}-"),
            "labels": {
                "kubernetes.io/service-name": service,
                "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"
            },
            "annotations": {"endpoints.kubernetes.io/last-change-trigger-time": "2026-01-01T00:00:00Z"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": service, "uid": format!("uid-svc-{service}"), "controller": true, "blockOwnerDeletion": true}]
        },
        "addressType": address_type,
        "endpoints": [],
        "ports": []
    }))
}

impl EndpointSlice {
    /// An endpoint (its targetRef gets the slice's namespace).
    pub fn endpoint(mut self, e: Endpoint) -> Self {
        let mut e = e.0;
        if e["targetRef"].is_object() {
            e["targetRef"]["namespace"] = self.0["metadata"]["namespace"].clone();
        }
        push(&mut self.0, "endpoints", e);
        self
    }

    /// A port (an empty name is left out, as the API server does).
    pub fn port(mut self, name: &str, protocol: &str, port: i32) -> Self {
        let mut p = json!({"protocol": protocol, "port": port});
        if !name.is_empty() {
            p["name"] = json!(name);
        }
        push(&mut self.0, "ports", p);
        self
    }

    /// No `ports` field at all (a slice of a service without ports).
    pub fn no_ports(mut self) -> Self {
        if let Some(m) = self.0.as_object_mut() {
            m.remove("ports");
        }
        self
    }

    /// The trigger-time annotation (RFC 3339), or none.
    pub fn trigger_time(mut self, t: Option<&str>) -> Self {
        let a = &mut self.0["metadata"]["annotations"];
        match t {
            Some(t) => a["endpoints.kubernetes.io/last-change-trigger-time"] = json!(t),
            None => {
                if let Some(m) = a.as_object_mut() {
                    m.remove("endpoints.kubernetes.io/last-change-trigger-time");
                }
            }
        }
        self
    }

    /// A label.
    pub fn label(mut self, k: &str, v: &str) -> Self {
        self.0["metadata"]["labels"][k] = json!(v);
        self
    }

    /// The JSON.
    pub fn build(self) -> Value {
        self.0
    }
}

/// A Pod under construction (phase Running).
pub struct Pod(Value);

/// A running pod `ns/name` with status.podIP `ip` (empty: not yet assigned).
pub fn pod(ns: &str, name: &str, ip: &str) -> Pod {
    let mut status =
        json!({"phase": "Running", "hostIP": "10.1.0.1", "hostIPs": [{"ip": "10.1.0.1"}]});
    if !ip.is_empty() {
        status["podIP"] = json!(ip);
        status["podIPs"] = json!([{"ip": ip}]);
    }
    Pod(json!({
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}], "nodeName": "node-1"},
        "status": status
    }))
}

impl Pod {
    /// status.podIPs (podIP is the first).
    pub fn ips(mut self, ips: &[&str]) -> Self {
        self.0["status"]["podIP"] = json!(ips.first().copied().unwrap_or(""));
        self.0["status"]["podIPs"] =
            json!(ips.iter().map(|i| json!({"ip": i})).collect::<Vec<_>>());
        self
    }

    /// status.phase.
    pub fn phase(mut self, p: &str) -> Self {
        self.0["status"]["phase"] = json!(p);
        self
    }

    /// metadata.deletionTimestamp: the pod is terminating.
    pub fn terminating(mut self) -> Self {
        self.0["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        self.0["metadata"]["deletionGracePeriodSeconds"] = json!(30);
        self
    }

    /// A label.
    pub fn label(mut self, k: &str, v: &str) -> Self {
        self.0["metadata"]["labels"][k] = json!(v);
        self
    }

    /// The JSON.
    pub fn build(self) -> Value {
        self.0
    }
}

/// A Namespace with its `kubernetes.io/metadata.name` label, plus `labels`.
pub fn namespace(name: &str, labels: &[(&str, &str)]) -> Value {
    let mut v = json!({
        "kind": "Namespace",
        "apiVersion": "v1",
        "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"}
    });
    for (k, val) in labels {
        v["metadata"]["labels"][*k] = json!(val);
    }
    v
}
