//! The metadata the plugin publishes (CoreDNS's `plugin/kubernetes/metadata.go`): with
//! `pods verified`, who the client is when its address is a pod's, and for a name in the
//! plugin's zones the parts `parseRequest` reads from it, or why it does not parse.
//!
//! Only a request that carries a metadata store (a block with *metadata*, a name in its
//! zones) does any of this; the values are copied from the packet and the table, and the
//! client labels' names were made when the table was built, so nothing is allocated here.

use crate::Inner;
use crate::answer::zone_of;
use crate::parse::{Space, parse};
use crate::setup::PodMode;
use ringdns_plugin::Request;
use ringdns_plugin::wire::LabelLowercase;

/// The prefix of a client pod's label: `kubernetes/client-label/KEY`.
pub const CLIENT_LABEL: &str = "kubernetes/client-label/";

/// CoreDNS's `errInvalidRequest`, the value of `kubernetes/parse-error`.
const INVALID: &str = "invalid query name";

/// Publishes what CoreDNS's `Kubernetes.Metadata` does for `req`; nothing without a store.
pub fn publish(inner: &Inner, req: &Request<'_>) {
    let Some(meta) = req.metadata() else {
        return;
    };
    let o = &inner.options;
    // CoreDNS's podWithIP: only in `pods verified` mode, the first pod with the address.
    if o.pods == PodMode::Verified {
        let data = inner.data.load();
        if let Some(pod) = data.pod_with_ip(req.client.ip().to_canonical()) {
            meta.set("kubernetes/client-namespace", &pod.ns);
            meta.set("kubernetes/client-pod-name", &pod.name);
            for (label, value) in &pod.labels {
                meta.set(label, value);
            }
        }
    }
    let qname = req.query.qname();
    let Some(zone) = zone_of(&qname, &o.zone_wires) else {
        return;
    };
    // No multicluster or zonal option in ringdns: no `kubernetes/cluster`, no
    // `kubernetes/zone` (CoreDNS publishes them only with those options).
    match parse(&qname, zone.labels) {
        Err(_) => {
            meta.set("kubernetes/parse-error", INVALID);
        }
        Ok(r) => {
            meta.set("kubernetes/port-name", LabelLowercase(r.port));
            meta.set("kubernetes/protocol", LabelLowercase(r.protocol));
            meta.set("kubernetes/endpoint", LabelLowercase(r.endpoint));
            meta.set("kubernetes/service", LabelLowercase(r.service));
            meta.set("kubernetes/namespace", LabelLowercase(r.namespace));
            let kind = match r.space {
                Some(Space::Svc) => "svc",
                Some(Space::Pod) => "pod",
                None => "",
            };
            meta.set("kubernetes/kind", kind);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::ClusterData;
    use crate::tests::{options, store};
    use ringdns_plugin::metadata::Metadata;
    use ringdns_plugin::wire::rtype::{A, SRV};
    use ringdns_plugin::wire::{Name, QueryBuilder, name_to_wire};
    use ringdns_testkit::reply::query;
    use ringdns_testkit::udp_request;
    use std::net::SocketAddr;

    fn instance(directive: &str) -> crate::Kubernetes {
        let o = options(directive);
        let data = ClusterData::build(&store(), &o, &[], 1, true);
        crate::test_instance(o, data)
    }

    /// The labels `k` publishes for `name` from `client`, sorted.
    fn published(k: &crate::Kubernetes, name: &str, qtype: u16, client: &str) -> Vec<String> {
        // Through name_to_wire, which reads escapes (`\.` inside a label).
        let wire = name_to_wire(name).unwrap();
        let packet = QueryBuilder::new(Name::from_wire(&wire).unwrap(), qtype).build();
        let client = SocketAddr::new(client.parse().unwrap(), 5300);
        let mut reply = Vec::new();
        let mut req = udp_request(&packet, client, &mut reply, false);
        let meta = Metadata::default();
        publish(&k.inner, &req.with_metadata(&meta));
        let mut out: Vec<String> = meta
            .labels()
            .into_iter()
            .map(|l| format!("{l}={}", meta.get(&l).unwrap()))
            .collect();
        out.sort();
        out
    }

    fn parts(port: &str, proto: &str, ep: &str, svc: &str, ns: &str, kind: &str) -> Vec<String> {
        let mut v = vec![
            format!("kubernetes/endpoint={ep}"),
            format!("kubernetes/kind={kind}"),
            format!("kubernetes/namespace={ns}"),
            format!("kubernetes/port-name={port}"),
            format!("kubernetes/protocol={proto}"),
            format!("kubernetes/service={svc}"),
        ];
        v.sort();
        v
    }

    /// CoreDNS's metadata_test.go cases (but its multicluster one: no such option here).
    #[test]
    fn the_query_name_parts_as_coredns_publishes_them() {
        let k = instance("kubernetes");
        let c = "10.10.10.10";
        assert_eq!(
            published(&k, "foo.bar.notapod.cluster.local.", A, c),
            ["kubernetes/parse-error=invalid query name"]
        );
        assert_eq!(
            published(&k, "10-240-0-1.podns.pod.cluster.local.", A, c),
            parts("", "", "", "10-240-0-1", "podns", "pod")
        );
        assert_eq!(
            published(&k, "s.ns.svc.cluster.local.", A, c),
            parts("", "", "", "s", "ns", "svc")
        );
        assert_eq!(
            published(&k, "_http._tcp.s.ns.svc.cluster.local.", SRV, c),
            parts("http", "tcp", "", "s", "ns", "svc")
        );
        assert_eq!(
            published(&k, "ep.s.ns.svc.cluster.local.", A, c),
            parts("", "", "ep", "s", "ns", "svc")
        );
        // Lower-cased and escaped as CoreDNS's state.Name(); the apex parses to nothing.
        assert_eq!(
            published(&k, "EP.S\\.x.NS.SVC.Cluster.Local.", A, c),
            parts("", "", "ep", "s\\.x", "ns", "svc")
        );
        assert_eq!(
            published(&k, "cluster.local.", A, c),
            parts("", "", "", "", "", "")
        );
        assert_eq!(
            published(&k, "dns-version.cluster.local.", A, c),
            ["kubernetes/parse-error=invalid query name"]
        );
        assert!(published(&k, "example.com.", A, c).is_empty());
    }

    /// metadata_test.go's TestMetadataPodsVerified: the fixture's pod foo is 10.240.0.1.
    #[test]
    fn a_client_that_is_a_pod_with_pods_verified() {
        let pod = [
            "kubernetes/client-label/app.kubernetes.io/name=foo",
            "kubernetes/client-label/bar=baz",
            "kubernetes/client-namespace=podns",
            "kubernetes/client-pod-name=foo",
        ];
        let verified = instance("kubernetes {\n pods verified\n}");
        assert_eq!(published(&verified, "example.com.", A, "10.240.0.1"), pod);
        // An IPv4-mapped client is the IPv4 it is.
        assert_eq!(
            published(&verified, "example.com.", A, "::ffff:10.240.0.1"),
            pod
        );
        assert!(published(&verified, "example.com.", A, "10.240.0.2").is_empty());
        // In the zone: the pod and the name's parts.
        let mut both = parts("", "", "", "s", "ns", "svc");
        both.extend(pod.map(String::from));
        both.sort();
        assert_eq!(
            published(&verified, "s.ns.svc.cluster.local.", A, "10.240.0.1"),
            both
        );
        // Other modes know no client.
        for mode in ["insecure", "disabled"] {
            let k = instance(&format!("kubernetes {{\n pods {mode}\n}}"));
            assert!(published(&k, "example.com.", A, "10.240.0.1").is_empty());
        }
    }

    /// Serving publishes too (the chain's pass), and a request without a store is served
    /// the same, with nothing published.
    #[test]
    fn serving_publishes_and_without_a_store_nothing_changes() {
        let k = instance("kubernetes {\n pods verified\n}");
        let packet = query("s.ns.svc.cluster.local.", A);
        let client = SocketAddr::new("10.240.0.1".parse().unwrap(), 5300);
        let plain = ringdns_testkit::serve_once(&k, &packet, client, 99, true);
        let mut reply = Vec::new();
        let mut req = udp_request(&packet, client, &mut reply, false);
        let meta = Metadata::default();
        let status = {
            use ringdns_plugin::Serve;
            k.serve_now(&mut req.with_metadata(&meta), &ringdns_testkit::Next(99))
        }
        .expect("answered at once");
        assert_eq!(status.rcode, plain.0.rcode);
        assert_eq!(reply, plain.1);
        assert_eq!(meta.get("kubernetes/service").as_deref(), Some("s"));
        assert_eq!(
            meta.get("kubernetes/client-pod-name").as_deref(),
            Some("foo")
        );
    }
}
