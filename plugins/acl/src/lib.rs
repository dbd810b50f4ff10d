//! acl: allows, blocks, filters or drops queries by the client's address and the query's
//! type, per zone, as CoreDNS's `plugin/acl`.
//!
//! Each `acl` line of a block is a rule for its zones; a rule is a list of policies, each an
//! action for the queries of some types from some networks. A query is checked against the
//! rules in order, skipping those whose zones do not hold its name; within a rule the first
//! policy that matches decides. `allow` ends the checking and hands the query on; `block`
//! answers REFUSED with an extended DNS error 15 (Blocked), `filter` NOERROR with no answer
//! and EDE 17 (Filtered), `drop` sends nothing. A rule that no policy matches leaves the
//! query to the next rule; a query no rule decides is allowed.
//!
//! Matching allocates nothing: zones are compared in wire form against the packet's name,
//! networks as integers against the client's address.

#![forbid(unsafe_code)]

mod metrics;
mod setup;

use metrics::{Allowed, Counters};
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::reverse::Cidr;
use ringdns_plugin::wire::rcode::{NOERROR, REFUSED, SERVFAIL};
use ringdns_plugin::wire::{MessageWriter, edns};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, Request, Serve, ServeFuture, Serves, Status,
    next_or_failure, next_or_failure_now,
};
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// RFC 8914's info code 15, Blocked: what `block` says.
const EDE_BLOCKED: u16 = 15;
/// RFC 8914's info code 17, Filtered: what `filter` says.
const EDE_FILTERED: u16 = 17;

/// What a policy does with the queries it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Hand the query on; no later rule is asked.
    Allow,
    /// REFUSED, with EDE 15 (Blocked).
    Block,
    /// NOERROR with no answer, with EDE 17 (Filtered).
    Filter,
    /// No reply at all.
    Drop,
}

/// The query types a policy matches.
#[derive(Debug, Default)]
struct QTypes {
    /// `type *` (or no `type` section): every type.
    all: bool,
    types: Vec<u16>,
}

impl QTypes {
    fn contains(&self, qtype: u16) -> bool {
        self.all || self.types.contains(&qtype)
    }
}

/// The client networks a policy matches.
#[derive(Debug)]
enum Nets {
    /// `net *` (or no `net` section): every address, IPv4 and IPv6.
    All,
    Some(Vec<Cidr>),
}

impl Nets {
    fn contains(&self, ip: IpAddr) -> bool {
        match self {
            Nets::All => true,
            Nets::Some(nets) => nets.iter().any(|n| n.contains(ip)),
        }
    }
}

/// One `ACTION [type QTYPE...] [net SOURCE...]` line.
#[derive(Debug)]
struct Policy {
    action: Action,
    qtypes: QTypes,
    nets: Nets,
}

/// A zone of a rule: its name (the metrics' `zone` label) and its lower-case wire form.
#[derive(Debug)]
struct Zone {
    name: String,
    wire: Vec<u8>,
}

/// One `acl [ZONES...] { ... }`.
#[derive(Debug)]
struct Rule {
    zones: Vec<Zone>,
    policies: Vec<Policy>,
}

impl Rule {
    /// The most specific of the rule's zones that holds `qname` (CoreDNS's
    /// `plugin.Zones.Matches`).
    fn zone(&self, qname: &ringdns_plugin::wire::Name<'_>) -> Option<&Zone> {
        self.zones
            .iter()
            .filter(|z| qname.is_subdomain_of(&z.wire))
            .max_by_key(|z| z.wire.len())
    }

    /// The action of the first policy that matches the type and the client, if one does.
    fn action(&self, qtype: u16, client: IpAddr) -> Option<Action> {
        self.policies
            .iter()
            .find(|p| p.qtypes.contains(qtype) && p.nets.contains(client))
            .map(|p| p.action)
    }
}

/// What setup parsed: the block's `acl` rules, in Corefile order.
#[derive(Debug)]
pub struct Config {
    rules: Vec<Rule>,
    /// The block's `view` name (empty without one), the `view` label of its counters.
    view: Box<str>,
}

/// What the rules decided for a query.
enum Verdict<'c> {
    /// Hand it on.
    Pass,
    /// Block, filter or drop it, by a rule of this zone.
    Deny(Action, &'c str),
}

impl Config {
    /// CoreDNS's `ServeDNS` loop: rules in order, those of other zones skipped; within one,
    /// the first matching policy; `allow` ends it.
    fn judge(&self, req: &Request<'_>) -> Verdict<'_> {
        let qname = req.query.qname();
        let (qtype, client) = (req.query.qtype(), req.client.ip());
        for rule in &self.rules {
            let Some(zone) = rule.zone(&qname) else {
                continue;
            };
            match rule.action(qtype, client) {
                None => continue,
                Some(Action::Allow) => break,
                Some(a) => return Verdict::Deny(a, &zone.name),
            }
        }
        Verdict::Pass
    }
}

/// The plugin's instance on one core: the block's rules and this core's counters.
pub struct Acl {
    config: Arc<Config>,
    counters: Counters,
}

impl Plugin for Acl {
    const NAME: &'static str = "acl";
    type Config = Config;
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Config, Error> {
        setup::parse(d, block)
    }
}

impl Acl {
    /// Answers a denied query as CoreDNS does and counts it.
    fn deny(&self, req: &mut Request<'_>, action: Action, zone: &str) -> Status {
        self.counters.denied(action, req.server, zone);
        let (rcode, info) = match action {
            // "Written" with nothing written: the server sends nothing.
            Action::Drop | Action::Allow => return Status::rcode(NOERROR),
            Action::Block => (REFUSED, EDE_BLOCKED),
            Action::Filter => (NOERROR, EDE_FILTERED),
        };
        let mut w = MessageWriter::reply(&req.query, req.reply, rcode);
        // miekg's `SetEdns0(4096, true)` and the option, whatever the query carried;
        // the server then fits the OPT to the client's (its size and DO bit).
        let pushed = w.push_opt(4096, true, &[(edns::EDE, &info.to_be_bytes())]);
        w.finish();
        if pushed.is_err() {
            req.reply.clear();
            return Status::rcode(SERVFAIL);
        }
        req.finalize_reply();
        // A REFUSED written here is sent as written, EDE and all, not replaced by the
        // server's own.
        Status::written()
    }
}

impl Serve for Acl {
    fn build(config: &Arc<Config>, core: &CoreInfo) -> Option<Self> {
        Some(Acl {
            config: config.clone(),
            counters: Counters::new(core.index, &config.view),
        })
    }

    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        // The server's own refreshes (the cache's prefetch) were let through already: in
        // CoreDNS they start below the cache and never meet acl.
        let allowed = if req.is_refresh() {
            None
        } else {
            match self.config.judge(req) {
                Verdict::Pass => Some(self.counters.allowed(req.server)),
                Verdict::Deny(a, zone) => {
                    return ServeFuture::<_, std::future::Ready<Status>>::ready(Ok(
                        self.deny(req, a, zone)
                    ));
                }
            }
        };
        ServeFuture::Next {
            fut: Counted {
                fut: next_or_failure(Self::NAME, next, req),
                allowed,
            },
        }
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        if req.is_refresh() {
            return next_or_failure_now(Self::NAME, next, req);
        }
        match self.config.judge(req) {
            Verdict::Pass => {
                let status = next_or_failure_now(Self::NAME, next, req)?;
                self.counters.allow(req.server);
                Some(status)
            }
            Verdict::Deny(a, zone) => Some(self.deny(req, a, zone)),
        }
    }
}

pin_project_lite::pin_project! {
    /// The rest of the chain serving an allowed query, counted once it has served it (not
    /// when it defers: the query comes through again).
    struct Counted<F> {
        #[pin]
        fut: F,
        allowed: Option<Arc<Allowed>>,
    }
}

impl<F: Future<Output = Outcome>> Future for Counted<F> {
    type Output = Outcome;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        let this = self.project();
        let out = std::task::ready!(this.fut.poll(cx));
        if out.is_ok()
            && let Some(a) = this.allowed.take()
        {
            a.inc();
        }
        Poll::Ready(out)
    }
}

ringdns_plugin::export!(Acl);

#[cfg(test)]
mod tests;
