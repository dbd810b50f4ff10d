//! What the builder thread holds of the cluster: the objects of every watched kind by
//! namespace and name, changed by the watch events, from which each snapshot is built
//! ([`crate::data::ClusterData::build`]). Also CoreDNS's rule of when the SOA serial moves:
//! only when a change can change an answer.

use crate::objects::{
    EndpointSliceJson, Named, NamespaceJson, Pod, PodJson, Service, ServiceJson, Slice,
};
use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

/// The kinds watched, as the events are tagged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// core/v1 services.
    Services = 0,
    /// discovery.k8s.io/v1 endpointslices.
    Slices = 1,
    /// core/v1 namespaces.
    Namespaces = 2,
    /// core/v1 pods.
    Pods = 3,
}

impl Kind {
    /// The kind of an event tag.
    pub fn of_tag(tag: u8) -> Option<Kind> {
        Some(match tag {
            0 => Kind::Services,
            1 => Kind::Slices,
            2 => Kind::Namespaces,
            3 => Kind::Pods,
            _ => return None,
        })
    }
}

/// An object's key: namespace, name.
pub type Key = (String, String);

/// One change of one object (or a whole list).
#[derive(Debug)]
pub enum Change<'a> {
    /// The whole collection of the kind, as listed.
    Replace(&'a [&'a str]),
    /// Added or modified.
    Upsert(&'a str),
    /// Deleted.
    Delete(&'a str),
}

/// The objects of every kind, and what changed since the last build.
#[derive(Debug, Default)]
pub struct Store {
    /// Services by key.
    pub services: BTreeMap<Key, Service>,
    /// EndpointSlices by key (namespace, slice name).
    pub slices: BTreeMap<Key, Slice>,
    /// Namespaces that exist (and match `namespace_labels`).
    pub namespaces: BTreeSet<String>,
    /// Pods by key.
    pub pods: BTreeMap<Key, Pod>,
    /// Kinds whose first list arrived.
    pub synced: BTreeSet<Kind>,
    /// A change that alters answers happened since the last build (CoreDNS's
    /// `modified`): the SOA serial moves.
    pub answers_changed: bool,
    /// The trigger times of the slices changed since the last build, with the kind of
    /// their service, for `dns_programming_duration_seconds`.
    pub programmed: Vec<(String, &'static str)>,
}

/// Why an object could not be taken.
#[derive(Debug)]
pub struct BadObject(pub String);

impl Store {
    /// Applies one change of `kind`; returns whether anything changed.
    pub fn apply(&mut self, kind: Kind, change: Change<'_>) -> Result<bool, BadObject> {
        match change {
            Change::Replace(items) => {
                let first = self.synced.insert(kind);
                let changed = self.replace(kind, items)?;
                Ok(first || changed)
            }
            Change::Upsert(json) => self.upsert(kind, json),
            Change::Delete(json) => {
                let n: Named = decode(json)?;
                let key = (n.metadata.namespace, n.metadata.name);
                Ok(match kind {
                    Kind::Services => {
                        let gone = self.services.remove(&key).is_some();
                        self.answers_changed |= gone;
                        gone
                    }
                    Kind::Slices => match self.slices.remove(&key) {
                        Some(s) => {
                            self.answers_changed = true;
                            self.note_programmed(&s);
                            true
                        }
                        None => false,
                    },
                    Kind::Namespaces => {
                        let gone = self.namespaces.remove(&key.1);
                        self.answers_changed |= gone;
                        gone
                    }
                    Kind::Pods => {
                        let gone = self.pods.remove(&key).is_some();
                        self.answers_changed |= gone;
                        gone
                    }
                })
            }
        }
    }

    fn replace(&mut self, kind: Kind, items: &[&str]) -> Result<bool, BadObject> {
        match kind {
            Kind::Services => {
                let mut all = BTreeMap::new();
                for j in items {
                    let s = Service::from_json(decode::<ServiceJson>(j)?);
                    all.insert((s.namespace.clone(), s.name.clone()), s);
                }
                let changed = all != self.services;
                self.services = all;
                self.answers_changed |= changed;
                Ok(changed)
            }
            Kind::Slices => {
                let mut all = BTreeMap::new();
                for j in items {
                    if let Some(s) = Slice::from_json(decode::<EndpointSliceJson>(j)?) {
                        all.insert((s.namespace.clone(), s.name.clone()), s);
                    }
                }
                let changed = all != self.slices;
                self.slices = all;
                self.answers_changed |= changed;
                Ok(changed)
            }
            Kind::Namespaces => {
                let mut all = BTreeSet::new();
                for j in items {
                    all.insert(decode::<NamespaceJson>(j)?.metadata.name);
                }
                let changed = all != self.namespaces;
                self.namespaces = all;
                self.answers_changed |= changed;
                Ok(changed)
            }
            Kind::Pods => {
                let mut all = BTreeMap::new();
                for j in items {
                    let p = Pod::from_json(decode::<PodJson>(j)?);
                    if !p.terminating {
                        all.insert((p.namespace.clone(), p.name.clone()), p);
                    }
                }
                let changed = all != self.pods;
                self.pods = all;
                self.answers_changed |= changed;
                Ok(changed)
            }
        }
    }

    fn upsert(&mut self, kind: Kind, json: &str) -> Result<bool, BadObject> {
        Ok(match kind {
            Kind::Services => {
                let s = Service::from_json(decode::<ServiceJson>(json)?);
                let key = (s.namespace.clone(), s.name.clone());
                let changed = self.services.get(&key) != Some(&s);
                if changed {
                    self.services.insert(key, s);
                    self.answers_changed = true;
                }
                changed
            }
            Kind::Slices => {
                let Some(s) = Slice::from_json(decode::<EndpointSliceJson>(json)?) else {
                    return Ok(false);
                };
                let key = (s.namespace.clone(), s.name.clone());
                let old = self.slices.get(&key);
                // CoreDNS's endpointsEquivalent: the trigger time alone is no change.
                let same = old.is_some_and(|o| {
                    o.ports == s.ports && o.addresses == s.addresses && o.service == s.service
                });
                if same {
                    return Ok(false);
                }
                self.note_programmed(&s);
                self.slices.insert(key, s);
                self.answers_changed = true;
                true
            }
            Kind::Namespaces => {
                let n: NamespaceJson = decode(json)?;
                let added = self.namespaces.insert(n.metadata.name);
                self.answers_changed |= added;
                added
            }
            Kind::Pods => {
                let p = Pod::from_json(decode::<PodJson>(json)?);
                // CoreDNS: a terminating pod is not added, and an update that makes a pod
                // terminating is not applied (the pod stays until it is deleted).
                if p.terminating {
                    return Ok(false);
                }
                let key = (p.namespace.clone(), p.name.clone());
                let changed = self.pods.get(&key) != Some(&p);
                if changed {
                    self.answers_changed |= self.pods.get(&key).map(|o| o.ip) != Some(p.ip);
                    self.pods.insert(key, p);
                }
                changed
            }
        })
    }

    /// Records a slice change for `dns_programming_duration_seconds`: only slices with a
    /// trigger time whose service is known, labelled by the kind of the service.
    fn note_programmed(&mut self, s: &Slice) {
        let Some(t) = &s.trigger else { return };
        let Some(svc) = self.service_of(s) else {
            return;
        };
        let kind = if svc.headless() {
            "headless_with_selector"
        } else {
            "cluster_ip"
        };
        self.programmed.push((t.clone(), kind));
    }

    /// The service `slice` belongs to, when the store has it.
    pub fn service_of(&self, slice: &Slice) -> Option<&Service> {
        self.services
            .get(&(slice.namespace.clone(), slice.service.clone()))
    }

    /// The server's own endpoints (CoreDNS's `nsAddrs` looking up each of `local` with
    /// `EpIndexReverse`): for each address in turn, the slices that hold it, with their
    /// services (a slice whose service is unknown is left out). `None` when no slice holds
    /// any: no endpoint is the server, whose own addresses then name it.
    pub fn own_slices(&self, local: &[IpAddr]) -> Option<Vec<(&Slice, &Service)>> {
        let mut found = false;
        let mut out = Vec::new();
        for ip in local {
            for slice in self.slices.values() {
                if slice.addresses.iter().any(|a| a.ip == *ip) {
                    found = true;
                    out.extend(self.service_of(slice).map(|svc| (slice, svc)));
                }
            }
        }
        found.then_some(out)
    }

    /// Whether every kind in `kinds` has had its first list.
    pub fn synced(&self, kinds: &[Kind]) -> bool {
        kinds.iter().all(|k| self.synced.contains(k))
    }
}

fn decode<'a, T: serde::Deserialize<'a>>(json: &'a str) -> Result<T, BadObject> {
    serde_json::from_str(json).map_err(|e| BadObject(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svc(name: &str, ip: &str) -> String {
        format!(
            r#"{{"metadata":{{"name":"{name}","namespace":"ns","resourceVersion":"1"}},"spec":{{"type":"ClusterIP","clusterIP":"{ip}","clusterIPs":["{ip}"],"ports":[{{"name":"http","protocol":"TCP","port":80}}]}}}}"#
        )
    }

    fn slice(name: &str, ready: &str, trigger: bool) -> String {
        let ann = if trigger {
            r#","annotations":{"endpoints.kubernetes.io/last-change-trigger-time":"2026-12-01T10:00:00Z"}"#
        } else {
            ""
        };
        format!(
            r#"{{"metadata":{{"name":"{name}","namespace":"ns","labels":{{"kubernetes.io/service-name":"a"}}{ann}}},"addressType":"IPv4","endpoints":[{{"addresses":["10.1.0.1"],"conditions":{{"ready":true}}}},{{"addresses":["10.1.0.2"],"conditions":{{"ready":{ready}}}}},{{"addresses":["10.1.0.3"],"conditions":{{}}}}],"ports":[{{"name":"http","protocol":"TCP","port":80}}]}}"#
        )
    }

    #[test]
    fn a_relist_replaces_the_kind_and_drops_what_is_gone() {
        let mut s = Store::default();
        let (a, b) = (svc("a", "10.0.0.1"), svc("b", "10.0.0.2"));
        assert!(s.apply(Kind::Services, Change::Replace(&[&a, &b])).unwrap());
        assert!(s.synced(&[Kind::Services]) && !s.synced(&[Kind::Services, Kind::Slices]));
        assert_eq!(s.services.len(), 2);
        s.answers_changed = false;
        // The same list again changes nothing; a list without b drops it.
        assert!(!s.apply(Kind::Services, Change::Replace(&[&a, &b])).unwrap());
        assert!(!s.answers_changed);
        assert!(s.apply(Kind::Services, Change::Replace(&[&a])).unwrap());
        assert!(s.answers_changed);
        assert_eq!(
            s.services.keys().map(|k| k.1.as_str()).collect::<Vec<_>>(),
            ["a"]
        );
        // Upsert and delete.
        assert!(s.apply(Kind::Services, Change::Upsert(&b)).unwrap());
        assert!(!s.apply(Kind::Services, Change::Upsert(&b)).unwrap());
        assert!(s.apply(Kind::Services, Change::Delete(&b)).unwrap());
        assert!(!s.apply(Kind::Services, Change::Delete(&b)).unwrap());
        assert!(
            s.apply(Kind::Services, Change::Upsert("{not json"))
                .is_err()
        );
    }

    #[test]
    fn slices_keep_ready_endpoints_and_count_programming_once_per_change() {
        let mut s = Store::default();
        s.apply(Kind::Services, Change::Replace(&[&svc("a", "10.0.0.1")]))
            .unwrap();
        let first = slice("a-1", "false", true);
        assert!(s.apply(Kind::Slices, Change::Upsert(&first)).unwrap());
        let kept = &s.slices[&("ns".to_string(), "a-1".to_string())];
        // Not ready is left out; no condition counts as ready.
        let ips: Vec<String> = kept.addresses.iter().map(|a| a.ip.to_string()).collect();
        assert_eq!(ips, ["10.1.0.1", "10.1.0.3"]);
        assert_eq!(
            s.programmed,
            [("2026-12-01T10:00:00Z".to_string(), "cluster_ip")]
        );
        // The same endpoints again (a new resourceVersion): no change, nothing observed.
        assert!(!s.apply(Kind::Slices, Change::Upsert(&first)).unwrap());
        assert_eq!(s.programmed.len(), 1);
        assert!(
            s.apply(Kind::Slices, Change::Upsert(&slice("a-1", "true", false)))
                .unwrap()
        );
        assert_eq!(s.programmed.len(), 1, "no trigger time, no observation");
        // An FQDN slice is not taken.
        let fqdn = r#"{"metadata":{"name":"f","namespace":"ns"},"addressType":"FQDN","endpoints":[{"addresses":["example.com"]}]}"#;
        assert!(!s.apply(Kind::Slices, Change::Upsert(fqdn)).unwrap());
    }

    #[test]
    fn terminating_pods_are_neither_added_nor_updated_until_deleted() {
        let pod = |ip: &str, deleting: bool| {
            let del = if deleting {
                r#","deletionTimestamp":"2026-12-01T10:00:00Z""#
            } else {
                ""
            };
            format!(
                r#"{{"metadata":{{"name":"p","namespace":"ns"{del}}},"status":{{"phase":"Running","podIP":"{ip}"}}}}"#
            )
        };
        let mut s = Store::default();
        assert!(
            !s.apply(Kind::Pods, Change::Upsert(&pod("10.2.0.1", true)))
                .unwrap()
        );
        assert!(s.pods.is_empty());
        assert!(
            s.apply(Kind::Pods, Change::Upsert(&pod("10.2.0.1", false)))
                .unwrap()
        );
        assert!(
            !s.apply(Kind::Pods, Change::Upsert(&pod("10.2.0.9", true)))
                .unwrap()
        );
        let ip = s.pods.values().next().unwrap().ip.unwrap();
        assert_eq!(ip.to_string(), "10.2.0.1");
        assert!(
            s.apply(Kind::Pods, Change::Delete(&pod("10.2.0.1", true)))
                .unwrap()
        );
        assert!(s.pods.is_empty());
    }
}
