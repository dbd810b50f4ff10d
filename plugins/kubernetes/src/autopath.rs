//! The search path of a client pod, for `autopath @kubernetes` (CoreDNS's
//! `Kubernetes.AutoPath`): with `pods verified`, a query from a pod's address in one of the
//! plugin's zones gets `NS.svc.ZONE`, `svc.ZONE`, `ZONE`, then the host's resolv.conf search
//! domains, then the name as asked: what the pod's resolver walks with ndots:5.

use crate::Inner;
use crate::answer::zone_of;
use crate::setup::PodMode;
use ringdns_plugin::autopath::{AutoPather, SearchPath};
use ringdns_plugin::wire::{Name, name_to_wire};
use std::net::IpAddr;
use std::path::Path;

/// Where CoreDNS reads the host's search domains.
pub const RESOLV_CONF: &str = "/etc/resolv.conf";

/// The `search` (or `domain`) list of a resolv.conf, as lower-case wire names; the last
/// such line wins, as in the resolver. Nothing when the file cannot be read.
pub fn host_search(path: &Path) -> Vec<Vec<u8>> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let mut list = Vec::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("search") | Some("domain") => {
                list = words
                    .filter_map(|w| {
                        let mut n = w.to_ascii_lowercase();
                        if !n.ends_with('.') {
                            n.push('.');
                        }
                        name_to_wire(&n).ok()
                    })
                    .collect();
            }
            _ => {}
        }
    }
    list
}

impl AutoPather for Inner {
    fn search_path(&self, client: IpAddr, qname: &Name<'_>, out: &mut SearchPath) {
        out.clear();
        if self.options.pods != PodMode::Verified {
            return;
        }
        let Some(zone) = zone_of(qname, &self.options.zone_wires) else {
            return;
        };
        let data = self.data.load();
        let Some(ns) = data.pod_namespace(client) else {
            return;
        };
        let zone = self.options.zone_wires[zone.index].as_slice();
        let Ok(ns_len) = u8::try_from(ns.len()) else {
            return;
        };
        out.push(&[&[ns_len], ns.as_bytes(), b"\x03svc", zone]);
        out.push(&[b"\x03svc", zone]);
        out.push(&[zone]);
        for s in &self.host_search {
            out.push(&[s]);
        }
        out.push(&[b"\x00"]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_search_list_is_read_as_the_resolver_reads_it() {
        let dir = std::env::temp_dir().join(format!("ringdns-k8s-resolv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("resolv.conf");
        std::fs::write(
            &f,
            "domain old.example\nsearch Corp.Example lab.example.\nnameserver 127.0.0.1\n",
        )
        .unwrap();
        assert_eq!(
            host_search(&f),
            [
                name_to_wire("corp.example.").unwrap(),
                name_to_wire("lab.example.").unwrap()
            ]
        );
        assert!(host_search(&dir.join("missing")).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
