//! `cache_reply`: the cache plugin in front of an upstream that answers with arbitrary bytes,
//! driven through the plugin contract as the server drives it (the inline pass, then the
//! deferred one), then asked the same question again.
//!
//! Input: a config byte (which `cache` stanza), a flags byte, the query's length (2 bytes,
//! big-endian), the query datagram, and the rest: the upstream's reply.
//!
//! Asserted: no panic; the upstream is asked once; a reply the cache stored (its entry
//! gauges say so) answers the second query at once, with that query's ID and question
//! (its case), a reply that walks, fits the client (unless signed) and whose TTLs stay
//! within the configured maximum; a reply it did not store leaves it empty.

use ringdns::corefile::{Dispenser, parse};
use ringdns::plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, Proto, Request, Serve, Status,
};
use ringdns::wire::{Query, records, rtype};
use ringdns_plugin_cache::{Cache, CacheCounters};
use std::cell::Cell;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

/// The `cache` stanzas, their zones (the counters' label) and the longest TTL they serve.
const CONFIGS: &[(&str, &str, u32)] = &[
    ("cache", ".", 3600),
    ("cache 30", ".", 30),
    ("cache {\n keepttl\n}", ".", 3600),
    ("cache {\n servfail 0\n}", ".", 3600),
    ("cache {\n success 10 60 0\n denial 0 30 1\n}", ".", 60),
    (
        "cache {\n serve_stale 1h immediate\n prefetch 1 1m 90%\n}",
        ".",
        3600,
    ),
    ("cache {\n disable success\n}", ".", 3600),
    (
        "cache example.org {\n disable denial example.org\n}",
        "example.org.",
        3600,
    ),
];

/// The rest of the chain: an upstream that defers on the inline pass (as forward does) and
/// then writes the fuzzer's reply.
struct Upstream<'a> {
    reply: &'a [u8],
    /// Copy the query's ID and question over the reply's, as a matching upstream's.
    echo: bool,
    /// Finalize the reply before returning (forward does).
    finalize: bool,
    asked: Cell<u32>,
}

impl Upstream<'_> {
    fn answer(&self, req: &mut Request<'_>) -> Outcome {
        if !req.can_wait() {
            return req.defer();
        }
        self.asked.set(self.asked.get() + 1);
        req.reply.clear();
        req.reply.extend_from_slice(self.reply);
        if self.echo && req.reply.len() >= 12 {
            req.reply[0..2].copy_from_slice(&req.query.id().to_be_bytes());
            let question = req.query.question_bytes();
            if let Some(place) = req.reply.get_mut(12..12 + question.len()) {
                place.copy_from_slice(question);
            }
        }
        if self.finalize {
            req.finalize_reply();
        }
        Ok(Status::written())
    }
}

impl Handler for Upstream<'_> {
    fn serve(&self, req: &mut Request<'_>) -> impl Future<Output = Outcome> {
        std::future::ready(self.answer(req))
    }

    fn is_end(&self) -> bool {
        false
    }

    fn after_batch(&self) {}
}

/// Polls once: nothing here waits (no timer, no socket), so anything but ready is a bug.
fn ready<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("the cache waited on an upstream that answers at once"),
    }
}

fn cache_for(stanza: &str) -> Cache {
    let text = format!(". {{\n{stanza}\n}}\n");
    let cf = parse("Corefile", &text, &ringdns::chain::known_directive).expect("config parses");
    let mut block = BlockSetup {
        zones: vec![".".to_string()],
        ..BlockSetup::default()
    };
    let mut d = Dispenser::new(&cf.blocks[0].directives[0].tokens);
    let shared = Cache::setup(&mut d, &mut block).expect("config sets up");
    let core = CoreInfo {
        index: 0,
        cpu: 0,
        cores: 1,
    };
    Cache::build(&Arc::new(shared), &core).expect("the cache serves")
}

/// Entries the cache holds now, from its gauges (a new instance starts them at 0); the
/// labels are (server, zones, view), the last empty outside a view.
fn entries(zones: &str) -> u64 {
    let c: Arc<CacheCounters> = ringdns::metrics::registry::cell(&["", zones, ""], 0);
    c.entries_success.get() + c.entries_denial.get()
}

fn request<'a>(q: Query<'a>, proto: Proto, reply: &'a mut Vec<u8>, can_wait: bool) -> Request<'a> {
    let client = "192.0.2.1:5353".parse().expect("address");
    let local = "127.0.0.1:53".parse().expect("address");
    Request::new(q, client, local, proto, ".", "", reply, can_wait)
}

/// The same query under another ID, its name's letters in the other case when `flip`.
fn second_query(packet: &[u8], flip: bool) -> Vec<u8> {
    let mut p = packet.to_vec();
    p[0] ^= 0xff;
    if flip {
        let mut i = 12;
        while p[i] != 0 {
            let end = i + 1 + usize::from(p[i]);
            for b in &mut p[i + 1..end] {
                if b.is_ascii_alphabetic() {
                    *b ^= 0x20;
                }
            }
            i = end;
        }
    }
    p
}

/// Runs one input; panics when the cache breaks a promise.
pub fn check(data: &[u8]) {
    let [config, flags, hi, lo, rest @ ..] = data else {
        return;
    };
    let qlen = usize::from(u16::from_be_bytes([*hi, *lo]));
    if rest.len() < qlen {
        return;
    }
    let (packet, reply) = rest.split_at(qlen);
    let Ok(q) = Query::parse(packet) else {
        return;
    };
    let (stanza, zones, max_ttl) = CONFIGS[usize::from(*config) % CONFIGS.len()];
    let proto = if flags & 2 != 0 {
        Proto::Tcp
    } else {
        Proto::Udp
    };
    let cache = cache_for(stanza);
    let up = Upstream {
        reply,
        echo: flags & 1 != 0,
        finalize: flags & 4 != 0,
        asked: Cell::new(0),
    };

    // The socket loop's inline pass: nothing cached, the upstream defers.
    let mut out = Vec::new();
    let mut req = request(q, proto, &mut out, false);
    assert!(
        cache.serve_now(&mut req, &up).is_none(),
        "a hit from an empty cache"
    );
    let status = ready(cache.serve(&mut req, &up));
    assert!(status.is_err(), "the upstream deferred: {status:?}");
    // The deferred pass: the upstream answers, the cache may store.
    let mut req = request(q, proto, &mut out, true);
    let _ = ready(cache.serve(&mut req, &up));
    assert_eq!(up.asked.get(), 1, "the upstream is asked once");
    let stored = entries(zones) > 0;

    let again = second_query(packet, flags & 8 != 0);
    let q2 = Query::parse(&again).expect("the same query parses");
    let mut hit = Vec::new();
    let mut req = request(q2, proto, &mut hit, false);
    let answered = cache.serve_now(&mut req, &up);
    let limit = req.max_reply_size();
    if !stored {
        assert!(answered.is_none(), "a hit for a reply that was not stored");
        return;
    }
    assert!(
        answered.is_some(),
        "a stored reply did not answer the same question"
    );
    assert_eq!(up.asked.get(), 1, "a hit asked the upstream");
    assert_eq!(
        hit[0..2],
        q2.id().to_be_bytes(),
        "the hit has the query's ID"
    );
    let question = q2.question_bytes();
    assert_eq!(
        &hit[12..12 + question.len()],
        question,
        "the query's question"
    );
    let mut signed = false;
    for r in records(&hit).expect("the hit walks") {
        let r = r.expect("the hit's records walk");
        signed |= r.rtype == rtype::TSIG;
        if r.rtype != rtype::OPT {
            let ttl = r.ttl(&hit);
            assert!(ttl <= max_ttl, "TTL {ttl} over the maximum {max_ttl}");
        }
    }
    let padded = q2.opt().is_some_and(|o| o.options.len() > 256);
    assert!(
        hit.len() <= limit || signed || padded,
        "a hit of {} bytes for a client taking {limit}",
        hit.len()
    );
}
