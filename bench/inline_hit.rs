//! In-process cost of a cache hit through `serve_inline`, with and without plugins in front
//! of the cache (first of all rrl): the CPU a plugin adds to a hit, without the sockets, the
//! kernel and dnsperf, whose noise on a shared VM (±10 %) is larger than what is measured.
//! Run with `cargo bench --bench inline_hit` (release profile); it prints ns per hit per
//! variant, rounds alternating, and the median. Never a test: nothing is asserted.
//! `INLINE_HIT_ONLY=NAME` runs one variant alone (to profile it, e.g. under `perf record`).

#![recursion_limit = "512"]

use ringdns::plugin::{CoreInfo, Proto};
use ringdns::runtime::core::CoreServer;
use ringdns::runtime::serve::{Verdict, serve_batched, serve_inline};
use ringdns::wire::{Name, QueryBuilder, name_to_wire, rtype};
use std::hint::black_box;
use std::net::SocketAddr;
use std::time::Instant;

/// Distinct names asked, looped (as the cache workload's 2 000).
const NAMES: usize = 2000;
/// Hits per measured round and variant.
const HITS: usize = 2_000_000;
/// Rounds; the median is reported.
const ROUNDS: usize = 7;

/// The variants measured: a name and the plugins in front of `cache` (then erratic, which
/// answers the misses that fill the cache).
const VARIANTS: &[(&str, &str)] = &[
    ("cache", ""),
    ("rrl+cache", "rrl . {\n responses-per-second 1000000\n}\n"),
    (
        "rrl(requests too)+cache",
        "rrl . {\n responses-per-second 1000000\n requests-per-second 1000000000\n}\n",
    ),
    // Issue 17's policy block (bench/lib.sh's ringdns-cache-policy), whole and per plugin.
    ("acl+cache", ACL),
    ("rewrite+cache", REWRITE),
    ("minimal+cache", "minimal\n"),
    ("policy+cache", POLICY),
];

/// The policy block's acl: a rule for another network, then one that lets loopback through.
const ACL: &str = "acl {\n block net 198.51.100.0/24\n allow net 127.0.0.0/8\n}\n";
/// The policy block's rewrite rules, none of which the measured names match.
const REWRITE: &str = "rewrite continue name suffix .nomatch.test. .other.test.\n\
                       rewrite continue ttl regex ^nomatch\\. 30\n\
                       rewrite type HINFO TXT\n";
/// acl, rewrite and minimal in front of the cache, as bench/lib.sh's ringdns-cache-policy.
const POLICY: &str = concat!(
    "acl {\n block net 198.51.100.0/24\n allow net 127.0.0.0/8\n}\n",
    "rewrite continue name suffix .nomatch.test. .other.test.\n",
    "rewrite continue ttl regex ^nomatch\\. 30\n",
    "rewrite type HINFO TXT\n",
    "minimal\n"
);

fn core_for(text: &str) -> CoreServer<ringdns::chain::Chain> {
    let cf = ringdns::corefile::parse("Corefile", text, &ringdns::chain::known_directive)
        .expect("Corefile parses");
    let config = ringdns::config::load(&cf, 53).expect("configuration loads");
    CoreServer::build(
        &config,
        &CoreInfo {
            index: 0,
            cpu: 0,
            cores: 1,
        },
    )
}

/// A plain A query for `name` with EDNS (as dnsperf sends, without DO).
fn query(id: u16, name: &str) -> Vec<u8> {
    let wire = name_to_wire(name).unwrap();
    QueryBuilder::new(Name::from_wire(&wire).unwrap(), rtype::A)
        .id(id)
        .edns(1232, false)
        .build()
}

/// ns per hit over one round.
fn round(core: &CoreServer<ringdns::chain::Chain>, queries: &[Vec<u8>]) -> f64 {
    let l = &core.listeners[0];
    let client: SocketAddr = "127.0.0.1:40000".parse().unwrap();
    let mut reply = Vec::with_capacity(8192);
    let t0 = Instant::now();
    for chunk in 0..HITS / 32 {
        // The clock read once per batch of 32, as the socket loop does.
        let batch_time = Instant::now();
        for i in 0..32 {
            let q = &queries[(chunk * 32 + i) % queries.len()];
            let v = serve_batched(core, l, black_box(q), false, client, batch_time, &mut reply);
            debug_assert_eq!(v, Verdict::Send);
            black_box(&reply);
        }
    }
    t0.elapsed().as_nanos() as f64 / HITS as f64
}

fn main() {
    let queries: Vec<Vec<u8>> = (0..NAMES)
        .map(|i| query(i as u16, &format!("h{i}.bench.test.")))
        .collect();
    let only = std::env::var("INLINE_HIT_ONLY").ok();
    let variants: Vec<&(&str, &str)> = VARIANTS
        .iter()
        .filter(|(name, _)| only.as_deref().is_none_or(|o| o == *name))
        .collect();
    let cores: Vec<_> = variants
        .iter()
        .map(|(_, front)| {
            let core = core_for(&format!(
                ".:53 {{\n{front}cache\nerratic {{\n drop 0\n}}\n}}\n"
            ));
            // Fill: every name once (misses answered by erratic, stored).
            let l = &core.listeners[0];
            let client: SocketAddr = "127.0.0.1:40000".parse().unwrap();
            let mut reply = Vec::new();
            for q in &queries {
                assert_eq!(
                    serve_inline(&core, l, q, false, client, Proto::Udp, &mut reply),
                    Verdict::Send
                );
            }
            core
        })
        .collect();
    let mut results = vec![Vec::new(); variants.len()];
    for r in 0..ROUNDS {
        let mut line = format!("round {r}:");
        for (i, core) in cores.iter().enumerate() {
            let ns = round(core, &queries);
            results[i].push(ns);
            line.push_str(&format!(" {} {ns:.1} ns", variants[i].0));
        }
        println!("{line}");
    }
    for (i, (name, _)) in variants.iter().enumerate() {
        // The difference to the first variant (cache alone) within each round, then its
        // median: rounds that the machine ran slower for every variant cancel out.
        let mut deltas: Vec<f64> = results[i]
            .iter()
            .zip(&results[0])
            .map(|(a, b)| a - b)
            .collect();
        let m = median(&mut results[i].clone());
        println!(
            "{name}: median {m:.1} ns/hit, {:+.1} ns against {} (median of the rounds' differences)",
            median(&mut deltas),
            variants[0].0
        );
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
