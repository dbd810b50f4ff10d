//! What the reload machinery tells the metrics endpoint: how many reloads failed and which
//! configuration runs. Written by the thread that reloads (never by a core), read by a scrape;
//! no query ever touches them, and reading takes no lock.
//!
//! CoreDNS's names for them (to be exported by the prometheus plugin):
//! - `coredns_reload_failed_total` (counter) = [`failed_total`];
//! - `coredns_reload_version_info{hash="sha512",value="<hex>"} 1` (gauge) with the value of
//!   [`running_hash`], exported only while [`plugin_in_use`] says so, as CoreDNS registers
//!   both metrics only when a Corefile uses `reload`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

static FAILED: AtomicU64 = AtomicU64::new(0);
static IN_USE: AtomicBool = AtomicBool::new(false);

/// The running configuration's SHA-512 behind a sequence lock: the writer makes the count odd
/// while it writes the words; a reader retries until it saw one even count around its read.
static SEQ: AtomicU64 = AtomicU64::new(0);
static WORDS: [AtomicU64; 8] = [const { AtomicU64::new(0) }; 8];

/// Counts a reload that was tried and did not apply (bad Corefile, port taken, …).
pub fn record_failure() {
    FAILED.fetch_add(1, Ordering::Relaxed);
}

/// Reloads that failed since the process started.
pub fn failed_total() -> u64 {
    FAILED.load(Ordering::Relaxed)
}

/// Records the configuration now serving, and whether it uses the `reload` directive.
/// Only one thread (the one that starts and reloads the server) calls this.
pub fn set_running(digest: &[u8; 64], reload_directive: bool) {
    let s = SEQ.load(Ordering::Relaxed);
    SEQ.store(s + 1, Ordering::Relaxed);
    std::sync::atomic::fence(Ordering::Release);
    for (w, chunk) in WORDS.iter().zip(digest.chunks_exact(8)) {
        let mut b = [0u8; 8];
        b.copy_from_slice(chunk);
        w.store(u64::from_be_bytes(b), Ordering::Relaxed);
    }
    SEQ.store(s + 2, Ordering::Release);
    IN_USE.store(reload_directive, Ordering::Relaxed);
}

/// The running configuration's SHA-512 in lower-case hex (the `value` label); `None`
/// before the server started.
pub fn running_hash() -> Option<String> {
    loop {
        let before = SEQ.load(Ordering::Acquire);
        if before == 0 {
            return None;
        }
        if before % 2 == 1 {
            std::hint::spin_loop();
            continue;
        }
        let words: [u64; 8] = std::array::from_fn(|i| WORDS[i].load(Ordering::Relaxed));
        std::sync::atomic::fence(Ordering::Acquire);
        if SEQ.load(Ordering::Relaxed) == before {
            return Some(words.iter().map(|w| format!("{w:016x}")).collect());
        }
    }
}

/// Whether the running Corefile uses the `reload` directive.
pub fn plugin_in_use() -> bool {
    IN_USE.load(Ordering::Relaxed)
}

static FAILED_DESC: ringdns_metrics::Desc = ringdns_metrics::Desc {
    name: "coredns_reload_failed_total",
    help: "Counter of the number of failed reload attempts.",
    kind: ringdns_metrics::Kind::Counter,
    labels: &[],
};

static VERSION_DESC: ringdns_metrics::Desc = ringdns_metrics::Desc {
    name: "coredns_reload_version_info",
    help: "A metric with a constant '1' value labeled by hash, and value which type of hash generated.",
    kind: ringdns_metrics::Kind::Gauge,
    labels: &["hash", "value"],
};

/// The reload families for the metrics registry (registered once by the runtime).
pub struct ReloadSource;

impl ringdns_metrics::registry::Source for ReloadSource {
    fn collect(&self, out: &mut ringdns_metrics::Sink) {
        if !plugin_in_use() {
            return;
        }
        out.counter(&FAILED_DESC, &[], failed_total());
        if let Some(hash) = running_hash() {
            out.gauge(&VERSION_DESC, &["sha512", &hash], 1.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_and_failures_read_back() {
        let mut d = [0u8; 64];
        for (i, b) in d.iter_mut().enumerate() {
            *b = i as u8;
        }
        set_running(&d, true);
        let hex: String = d.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(running_hash(), Some(hex));
        assert!(plugin_in_use());
        let before = failed_total();
        record_failure();
        assert_eq!(failed_total(), before + 1);
    }
}
