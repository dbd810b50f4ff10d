//! coredns/rrl's metrics, `coredns_rrl_responses_exceeded_total{client_ip}` and
//! `coredns_rrl_requests_exceeded_total{client_ip}`, counted per core without a lock.
//!
//! The label is the client's address, which the traffic decides, so the counters are a
//! fixed table of slots claimed by address (open addressing) rather than cells made at
//! build time. The owning core claims a slot by writing the address and then marking it
//! used (release); a scrape reads only slots marked used (acquire), whose address never
//! changes afterwards. Counting allocates nothing. Once a core has seen
//! [`SLOTS`] distinct addresses exceed, further ones are counted under
//! `client_ip="other"` (coredns/rrl's vector grows without bound instead).

use ringdns_plugin::metrics::{Counter, Desc, Export, Kind, Sink};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

/// Distinct client addresses per core and family that get a series of their own.
pub const SLOTS: usize = 1024;

/// Slots probed for an address before it counts as "other".
const PROBES: usize = 32;

static RESPONSES: Desc = Desc {
    name: "coredns_rrl_responses_exceeded_total",
    help: "Counter of responses exceeding QPS limit.",
    kind: Kind::Counter,
    labels: &["client_ip"],
};

static REQUESTS: Desc = Desc {
    name: "coredns_rrl_requests_exceeded_total",
    help: "Counter of requests exceeding QPS limit.",
    kind: Kind::Counter,
    labels: &["client_ip"],
};

/// A slot is empty, holds an IPv4 or an IPv6 address.
const EMPTY: u8 = 0;
const V4: u8 = 1;
const V6: u8 = 2;

/// One client address and its count.
#[derive(Default)]
struct Slot {
    state: AtomicU8,
    hi: AtomicU64,
    lo: AtomicU64,
    count: Counter,
}

/// Counts by client address, for one family of one core.
struct ByClient {
    slots: Box<[Slot]>,
    other: Counter,
}

impl Default for ByClient {
    fn default() -> Self {
        ByClient {
            slots: (0..SLOTS).map(|_| Slot::default()).collect(),
            other: Counter::new(),
        }
    }
}

/// The address as (state, high, low) words.
fn words(ip: IpAddr) -> (u8, u64, u64) {
    match ip.to_canonical() {
        IpAddr::V4(a) => (V4, 0, u64::from(u32::from(a))),
        IpAddr::V6(a) => {
            let b = u128::from(a);
            (V6, (b >> 64) as u64, b as u64)
        }
    }
}

impl ByClient {
    /// Counts one for `ip`. Only the owning core may call this.
    fn inc(&self, ip: IpAddr) {
        let (state, hi, lo) = words(ip);
        let start = (lo ^ hi.rotate_left(32)).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 54;
        for i in 0..PROBES {
            let s = &self.slots[(start as usize + i) % SLOTS];
            match s.state.load(Ordering::Relaxed) {
                EMPTY => {
                    s.hi.store(hi, Ordering::Relaxed);
                    s.lo.store(lo, Ordering::Relaxed);
                    s.state.store(state, Ordering::Release);
                    s.count.inc();
                    return;
                }
                st if st == state
                    && s.hi.load(Ordering::Relaxed) == hi
                    && s.lo.load(Ordering::Relaxed) == lo =>
                {
                    s.count.inc();
                    return;
                }
                _ => {}
            }
        }
        self.other.inc();
    }

    /// Adds every used slot to the scrape.
    fn export(&self, desc: &'static Desc, out: &mut Sink) {
        for s in self.slots.iter() {
            let ip: IpAddr = match s.state.load(Ordering::Acquire) {
                V4 => IpAddr::from((s.lo.load(Ordering::Relaxed) as u32).to_be_bytes()),
                V6 => {
                    let b = (u128::from(s.hi.load(Ordering::Relaxed)) << 64)
                        | u128::from(s.lo.load(Ordering::Relaxed));
                    IpAddr::from(b.to_be_bytes())
                }
                _ => continue,
            };
            out.counter(desc, &[&ip.to_string()], s.count.get());
        }
        out.counter_nonzero(desc, &["other"], self.other.get());
    }
}

/// One core's rrl counters; kept in the metrics registry (one per core, shared by the
/// blocks using rrl, like coredns/rrl's process-wide vectors) so a reload counts on.
#[derive(Default)]
pub struct RrlCounters {
    responses: ByClient,
    requests: ByClient,
}

impl RrlCounters {
    /// A response over its category's limit (dropped, slipped or, report-only, sent).
    pub fn response_exceeded(&self, client: IpAddr) {
        self.responses.inc(client);
    }

    /// A request over `requests-per-second`.
    pub fn request_exceeded(&self, client: IpAddr) {
        self.requests.inc(client);
    }
}

impl Export for RrlCounters {
    fn export(&self, _labels: &[String], _core: usize, out: &mut Sink) {
        self.responses.export(&RESPONSES, out);
        self.requests.export(&REQUESTS, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringdns_plugin::metrics::Sample;

    #[test]
    fn counts_by_client_address_and_overflows_into_other() {
        let c = RrlCounters::default();
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "2001:db8::1".parse().unwrap();
        c.response_exceeded(a);
        c.response_exceeded(a);
        c.response_exceeded(b);
        c.request_exceeded("::ffff:192.0.2.1".parse().unwrap());
        for i in 0..(SLOTS as u32 + 100) {
            c.response_exceeded(IpAddr::from((0x0a00_0000 + i).to_be_bytes()));
        }
        let mut s = Sink::default();
        c.export(&[], 0, &mut s);
        let get = |n, l| s.get(n, &[l]).cloned();
        let resp = "coredns_rrl_responses_exceeded_total";
        assert_eq!(get(resp, "192.0.2.1"), Some(Sample::Int(2)));
        assert_eq!(get(resp, "2001:db8::1"), Some(Sample::Int(1)));
        assert_eq!(
            get("coredns_rrl_requests_exceeded_total", "192.0.2.1"),
            Some(Sample::Int(1))
        );
        let other = match get(resp, "other") {
            Some(Sample::Int(n)) => n,
            o => panic!("{o:?}"),
        };
        assert!(other >= 100, "{other}");
    }
}
