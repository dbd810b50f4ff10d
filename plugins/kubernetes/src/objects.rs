//! The API objects as the API server sends them (JSON), decoded into the few fields the DNS
//! records need (CoreDNS's `object.ToService`, `EndpointSliceToEndpoints`, `ToPod`,
//! `ToNamespace`), then converted into the builder's own types ([`crate::store`]). Unknown
//! fields are ignored and absent ones take the API's zero values, as Go's decoder does.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::net::IpAddr;

/// `metadata` of any object.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Meta {
    /// The object's name.
    pub name: String,
    /// Its namespace (empty for cluster-scoped objects).
    pub namespace: String,
    /// Labels (an EndpointSlice's service name is one).
    pub labels: BTreeMap<String, String>,
    /// Annotations (an EndpointSlice's trigger time is one).
    pub annotations: BTreeMap<String, String>,
    /// Set when the object is being deleted (a terminating pod).
    pub deletion_timestamp: Option<String>,
}

/// A port of a Service or an EndpointSlice.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct PortJson {
    /// The port's name (`http`), the `_http` of an SRV name.
    pub name: Option<String>,
    /// TCP, UDP or SCTP.
    pub protocol: Option<String>,
    /// The number; absent in an EndpointSlice port means "all ports" (-1 in CoreDNS).
    pub port: Option<i32>,
}

/// A core/v1 Service.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ServiceJson {
    /// Name and namespace.
    pub metadata: Meta,
    /// What the records come from.
    pub spec: ServiceSpec,
    /// The load balancer's addresses (k8s_external).
    pub status: ServiceStatus,
}

/// `spec` of a Service.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ServiceSpec {
    /// ClusterIP, NodePort, LoadBalancer or ExternalName.
    #[serde(rename = "type")]
    pub kind: String,
    /// The first cluster IP, or `None` for a headless service.
    #[serde(rename = "clusterIP")]
    pub cluster_ip: String,
    /// Every cluster IP (dual stack); CoreDNS prefers it to `clusterIP`.
    #[serde(rename = "clusterIPs")]
    pub cluster_ips: Vec<String>,
    /// The ports, named ones giving SRV names.
    pub ports: Vec<PortJson>,
    /// The target of an ExternalName service.
    pub external_name: String,
    /// Addresses outside the cluster that route to the service.
    #[serde(rename = "externalIPs")]
    pub external_ips: Vec<String>,
}

/// `status` of a Service.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ServiceStatus {
    /// The load balancer's state.
    pub load_balancer: LoadBalancer,
}

/// `status.loadBalancer` of a Service.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct LoadBalancer {
    /// Its addresses: an IP or a hostname each.
    pub ingress: Vec<Ingress>,
}

/// One load balancer ingress point.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Ingress {
    /// Its IP, when it has one.
    pub ip: String,
    /// Else its hostname.
    pub hostname: String,
}

/// A discovery.k8s.io/v1 EndpointSlice.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct EndpointSliceJson {
    /// Name, namespace, the service-name label and the trigger-time annotation.
    pub metadata: Meta,
    /// IPv4, IPv6 or FQDN.
    pub address_type: String,
    /// The endpoints.
    pub endpoints: Vec<EndpointJson>,
    /// The ports every endpoint of the slice serves.
    pub ports: Vec<PortJson>,
}

/// One endpoint of a slice.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct EndpointJson {
    /// Its addresses (one in practice).
    pub addresses: Vec<String>,
    /// Whether it is ready.
    pub conditions: Conditions,
    /// Its hostname (a StatefulSet pod's), naming it in DNS.
    pub hostname: Option<String>,
    /// The pod behind it (`endpoint_pod_names`).
    pub target_ref: Option<TargetRef>,
    /// The node it runs on.
    pub node_name: Option<String>,
    /// The topology zone it runs in.
    pub zone: Option<String>,
}

/// `conditions` of an endpoint.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Conditions {
    /// Absent counts as ready (the API's rule, and CoreDNS's).
    pub ready: Option<bool>,
}

/// `targetRef` of an endpoint.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct TargetRef {
    /// The pod's name.
    pub name: String,
}

/// A core/v1 Pod.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct PodJson {
    /// Name, namespace, labels, deletion timestamp.
    pub metadata: Meta,
    /// Its address.
    pub status: PodStatus,
}

/// `status` of a Pod.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PodStatus {
    /// The pod's address (CoreDNS indexes this one, not `podIPs`).
    #[serde(rename = "podIP")]
    pub pod_ip: String,
    /// Pending, Running, Succeeded, Failed, Unknown.
    pub phase: String,
}

/// A core/v1 Namespace.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct NamespaceJson {
    /// Its name.
    pub metadata: Meta,
}

/// How a service answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServiceKind {
    /// A virtual IP per family (ClusterIP, NodePort, LoadBalancer).
    ClusterIp(Vec<IpAddr>),
    /// `clusterIP: None`: its endpoints answer.
    Headless,
    /// A CNAME to this name (lower case, with the final dot).
    ExternalName(String),
    /// An ExternalName service whose target is an IP, or a cluster IP that does not parse:
    /// CoreDNS answers nothing for it (NXDOMAIN).
    Nothing,
}

/// A port as the records use it; a missing port is -1, as in CoreDNS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Port {
    /// Lower-cased name ("" when none).
    pub name: String,
    /// Lower-cased protocol ("" when none).
    pub protocol: String,
    /// The number, -1 for none.
    pub port: i32,
}

impl Port {
    fn of(p: &PortJson) -> Port {
        Port {
            name: p.name.as_deref().unwrap_or("").to_ascii_lowercase(),
            protocol: p.protocol.as_deref().unwrap_or("").to_ascii_lowercase(),
            port: p.port.unwrap_or(-1),
        }
    }

    /// CoreDNS's `matchPortAndProtocol`: empty request parts match anything.
    pub fn matches(&self, port: &[u8], protocol: &[u8]) -> bool {
        (port.is_empty() || self.name.as_bytes().eq_ignore_ascii_case(port))
            && (protocol.is_empty() || self.protocol.as_bytes().eq_ignore_ascii_case(protocol))
    }
}

/// A service as the builder keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Service {
    /// Its name.
    pub name: String,
    /// Its namespace.
    pub namespace: String,
    /// How it answers.
    pub kind: ServiceKind,
    /// Its ports (one `-1` port when it has none, as CoreDNS's sentinel).
    pub ports: Vec<Port>,
    /// spec.externalIPs then the load balancer's ingress (IP, else hostname), for
    /// k8s_external.
    pub external: Vec<String>,
}

impl Service {
    /// CoreDNS's `ToService`.
    pub fn from_json(j: ServiceJson) -> Service {
        let ips = if j.spec.cluster_ips.is_empty() {
            vec![j.spec.cluster_ip.clone()]
        } else {
            j.spec.cluster_ips.clone()
        };
        let kind = if j.spec.kind == "ExternalName" {
            if j.spec.external_name.parse::<IpAddr>().is_ok() || j.spec.external_name.is_empty() {
                ServiceKind::Nothing
            } else {
                let mut n = j.spec.external_name.to_ascii_lowercase();
                if !n.ends_with('.') {
                    n.push('.');
                }
                ServiceKind::ExternalName(n)
            }
        } else if ips.first().is_some_and(|ip| ip == "None") {
            ServiceKind::Headless
        } else {
            let parsed: Vec<IpAddr> = ips.iter().filter_map(|ip| ip.parse().ok()).collect();
            if parsed.is_empty() {
                ServiceKind::Nothing
            } else {
                ServiceKind::ClusterIp(parsed)
            }
        };
        let mut ports: Vec<Port> = j.spec.ports.iter().map(Port::of).collect();
        if ports.is_empty() {
            ports.push(Port {
                name: String::new(),
                protocol: String::new(),
                port: -1,
            });
        }
        let mut external = j.spec.external_ips;
        for i in j.status.load_balancer.ingress {
            external.push(if i.ip.is_empty() { i.hostname } else { i.ip });
        }
        Service {
            name: j.metadata.name,
            namespace: j.metadata.namespace,
            kind,
            ports,
            external,
        }
    }

    /// Whether the service is headless.
    pub fn headless(&self) -> bool {
        self.kind == ServiceKind::Headless
    }
}

/// A ready address of an EndpointSlice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    /// The address.
    pub ip: IpAddr,
    /// The endpoint's hostname.
    pub hostname: Option<String>,
    /// The pod's name, kept when shorter than 64 characters (a DNS label), as CoreDNS.
    pub target: Option<String>,
    /// The topology zone, lower-cased.
    pub zone: Option<String>,
}

impl Address {
    /// CoreDNS's `endpointHostname`: the DNS label of the endpoint under its service.
    pub fn label(&self, pod_names: bool) -> String {
        if let Some(h) = self.hostname.as_deref().filter(|h| !h.is_empty()) {
            return h.to_ascii_lowercase();
        }
        if pod_names && let Some(t) = self.target.as_deref().filter(|t| !t.is_empty()) {
            return t.to_ascii_lowercase();
        }
        match self.ip {
            IpAddr::V4(v4) => v4.to_string().replace('.', "-"),
            IpAddr::V6(v6) => {
                let mut s = v6.to_string().replace(':', "-");
                if s.ends_with('-') {
                    s.push('0');
                }
                s
            }
        }
    }
}

/// An EndpointSlice as the builder keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slice {
    /// Its name.
    pub name: String,
    /// Its namespace.
    pub namespace: String,
    /// The service it belongs to (label `kubernetes.io/service-name`).
    pub service: String,
    /// Its ports (one -1 port when it has none).
    pub ports: Vec<Port>,
    /// Its ready addresses.
    pub addresses: Vec<Address>,
    /// `endpoints.kubernetes.io/last-change-trigger-time`, for the programming-duration
    /// metric.
    pub trigger: Option<String>,
}

impl Slice {
    /// CoreDNS's `EndpointSliceToEndpoints`: only ready endpoints; `None` for an FQDN
    /// slice (deprecated, never made by the controller: its addresses are no IPs).
    pub fn from_json(j: EndpointSliceJson) -> Option<Slice> {
        if j.address_type == "FQDN" {
            return None;
        }
        let mut ports: Vec<Port> = j.ports.iter().map(Port::of).collect();
        if ports.is_empty() {
            ports.push(Port {
                name: String::new(),
                protocol: String::new(),
                port: -1,
            });
        }
        let mut addresses = Vec::new();
        for e in j.endpoints {
            if e.conditions.ready == Some(false) {
                continue;
            }
            for a in &e.addresses {
                let Ok(ip) = a.parse::<IpAddr>() else {
                    continue;
                };
                addresses.push(Address {
                    ip,
                    hostname: e.hostname.clone(),
                    target: e
                        .target_ref
                        .as_ref()
                        .map(|t| t.name.clone())
                        .filter(|n| n.len() < 64),
                    zone: e.zone.as_ref().map(|z| z.to_ascii_lowercase()),
                });
            }
        }
        Some(Slice {
            service: j
                .metadata
                .labels
                .get("kubernetes.io/service-name")
                .cloned()
                .unwrap_or_default(),
            trigger: j
                .metadata
                .annotations
                .get("endpoints.kubernetes.io/last-change-trigger-time")
                .cloned(),
            name: j.metadata.name,
            namespace: j.metadata.namespace,
            ports,
            addresses,
        })
    }
}

/// A pod as the builder keeps it: where it is, and what the metadata tells of a client
/// with its address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pod {
    /// Its name.
    pub name: String,
    /// Its namespace.
    pub namespace: String,
    /// Its address, when it has one.
    pub ip: Option<IpAddr>,
    /// Its labels, which the metadata's `kubernetes/client-label/KEY` publish for a client
    /// with its address.
    pub labels: BTreeMap<String, String>,
    /// Being deleted: CoreDNS neither adds it nor applies an update that makes it so.
    pub terminating: bool,
}

impl Pod {
    /// CoreDNS's `ToPod`.
    pub fn from_json(j: PodJson) -> Pod {
        Pod {
            ip: j.status.pod_ip.parse().ok(),
            terminating: j.metadata.deletion_timestamp.is_some(),
            labels: j.metadata.labels,
            name: j.metadata.name,
            namespace: j.metadata.namespace,
        }
    }
}

/// The name and namespace of any object (for a DELETED event, whatever its kind).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Named {
    /// Name and namespace.
    pub metadata: Meta,
}
