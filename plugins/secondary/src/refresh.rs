//! The thread of one secondary zone (a std thread, off every core, since its sockets
//! block): the initial transfer, retried after 250 ms, doubling up to every 10 s, until a
//! primary gives the zone (CoreDNS's `transferAndUpdate`); then the SOA timers
//! ([`crate::schedule`]): a serial check every REFRESH, every RETRY after a failure, a
//! transfer when a primary's serial is newer (RFC 1982), and the zone discarded once no
//! check succeeded for EXPIRE, after which it is transferred again as at the start. A
//! NOTIFY from a primary wakes the thread for a check at once (RFC 1996 §3.11: as if the
//! refresh timer had run out). The thread ends when the configurations that serve the
//! zone are gone (the wake-up channel disconnects).

use crate::client::{self, ClientError};
use crate::reply::Soa;
use crate::schedule::{Due, Schedule};
use crate::zone::Inner;
use ringdns_plugin::duration::format;
use ringdns_plugin::{error, info, warning};
use ringdns_zone::Zone;
use ringdns_zone::serial;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::time::{Duration, Instant};

/// The first wait after a failed initial transfer, and the longest (CoreDNS's).
const FIRST_RETRY: Duration = Duration::from_millis(250);
const MAX_RETRY: Duration = Duration::from_secs(10);

/// Starts the thread of `inner`'s zone; the sender wakes it (and dropping every clone
/// of it ends it).
pub fn start(inner: Arc<Inner>) -> std::io::Result<SyncSender<IpAddr>> {
    let (tx, rx) = mpsc::sync_channel(1);
    // A thread name may hold no NUL (std panics on one); names come from the Corefile.
    let name: String = format!("secondary-{}", inner.name.trim_end_matches('.'))
        .chars()
        .map(|c| if c.is_control() { '_' } else { c })
        .collect();
    std::thread::Builder::new()
        .name(name)
        .spawn(move || run(&inner, &rx))?;
    Ok(tx)
}

/// What woke the thread.
enum Woken {
    /// A NOTIFY from this address.
    Notify(IpAddr),
    /// The wait ran out.
    Timer,
    /// The zone is no longer configured.
    Gone,
}

fn wait(rx: &Receiver<IpAddr>, d: Duration) -> Woken {
    match rx.recv_timeout(d) {
        Ok(ip) => Woken::Notify(ip),
        Err(RecvTimeoutError::Timeout) => Woken::Timer,
        Err(RecvTimeoutError::Disconnected) => Woken::Gone,
    }
}

fn run(z: &Inner, rx: &Receiver<IpAddr>) {
    loop {
        let Some(soa) = initial(z, rx) else { return };
        if !loaded(z, rx, soa) {
            return;
        }
    }
}

/// Transfers the zone until a primary gives it; its SOA, or `None` when the zone is gone.
fn initial(z: &Inner, rx: &Receiver<IpAddr>) -> Option<Soa> {
    let mut delay = FIRST_RETRY;
    loop {
        match transfer(z, None) {
            Ok(soa) => return Some(soa),
            Err(e) => warning!(
                "plugin/secondary: All '{}' masters failed to transfer, retrying in {}: {e}",
                z.name,
                format(delay)
            ),
        }
        match wait(rx, delay) {
            Woken::Notify(ip) => info!(
                "plugin/secondary: Notify from {ip} for {}: checking transfer",
                z.name
            ),
            Woken::Timer => {}
            Woken::Gone => return None,
        }
        delay = (delay * 2).min(MAX_RETRY);
    }
}

/// Keeps the loaded zone (SOA `soa`) current until it expires (`true`: transfer it
/// again) or is gone (`false`).
fn loaded(z: &Inner, rx: &Receiver<IpAddr>, mut soa: Soa) -> bool {
    let mut schedule = Schedule::new(&soa, Instant::now());
    loop {
        let wait_for = schedule.wake_at().saturating_duration_since(Instant::now());
        let notify = match wait(rx, wait_for) {
            Woken::Gone => return false,
            Woken::Notify(ip) => Some(ip),
            Woken::Timer => None,
        };
        // Expiry first: NOTIFYs that keep coming while the primaries fail do not keep
        // the zone alive.
        match schedule.due(Instant::now()) {
            Some(Due::Expire) => {
                z.store(None);
                error!(
                    "plugin/secondary: Zone {} is expired: no successful check of its primaries \
                     for {} (SOA expire); SERVFAIL until it transfers again",
                    z.name,
                    format(schedule.timers().expire)
                );
                return true;
            }
            None if notify.is_none() => continue,
            _ => {}
        }
        if let Some(ip) = notify {
            info!(
                "plugin/secondary: Notify from {ip} for {}: checking transfer",
                z.name
            );
        }
        let retrying = schedule.failing();
        match check(z, soa.serial) {
            Ok(Checked::Same) => {
                if let Some(ip) = notify {
                    info!(
                        "plugin/secondary: Notify from {ip} for {}: no SOA serial increase seen",
                        z.name
                    );
                }
                schedule.ok(&soa, Instant::now());
            }
            Ok(Checked::Transferred(new)) => {
                soa = new;
                schedule.ok(&soa, Instant::now());
            }
            Err(e) => {
                match (notify, &e) {
                    (Some(ip), CheckError::Transfer(e)) => warning!(
                        "plugin/secondary: Notify from {ip} for {}: transfer failed: {e}",
                        z.name
                    ),
                    (Some(ip), CheckError::Primaries(e)) => warning!(
                        "plugin/secondary: Notify from {ip} for {}: failed primary check: {e}",
                        z.name
                    ),
                    (None, e) if retrying => {
                        warning!("plugin/secondary: Failed retry check for {}: {e}", z.name)
                    }
                    (None, e) => {
                        warning!("plugin/secondary: Failed refresh check for {}: {e}", z.name)
                    }
                }
                schedule.failed(Instant::now());
            }
        }
    }
}

/// What a serial check found.
enum Checked {
    /// No newer serial.
    Same,
    /// A newer one, transferred: the new SOA.
    Transferred(Soa),
}

/// Why a serial check failed.
enum CheckError {
    /// No primary answered the SOA query (the last one's error).
    Primaries(ClientError),
    /// A newer serial was seen, and no primary gave the zone.
    Transfer(ClientError),
}

impl std::fmt::Display for CheckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckError::Primaries(e) | CheckError::Transfer(e) => e.fmt(f),
        }
    }
}

/// Asks the primaries, in order, for their serial (the first that answers counts, as in
/// CoreDNS), and transfers the zone when it is newer than `have`.
fn check(z: &Inner, have: u32) -> Result<Checked, CheckError> {
    let mut last = None;
    for (i, &p) in z.primaries.iter().enumerate() {
        match client::soa(p, &z.origin) {
            Ok(remote) if serial::newer(have, remote.serial) => {
                return transfer(z, Some(i))
                    .map(Checked::Transferred)
                    .map_err(CheckError::Transfer);
            }
            Ok(_) => return Ok(Checked::Same),
            Err(e) => last = Some(e),
        }
    }
    Err(CheckError::Primaries(last.unwrap_or_else(no_primary)))
}

/// The error for a zone without primaries (setup never makes one).
fn no_primary() -> ClientError {
    ClientError::Zone("the zone has no primary".to_string())
}

/// Transfers the zone from its primaries (`first` before the others: the one that showed
/// the newer serial), swaps it in and returns its SOA; the last primary's error when none
/// gives it. Logs each failure as CoreDNS does.
fn transfer(z: &Inner, first: Option<usize>) -> Result<Soa, ClientError> {
    let order = first
        .into_iter()
        .chain((0..z.primaries.len()).filter(|&i| Some(i) != first));
    let mut last = None;
    for i in order {
        let p = z.primaries[i];
        match transfer_from(z, p) {
            Ok(soa) => {
                info!("plugin/secondary: Transferred: {} from {p}", z.name);
                return Ok(soa);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(no_primary))
}

/// One primary's transfer, swapped in when it builds a zone.
fn transfer_from(z: &Inner, p: SocketAddr) -> Result<Soa, ClientError> {
    let (records, soa) = match client::axfr(p, &z.origin) {
        Ok(t) => t,
        Err(e @ ClientError::Connect(..)) => {
            error!(
                "plugin/secondary: Failed to setup transfer `{}' with `\"{p}\"': {e}",
                z.name
            );
            return Err(e);
        }
        Err(e) => {
            error!(
                "plugin/secondary: Failed to transfer `{}' from \"{p}\": {e}",
                z.name
            );
            return Err(e);
        }
    };
    match Zone::build(&z.origin, records) {
        Ok(zone) => {
            z.store(Some(zone));
            Ok(soa)
        }
        Err(e) => {
            error!(
                "plugin/secondary: Failed to parse transfer `{}' from: \"{p}\": {}",
                z.name, e.message
            );
            Err(ClientError::Zone(e.message))
        }
    }
}
