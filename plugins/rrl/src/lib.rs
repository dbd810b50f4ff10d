//! rrl: response rate limiting, as CoreDNS's external plugin coredns/rrl (BIND 9's
//! rate-limit). The rest of the chain answers; rrl then classifies the reply, debits the
//! account of its category (client prefix, response type, query type, name) and, over the
//! limit, sends nothing or, every `slip-ratio`-th time, an empty truncated reply that sends
//! a real client to TCP. `requests-per-second` limits queries per client prefix before the
//! chain. Each core keeps its own table, with no lock, and its share of the rates.

#![forbid(unsafe_code)]

mod account;
mod counters;
mod setup;
mod table;
mod token;

pub use counters::RrlCounters;
pub use setup::Config;

use account::{Rate, SECOND};
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::wire::rcode::NOERROR;
use ringdns_plugin::wire::{HeaderMut, MAX_NAME_LEN, Section, flags, name_to_wire, records};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, PluginError, Proto, Request, Serve, Serves,
    Status, client_write, next_or_failure, next_or_failure_now,
};
use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::time::Instant;
use table::Table;
use token::{Class, Kind, Prefix, Token};

/// What setup parsed, with the zones in wire form; shared by every core.
pub struct Shared {
    cfg: Config,
    zones: Vec<Vec<u8>>,
}

/// One core's rate limiter: its share of each allowance, its table and its counters.
pub struct Rrl {
    shared: Arc<Shared>,
    /// Per response type (and the request account, last), this core's rate; `None` where
    /// the allowance is 0 (not limited).
    rates: [Option<Rate>; 6],
    table: RefCell<Table>,
    /// The seed of this core's name hashes and table keys.
    keys: foldhash::fast::RandomState,
    /// The origin of this core's account clock.
    epoch: Instant,
    /// The last time converted to the account clock, and what it came to: the queries of a
    /// batch share one time, so they convert it once.
    last: Cell<(Instant, i64)>,
    counters: Arc<RrlCounters>,
}

/// The error returned with a dropped response (coredns/rrl's `errRespRateLimit`), for the
/// errors plugin to log; the reply is empty, so the server sends nothing.
const RESPONSE_EXCEEDED: &str = "response rate exceeded the limit";
/// The same for a dropped request (`errReqRateLimit`).
const REQUEST_EXCEEDED: &str = "query rate exceeded the limit";

/// What the request check before the chain decided.
#[derive(Clone, Copy)]
enum Asked {
    /// `requests-per-second` is 0: nothing to debit.
    Done,
    /// Within the limit when looked at: debited once the chain has answered, so that a
    /// query the chain sends to be served again (deferred) is counted once.
    Debit(u64),
}

/// This core's share of an allowance: with N cores, each allows 1/N of the rate. Queries
/// from one client prefix spread over the cores (the kernel picks a core by the source
/// address and port, and clients pick a new port per query), so the server as a whole
/// allows about the configured rate. The interval is coredns/rrl's `second / rate`.
fn per_core(rate: f64, cores: usize, window: i64, slip_ratio: u32) -> Option<Rate> {
    if rate == 0.0 {
        return None;
    }
    let interval = (SECOND as f64 * cores.max(1) as f64 / rate).min((i64::MAX / 4) as f64) as i64;
    // coredns/rrl: an interval that truncates to 0 is no limit.
    (interval > 0).then_some(Rate {
        interval,
        window,
        slip_ratio,
    })
}

impl Plugin for Rrl {
    const NAME: &'static str = "rrl";
    type Config = Shared;
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Shared, Error> {
        let cfg = setup::parse(d, block)?;
        let zones = cfg
            .zones
            .iter()
            .map(|z| {
                name_to_wire(z).map_err(|e| d.plugin_err("rrl", format!("invalid zone {z}: {e}")))
            })
            .collect::<Result<_, _>>()?;
        Ok(Shared { cfg, zones })
    }
}

impl Serve for Rrl {
    fn build(shared: &Arc<Shared>, core: &CoreInfo) -> Option<Self> {
        let c = &shared.cfg;
        let window = (c.window * SECOND as f64).min((i64::MAX / 4) as f64) as i64;
        let rate = |r| per_core(r, core.cores, window, c.slip_ratio);
        let epoch = Instant::now();
        Some(Rrl {
            rates: [
                rate(c.responses),
                rate(c.nodata),
                rate(c.nxdomains),
                rate(c.referrals),
                rate(c.errors),
                rate(c.requests),
            ],
            table: RefCell::new(Table::new(c.max_table_size)),
            keys: foldhash::fast::RandomState::default(),
            epoch,
            last: Cell::new((epoch, 0)),
            counters: ringdns_plugin::metrics::registry::cell(&[], core.index),
            shared: shared.clone(),
        })
    }

    async fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Outcome {
        if !self.applies(req) {
            return next_or_failure(Self::NAME, next, req).await;
        }
        let asked = match self.ask(req) {
            Ok(a) => a,
            Err(dropped) => return Ok(dropped),
        };
        // Deferred: nothing is debited now, the query comes through again.
        let status = next_or_failure(Self::NAME, next, req).await?;
        Ok(self.answered(req, asked, status, None))
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        if !self.applies(req) {
            return next_or_failure_now(Self::NAME, next, req);
        }
        // A request dropped here is dropped for good (counted once); one within the limit
        // is only looked at, so a `None` below leaves nothing behind.
        let asked = match self.ask(req) {
            Ok(a) => a,
            Err(dropped) => return Some(dropped),
        };
        // The account of an answer to this query, looked up before the rest of the chain
        // answers (a cache hit usually is an answer): its memory is fetched while the cache
        // works, instead of after.
        let answer = self.answer_key(req);
        if let Some(k) = answer {
            self.table.borrow().touch(k);
        }
        let status = next_or_failure_now(Self::NAME, next, req)?;
        Some(self.answered(req, asked, status, answer))
    }
}

impl Rrl {
    /// Whether the query is one to limit: in rrl's zones, and from a client (not the
    /// server's own background refresh).
    fn applies(&self, req: &Request<'_>) -> bool {
        if req.is_refresh() {
            return false;
        }
        let name = req.query.qname();
        self.shared.zones.iter().any(|z| name.is_subdomain_of(z))
    }

    /// Nanoseconds on this core's account clock at the request's time (the batch's when
    /// served inline): the conversion is made once per batch, not per query.
    #[inline]
    fn now(&self, req: &Request<'_>) -> i64 {
        let t = req.now();
        let (last, ns) = self.last.get();
        if t == last {
            return ns;
        }
        let ns = t.saturating_duration_since(self.epoch).as_nanos() as i64;
        self.last.set((t, ns));
        ns
    }

    /// The client's prefix, by `ipv4-prefix-length` / `ipv6-prefix-length`.
    fn prefix(&self, req: &Request<'_>) -> Prefix {
        let c = &self.shared.cfg;
        Prefix::of(req.client.ip(), c.ipv4_prefix_length, c.ipv6_prefix_length)
    }

    /// The request check, before the chain: `Err` with the status of a dropped query when
    /// the client prefix is over `requests-per-second` (and rrl enforces).
    fn ask(&self, req: &mut Request<'_>) -> Result<Asked, Status> {
        let Some(rate) = &self.rates[Kind::Request as usize] else {
            return Ok(Asked::Done);
        };
        let token = Token::request(self.prefix(req)).key(&self.keys);
        let now = self.now(req);
        if self.shared.cfg.report_only
            || self
                .table
                .borrow()
                .peek(token, now, rate)
                .exceeded()
                .is_none()
        {
            return Ok(Asked::Debit(token));
        }
        self.table.borrow_mut().debit(token, now, rate);
        self.counters.request_exceeded(req.client.ip());
        Err(dropped(req, REQUEST_EXCEEDED))
    }

    /// Everything after the chain answered: the request debit left for now, then the
    /// response's (UDP only, as coredns/rrl), then drop, slip or send.
    /// The key of the account an answer (a reply with records in its answer section) to
    /// this query is debited to, when answers are limited (over UDP: TCP replies are not).
    fn answer_key(&self, req: &Request<'_>) -> Option<u64> {
        self.rates[Kind::Response as usize]?;
        if req.proto == Proto::Tcp {
            return None;
        }
        let class = Class {
            kind: Kind::Response,
            authority: None,
        };
        Some(self.response_token(req, &class).key(&self.keys))
    }

    /// `answer`: the account key of an answer, when [`Rrl::answer_key`] was computed.
    fn answered(
        &self,
        req: &mut Request<'_>,
        asked: Asked,
        status: Status,
        answer: Option<u64>,
    ) -> Status {
        let now = self.now(req);
        if let Asked::Debit(token) = asked {
            let rate = self.rates[Kind::Request as usize].as_ref();
            let over = rate.and_then(|r| self.table.borrow_mut().debit(token, now, r).exceeded());
            if over.is_some() {
                self.counters.request_exceeded(req.client.ip());
                if !self.shared.cfg.report_only {
                    return dropped(req, REQUEST_EXCEEDED);
                }
            }
        }
        // Replies the server writes (SERVFAIL, REFUSED, … returned, not written) are not
        // accounted, nor anything over TCP, where the source address cannot be spoofed.
        if req.proto == Proto::Tcp || !client_write(status.rcode) || req.reply.is_empty() {
            return status;
        }
        let Some(class) = token::classify(req.reply) else {
            return status;
        };
        let Some(rate) = &self.rates[class.kind as usize] else {
            return status;
        };
        let token = match answer {
            Some(k) if class.kind == Kind::Response => k,
            _ => self.response_token(req, &class).key(&self.keys),
        };
        let outcome = self.table.borrow_mut().debit(token, now, rate);
        let Some(debit) = outcome.exceeded() else {
            return status;
        };
        self.counters.response_exceeded(req.client.ip());
        if self.shared.cfg.report_only {
            return status;
        }
        if !debit.slip {
            return dropped(req, RESPONSE_EXCEEDED);
        }
        slip(req);
        status
    }

    /// The response's account (coredns/rrl's `responseToToken` and `buildToken`): answers
    /// by query type and name, NODATA by name, NXDOMAIN by the denying zone (the first
    /// authority record's owner), referrals by query type and the delegating zone, errors
    /// by the client prefix alone.
    fn response_token(&self, req: &Request<'_>, class: &Class<'_>) -> Token {
        let qname = || token::name_hash(&self.keys, &req.query.qname());
        let authority = || {
            let mut buf = [0u8; MAX_NAME_LEN];
            class
                .authority
                .and_then(|o| token::expand(&o, &mut buf).map(|n| token::name_hash(&self.keys, &n)))
                .unwrap_or(0)
        };
        let (qtype, name) = match class.kind {
            Kind::Response => (req.query.qtype(), qname()),
            Kind::Nodata => (0, qname()),
            Kind::Nxdomain => (0, authority()),
            Kind::Referral => (req.query.qtype(), authority()),
            Kind::Error | Kind::Request => (0, 0),
        };
        Token {
            prefix: self.prefix(req),
            kind: class.kind,
            qtype,
            name,
        }
    }

    /// The accounts this core holds now (tests).
    #[cfg(test)]
    fn accounts(&self) -> usize {
        self.table.borrow().len()
    }
}

/// Sends nothing: the reply is emptied and the status says "written" with the reason for
/// the errors plugin (an rcode the server would write would be an answer).
fn dropped(req: &mut Request<'_>, why: &'static str) -> Status {
    req.clear_reply();
    Status::error(NOERROR, PluginError::new(Rrl::NAME, why))
}

/// Turns the reply into a slip: header (ID, flags, rcode) and question kept, TC set, every
/// section emptied; then the server's last touches give it the client's OPT back, as
/// CoreDNS's scrub does after coredns/rrl empties the sections.
fn slip(req: &mut Request<'_>) {
    let Ok(end) = records(req.reply).map(|r| r.question_end()) else {
        req.clear_reply();
        return;
    };
    let r = &mut *req.reply;
    r.truncate(end);
    let mut header = HeaderMut::new(r);
    header.set_flag(flags::TC, true);
    for section in Section::ALL {
        header.set_count(section, 0);
    }
    req.finalize_reply();
}

ringdns_plugin::export!(Rrl);

#[cfg(test)]
mod tests;
