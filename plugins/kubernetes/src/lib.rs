//! kubernetes: the records of the Kubernetes DNS-Based Service Discovery specification
//! (schema 1.1.0) for a cluster, as CoreDNS's kubernetes plugin (`plugin/kubernetes`) serves
//! them: services, headless services' endpoints, SRV for named ports, pods, PTR, ExternalName
//! CNAMEs, `dns-version`, and the zone's SOA and NS.
//!
//! Setup parses the directive (`setup.rs`) and starts the feed (`feed.rs`): one thread per
//! watched kind lists and watches the API server (`ringdns-kubeclient`), one builder thread
//! applies their events to what it holds (`store.rs`) and publishes an immutable table
//! (`data.rs`) in a [`Snapshot`] that every core reads without a lock. A query never waits
//! for the API: it reads the table there is (`answer.rs`), on the first pass (`serve_now`),
//! unless an ExternalName CNAME leads outside the zone, whose target is then looked up
//! through the server on the deferred pass, as CoreDNS's upstream lookup does.
//!
//! With *metadata* in the block it publishes the client pod and the parts of the query name
//! (`metadata.rs`), as CoreDNS's `Metadata` provider does.
//!
//! It is also the block's `Externaler` (`external.rs`): k8s_external's names of the
//! services' external IPs and load balancers, from the same table.

#![forbid(unsafe_code)]

mod answer;
mod autopath;
mod data;
mod external;
mod feed;
mod metadata;
mod metrics;
mod objects;
mod parse;
mod selector;
mod setup;
mod store;

use answer::{Ctx, Hit, Verdict, zone_of};
use data::ClusterData;
use ringdns_plugin::autopath::AutoPathers;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::external::Externalers;
use ringdns_plugin::snapshot::Snapshot;
use ringdns_plugin::wire::rcode::{NOERROR, NXDOMAIN, REFUSED, SERVFAIL};
use ringdns_plugin::wire::rtype::{A, AAAA, AXFR, CNAME, IXFR, MX, NS, PTR, SOA, SRV, TXT};
use ringdns_plugin::wire::{MessageWriter, Name, QueryBuilder, Section};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, Readiness, Request, Serve, ServeFuture, Serves,
    Status, next_or_failure, next_or_failure_now,
};
use setup::Options;
use std::cell::RefCell;
use std::future::Future;
use std::path::Path;
use std::sync::Arc;

pub use setup::PodMode;

/// The plugin's instance on one core.
pub struct Kubernetes {
    inner: Arc<Inner>,
    /// The hits of the service being answered, reused query after query.
    hits: RefCell<Vec<Hit>>,
}

/// What setup made of the directive, shared by every core.
pub struct Config {
    inner: Arc<Inner>,
}

/// One directive's state: its options and the table queries read.
pub(crate) struct Inner {
    options: Options,
    data: Arc<Snapshot<ClusterData>>,
    /// The host's resolv.conf search list (lower-case wire names), which a pod's search
    /// path ends with (CoreDNS's `autoPathSearch`).
    host_search: Vec<Vec<u8>>,
    /// Keeps the feed's threads running while the configuration lives.
    _feed: Option<feed::Feed>,
}

impl Readiness for Inner {
    fn name(&self) -> &'static str {
        "kubernetes"
    }

    /// Ready after the first full list of every watched kind (CoreDNS's `HasSynced`).
    fn ready(&self) -> bool {
        self.data.load().synced
    }
}

impl Plugin for Kubernetes {
    const NAME: &'static str = "kubernetes";
    type Config = Config;
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Config, Error> {
        let options = setup::parse(d, block)?;
        let local = feed::local_ips(&block.bind);
        let data = Arc::new(Snapshot::new(ClusterData::empty()));
        let feed =
            feed::Feed::start(&options, &data, local).map_err(|e| d.plugin_err(Self::NAME, e))?;
        feed.wait_for_sync(options.startup_timeout);
        let inner = Arc::new(Inner {
            options,
            data,
            host_search: autopath::host_search(Path::new(autopath::RESOLV_CONF)),
            _feed: Some(feed),
        });
        block
            .block_shared::<AutoPathers>()
            .register(Self::NAME, inner.clone());
        block
            .block_shared::<Externalers>()
            .register(Self::NAME, inner.clone());
        Ok(Config { inner })
    }

    fn readiness(config: &Arc<Config>) -> Option<std::sync::Weak<dyn Readiness>> {
        let inner: Arc<dyn Readiness> = config.inner.clone();
        Some(Arc::downgrade(&inner))
    }
}

impl Serve for Kubernetes {
    fn build(config: &Arc<Config>, _core: &CoreInfo) -> Option<Self> {
        Some(Kubernetes {
            inner: config.inner.clone(),
            hits: RefCell::new(Vec::with_capacity(64)),
        })
    }

    // Not an `async fn`: the future is the next plugin's, or the boxed upstream lookup
    // (uncommon, and allocating anyway), with no state of this plugin's around it, so it
    // adds nothing to every chain's future (tests/alloc.rs keeps that small).
    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        match self.answer(req) {
            Step::Done(s) => ServeFuture::ready(Ok(s)),
            Step::Next => ServeFuture::Next {
                fut: next_or_failure(Self::NAME, next, req),
            },
            Step::Upstream if !req.can_wait() => ServeFuture::ready(req.defer()),
            Step::Upstream => ServeFuture::Own {
                fut: Box::pin(self.upstream(req)),
            },
        }
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        match self.answer(req) {
            Step::Done(s) => Some(s),
            Step::Next => next_or_failure_now(Self::NAME, next, req),
            Step::Upstream => None,
        }
    }

    /// Publishes the metadata before the server chooses among a zone's blocks, for view's
    /// `metadata('kubernetes/…')`.
    fn admits<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> bool {
        metadata::publish(&self.inner, req);
        next.admits(req)
    }
}

/// What the plugin makes of a query.
enum Step {
    /// Answered (or an rcode for the server to write).
    Done(Status),
    /// Not ours, or fallthrough: the next plugin's.
    Next,
    /// An ExternalName chain leads outside the zone: look its target up.
    Upstream,
}

impl Kubernetes {
    /// The answer from the table; allocates nothing (the reply goes into the request's
    /// buffer, the hits into the core's scratch list).
    fn answer(&self, req: &mut Request<'_>) -> Step {
        // The metadata first, whatever the name: the client pod's labels are for every
        // query (CoreDNS publishes them before the chain runs).
        metadata::publish(&self.inner, req);
        let o = &self.inner.options;
        let qname = req.query.qname();
        let Some(zone) = zone_of(&qname, &o.zone_wires) else {
            return Step::Next;
        };
        let qtype = req.query.qtype();
        if qtype == AXFR || qtype == IXFR {
            return Step::Done(Status::rcode(REFUSED));
        }
        let data = self.inner.data.load();
        let mut hits = self.hits.borrow_mut();
        let mut ctx = Ctx {
            o,
            data: &data,
            qname,
            zone,
            hits: &mut hits,
        };
        let mut w = MessageWriter::reply(&req.query, req.reply, NOERROR);
        w.set_aa(true);
        let apex = qname.label_count() == zone.labels;
        let verdict = match qtype {
            A | AAAA => ctx.address(qtype, &mut w),
            TXT => ctx.txt(&mut w),
            CNAME => ctx.cname(&mut w),
            PTR => ctx.ptr(&mut w),
            MX => ctx.other_services(),
            SRV => ctx.srv(&mut w),
            SOA if apex => Verdict::Written {
                answers: u16::from(ctx.soa(&mut w, Section::Answer)),
            },
            SOA => Verdict::Written { answers: 0 },
            NS if apex => ctx.ns(&mut w),
            _ => ctx.fake_a(),
        };
        match verdict {
            Verdict::Upstream => {
                req.reply.clear();
                Step::Upstream
            }
            Verdict::NameError => {
                if o.fall.through(&qname) {
                    req.reply.clear();
                    return Step::Next;
                }
                w.set_rcode(if data.synced { NXDOMAIN } else { SERVFAIL });
                ctx.soa(&mut w, Section::Authority);
                w.finish();
                req.finalize_reply();
                Step::Done(Status::written())
            }
            Verdict::Written { answers } => {
                if answers == 0 {
                    ctx.soa(&mut w, Section::Authority);
                }
                w.finish();
                req.finalize_reply();
                Step::Done(Status::written())
            }
        }
    }

    /// An ExternalName CNAME chain whose end is outside the zone: the target is looked up
    /// through the server for the query's type, and the reply is the CNAMEs followed by
    /// what came back (CoreDNS: no lookup reply, no CNAME).
    async fn upstream(&self, req: &mut Request<'_>) -> Status {
        let o = &self.inner.options;
        let data = self.inner.data.load_full();
        let qname = req.query.qname();
        let qtype = req.query.qtype();
        let Some(zone) = zone_of(&qname, &o.zone_wires) else {
            return Status::rcode(SERVFAIL);
        };
        let chain = {
            let mut hits = self.hits.borrow_mut();
            let mut ctx = Ctx {
                o,
                data: &data,
                qname,
                zone,
                hits: &mut hits,
            };
            ctx.outside_chain()
        };
        let looked_up = match (chain, req.lookup()) {
            (Some(chain), Some(via)) => {
                let target = chain.targets().last().and_then(|t| Name::from_wire(t).ok());
                match target {
                    Some(target) => {
                        let query = QueryBuilder::new(target, qtype)
                            .id(req.query.id())
                            .rd(true)
                            .build();
                        via.lookup(&query).await.map(|r| (chain, r))
                    }
                    None => None,
                }
            }
            _ => None,
        };
        let mut hits = self.hits.borrow_mut();
        let ctx = Ctx {
            o,
            data: &data,
            qname,
            zone,
            hits: &mut hits,
        };
        let mut w = MessageWriter::reply(&req.query, req.reply, NOERROR);
        w.set_aa(true);
        let mut answers = 0;
        if let Some((chain, reply)) = looked_up {
            answers += usize::from(chain.write(&mut w, o.ttl));
            answers += ringdns_plugin::lookup::append_answers(&reply, &mut w);
            if reply.get(2).is_some_and(|f| f & 0x02 != 0) {
                w.set_tc(true);
            }
        }
        if answers == 0 {
            ctx.soa(&mut w, Section::Authority);
        }
        w.finish();
        req.finalize_reply();
        Status::written()
    }
}

/// An instance serving `data`, for the unit tests.
#[cfg(test)]
pub(crate) fn test_instance(options: Options, data: ClusterData) -> Kubernetes {
    Kubernetes {
        inner: Arc::new(Inner {
            options,
            data: Arc::new(Snapshot::new(data)),
            host_search: Vec::new(),
            _feed: None,
        }),
        hits: RefCell::new(Vec::new()),
    }
}

ringdns_plugin::export!(Kubernetes);

#[cfg(test)]
mod tests;
