//! erratic: a deliberately misbehaving answerer (drops, delays, truncates, large answers),
//! so tests and benchmarks have real bad upstreams, and a plugin whose readiness flips (ready
//! only while it has seen 3 or 4 queries) so tests can watch `/ready`. As CoreDNS's erratic.

#![forbid(unsafe_code)]

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::wire::class::IN as CLASS_IN;
use ringdns_plugin::wire::rcode::{NOERROR, SERVFAIL};
use ringdns_plugin::wire::rtype::{A, AAAA, AXFR, NS, SOA};
use ringdns_plugin::wire::{MessageWriter, Owner, Section};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, Readiness, Request, Serve, Serves, Status,
    duration,
};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// The answer address for A queries (TEST-NET-1), as CoreDNS.
const ADDR_A: [u8; 4] = [192, 0, 2, 53];
/// The answer address for AAAA queries (documentation prefix), as CoreDNS.
const ADDR_AAAA: [u8; 16] = [
    0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x53,
];
/// How many A records `large` answers with (CoreDNS: 30, over 512 bytes).
const LARGE_COUNT: usize = 30;

/// What the Corefile asked for: every Nth query is dropped, delayed or truncated; and the
/// block's query counter.
#[derive(Debug)]
pub struct Config {
    drop: u64,
    delay: u64,
    delay_for: Duration,
    truncate: u64,
    large: bool,
    /// Queries received by the block on every core, as CoreDNS's one atomic per instance:
    /// "every Nth" and readiness count the block's queries, not one core's. A relaxed
    /// shared counter costs a contended cache line per query, acceptable in a test plugin.
    queries: AtomicU64,
}

/// Per-core instance; the counter lives in the shared configuration.
pub struct Erratic {
    config: Arc<Config>,
}

/// CoreDNS's `Ready`: true only while the number of queries received is in [3, 5), so tests
/// see `/ready` flip to ready and back.
impl Readiness for Config {
    fn name(&self) -> &'static str {
        Erratic::NAME
    }

    fn ready(&self) -> bool {
        (3..5).contains(&self.queries.load(Ordering::Relaxed))
    }
}

fn amount(d: &Dispenser<'_>, s: &str) -> Result<u64, Error> {
    let v: i64 = s.parse().map_err(|_| {
        d.err(&format!(
            "strconv.ParseInt: parsing \"{s}\": invalid syntax"
        ))
    })?;
    if v < 0 || v > i64::from(i32::MAX) {
        return Err(d.err(&format!("illegal amount value given \"{s}\"")));
    }
    Ok(v as u64)
}

impl Plugin for Erratic {
    const NAME: &'static str = "erratic";
    type Config = Config;
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, _block: &mut BlockSetup) -> Result<Config, Error> {
        let mut c = Config {
            drop: 2,
            delay: 0,
            delay_for: Duration::from_millis(100),
            truncate: 0,
            large: false,
            queries: AtomicU64::new(0),
        };
        let mut drop_seen = false;
        while d.next() {
            if d.next_arg() {
                return Err(d.arg_err());
            }
            while d.next_block() {
                let key = d.val().to_string();
                let args = d.remaining_args();
                match key.as_str() {
                    "drop" | "truncate" => {
                        if args.len() > 1 {
                            return Err(d.arg_err());
                        }
                        let n = match args.first() {
                            Some(a) => amount(d, a)?,
                            None => 2,
                        };
                        if key == "drop" {
                            c.drop = n;
                            drop_seen = true;
                        } else {
                            c.truncate = n;
                        }
                    }
                    "delay" => {
                        if args.len() > 2 {
                            return Err(d.arg_err());
                        }
                        c.delay = match args.first() {
                            Some(a) => amount(d, a)?,
                            None => 2,
                        };
                        if let Some(t) = args.get(1) {
                            c.delay_for = duration::parse(t).map_err(|e| d.err(&e))?;
                        }
                    }
                    "large" => {
                        if !args.is_empty() {
                            return Err(d.arg_err());
                        }
                        c.large = true;
                    }
                    other => return Err(d.err(&format!("unknown property '{other}'"))),
                }
            }
        }
        if (c.delay > 0 || c.truncate > 0) && !drop_seen {
            c.drop = 0;
        }
        Ok(c)
    }

    fn readiness(config: &Arc<Config>) -> Option<Weak<dyn Readiness>> {
        Some(Arc::downgrade(config) as Weak<dyn Readiness>)
    }
}

impl Serve for Erratic {
    fn build(config: &Arc<Config>, _core: &CoreInfo) -> Option<Self> {
        Some(Erratic {
            config: config.clone(),
        })
    }

    async fn serve<N: Handler>(&self, req: &mut Request<'_>, _next: &N) -> Outcome {
        let c = &*self.config;
        // A block that delays serves all its queries where they may wait, so that a query's
        // number is taken once, on the pass that answers it: on the inline pass nothing is
        // decided yet, and nothing has to be carried over to the next.
        if c.delay > 0 && !req.can_wait() {
            return req.defer();
        }
        let nr = c.queries.fetch_add(1, Ordering::Relaxed);
        let every = |n: u64| n > 0 && nr.is_multiple_of(n);
        if every(c.drop) {
            // "Written" with nothing written: the server sends nothing (CoreDNS's rule).
            return Ok(Status::rcode(NOERROR));
        }
        if every(c.delay) {
            ringdns_plugin::glommio::timer::sleep(c.delay_for).await;
        }
        let qtype = req.query.qtype();
        if qtype == AXFR {
            return Ok(axfr(req, every(c.truncate)));
        }
        if qtype != A && qtype != AAAA {
            // CoreDNS answers other types with SERVFAIL.
            return Ok(Status::rcode(SERVFAIL));
        }
        let mut w = MessageWriter::reply(&req.query, req.reply, NOERROR);
        w.set_aa(true);
        if every(c.truncate) {
            w.set_tc(true);
        }
        let mut pushed = Ok(());
        if qtype == A {
            let n = if c.large { LARGE_COUNT } else { 1 };
            for _ in 0..n {
                pushed =
                    pushed.and(w.push(Section::Answer, Owner::Question, A, CLASS_IN, 0, &ADDR_A));
            }
        } else {
            pushed = w.push(
                Section::Answer,
                Owner::Question,
                AAAA,
                CLASS_IN,
                0,
                &ADDR_AAAA,
            );
        }
        w.finish();
        if pushed.is_err() {
            req.reply.clear();
            return Ok(Status::rcode(SERVFAIL));
        }
        req.finalize_reply();
        Ok(Status::written())
    }
}

/// CoreDNS's made-up zone transfer for the query name: SOA, two NS, two AAAA, and the closing
/// SOA unless the reply is "truncated" (then the transfer is incomplete on purpose).
fn axfr(req: &mut Request<'_>, incomplete: bool) -> Status {
    // SOA sns.dns.icann.org. noc.dns.icann.org. 2018050825 7200 3600 1209600 3600
    let mut soa = Vec::with_capacity(64);
    for name in [
        &b"\x03sns\x03dns\x05icann\x03org\x00"[..],
        &b"\x03noc\x03dns\x05icann\x03org\x00"[..],
    ] {
        soa.extend_from_slice(name);
    }
    for v in [2_018_050_825u32, 7200, 3600, 1_209_600, 3600] {
        soa.extend_from_slice(&v.to_be_bytes());
    }
    // NS targets b.<qname> and a.<qname>: one label, then a pointer to the question name.
    let ns_b = [1, b'b', 0xc0, 0x0c];
    let ns_a = [1, b'a', 0xc0, 0x0c];
    let aaaa_a = [
        0x20, 0x01, 0x0b, 0xd8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x53,
    ];
    let aaaa_b = [
        0x20, 0x01, 0x05, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x54,
    ];
    let mut w = MessageWriter::reply(&req.query, req.reply, NOERROR);
    w.set_aa(true);
    let mut ok = w.push(Section::Answer, Owner::Question, SOA, CLASS_IN, 0, &soa);
    ok = ok.and(w.push(Section::Answer, Owner::Question, NS, CLASS_IN, 0, &ns_b));
    ok = ok.and(w.push(Section::Answer, Owner::Question, NS, CLASS_IN, 0, &ns_a));
    ok = ok.and(w.push(
        Section::Answer,
        Owner::LabelThenQuestion(b"a"),
        AAAA,
        CLASS_IN,
        0,
        &aaaa_a,
    ));
    ok = ok.and(w.push(
        Section::Answer,
        Owner::LabelThenQuestion(b"b"),
        AAAA,
        CLASS_IN,
        0,
        &aaaa_b,
    ));
    if !incomplete {
        ok = ok.and(w.push(Section::Answer, Owner::Question, SOA, CLASS_IN, 0, &soa));
    }
    w.finish();
    if ok.is_err() {
        req.reply.clear();
        return Status::rcode(SERVFAIL);
    }
    req.finalize_reply();
    Status::written()
}

ringdns_plugin::export!(Erratic);

#[cfg(test)]
mod tests {
    use super::*;
    use ringdns_plugin::wire::Query;
    use ringdns_plugin::{End, Proto};
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    fn erratic(text: &str) -> Erratic {
        let (_, config) = ringdns_testkit::config::<Erratic>(text).unwrap();
        let core = CoreInfo {
            index: 0,
            cpu: 0,
            cores: 1,
        };
        Erratic::build(&Arc::new(config), &core).unwrap()
    }

    fn request(reply: &mut Vec<u8>, can_wait: bool) -> Request<'_> {
        let q = Query::parse(ringdns_testkit::QUERY).unwrap();
        let at = "127.0.0.1:53".parse().unwrap();
        Request::new(q, at, at, Proto::Udp, ".", "dns://:53", reply, can_wait)
    }

    /// The inline pass as the socket loop makes it: one poll, waiting not allowed.
    fn inline(e: &Erratic, reply: &mut Vec<u8>) -> Poll<Outcome> {
        let mut req = request(reply, false);
        let fut = pin!(e.serve(&mut req, &End));
        fut.poll(&mut Context::from_waker(Waker::noop()))
    }

    fn numbered(e: &Erratic) -> u64 {
        e.config.queries.load(Ordering::Relaxed)
    }

    #[test]
    fn a_block_that_delays_numbers_each_query_once_on_the_pass_that_answers_it() {
        let e = erratic(". {\n erratic {\n  delay 2 1ms\n }\n}\n");
        ringdns_plugin::glommio::LocalExecutor::default().run(async {
            for n in 0..4 {
                let mut reply = Vec::new();
                assert!(
                    matches!(inline(&e, &mut reply), Poll::Ready(Err(_))),
                    "the inline pass defers"
                );
                assert_eq!(numbered(&e), n, "and takes no number");
                let mut req = request(&mut reply, true);
                let status = e.serve(&mut req, &End).await;
                assert_eq!(status, Ok(Status::written()), "query {n}");
                assert_eq!(numbered(&e), n + 1, "one number per query");
            }
        });
    }

    #[test]
    fn a_block_that_never_delays_answers_inline() {
        let e = erratic(". {\n erratic {\n  drop 0\n }\n}\n");
        let mut reply = Vec::new();
        assert_eq!(inline(&e, &mut reply), Poll::Ready(Ok(Status::written())));
        assert_eq!(numbered(&e), 1);
    }
}
