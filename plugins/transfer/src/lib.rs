//! transfer: zone transfers out of the block's zones (file, auto, secondary), as CoreDNS's
//! transfer plugin: AXFR (RFC 5936) and IXFR (RFC 1995: the steps since the client's serial
//! where the zone's history has them, else the whole zone) over TCP to the addresses of
//! `to`, and NOTIFY (RFC 1996) to them when a zone changes and for every zone when the
//! configuration starts (at start-up and after each reload).
//!
//! A transfer is the one reply of many messages: the query defers, and its task writes
//! every message but the last through the connection ([`ringdns_plugin::Request::stream`]);
//! the last is the query's reply, so log and metrics see the transfer as one.

#![forbid(unsafe_code)]

mod notify;
mod out;
mod setup;

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::wire::rcode::{FORMERR, REFUSED, SERVFAIL};
use ringdns_plugin::wire::{opcode, rtype};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, Proto, Request, Serve, ServeFuture, Serves,
    Status, next_or_failure, next_or_failure_now,
};
use ringdns_zone::Zone;
use ringdns_zone::registry::Registry;
use setup::To;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// One `transfer` line: its zones and who may transfer them.
pub struct Xfr {
    /// Lower-case wire origins.
    zones: Vec<Box<[u8]>>,
    to: Vec<To>,
    /// Where NOTIFY is sent from.
    source: Option<IpAddr>,
}

impl Xfr {
    /// Whether the line names an address to notify (`to *` alone names none).
    fn notifies(&self) -> bool {
        self.to.iter().any(|t| matches!(t, To::Addr(_)))
    }

    /// The NOTIFY of zone `origin` (lower-case wire form) to this line's addresses.
    fn notice(&self, origin: &[u8]) -> notify::Notice {
        notify::Notice {
            origin: origin.to_vec(),
            name: ringdns_plugin::wire::Name::from_wire(origin)
                .map(|n| n.to_string())
                .unwrap_or_default(),
            to: self.to.clone(),
            source: self.source,
        }
    }

    /// Whether `client` may transfer (CoreDNS compares the address, not the port).
    fn allows(&self, client: SocketAddr) -> bool {
        self.to.iter().any(|t| match t {
            To::Anyone => true,
            To::Addr(a) => a.ip() == client.ip(),
        })
    }
}

/// The block's transfer lines and the zones they may hand out.
pub struct Config {
    xfrs: Arc<Vec<Xfr>>,
    registry: Arc<Registry>,
    /// How many cores serve this configuration, and how many have started it: the NOTIFY
    /// of start waits for all, so that a secondary's SOA query meets the new zones.
    cores: AtomicUsize,
    starts: AtomicUsize,
}

impl Config {
    /// Whether every core has made this configuration its current one.
    fn all_started(&self) -> bool {
        self.starts.load(Ordering::Acquire) >= self.cores.load(Ordering::Relaxed)
    }

    /// The NOTIFY of every zone of the block that is loaded and that a line with an
    /// address covers, once each.
    fn notices(&self) -> Vec<notify::Notice> {
        let mut seen: Vec<Box<[u8]>> = Vec::new();
        let mut out = Vec::new();
        for entry in self.registry.all() {
            if seen.contains(&entry.origin) || entry.data.load().is_none() {
                continue;
            }
            seen.push(entry.origin.clone());
            if let Some(x) = longest_match(&self.xfrs, &entry.origin)
                && x.notifies()
            {
                out.push(x.notice(&entry.origin));
            }
        }
        out
    }
}

/// How long the NOTIFY of start waits for the other cores to take up the configuration (a
/// core that never does is not waited for past it), as loop's probe does.
const START_WAIT: Duration = Duration::from_secs(1);

/// The per-core instance.
pub struct Transfer {
    config: Arc<Config>,
}

/// What a transfer query gets, decided before any I/O.
enum Decision {
    /// Not a transfer of ours: the next plugin's.
    Next,
    /// Answered (or an rcode for the server to write).
    Done(Status),
    /// The zone as messages: whole, or for an IXFR (the client's serial) the steps since.
    Full(Arc<Option<Zone>>, Option<u32>),
}

impl Plugin for Transfer {
    const NAME: &'static str = "transfer";
    type Config = Config;
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Config, Error> {
        let xfrs = Arc::new(setup::parse(d, block)?);
        let registry = block.block_shared::<Registry>();
        let hook_xfrs = Arc::clone(&xfrs);
        registry.on_change(Arc::new(move |origin: &[u8]| {
            if let Some(x) = longest_match(&hook_xfrs, origin)
                && x.notifies()
            {
                let notice = x.notice(origin);
                notify::spawn(move || vec![notice]);
            }
        }));
        Ok(Config {
            xfrs,
            registry,
            cores: AtomicUsize::new(1),
            starts: AtomicUsize::new(0),
        })
    }
}

/// The transfer line whose zone holds `lower` most specifically (CoreDNS's `longestMatch`).
fn longest_match<'x>(xfrs: &'x [Xfr], lower: &[u8]) -> Option<&'x Xfr> {
    xfrs.iter()
        .filter_map(|x| {
            x.zones
                .iter()
                .filter(|z| ringdns_zone::canonical::is_at_or_below(lower, z))
                .map(|z| z.len())
                .max()
                .map(|l| (l, x))
        })
        .max_by_key(|(l, _)| *l)
        .map(|(_, x)| x)
}

impl Transfer {
    fn decide(&self, req: &mut Request<'_>) -> Decision {
        let q = req.query;
        let qtype = q.qtype();
        if !matches!(qtype, rtype::AXFR | rtype::IXFR) || q.opcode() != opcode::QUERY {
            return Decision::Next;
        }
        let mut buf = [0u8; 255];
        let lower = ringdns_zone::canonical::lower_into(q.qname_bytes(), &mut buf);
        let Some(x) = longest_match(&self.config.xfrs, lower) else {
            return Decision::Next;
        };
        if req.proto == Proto::Udp && qtype == rtype::AXFR {
            // AXFR is defined over TCP only (RFC 5936 §4.2).
            return Decision::Done(Status::rcode(REFUSED));
        }
        if !x.allows(req.client) {
            return Decision::Done(Status::rcode(REFUSED));
        }
        // Only an apex is transferred; another name is the zone plugins' (which refuse it).
        let Some(entry) = self.config.registry.get(lower) else {
            return Decision::Next;
        };
        let client_serial = if qtype == rtype::IXFR {
            match out::ixfr_serial(q.packet()) {
                Some(s) => Some(s),
                None => return Decision::Done(Status::rcode(FORMERR)),
            }
        } else {
            None
        };
        let data = entry.data.load_full();
        let Some(zone) = data.as_ref() else {
            return Decision::Done(Status::rcode(SERVFAIL));
        };
        let up_to_date =
            client_serial.is_some_and(|c| !ringdns_zone::serial::newer(c, zone.serial()));
        if up_to_date || req.proto == Proto::Udp {
            // RFC 1995 §2, §4: one SOA tells an up-to-date client so, and a client over UDP
            // to come back over TCP.
            out::soa_only(req, zone);
            if up_to_date {
                ringdns_plugin::info!(
                    "plugin/transfer: Outgoing noop, incremental transfer for up to date zone \"{}\" to {} for {} SOA serial",
                    entry.name,
                    req.client.ip(),
                    zone.serial()
                );
            }
            return Decision::Done(Status::written());
        }
        Decision::Full(data, client_serial)
    }
}

impl Serve for Transfer {
    fn build(config: &Arc<Config>, core: &CoreInfo) -> Option<Self> {
        config.cores.store(core.cores, Ordering::Relaxed);
        Some(Transfer {
            config: Arc::clone(config),
        })
    }

    /// The first core to start this configuration (at start-up, after a reload) has every
    /// zone of the block notified, once all cores serve it: CoreDNS's file sends NOTIFY
    /// for its zones in `OnStartup`, which runs again with every configuration.
    fn start(&self) {
        if self.config.starts.fetch_add(1, Ordering::AcqRel) != 0 {
            return;
        }
        if !self.config.xfrs.iter().any(Xfr::notifies) {
            return;
        }
        let config = Arc::downgrade(&self.config);
        notify::spawn(move || {
            let until = Instant::now() + START_WAIT;
            loop {
                match config.upgrade() {
                    None => return Vec::new(),
                    Some(c) if c.all_started() || Instant::now() >= until => {
                        return c.notices();
                    }
                    Some(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
    }

    // Not an `async fn`, and the transfer boxed: only transfers pay for the walk's state,
    // not every query's future (see `ServeFuture`).
    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        match self.decide(req) {
            Decision::Next => ServeFuture::Next {
                fut: next_or_failure(Self::NAME, next, req),
            },
            Decision::Done(s) => ServeFuture::ready(Ok(s)),
            Decision::Full(..) if !req.can_wait() => ServeFuture::ready(req.defer()),
            Decision::Full(data, serial) => ServeFuture::Own {
                fut: Box::pin(out::full(req, data, serial)),
            },
        }
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        let q = req.query;
        if !matches!(q.qtype(), rtype::AXFR | rtype::IXFR) {
            return next_or_failure_now(Self::NAME, next, req);
        }
        None
    }
}

ringdns_plugin::export!(Transfer);
