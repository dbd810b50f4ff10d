//! cache: a per-core packet cache in front of the rest of the chain, as CoreDNS's cache
//! (`plugin/cache`) but kept as wire bytes: a hit copies the stored reply into the send
//! buffer and patches ID, question case and TTLs in place, allocating nothing.

#![forbid(unsafe_code)]

mod config;
mod counters;
mod entry;
mod setup;
mod store;

pub use config::{CacheConfig, Capacity, Prefetch, ServeStale, StaleMode};
pub use counters::CacheCounters;

use entry::{Entry, Kind, Skip};
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::metadata::ZONE_WILDCARD;
use ringdns_plugin::wire::rcode::{NOERROR, NXDOMAIN, SERVFAIL};
use ringdns_plugin::wire::{Header, MAX_NAME_LEN, Query, name_to_wire};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, Request, Serve, Serves, Status, client_write,
    next_or_failure, next_or_failure_now,
};
use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The configuration with its zones in wire form, shared by all cores.
pub struct Shared {
    cfg: CacheConfig,
    /// The block's (server, zone) pairs, known at build time: one set of counters per server.
    routes: Arc<std::sync::OnceLock<Vec<(String, String)>>>,
    zones: Vec<Vec<u8>>,
    disable_success: Vec<Vec<u8>>,
    disable_denial: Vec<Vec<u8>>,
}

/// One core's cache.
pub struct Cache {
    shared: Arc<Shared>,
    positive: RefCell<store::Store>,
    negative: RefCell<store::Store>,
    /// This core's counters, per server (listener) of the block; never empty.
    counters: Box<[(String, Arc<CacheCounters>)]>,
    /// The seed of this instance's keys.
    keys: store::KeyState,
}

/// Which of the two caches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Positive,
    Negative,
}

/// What a lookup found.
enum Look {
    Fresh(Which),
    Stale(Which),
    Miss,
}

/// What is left to do for a query the store could not answer at once.
enum Pending<'a> {
    /// A stale entry that `serve_stale verify` asks the rest of the chain about first.
    Verify(Which, &'a ServeStale),
    /// Nothing to answer from: the rest of the chain answers, and the reply is stored.
    Miss,
}

fn wires(names: &[String]) -> Result<Vec<Vec<u8>>, String> {
    names
        .iter()
        .map(|z| name_to_wire(z).map_err(|e| format!("invalid zone {z}: {e}")))
        .collect()
}

impl Plugin for Cache {
    const NAME: &'static str = "cache";
    type Config = Shared;
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Shared, Error> {
        let cfg = setup::parse(d, block)?;
        let err = |m: String| d.plugin_err("cache", m);
        let zones = wires(&cfg.zones).map_err(err)?;
        Ok(Shared {
            routes: block.routes.clone(),
            zones,
            disable_success: wires(&cfg.disable_success).map_err(err)?,
            disable_denial: wires(&cfg.disable_denial).map_err(err)?,
            cfg,
        })
    }
}

impl Serve for Cache {
    fn build(shared: &Arc<Shared>, core: &CoreInfo) -> Option<Self> {
        let c = &shared.cfg;
        let zones = c.zones.join(",");
        let mut servers: Vec<&str> = Vec::new();
        for (server, _) in shared.routes.get().map(Vec::as_slice).unwrap_or(&[]) {
            if !servers.contains(&server.as_str()) {
                servers.push(server);
            }
        }
        if servers.is_empty() {
            servers.push("");
        }
        let counters: Box<[(String, Arc<CacheCounters>)]> = servers
            .iter()
            .map(|s| {
                let ctr: Arc<CacheCounters> =
                    ringdns_plugin::metrics::registry::cell(&[s, &zones, &c.view], core.index);
                // A new instance starts empty, whatever its predecessor held.
                for g in [
                    &ctr.entries_success,
                    &ctr.entries_denial,
                    &ctr.bytes_success,
                    &ctr.bytes_denial,
                ] {
                    g.set(0);
                }
                (s.to_string(), ctr)
            })
            .collect();
        Some(Cache {
            positive: RefCell::new(store::Store::new(c.success.entries, c.max_bytes)),
            negative: RefCell::new(store::Store::new(c.denial.entries, c.max_bytes)),
            shared: shared.clone(),
            counters,
            keys: store::KeyState::default(),
        })
    }

    async fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Outcome {
        if !self.covers(req) {
            return next_or_failure(Self::NAME, next, req).await;
        }
        if req.is_refresh() {
            let key = self.key(req);
            return self.refresh(req, next, key).await;
        }
        let now = req.now();
        let key = self.key(req);
        if let Some(status) = self.fresh_hit(req, key, now) {
            return Ok(status);
        }
        let look = self.look(key, &req.query, now);
        match self.answer_at_once(req, key, look, now) {
            Ok(status) => Ok(status),
            Err(Pending::Verify(which, stale)) => {
                if !req.can_wait() {
                    return req.defer();
                }
                self.ctr(req.server).requests.inc();
                self.verify(req, next, which, key, stale).await
            }
            Err(Pending::Miss) => {
                // Deferred: the query comes through again, and is counted then.
                let status = next_or_failure(Self::NAME, next, req).await?;
                self.ctr(req.server).requests.inc();
                self.ctr(req.server).misses.inc();
                if client_write(status.rcode) && !req.reply.is_empty() {
                    self.store(req, key);
                }
                Ok(status)
            }
        }
    }

    /// Fresh hits (and stale ones served immediately) at once; anything else, through
    /// `serve`.
    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        if !self.covers(req) {
            return next_or_failure_now(Self::NAME, next, req);
        }
        if req.is_refresh() {
            return None;
        }
        let now = req.now();
        let key = self.key(req);
        if let Some(status) = self.fresh_hit(req, key, now) {
            return Some(status);
        }
        let look = self.look(key, &req.query, now);
        self.answer_at_once(req, key, look, now).ok()
    }
}

impl Cache {
    /// The counters of the listener the query came in on: with one listener (the usual
    /// block) nothing is compared.
    #[inline]
    fn ctr(&self, server: &str) -> &CacheCounters {
        let c = &self.counters;
        if c.len() > 1
            && let Some((_, ctr)) = c.iter().find(|(s, _)| s == server)
        {
            return ctr;
        }
        &c[0].1
    }

    fn cache(&self, w: Which) -> &RefCell<store::Store> {
        match w {
            Which::Positive => &self.positive,
            Which::Negative => &self.negative,
        }
    }

    /// Whether the query is in one of the cache's zones.
    fn covers(&self, req: &Request<'_>) -> bool {
        let name = req.query.qname();
        self.shared.zones.iter().any(|z| name.is_subdomain_of(z))
    }

    /// The query's key. The name is lower-cased as it is hashed (and compared with the
    /// stored one, in `Entry::is_for`), never copied: the future of `serve` (which every
    /// query builds on the stack, inside the chain's) keeps no name buffer across its awaits.
    fn key(&self, req: &Request<'_>) -> u64 {
        let q = &req.query;
        store::key(
            &self.keys,
            &q.qname(),
            q.qtype(),
            q.qclass(),
            entry::key_bits(q),
        )
    }

    /// The common hit, answered with one probe of the store: a fresh positive entry and no
    /// negative entry at all to weigh against it (what `look` then `hit` find with two).
    /// `None`, with nothing done, for anything else.
    fn fresh_hit(&self, req: &mut Request<'_>, key: u64, now: Instant) -> Option<Status> {
        if self.negative.borrow().len() != 0 {
            return None;
        }
        let mut c = self.positive.borrow_mut();
        let e = c.get_mut_if(key, |e| {
            e.is_for_query(&req.query) && e.age(now) < e.duration
        })?;
        self.ctr(req.server).requests.inc();
        self.write_answer(req, e, Which::Positive, now, false);
        drop(c);
        req.finalize_reply();
        Some(Status::written())
    }

    /// Answers from the store when that needs no wait: a fresh entry, or a stale one under
    /// `serve_stale immediate`. Otherwise (nothing counted) what is left to do.
    fn answer_at_once(
        &self,
        req: &mut Request<'_>,
        key: u64,
        look: Look,
        now: Instant,
    ) -> Result<Status, Pending<'_>> {
        let (which, stale) = match look {
            Look::Fresh(which) => (which, false),
            Look::Stale(which) => match &self.shared.cfg.serve_stale {
                Some(s) if s.mode == StaleMode::Immediate => (which, true),
                Some(s) => return Err(Pending::Verify(which, s)),
                // Entries outlive their TTL only under serve_stale.
                None => return Err(Pending::Miss),
            },
            Look::Miss => return Err(Pending::Miss),
        };
        self.ctr(req.server).requests.inc();
        Ok(self.hit(req, which, key, now, stale))
    }

    /// Finds the entry to answer from: the negative cache first, then the positive one (a
    /// cached SERVFAIL never hides a positive answer; with `prefer_positive` a positive
    /// answer wins over any denial), fresh before stale.
    fn look(&self, key: u64, q: &Query<'_>, now: Instant) -> Look {
        let stale_for = self
            .shared
            .cfg
            .serve_stale
            .as_ref()
            .map_or(Duration::ZERO, |s| s.max_stale);
        // Peeks only: the entry answered from is marked used once, by `hit`.
        let state = |w: Which| -> Option<(bool, Kind)> {
            let mut c = self.cache(w).borrow_mut();
            if c.len() == 0 {
                return None;
            }
            let e = c.peek(key)?;
            if !e.is_for_query(q) {
                return None;
            }
            let age = e.age(now);
            if age < e.duration {
                return Some((true, e.kind));
            }
            // Stale entries live on only while serve_stale may still serve them; a SERVFAIL
            // is never served stale.
            if e.kind != Kind::ServFail && age < e.duration + stale_for {
                return Some((false, e.kind));
            }
            c.remove(key);
            None
        };
        let pos = state(Which::Positive);
        let neg = state(Which::Negative);
        if self.shared.cfg.prefer_positive
            && let Some((fresh, _)) = pos
        {
            return if fresh {
                Look::Fresh(Which::Positive)
            } else {
                Look::Stale(Which::Positive)
            };
        }
        match (neg, pos) {
            (Some((true, Kind::ServFail)), Some((true, _))) => Look::Fresh(Which::Positive),
            (Some((true, _)), _) => Look::Fresh(Which::Negative),
            (_, Some((true, _))) => Look::Fresh(Which::Positive),
            (_, Some((false, _))) => Look::Stale(Which::Positive),
            (Some((false, _)), _) => Look::Stale(Which::Negative),
            _ => Look::Miss,
        }
    }

    /// Answers from an entry: fresh TTLs count down from when it was stored (or stay with
    /// `keepttl`); stale answers carry the serve_stale response TTL. Starts a prefetch or a
    /// stale refresh when one is due.
    fn hit(
        &self,
        req: &mut Request<'_>,
        which: Which,
        key: u64,
        now: Instant,
        stale: bool,
    ) -> Status {
        let mut c = self.cache(which).borrow_mut();
        let Some(e) = c.get_mut(key) else {
            return Status::rcode(SERVFAIL);
        };
        self.write_answer(req, e, which, now, stale);
        drop(c);
        req.finalize_reply();
        Status::written()
    }

    /// Writes the answer from `e` (see `hit`), not finalized, and does its bookkeeping.
    fn write_answer(
        &self,
        req: &mut Request<'_>,
        e: &mut Entry,
        which: Which,
        now: Instant,
        stale: bool,
    ) {
        let cfg = &self.shared.cfg;
        if let Some(w) = e.wildcard() {
            // Published again on every hit, as CoreDNS's cache does.
            req.set_metadata(ZONE_WILDCARD, w);
        }
        let age = e.age(now).as_secs() as u32;
        if stale {
            let ttl = cfg.serve_stale.as_ref().map_or(0, |s| s.response_ttl);
            entry::write_hit(e, &req.query, req.reply, |_| ttl);
            self.ctr(req.server).served_stale.inc();
            if !e.refreshing && e.retry_after.is_none_or(|t| now >= t) {
                e.refreshing = true;
                req.request_refresh();
            }
        } else {
            let keep = cfg.keepttl;
            entry::write_hit(e, &req.query, req.reply, |t| {
                if keep { t } else { t.saturating_sub(age) }
            });
            if let Some(p) = &cfg.prefetch {
                if now.saturating_duration_since(e.last_hit) >= p.window {
                    e.hits = 0;
                }
                e.hits += 1;
                e.last_hit = now;
                let left = e.duration.saturating_sub(e.age(now));
                let threshold = e.duration.mul_f64(f64::from(p.percentage) / 100.0);
                if e.hits >= p.amount && left <= threshold && !e.refreshing {
                    e.refreshing = true;
                    self.ctr(req.server).prefetches.inc();
                    req.request_refresh();
                }
            }
        }
        let ctr = self.ctr(req.server);
        match which {
            Which::Positive => ctr.hits_success.inc(),
            Which::Negative => ctr.hits_denial.inc(),
        }
    }

    /// serve_stale verify: ask the rest of the chain first (bounded by the verify timeout);
    /// use its answer when it is a good one, else serve the stale entry.
    async fn verify<N: Handler>(
        &self,
        req: &mut Request<'_>,
        next: &N,
        which: Which,
        key: u64,
        stale: &ServeStale,
    ) -> Outcome {
        let now = Instant::now();
        let recheck_wait = self
            .cache(which)
            .borrow()
            .peek(key)
            .is_some_and(|e| e.retry_after.is_some_and(|t| now < t));
        if !recheck_wait {
            // One pinned future of the rest of the chain for both branches: with a future
            // each (and glommio's `timeout`, which keeps its own copy of the one it bounds)
            // this function's state was twice the chain's, and every query's chain future
            // on the stack is as large as its largest state.
            let asked = {
                let mut ask = std::pin::pin!(next_or_failure(Self::NAME, next, req));
                if stale.verify_timeout.is_zero() {
                    Some(ask.as_mut().await)
                } else {
                    futures_lite::future::or(async { Some(ask.as_mut().await) }, async {
                        ringdns_plugin::glommio::timer::sleep(stale.verify_timeout).await;
                        None
                    })
                    .await
                }
            };
            match asked.transpose()? {
                Some(status) if client_write(status.rcode) && good_refresh(req.reply) => {
                    self.store(req, key);
                    return Ok(status);
                }
                Some(_) => {
                    if let Some(e) = self.cache(which).borrow_mut().peek_mut(key) {
                        e.retry_after = Some(Instant::now() + stale.recheck);
                    }
                }
                // Timed out: answer stale now and let a background refresh finish the job.
                None => req.request_refresh(),
            }
        }
        Ok(self.hit(req, which, key, Instant::now(), true))
    }

    /// The server's background refresh: no lookup, ask the rest of the chain, store.
    async fn refresh<N: Handler>(&self, req: &mut Request<'_>, next: &N, key: u64) -> Outcome {
        let outcome = next_or_failure(Self::NAME, next, req).await;
        let stored = outcome
            .as_ref()
            .is_ok_and(|status| client_write(status.rcode))
            && good_refresh(req.reply)
            && self.store(req, key);
        if !stored {
            let recheck = self
                .shared
                .cfg
                .serve_stale
                .as_ref()
                .map_or(Duration::ZERO, |s| s.recheck);
            for w in [Which::Positive, Which::Negative] {
                if let Some(e) = self.cache(w).borrow_mut().peek_mut(key) {
                    e.refreshing = false;
                    e.retry_after = Some(Instant::now() + recheck);
                }
            }
        }
        outcome
    }

    /// Stores the reply in `req.reply` if the rules allow; true when stored.
    fn store(&self, req: &mut Request<'_>, key: u64) -> bool {
        let s = &*self.shared;
        let mut lower = [0u8; MAX_NAME_LEN];
        let lower = req.query.qname().lowercase_wire(&mut lower);
        // The reply's age starts when it came: on a pass that may wait, the rest of the chain
        // may just have waited for it (an upstream), after the request's time was taken.
        let now = if req.can_wait() {
            Instant::now()
        } else {
            req.now()
        };
        // What the rest published for this reply (file's wildcard), kept with it as CoreDNS
        // does: read in place where metadata is collected, copied only into the entry.
        let meta = req.metadata();
        let mut build = |wildcard: &str| {
            entry::build(
                req.reply,
                &req.query,
                lower,
                wildcard,
                &s.cfg,
                &s.disable_success,
                &s.disable_denial,
                now,
            )
        };
        let built = meta.and_then(|m| m.with(ZONE_WILDCARD, &mut build));
        let e = match built.unwrap_or_else(|| build("")) {
            Ok(e) => e,
            Err(Skip::Mismatch) => {
                self.ctr(req.server).drops.inc();
                return false;
            }
            Err(Skip::Rule) => return false,
        };
        let which = match e.kind {
            Kind::Success => Which::Positive,
            Kind::Denial | Kind::ServFail => Which::Negative,
        };
        let stale_for = s
            .cfg
            .serve_stale
            .as_ref()
            .map_or(Duration::ZERO, |x| x.max_stale);
        let dead = |old: &Entry| old.age(now) >= old.duration + stale_for;
        let mut e = e;
        let mut c = self.cache(which).borrow_mut();
        if let Some(old) = c.peek(key) {
            e.hits = old.hits; // a prefetched entry keeps its popularity
        }
        let ev = c.insert(key, e, dead);
        let (n, bytes) = (c.len() as u64, c.bytes() as u64);
        drop(c);
        let ctr = self.ctr(req.server);
        match which {
            Which::Positive => ctr.evictions_success.add(ev.entries),
            Which::Negative => ctr.evictions_denial.add(ev.entries),
        }
        // The cache is the block's, whichever listener asked: each server's series shows it.
        for (_, ctr) in &self.counters {
            let (entries, held) = match which {
                Which::Positive => (&ctr.entries_success, &ctr.bytes_success),
                Which::Negative => (&ctr.entries_denial, &ctr.bytes_denial),
            };
            entries.set(n);
            held.set(bytes);
        }
        true
    }
}

/// A refresh result good enough to replace a stale entry: a NOERROR or NXDOMAIN reply,
/// not truncated.
fn good_refresh(reply: &[u8]) -> bool {
    Header::of(reply).is_some_and(|h| !h.tc() && matches!(h.rcode(), NOERROR | NXDOMAIN))
}

ringdns_plugin::export!(Cache);

#[cfg(test)]
mod tests;
