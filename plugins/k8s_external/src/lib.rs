//! k8s_external: a zone of its own for the cluster's services that are reachable from
//! outside it, as CoreDNS's k8s_external plugin (`plugin/k8s_external`) serves it:
//! `SERVICE.NAMESPACE.ZONE` answers a service's external IPs and load-balancer ingress
//! (an ingress hostname as a CNAME, whose target is looked up through the server), SRV for
//! its ports, PTR of its external IPs, and with `headless` the ready endpoints of headless
//! services; the zone's apex has an SOA and an NS record, `ns1.APEX.ZONE`, whose addresses
//! are the server's own service's.
//!
//! The data is the kubernetes plugin's: it registers itself in the block's
//! [`Externalers`](ringdns_plugin::external::Externalers) at setup, which runs after this
//! plugin's (plugin.cfg order), and the per-core instance takes it when it is built. A
//! lookup writes its hits into the core's scratch and the reply goes into the request's
//! buffer, so an answer allocates nothing; a CNAME to an ingress hostname, and an SRV
//! reply whose glue needs such a hostname's addresses, are looked up on the deferred pass.

#![forbid(unsafe_code)]

mod answer;
mod setup;

use answer::{Ctx, Looked, Zone, alias, srv_hosts, zone_of};
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::external::{ExternalHits, ExternalRequest, Externaler};
use ringdns_plugin::wire::rcode::{NOERROR, NXDOMAIN, REFUSED, SERVFAIL};
use ringdns_plugin::wire::rtype::{A, AAAA, AXFR, IXFR, NS, PTR, SOA, SRV, of_addr};
use ringdns_plugin::wire::{MessageWriter, Name, Owner, QueryBuilder, Section};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, Request, Serve, ServeFuture, Serves, Status,
    error, next_or_failure, next_or_failure_now,
};
use setup::{Config, NAME, SOURCE};
use std::cell::{RefCell, RefMut};
use std::future::Future;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// The plugin's instance on one core.
pub struct K8sExternal {
    config: Arc<Config>,
    /// The kubernetes plugin's answers.
    ext: Arc<dyn Externaler>,
    /// The hits of the query being answered, reused query after query.
    hits: RefCell<ExternalHits>,
    /// The name servers' addresses, likewise.
    addrs: RefCell<Vec<IpAddr>>,
}

impl Plugin for K8sExternal {
    const NAME: &'static str = NAME;
    type Config = Config;
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Config, Error> {
        setup::parse(d, block)
    }
}

impl Serve for K8sExternal {
    /// Takes the kubernetes plugin's answers (its setup ran after this plugin's). Setup
    /// refused a block without kubernetes, so there is one unless it gave none, which is
    /// CoreDNS's start-up error, logged here (once per configuration); the block then
    /// serves without k8s_external.
    fn build(config: &Arc<Config>, _core: &CoreInfo) -> Option<Self> {
        let Some(ext) = config.externalers.get(SOURCE) else {
            if !config.reported.swap(true, Ordering::Relaxed) {
                error!(
                    "plugin/{NAME}: kubernetes plugin does not implement the Externaler interface"
                );
            }
            return None;
        };
        Some(K8sExternal {
            config: config.clone(),
            ext,
            hits: RefCell::new(ExternalHits::default()),
            addrs: RefCell::new(Vec::new()),
        })
    }

    // Not an `async fn`: the future is the next plugin's, or the boxed lookup of an
    // ingress hostname (uncommon, and allocating anyway), with no state of this plugin's
    // around it, so it adds nothing to every chain's future (tests/alloc.rs keeps that
    // small).
    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        match self.answer(req, None) {
            Step::Done(s) => ServeFuture::ready(Ok(s)),
            Step::Next => ServeFuture::Next {
                fut: next_or_failure(NAME, next, req),
            },
            Step::Upstream if !req.can_wait() => ServeFuture::ready(req.defer()),
            Step::Upstream => ServeFuture::Own {
                fut: Box::pin(self.upstream(req)),
            },
        }
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        match self.answer(req, None) {
            Step::Done(s) => Some(s),
            Step::Next => next_or_failure_now(NAME, next, req),
            Step::Upstream => None,
        }
    }
}

/// What the plugin makes of a query.
enum Step {
    /// Answered (or an rcode for the server to write).
    Done(Status),
    /// Not in the zones, or fallthrough: the next plugin's.
    Next,
    /// The answer needs an ingress hostname's addresses, looked up through the server.
    Upstream,
}

impl K8sExternal {
    /// The answer (CoreDNS's `ServeDNS`, `serveApex`, `serveSubApex`). `looked` is what a
    /// deferred pass looked up; without it, an answer that needs a lookup is
    /// [`Step::Upstream`] and nothing is written.
    fn answer(&self, req: &mut Request<'_>, looked: Option<&[Looked]>) -> Step {
        let c = &*self.config;
        let qname = req.query.qname();
        let Some(zone) = zone_of(&qname, &c.zones) else {
            return Step::Next;
        };
        let qtype = req.query.qtype();
        if qtype == AXFR || qtype == IXFR {
            return Step::Done(Status::rcode(REFUSED));
        }
        let ctx = Ctx {
            apex: &c.apex,
            ttl: c.ttl,
            zone,
        };
        let base = qname.label_count() - zone.labels;
        if base == 0 {
            return self.apex(req, &ctx);
        }
        if qname.is_subdomain_of(&c.apex_zones[zone.index]) {
            return self.sub_apex(req, &ctx, &qname);
        }
        let mut hits = self.hits.borrow_mut();
        let rcode = self.external(&qname, &zone, qtype, &mut hits);
        if hits.is_empty() && rcode == NXDOMAIN && c.fall.through(&qname) {
            return Step::Next;
        }
        let needs_lookup = match qtype {
            A | AAAA => alias(&hits).is_some(),
            SRV => srv_hosts(&hits).next().is_some(),
            _ => false,
        };
        if needs_lookup && looked.is_none() {
            return Step::Upstream;
        }
        let looked = looked.unwrap_or(&[]);
        let serial = self.ext.external_serial(c.headless);
        reply(req, |w| {
            if hits.is_empty() {
                w.set_rcode(rcode);
                ctx.soa(w, Section::Authority, serial);
                return;
            }
            let answers = match qtype {
                A | AAAA => answer::addresses(&ctx, w, &hits, qtype, looked),
                SRV => answer::srv(&ctx, w, &hits, looked),
                PTR => answer::ptr(&ctx, w, &hits, &c.zones[0]),
                _ => 0,
            };
            if answers == 0 {
                ctx.soa(w, Section::Authority, serial);
            }
        })
    }

    /// The zone's apex: its SOA, its NS with the name servers' addresses, else NODATA.
    fn apex(&self, req: &mut Request<'_>, ctx: &Ctx<'_, '_>) -> Step {
        let serial = self.ext.external_serial(self.config.headless);
        let qtype = req.query.qtype();
        reply(req, |w| match qtype {
            SOA => {
                ctx.soa(w, Section::Answer, serial);
            }
            NS => {
                ctx.ns(w);
                if let Some(ns1) = ctx.ns1() {
                    for ip in self.name_servers().iter() {
                        let _ =
                            w.push_addr(Section::Additional, Owner::Wire(ns1.wire()), ctx.ttl, *ip);
                    }
                }
            }
            _ => {
                ctx.soa(w, Section::Authority, serial);
            }
        })
    }

    /// The name servers' subdomain `APEX.ZONE`: NODATA for itself, `ns1.APEX.ZONE`'s
    /// addresses, NXDOMAIN for any other name.
    fn sub_apex(&self, req: &mut Request<'_>, ctx: &Ctx<'_, '_>, qname: &Name<'_>) -> Step {
        let c = &*self.config;
        let serial = self.ext.external_serial(c.headless);
        let qtype = req.query.qtype();
        // Labels left of APEX.ZONE.
        let below = qname.label_count() - ctx.zone.labels - c.apex_labels;
        let ns1 = below == 1
            && qname
                .labels()
                .next()
                .is_some_and(|l| l.eq_ignore_ascii_case(b"ns1"));
        reply(req, |w| {
            let mut answers = 0;
            if below == 0 {
                // The empty non-terminal APEX.ZONE: NODATA.
            } else if ns1 {
                for ip in self.name_servers().iter().filter(|ip| of_addr(ip) == qtype) {
                    let ok = w.push_addr(Section::Answer, Owner::Question, ctx.ttl, *ip);
                    answers += u16::from(ok.is_ok());
                }
            } else {
                w.set_rcode(NXDOMAIN);
            }
            if answers == 0 {
                ctx.soa(w, Section::Authority, serial);
            }
        })
    }

    /// The kubernetes plugin's lookup of `qname` (in `zone`) into `hits`; its rcode.
    fn external(
        &self,
        qname: &Name<'_>,
        zone: &Zone<'_>,
        qtype: u16,
        hits: &mut ExternalHits,
    ) -> u8 {
        let req = ExternalRequest {
            qname,
            zone_labels: zone.labels,
            qtype,
            headless: self.config.headless,
        };
        self.ext.external(&req, hits)
    }

    /// The addresses of `ns1.APEX.ZONE` (the kubernetes plugin's `ExternalAddress`), in
    /// the core's reused list.
    fn name_servers(&self) -> RefMut<'_, Vec<IpAddr>> {
        let mut addrs = self.addrs.borrow_mut();
        self.ext.external_address(self.config.headless, &mut addrs);
        addrs
    }

    /// The hostnames (and types) an answer needs looked up.
    fn wanted(&self, req: &Request<'_>) -> Vec<(Vec<u8>, u16)> {
        let c = &*self.config;
        let qname = req.query.qname();
        let qtype = req.query.qtype();
        let Some(zone): Option<Zone<'_>> = zone_of(&qname, &c.zones) else {
            return Vec::new();
        };
        let mut hits = self.hits.borrow_mut();
        self.external(&qname, &zone, qtype, &mut hits);
        match qtype {
            A | AAAA => alias(&hits)
                .map(|(host, _)| vec![(host.to_vec(), qtype)])
                .unwrap_or_default(),
            SRV => srv_hosts(&hits)
                .flat_map(|h| [(h.to_vec(), A), (h.to_vec(), AAAA)])
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The deferred pass of an answer that needs ingress hostnames' addresses: each looked
    /// up through the server (another block, `hosts`, `forward`…) as CoreDNS's upstream
    /// lookup does, then the answer written with what came back (the CNAME alone, or SRV
    /// without that glue, when nothing did).
    async fn upstream(&self, req: &mut Request<'_>) -> Status {
        let wanted = self.wanted(req);
        let mut looked = Vec::with_capacity(wanted.len());
        for (host, qtype) in wanted {
            let reply = match (req.lookup(), Name::from_wire(&host)) {
                (Some(via), Ok(name)) => {
                    let query = QueryBuilder::new(name, qtype)
                        .id(req.query.id())
                        .rd(true)
                        .build();
                    via.lookup(&query).await
                }
                _ => None,
            };
            looked.push(Looked { host, qtype, reply });
        }
        match self.answer(req, Some(&looked)) {
            Step::Done(s) => s,
            // The table changed while the lookups ran and the name is now one to pass on:
            // this pass holds no next plugin to pass it to.
            Step::Next | Step::Upstream => Status::rcode(SERVFAIL),
        }
    }
}

/// Writes the reply `body` makes into the request's buffer: NOERROR (unless `body` sets
/// another rcode), AA set, finished and fitted to the client.
fn reply(req: &mut Request<'_>, body: impl FnOnce(&mut MessageWriter<'_>)) -> Step {
    let mut w = MessageWriter::reply(&req.query, req.reply, NOERROR);
    w.set_aa(true);
    body(&mut w);
    w.finish();
    req.finalize_reply();
    Step::Done(Status::written())
}

ringdns_plugin::export!(K8sExternal);

#[cfg(test)]
mod tests;
