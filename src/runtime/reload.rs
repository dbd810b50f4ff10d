//! Reloading the configuration, on SIGUSR1 or when the `reload` plugin finds the Corefile
//! changed. Runs on the main thread, never on a core: read and parse the Corefile, compare
//! its fingerprint with the running one, set every block up, open the sockets of added
//! listeners and the ports of added HTTP endpoints. Only when all of that worked is the new
//! configuration sent to the cores, which swap it in between batches (see `worker`, `swap`);
//! then the endpoints no longer wanted close. Anything failing before that leaves the running
//! configuration serving, untouched, and is logged in CoreDNS's words:
//!
//! ```text
//! [INFO] SIGUSR1: Reloading                      (SIGUSR1 only)
//! [INFO] Reloading
//! [INFO] plugin/reload: Running configuration SHA512 = 3f2a…
//! [INFO] Reloading complete
//! ```
//! or
//! ```text
//! [ERROR] Restart failed: Corefile:3 - Error during parsing: Unknown directive 'bogus'
//! [ERROR] SIGUSR1: Corefile:3 - …             (or: plugin/reload: Corefile changed but reload failed: …)
//! ```

use super::http::{self, HttpServers};
use super::sockets;
use super::swap::Swap;
use crate::config::hash::{self, Digest};
use crate::config::{Config, ListenerKey, Parsed, Source, global};
use crate::metrics::reload as stats;
use crate::plugin::ReloadSettings;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender};
use std::time::{Duration, Instant};

/// How long the cores get to take a new configuration before the reload says so.
const SWAP_WAIT: Duration = Duration::from_secs(10);

/// What the `reload` plugin's timer saw last, so that it acts once per change (CoreDNS does
/// not retry a Corefile that failed until it changes again).
#[derive(PartialEq, Eq)]
enum Seen {
    Digest(Digest),
    Error(String),
}

/// The main thread's side of reloads.
pub struct Reloader {
    source: Source,
    running: Arc<Config>,
    digest: Digest,
    seen: Seen,
    cores: Vec<Sender<Swap>>,
    acks: Receiver<usize>,
    /// The `reload` plugin's period for the running configuration (interval ± jitter).
    period: Option<Duration>,
    next_check: Option<Instant>,
}

/// The HTTP endpoints a configuration's plugins registered, by address.
pub fn endpoints(c: &Config) -> http::Wanted {
    http::wanted(&c.http)
}

/// The keys of a configuration's listeners.
pub fn listener_keys(c: &Config) -> Vec<ListenerKey> {
    c.listeners.iter().map(|l| l.key()).collect()
}

/// The `reload` plugin's settings for a configuration: a block setting, like `bind`, that
/// configures this reloader; as in CoreDNS the last block that sets it wins, and it acts
/// for the whole process.
fn settings(c: &Config) -> Option<ReloadSettings> {
    c.blocks.iter().rev().find_map(|b| b.setup.reload)
}

/// `interval` shifted by a random amount in [-jitter/2, jitter/2), as CoreDNS computes it
/// once per loaded configuration.
fn period(c: &Config) -> Option<Duration> {
    let r = settings(c)?;
    let j = r.jitter.as_nanos() as u64;
    let shift = fastrand::u64(0..j.max(1)) as i128 - (j / 2) as i128;
    let nanos = (r.interval.as_nanos() as i128 + shift).max(0) as u64;
    Some(Duration::from_nanos(nanos))
}

impl Reloader {
    /// Starts watching (when the running configuration uses `reload`) and publishes the
    /// running configuration's fingerprint.
    pub fn new(
        source: Source,
        running: Arc<Config>,
        digest: Digest,
        cores: Vec<Sender<Swap>>,
        acks: Receiver<usize>,
    ) -> Self {
        let mut r = Reloader {
            source,
            period: period(&running),
            running,
            digest,
            seen: Seen::Digest(digest),
            cores,
            acks,
            next_check: None,
        };
        r.publish();
        if settings(&r.running).is_some() {
            crate::info!(
                "plugin/reload: Running configuration SHA512 = {}",
                hash::hex(&r.digest)
            );
        }
        r
    }

    /// The configuration serving now.
    pub fn running(&self) -> &Arc<Config> {
        &self.running
    }

    fn publish(&mut self) {
        stats::set_running(&self.digest, settings(&self.running).is_some());
        self.next_check = self.period.map(|p| Instant::now() + p);
    }

    /// SIGUSR1 (and SIGUSR2, see `runtime::run`): reload now, whether or not the `reload`
    /// plugin is used. `sig` names the signal in the log lines (`SIGUSR1: Reloading`).
    pub fn on_signal(&mut self, http: &mut HttpServers, sig: &str) {
        crate::info!("{sig}: Reloading");
        if !self.source.rereadable() {
            crate::warning!(
                "{sig}: the Corefile was read from standard input and cannot be read again; nothing to reload"
            );
            return;
        }
        let prefix = format!("{sig}: ");
        let parsed = match self.source.parse() {
            Ok(p) => p,
            Err(e) => {
                crate::info!("Reloading");
                return fail(&e, &prefix);
            }
        };
        self.seen = Seen::Digest(parsed.digest);
        if parsed.digest == self.digest {
            crate::info!(
                "{sig}: Corefile unchanged (SHA512 = {}): nothing to reload",
                hash::hex(&self.digest)
            );
            return;
        }
        if let Err(e) = self.apply(parsed, http) {
            fail(&e, &prefix);
        }
    }

    /// Whether the `reload` plugin's next look at the Corefile is due.
    pub fn due(&self, now: Instant) -> bool {
        self.next_check.is_some_and(|t| now >= t)
    }

    /// The `reload` plugin's periodic look: reload when the Corefile's meaning changed since
    /// the last look.
    pub fn on_timer(&mut self, http: &mut HttpServers) {
        self.next_check = self.period.map(|p| Instant::now() + p);
        let (seen, parsed) = match self.source.parse() {
            Ok(p) => (Seen::Digest(p.digest), Some(p)),
            Err(e) => (Seen::Error(e), None),
        };
        if seen == self.seen {
            return;
        }
        self.seen = seen;
        const PREFIX: &str = "plugin/reload: Corefile changed but reload failed: ";
        match parsed {
            None => {
                if let Seen::Error(e) = &self.seen {
                    crate::info!("Reloading");
                    fail(e, PREFIX);
                }
            }
            // Back to the running configuration (a bad edit undone): nothing to do.
            Some(p) if p.digest == self.digest => {}
            Some(p) => {
                if let Err(e) = self.apply(p, http) {
                    fail(&e, PREFIX);
                }
            }
        }
    }

    /// Builds, checks and swaps in a changed configuration; on error nothing changed.
    fn apply(&mut self, parsed: Parsed, http: &mut HttpServers) -> Result<(), String> {
        crate::info!("Reloading");
        let loaded = self.source.load(&parsed);
        // Loaded or not, what the load's parsing freed goes back to the system.
        ringdns_plugin::memory::give_back();
        let mut config = loaded?;
        let changed = global::changed(&self.running.tuning, &config.tuning);
        if !changed.is_empty() {
            crate::warning!(
                "Reloading: the global block's {} changed; that takes a restart, the running values stay in effect",
                changed.join(", ")
            );
        }
        config.tuning = self.running.tuning.clone();
        let old = listener_keys(&self.running);
        let added: Vec<ListenerKey> = listener_keys(&config)
            .into_iter()
            .filter(|k| !old.contains(k))
            .collect();
        let addrs: Vec<_> = added.iter().map(|k| (k.1, k.2)).collect();
        let mut socks = sockets::open_all(&addrs, self.cores.len(), &config.tuning)
            .map_err(|(li, e)| super::listen_error(&config, added[li], &e))?;
        let staged = http.stage(endpoints(&config))?;
        let config = Arc::new(config);
        // Late acknowledgements of an earlier swap that timed out must not count for this one.
        while self.acks.try_recv().is_ok() {}
        let mut sent = 0;
        for (core, tx) in self.cores.iter().enumerate() {
            let swap = Swap {
                config: config.clone(),
                added: std::mem::take(&mut socks[core])
                    .into_iter()
                    .map(|(i, s)| (added[i], s))
                    .collect(),
            };
            if tx.send(swap).is_ok() {
                sent += 1;
            }
        }
        // From here on the new configuration is serving (or about to, on every core).
        let t0 = Instant::now();
        let mut acked = 0;
        while acked < sent {
            let left = SWAP_WAIT.saturating_sub(t0.elapsed());
            if left.is_zero() || self.acks.recv_timeout(left).is_err() {
                crate::error!(
                    "Reloading: {} of {} cores did not take the new configuration within {}s",
                    sent - acked,
                    self.cores.len(),
                    SWAP_WAIT.as_secs()
                );
                break;
            }
            acked += 1;
        }
        http.commit(staged);
        super::publish_udp_drops(&config);
        self.running = config;
        self.digest = parsed.digest;
        self.seen = Seen::Digest(parsed.digest);
        self.period = period(&self.running);
        self.publish();
        crate::info!(
            "plugin/reload: Running configuration SHA512 = {}",
            hash::hex(&self.digest)
        );
        crate::info!("Reloading complete");
        Ok(())
    }
}

/// Logs a reload that did not apply, as CoreDNS does, and counts it.
fn fail(e: &str, prefix: &str) {
    crate::error!("Restart failed: {e}");
    crate::error!("{prefix}{e}");
    stats::record_failure();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_period_is_the_interval_within_half_the_jitter() {
        let text = ".:1053 {\n reload 10s 4s\n whoami\n}\n";
        let cf = crate::corefile::parse("Corefile", text, &crate::chain::known_directive).unwrap();
        let c = crate::config::load(&cf, 1053).unwrap();
        for _ in 0..200 {
            let p = period(&c).unwrap();
            assert!(
                p >= Duration::from_secs(8) && p < Duration::from_secs(12),
                "{p:?}"
            );
        }
        let cf = crate::corefile::parse("Corefile", ".:1053 {\n whoami\n}\n", &|_| true).unwrap();
        assert_eq!(period(&crate::config::load(&cf, 1053).unwrap()), None);
    }

    #[test]
    fn the_last_block_that_sets_reload_wins() {
        let text = "a.test:1053 {\n reload 10s 2s\n whoami\n}\nb.test:1053 {\n whoami\n}\n\
                    c.test:1053 {\n reload 20s 4s\n whoami\n}\nd.test:1053 {\n whoami\n}\n";
        let cf = crate::corefile::parse("Corefile", text, &crate::chain::known_directive).unwrap();
        let c = crate::config::load(&cf, 1053).unwrap();
        assert_eq!(
            settings(&c),
            Some(ReloadSettings {
                interval: Duration::from_secs(20),
                jitter: Duration::from_secs(4),
            })
        );
    }
}
