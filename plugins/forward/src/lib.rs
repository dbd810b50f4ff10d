//! forward: sends queries to upstream resolvers, as CoreDNS's `plugin/forward`, per
//! core: each core has its own UDP sockets and pipelined TCP/TLS connections per upstream;
//! health is shared by all cores through atomics.

#![forbid(unsafe_code)]

mod backoff;
mod config;
mod conn;
mod counters;
mod dial;
mod health;
mod idmap;
mod probe;
mod setup;
mod split;
mod tls;
mod tlsfiles;
mod udpio;
mod udpmux;
mod upstream;

pub use config::{ForwardConfig, HealthCheck, Policy, TlsSettings, Upstream, UpstreamProto};
pub use counters::{PROTOS, RuleCounters, UpstreamCounters};

use health::Health;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::tap::{CoreTap, Forwarded, Tappers};
use ringdns_plugin::wire::rcode::{FORMERR, NOERROR, REFUSED, SERVFAIL};
use ringdns_plugin::wire::{Header, HeaderMut, Name, name_to_wire};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, PluginError, Proto, Request, Serve, Serves,
    Status, next_or_failure,
};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use upstream::{UpstreamCore, Via};

/// CoreDNS's overall limit for one query across all its attempts.
const QUERY_DEADLINE: Duration = Duration::from_secs(5);

/// How often each core closes idle and aged upstream connections.
const JANITOR_EVERY: Duration = Duration::from_secs(1);

/// A forward line as all cores share it: its configuration, upstream health and the
/// in-flight count for `max_concurrent`.
pub struct Rule {
    /// What the Corefile said.
    pub cfg: ForwardConfig,
    from: Vec<u8>,
    except: Vec<Vec<u8>>,
    probe_name: Vec<u8>,
    health: Vec<Health>,
    inflight: AtomicU64,
    tls: Option<Arc<rustls::ClientConfig>>,
}

impl Rule {
    /// Whether upstreams can be marked down: not with `max_fails 0`, nor with
    /// `health_check 0`, since nothing would ever probe them back up.
    fn max_fails(&self) -> u32 {
        if self.cfg.health_check.interval.is_zero() {
            0
        } else {
            self.cfg.max_fails
        }
    }

    fn matches(&self, name: &Name<'_>) -> bool {
        if !name.is_subdomain_of(&self.from) {
            return false;
        }
        // A query for FROM itself is always forwarded, whatever `except` says.
        name.eq_ignore_ascii_case(&self.from)
            || !self.except.iter().any(|e| name.is_subdomain_of(e))
    }
}

/// All forward lines of a block, in order.
pub struct Config {
    rules: Vec<Arc<Rule>>,
    /// The block's dnstap, if it has one (CoreDNS's `tapPlugins`), found at build time.
    tappers: Arc<Tappers>,
}

struct RuleCore {
    shared: Arc<Rule>,
    ups: Vec<UpstreamCore>,
    rr: Cell<usize>,
    counters: Arc<RuleCounters>,
}

struct Inner {
    rules: Vec<RuleCore>,
    rng: RefCell<fastrand::Rng>,
    /// The janitor was started ([`Serve::start`] runs once per chain; this keeps a second
    /// call from starting a second janitor).
    janitor: Cell<bool>,
    /// Rounds the janitor has made, for tests that it runs.
    sweeps: Cell<u64>,
    /// The core's dnstap taps, when the block has dnstap: every exchange is tapped there.
    taps: Option<Rc<dyn CoreTap>>,
}

/// The per-core instance.
pub struct Forward {
    inner: Rc<Inner>,
}

/// How one forward line ended.
enum Done {
    /// A reply is in `req.reply`, with this rcode; `nodata` = NOERROR without answers.
    Written(u8, bool),
    /// Nothing written.
    Failed(Status),
}

fn build_rule(cfg: ForwardConfig) -> Result<Rule, String> {
    let from = name_to_wire(&cfg.from).map_err(|e| format!("invalid zone {}: {e}", cfg.from))?;
    let except = cfg
        .except
        .iter()
        .map(|e| name_to_wire(e).map_err(|err| format!("invalid except {e}: {err}")))
        .collect::<Result<_, _>>()?;
    let probe_name = name_to_wire(&cfg.health_check.domain).map_err(|e| {
        format!(
            "invalid health_check domain {}: {e}",
            cfg.health_check.domain
        )
    })?;
    let tls = if cfg.upstreams.iter().any(|u| u.proto == UpstreamProto::Tls) {
        Some(tls::client_config(&cfg.tls)?)
    } else {
        None
    };
    Ok(Rule {
        health: cfg.upstreams.iter().map(|_| Health::default()).collect(),
        from,
        except,
        probe_name,
        inflight: AtomicU64::new(0),
        tls,
        cfg,
    })
}

impl Plugin for Forward {
    const NAME: &'static str = "forward";
    type Config = Config;
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Config, Error> {
        let cfgs = setup::parse(d, block)?;
        let rules = cfgs
            .into_iter()
            .map(|c| {
                build_rule(c)
                    .map(Arc::new)
                    .map_err(|m| d.plugin_err("forward", m))
            })
            .collect::<Result<_, _>>()?;
        // CoreDNS lets CH-class queries through on listeners whose blocks forward.
        block.allow_chaos = true;
        Ok(Config {
            rules,
            tappers: block.block_shared::<Tappers>(),
        })
    }
}

impl Serve for Forward {
    fn build(config: &Arc<Config>, core: &CoreInfo) -> Option<Self> {
        // One receive buffer for all of this core's upstream sockets.
        let rx = Rc::new(RefCell::new(udpio::Receiver::default()));
        let rules = config
            .rules
            .iter()
            .map(|r| RuleCore {
                shared: r.clone(),
                ups: r
                    .cfg
                    .upstreams
                    .iter()
                    .cloned()
                    .map(|u| {
                        let mut up = UpstreamCore::new(u, r.cfg.source_address, rx.clone());
                        // The registry's: a rebuilt instance counts on.
                        up.counters =
                            ringdns_plugin::metrics::registry::cell(&[&up.up.label], core.index);
                        up
                    })
                    .collect(),
                rr: Cell::new(core.index),
                counters: ringdns_plugin::metrics::registry::cell(&[&r.cfg.from], core.index),
            })
            .collect();
        Some(Forward {
            inner: Rc::new(Inner {
                rules,
                rng: RefCell::new(fastrand::Rng::new()),
                janitor: Cell::new(false),
                sweeps: Cell::new(0),
                taps: config.tappers.get("dnstap").and_then(|t| t.core(core)),
            }),
        })
    }

    async fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Outcome {
        let inner = &self.inner;
        let mut i = 0;
        while i < inner.rules.len() {
            let rule = &inner.rules[i];
            if !rule.shared.matches(&req.query.qname()) {
                i += 1;
                continue;
            }
            if !req.can_wait() {
                return req.defer();
            }
            match forward_one(inner, i, req).await {
                Done::Written(rcode, nodata) => {
                    let cfg = &rule.shared.cfg;
                    let hand_on = i + 1 < inner.rules.len()
                        && (cfg.next.contains(&rcode) || (cfg.next_on_nodata && nodata));
                    if !hand_on {
                        // Written, whatever the upstream's rcode: the server sends it as is.
                        return Ok(Status::written());
                    }
                    req.clear_reply();
                    i += 1;
                }
                Done::Failed(status) => return Ok(status),
            }
        }
        next_or_failure(Self::NAME, next, req).await
    }

    /// Starts this core's connection janitor, which closes idle and aged upstream
    /// connections every [`JANITOR_EVERY`]. It holds the instance weakly and ends once a
    /// reload dropped it; the new instance starts its own.
    fn start(&self) {
        if self.inner.janitor.replace(true) {
            return;
        }
        let weak = Rc::downgrade(&self.inner);
        ringdns_plugin::glommio::spawn_local(async move {
            loop {
                ringdns_plugin::glommio::timer::sleep(JANITOR_EVERY).await;
                let Some(inner) = weak.upgrade() else { break };
                for r in &inner.rules {
                    for u in &r.ups {
                        u.prune(&r.shared.cfg);
                    }
                }
                inner.sweeps.set(inner.sweeps.get() + 1);
            }
        })
        .detach();
    }
}

/// Decrements the shared in-flight count when a forwarded query ends, however it ends.
struct Inflight<'a>(&'a AtomicU64);

impl Drop for Inflight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The upstream order for one query, per the policy (at most 15 upstreams).
fn order(rule: &RuleCore, rng: &mut fastrand::Rng) -> ([usize; 15], usize) {
    let n = rule.ups.len().min(15);
    let mut o = [0usize; 15];
    for (k, slot) in o.iter_mut().enumerate().take(n) {
        *slot = k;
    }
    match rule.shared.cfg.policy {
        Policy::Sequential => {}
        Policy::RoundRobin => {
            let start = rule.rr.get();
            rule.rr.set(start.wrapping_add(1));
            for (k, slot) in o.iter_mut().enumerate().take(n) {
                *slot = (start + k) % n;
            }
        }
        Policy::Random => rng.shuffle(&mut o[..n]),
    }
    (o, n)
}

/// Runs forward line `ri` for the query: picks upstreams, retries, fails over.
async fn forward_one(inner: &Rc<Inner>, ri: usize, req: &mut Request<'_>) -> Done {
    let rule = &inner.rules[ri];
    let shared = &*rule.shared;
    let cfg = &shared.cfg;
    rule.counters.requests.inc();
    let _inflight = if cfg.max_concurrent > 0 {
        let n = shared.inflight.fetch_add(1, Ordering::Relaxed);
        let guard = Inflight(&shared.inflight);
        if n >= cfg.max_concurrent {
            rule.counters.max_concurrent_rejects.inc();
            return Done::Failed(Status::error(
                REFUSED,
                PluginError::new(
                    "forward",
                    format!("concurrent queries exceeded maximum {}", cfg.max_concurrent),
                ),
            ));
        }
        Some(guard)
    } else {
        None
    };

    let mut rng = fastrand::Rng::with_seed(inner.rng.borrow_mut().u64(..));
    let (order, n) = order(rule, &mut rng);
    let client_id = req.query.id();
    let question = req.query.question_bytes();
    // Sent as it came; each exchange writes its own ID into the copy it sends.
    let query = req.query.packet();
    // Plain upstreams follow the client (or force_tcp / prefer_udp); tls:// ones use TLS.
    let plain = if cfg.force_tcp {
        Via::Tcp
    } else if cfg.prefer_udp || req.proto == Proto::Udp {
        Via::Udp
    } else {
        Via::Tcp
    };
    // Clock reads cost: the start is when the query came in (its batch's time) and a UDP
    // attempt ends when its reply came in (its receive batch's time); only what the
    // server or the mux could not tell is read here.
    let mut now = req.received();
    let deadline = now + QUERY_DEADLINE;
    let (mut attempts, mut k) = (0u32, 0usize);
    // Upstreams passed over in this round: down ones, and ones that failed over.
    let (mut down, mut failed_over) = (0usize, 0usize);
    let mut last_err: Option<String> = None;
    let mut failover: Option<(Vec<u8>, u8)> = None;
    let max_fails = shared.max_fails();
    loop {
        if now >= deadline || (cfg.max_connect_attempts > 0 && attempts >= cfg.max_connect_attempts)
        {
            break;
        }
        if k >= n {
            // Round over: start again from the first in this query's order.
            k = 0;
            down = 0;
            if failover.is_some() {
                break;
            }
        }
        let mut u = order[k];
        k += 1;
        if shared.health[u].down(max_fails) {
            down += 1;
            if down < n {
                continue;
            }
            // Every upstream is down: the health checks may be what is broken.
            rule.counters.healthcheck_broken.inc();
            if cfg.failfast_all_unhealthy {
                break;
            }
            u = rng.usize(..n);
        }
        attempts += 1;
        let up = &rule.ups[u];
        // CoreDNS's `forward/upstream`, set per attempt (the last one tried wins).
        req.set_metadata("forward/upstream", &up.up.label);
        let mut via = match up.up.proto {
            UpstreamProto::Tls => Via::Tls,
            UpstreamProto::Dns => plain,
        };
        let t0 = now;
        let mut ask = upstream::Ask {
            query,
            question,
            deadline: (t0 + cfg.read_timeout).min(deadline),
            answered: None,
        };
        let result = loop {
            // The stream exchanges (dialling, TLS handshakes) are boxed: inline, their state
            // would make every query's chain future four times larger (13 KB), and that is
            // built and copied for every query, cache hits included.
            let r = match via {
                Via::Udp => up.udp_exchange(&mut ask, &mut rng, req.reply).await,
                Via::Tcp => {
                    Box::pin(up.stream_exchange(cfg, None, &mut ask, &mut rng, req.reply)).await
                }
                Via::Tls => {
                    Box::pin(up.stream_exchange(
                        cfg,
                        shared.tls.as_ref(),
                        &mut ask,
                        &mut rng,
                        req.reply,
                    ))
                    .await
                }
            };
            match r {
                Ok(()) if via == Via::Udp && cfg.prefer_udp && Header::new(req.reply).tc() => {
                    // The attempt now ends with the TCP exchange, not this reply.
                    ask.answered = None;
                    via = Via::Tcp
                }
                other => break other,
            }
        };
        now = ask.answered.take().unwrap_or_else(Instant::now);
        if let Some(taps) = &inner.taps {
            // FORWARDER_QUERY, and FORWARDER_RESPONSE when a reply came (CoreDNS's toDnstap).
            let replied = matches!(result, Ok(()) | Err(upstream::ExchangeError::Rejected(_)));
            taps.forwarded(
                req,
                &Forwarded {
                    upstream: up.up.addr,
                    tcp: via != Via::Udp,
                    query,
                    reply: replied.then_some(&req.reply[..]),
                    sent: t0,
                    answered: now,
                },
            );
        }
        match result {
            Ok(()) => {
                shared.health[u].success();
                let rcode = full_rcode(req.reply);
                up.counters.rcodes[usize::from(rcode).min(23)].inc();
                up.counters.duration[usize::from(rcode).min(23)]
                    .observe(now.saturating_duration_since(t0));
                if cfg.failover.contains(&rcode) && failed_over + 1 < n {
                    failed_over += 1;
                    failover = Some((std::mem::take(req.reply), rcode));
                    continue;
                }
                return written(req, client_id, rcode);
            }
            Err(upstream::ExchangeError::Rejected(rcode)) => {
                // As CoreDNS: a reply with our ID that does not repeat the question fails
                // `request.Match`, and the client is answered FORMERR at once (for an
                // upstream's FORMERR, its rcode passed on); no other upstream is asked and
                // the upstream, which did answer, is not suspected.
                shared.health[u].success();
                up.counters.rcodes[usize::from(rcode).min(23)].inc();
                up.counters.duration[usize::from(rcode).min(23)]
                    .observe(now.saturating_duration_since(t0));
                req.clear_reply();
                return Done::Failed(Status::rcode(FORMERR));
            }
            Err(e) => {
                up.counters.errors.inc();
                if e.is_upstream_fault() {
                    // As CoreDNS: a failed exchange starts probing; the probes decide.
                    probe::start(inner, ri, u);
                }
                // A failure can come back without any wait (a refused send, no file
                // descriptor): give the core back before the next attempt, so a query with no
                // attempt cap cannot spin until its deadline.
                futures_lite::future::yield_now().await;
                now = Instant::now();
                last_err = Some(format!("{} {}: {e}", proto_name(via), up.up.addr));
            }
        }
    }
    if let Some((reply, rcode)) = failover {
        *req.reply = reply;
        return written(req, client_id, rcode);
    }
    req.clear_reply();
    let msg = last_err.unwrap_or_else(|| "no healthy proxies".to_string());
    Done::Failed(Status::error(SERVFAIL, PluginError::new("forward", msg)))
}

/// The reply's rcode with the OPT's extended bits (BADVERS, BADCOOKIE, …), so `next` and
/// `failover` can name them; replies without an OPT cost no walk. A `u8`, as the rules and
/// counters index it: an extended rcode past 255 keeps its low 8 bits.
fn full_rcode(reply: &[u8]) -> u8 {
    ringdns_plugin::wire::reply::full_rcode(reply).map_or(0, |r| r as u8)
}

fn proto_name(v: Via) -> &'static str {
    PROTOS[v.index()]
}

/// Hands the upstream's reply to the client: its own ID back, the server's last touches.
fn written(req: &mut Request<'_>, client_id: u16, rcode: u8) -> Done {
    HeaderMut::new(req.reply).set_id(client_id);
    let nodata = rcode == NOERROR && Header::new(req.reply).ancount() == 0;
    req.finalize_reply();
    Done::Written(rcode, nodata)
}

ringdns_plugin::export!(Forward);

#[cfg(test)]
mod tests {
    use super::*;
    use ringdns_plugin::{End, Link};

    /// Builds this core's instance of `forward . 127.0.0.1:9`, as the chain would.
    fn instance() -> Forward {
        let (_, config) =
            ringdns_testkit::config::<Forward>(". {\n forward . 127.0.0.1:9\n}\n").unwrap();
        let core = CoreInfo {
            index: 0,
            cpu: 0,
            cores: 1,
        };
        Forward::build(&Arc::new(config), &core).unwrap()
    }

    /// Waits (on the executor) until `f`'s janitor made a round, for at most 3 s.
    async fn swept(f: &Forward) -> bool {
        let t0 = Instant::now();
        while f.inner.sweeps.get() == 0 && t0.elapsed() < Duration::from_secs(3) {
            ringdns_plugin::glommio::timer::sleep(Duration::from_millis(20)).await;
        }
        f.inner.sweeps.get() > 0
    }

    #[test]
    fn the_janitor_runs_from_the_start_hook_on_a_core_that_forwarded_nothing() {
        ringdns_plugin::glommio::LocalExecutor::default().run(async {
            // The start hook reaches the instance through its chain link.
            let chain = Link {
                plugin: Some(instance()),
                rest: End,
            };
            chain.start();
            let f = chain.plugin.as_ref().unwrap();
            assert!(swept(f).await, "no janitor round within 3 s");
            assert_eq!(
                f.inner.rules[0].counters.requests.get(),
                0,
                "nothing forwarded"
            );
            // A reload's new instance starts its own janitor; the old one's ends with it.
            let weak = Rc::downgrade(&f.inner);
            drop(chain);
            assert!(
                weak.upgrade().is_none(),
                "the janitor holds the instance weakly"
            );
            let next = instance();
            next.start();
            next.start();
            assert!(swept(&next).await, "the new instance's janitor did not run");
        });
    }
}
