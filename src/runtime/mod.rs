//! The thread-per-core server: one pinned glommio executor per core, each with its own
//! sockets, chains and state; signals; reload; graceful stop.

pub mod core;
pub mod http;
mod memlock;
pub mod memory;
mod proxy;
mod reload;
pub mod router;
pub mod serve;
mod shutdown;
mod sockets;
pub mod stop;
pub mod swap;
mod tcp;
mod udp;
mod uring;
mod worker;

use crate::config::hash::Digest;
use crate::config::{Config, Source};
use crate::plugin::CoreInfo;
use glommio::{LocalExecutorBuilder, Placement};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGUSR1, SIGUSR2};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long a graceful stop waits for deferred queries to finish: longer than forward's
/// 5 s limit per query, so none is cut off.
pub(crate) const DRAIN: Duration = Duration::from_secs(6);

/// How often each core looks at the process-wide stop flag and for a new configuration.
const STOP_POLL: Duration = Duration::from_millis(50);

/// The CPUs to serve on: the tuning's `cpus`, else the process affinity mask, cut to
/// `workers` when given; without either, cut to what `std::thread::available_parallelism`
/// allows (the affinity mask and the cgroup's CPU quota, rounded down), so that a container
/// limited to 2 CPUs on a 64-CPU host runs 2 cores, not 64 throttled ones. Rounded down, the
/// pinned cores never outrun the quota: with `limits.cpu: 1.5`, 2 busy cores would both be
/// throttled for the rest of each period, 1 never is. Logs the cut when the quota makes one.
pub fn choose_cpus(t: &crate::config::Tuning) -> Result<Vec<usize>, String> {
    let allowed = std::thread::available_parallelism()
        .ok()
        .map(std::num::NonZero::get);
    let cpus = choose_cpus_within(t, allowed)?;
    if t.workers.is_none()
        && t.cpus.is_none()
        && let Some(mask) = core_affinity::get_core_ids().map(|m| m.len())
        && cpus.len() < mask
    {
        crate::info!(
            "CPU quota of the cgroup: {n} CPUs (of {mask} in the affinity mask); serving on {n} cores",
            n = cpus.len()
        );
    }
    Ok(cpus)
}

/// [`choose_cpus`] with the CPUs the process may use, in whole CPUs, given.
fn choose_cpus_within(
    t: &crate::config::Tuning,
    allowed: Option<usize>,
) -> Result<Vec<usize>, String> {
    let mask: Vec<usize> = match &t.cpus {
        Some(c) => c.clone(),
        None => core_affinity::get_core_ids()
            .ok_or("cannot read the process CPU affinity")?
            .into_iter()
            .map(|c| c.id)
            .collect(),
    };
    if mask.is_empty() {
        return Err("no CPU to run on".into());
    }
    let allowed = match t.cpus {
        Some(_) => None,
        None => allowed,
    };
    let workers = t
        .workers
        .unwrap_or_else(|| allowed.map_or(mask.len(), |q| q.clamp(1, mask.len())));
    Ok((0..workers).map(|i| mask[i % mask.len()]).collect())
}

/// The lines CoreDNS prints at start: one per served zone, then the version.
pub fn banner(config: &Config) -> String {
    let mut out = String::new();
    for l in &config.listeners {
        for r in &l.routes {
            let bound = if l.addr.ip().is_unspecified() {
                String::new()
            } else {
                format!(" on {}", l.addr.ip())
            };
            out.push_str(&format!("{}:{}{}\n", r.zone, l.addr.port(), bound));
        }
    }
    out.push_str(&format!("ringdns-{}\n", crate::VERSION));
    out.push_str(&format!(
        "linux/{}, thread-per-core (glommio)\n",
        std::env::consts::ARCH
    ));
    out
}

/// The signals `run` handles. SIGHUP is ignored, as CoreDNS ignores it ("sometimes sent
/// outside of the user's control": a closed terminal, a session leader's exit); SIGUSR2 is
/// CoreDNS's graceful upgrade (a re-exec that inherits the sockets), which ringdns does not
/// do: it reloads, like SIGUSR1, so that it keeps serving instead of dying of the default
/// action.
const SIGNALS: [i32; 5] = [SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGHUP];

/// Serves `config` until SIGINT or SIGTERM, then stops gracefully: stop reading, answer
/// what is in flight, return. SIGUSR1 and SIGUSR2 (and the `reload` plugin's timer) reload
/// the Corefile from `source` (see `reload`); SIGHUP is logged and ignored; `digest` is the
/// running Corefile's fingerprint. Errors before serving (a socket that cannot be bound, an
/// executor that cannot start) are returned and nothing keeps running.
pub fn run(config: Config, digest: Digest, source: Source, quiet: bool) -> Result<(), String> {
    serve::install_panic_hook();
    // First: from here on no handled signal takes its default action (SIGHUP and SIGUSR2
    // would kill the process). Those that arrive while the cores start wait in `early`.
    let mut signals = signal_hook::iterator::Signals::new(SIGNALS)
        .map_err(|e| format!("cannot install signal handlers: {e}"))?;
    let mut early = Vec::new();
    if let Some(raised) = memlock::ensure()? {
        crate::info!("{raised}");
    }
    uring::check()?;
    let cpus = choose_cpus(&config.tuning)?;
    let keys = reload::listener_keys(&config);
    let addrs: Vec<_> = keys.iter().map(|k| (k.1, k.2)).collect();
    let mut sockets = sockets::open_all(&addrs, cpus.len(), &config.tuning)
        .map_err(|(li, e)| listen_error(&config, keys[li], &e))?;
    crate::metrics::registry::add_source("reload", Arc::new(crate::metrics::reload::ReloadSource));
    crate::metrics::registry::add_source("build_info", Arc::new(crate::metrics::build::BuildInfo));
    publish_udp_drops(&config);
    let state = Arc::new(http::HttpState::default());
    let mut http = http::HttpServers::new(state.clone());
    let staged = http.stage(reload::endpoints(&config))?;
    http.commit(staged);
    let config = Arc::new(config);
    let stop = Arc::new(AtomicBool::new(false));
    let exited = Arc::new(AtomicUsize::new(0));
    let started = Arc::new(AtomicUsize::new(0));
    let go = Arc::new(AtomicBool::new(false));
    let (ack_tx, acks) = std::sync::mpsc::channel();

    let mut handles = Vec::new();
    let mut swaps = Vec::new();
    for (index, &cpu) in cpus.iter().enumerate() {
        let socks: Vec<_> = std::mem::take(&mut sockets[index])
            .into_iter()
            .map(|(li, s)| (keys[li], s))
            .collect();
        let info = CoreInfo {
            index,
            cpu,
            cores: cpus.len(),
        };
        let (swap_tx, swap_rx) = std::sync::mpsc::channel();
        swaps.push(swap_tx);
        let link = worker::MainLines {
            stop: stop.clone(),
            started: started.clone(),
            go: go.clone(),
            swaps: swap_rx,
            acks: ack_tx.clone(),
        };
        let (config, exited) = (config.clone(), exited.clone());
        let builder = LocalExecutorBuilder::new(Placement::Fixed(cpu))
            .name(&format!("ringdns-core-{index}"))
            .io_memory(config.tuning.io_memory)
            .spin_before_park(config.tuning.spin_before_park);
        let handle = builder
            .spawn(move || async move {
                let _guard = ExitGuard(exited);
                worker::core_main(config, info, socks, link).await;
            })
            .map_err(|e| format!("cannot start the executor for CPU {cpu}: {e}"))?;
        handles.push(handle);
    }
    // Wait until every core has built its chains; then ready, then the cores start reading.
    let t0 = Instant::now();
    while started.load(Ordering::Acquire) < handles.len() {
        early.extend(signals.pending());
        let stopped = early.iter().any(|&s| s == SIGINT || s == SIGTERM);
        // A thread that ended before its core started: its executor could not be set up.
        let unstarted = handles.iter().any(|h| h.is_finished());
        if stopped
            || unstarted
            || exited.load(Ordering::Acquire) > 0
            || t0.elapsed() > Duration::from_secs(30)
        {
            stop.store(true, Ordering::Release);
            // Each distinct error once, with the CPUs it happened on.
            let mut causes: Vec<(String, Vec<usize>)> = Vec::new();
            for (h, &cpu) in handles.into_iter().zip(&cpus) {
                if let Err(e) = h.join() {
                    let e = e.to_string();
                    match causes.iter_mut().find(|c| c.0 == e) {
                        Some(c) => c.1.push(cpu),
                        None => causes.push((e, vec![cpu])),
                    }
                }
            }
            if stopped {
                return Ok(());
            }
            let mut msg = String::from("a core failed to start");
            for (e, on) in causes {
                let on: Vec<String> = on.iter().map(usize::to_string).collect();
                msg.push_str(&format!("; CPU {}: {e}", on.join(", ")));
            }
            return Err(msg);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // Ready before any core reads a query: whoever got an answer finds /ready at 200.
    state.serving.store(true, Ordering::Release);
    go.store(true, Ordering::Release);
    if !quiet {
        crate::logging::write_raw(banner(&config).as_bytes());
    }
    let mut reloader = reload::Reloader::new(source, config, digest, swaps, acks);

    let mut got = None;
    'wait: loop {
        for sig in std::mem::take(&mut early)
            .into_iter()
            .chain(signals.pending())
        {
            match sig {
                SIGINT | SIGTERM => {
                    got = Some(sig);
                    break 'wait;
                }
                SIGUSR1 => reloader.on_signal(&mut http, "SIGUSR1"),
                SIGUSR2 => reloader.on_signal(&mut http, "SIGUSR2"),
                SIGHUP => crate::info!("SIGHUP: ignored (SIGUSR1 reloads, SIGTERM stops)"),
                _ => {}
            }
        }
        if reloader.due(Instant::now()) {
            reloader.on_timer(&mut http);
        }
        if exited.load(Ordering::Acquire) > 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // Not ready any more: load balancers stop sending. The plugins' shutdown hooks run while
    // every core still answers (health's lameduck waits there on SIGTERM); a SIGINT, or a
    // core that ended, cuts their waits short.
    state.serving.store(false, Ordering::Release);
    let signals = std::cell::RefCell::new(signals);
    let cut = || {
        exited.load(Ordering::Acquire) > 0 || signals.borrow_mut().pending().any(|s| s == SIGINT)
    };
    shutdown::run_hooks(reloader.running(), got == Some(SIGTERM), &cut);
    stop.store(true, Ordering::Release);
    let mut failed = false;
    for h in handles {
        failed |= h.join().is_err();
    }
    if failed {
        return Err("a core stopped with a panic".into());
    }
    Ok(())
}

/// A listener's socket error with the place of the block that asked for it:
/// `Corefile:3 - listen 127.0.0.1:53: Address already in use (os error 98)`.
pub(crate) fn listen_error(config: &Config, key: crate::config::ListenerKey, e: &str) -> String {
    match config
        .listeners
        .iter()
        .find(|l| l.key() == key && !l.origin.is_empty())
    {
        Some(l) => format!("{} - {e}", l.origin),
        None => e.to_string(),
    }
}

/// Tells the metrics endpoint which UDP listeners to report kernel drops for (at start and
/// after each reload).
pub(crate) fn publish_udp_drops(config: &Config) {
    let listeners = config
        .listeners
        .iter()
        .filter(|l| l.transport == crate::config::Transport::Dns)
        .map(|l| (l.name.clone(), l.addr))
        .collect();
    crate::metrics::registry::add_source(
        "udp-drops",
        Arc::new(crate::metrics::udp::SocketDrops::new(listeners)),
    );
}

/// Counts a core's exit, also when it unwinds from a panic.
struct ExitGuard(Arc<AtomicUsize>);

impl Drop for ExitGuard {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Tuning;

    #[test]
    fn cpus_come_from_the_tuning_block_or_the_affinity_mask() {
        let t = Tuning {
            cpus: Some(vec![3, 5]),
            ..Tuning::default()
        };
        assert_eq!(choose_cpus(&t).unwrap(), vec![3, 5]);
        let t = Tuning {
            workers: Some(3),
            cpus: Some(vec![0, 1]),
            ..Tuning::default()
        };
        // More workers than CPUs share them round-robin.
        assert_eq!(choose_cpus(&t).unwrap(), vec![0, 1, 0]);
        let all = choose_cpus(&Tuning::default()).unwrap();
        assert!(!all.is_empty());
        let t = Tuning {
            workers: Some(1),
            ..Tuning::default()
        };
        assert_eq!(choose_cpus(&t).unwrap(), vec![all[0]]);
    }

    #[test]
    fn the_cgroup_quota_cuts_the_default_but_not_an_explicit_setting() {
        let all = choose_cpus_within(&Tuning::default(), None).unwrap();
        let one = choose_cpus_within(&Tuning::default(), Some(1)).unwrap();
        assert_eq!(one, vec![all[0]]);
        // A quota above the CPUs there are changes nothing.
        let many = choose_cpus_within(&Tuning::default(), Some(all.len() + 8)).unwrap();
        assert_eq!(many, all);
        let t = Tuning {
            cpus: Some(vec![0, 1, 2, 3]),
            ..Tuning::default()
        };
        assert_eq!(choose_cpus_within(&t, Some(1)).unwrap(), vec![0, 1, 2, 3]);
        let t = Tuning {
            workers: Some(3),
            cpus: Some(vec![0, 1]),
            ..Tuning::default()
        };
        assert_eq!(choose_cpus_within(&t, Some(1)).unwrap(), vec![0, 1, 0]);
        let t = Tuning {
            workers: Some(2),
            ..Tuning::default()
        };
        assert_eq!(choose_cpus_within(&t, Some(1)).unwrap().len(), 2);
    }

    /// Runs the future `make` builds on an executor of its own thread with preemption period
    /// `preempt`; its output, or why none came within 30 s.
    fn on_own_executor<R, F>(
        preempt: Duration,
        make: impl FnOnce() -> F + Send + 'static,
    ) -> Result<R, std::sync::mpsc::RecvTimeoutError>
    where
        R: Send + 'static,
        F: std::future::Future<Output = R> + 'static,
    {
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let ex = LocalExecutorBuilder::new(Placement::Unbound)
                .preempt_timer(preempt)
                .make()
                .unwrap();
            let _ = done.send(ex.run(make()));
        });
        finished.recv_timeout(Duration::from_secs(30))
    }

    /// glommio (vendor/glommio, change 1) keeps its preemption timer armed across executor
    /// turns, so the timer can fire between a turn's I/O poll and its first task. The
    /// executor must still run the tasks that are ready then, not park with them: a core
    /// once slept for seconds with its sockets' tasks ready (lost queries, a reload that
    /// no core took). A short preemption period makes that moment come thousands of times.
    #[test]
    fn a_preemption_before_the_first_task_of_a_turn_does_not_park_the_executor() {
        let finished = on_own_executor(Duration::from_micros(20), || async {
            for _ in 0..300_000 {
                futures_lite::future::yield_now().await;
            }
        });
        match finished {
            Ok(()) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                panic!("the executor parked with a task ready")
            }
            Err(e) => panic!("the executor's thread ended without finishing: {e}"),
        }
    }

    /// glommio keeps the timer a sleep armed once the core wakes (vendor/glommio, changes 1
    /// and 5), and that timer is then what preempts the task queues so that timers get
    /// served. Armed for a far timer (a 30 s one here), a core woken by I/O that then ran
    /// without a pause (a socket under a flood) served no nearer timer set meanwhile until
    /// the far one fired; a sleep's timer is therefore armed no further ahead than a
    /// preemption period.
    #[test]
    fn a_near_timer_set_after_waking_from_a_sleep_on_a_far_one_fires_under_load() {
        let waited = on_own_executor(Duration::from_millis(50), || async {
            glommio::spawn_local(glommio::timer::sleep(Duration::from_secs(30))).detach();
            let sock = glommio::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let to = sock.local_addr().unwrap();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(10));
                let client = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
                client.send_to(b"wake", to).unwrap();
            });
            // Parks with only the far timer pending; the datagram wakes it.
            let mut buf = [0u8; 16];
            sock.recv_from(&mut buf).await.unwrap();
            let fired = std::rc::Rc::new(std::cell::Cell::new(false));
            let f = fired.clone();
            glommio::spawn_local(async move {
                glommio::timer::sleep(Duration::from_millis(5)).await;
                f.set(true);
            })
            .detach();
            let t0 = std::time::Instant::now();
            while !fired.get() && t0.elapsed() < Duration::from_secs(3) {
                futures_lite::future::yield_now().await;
            }
            t0.elapsed()
        })
        .expect("the executor's thread finished");
        assert!(
            waited < Duration::from_secs(1),
            "a 5 ms timer fired after {waited:?} of busy running"
        );
    }
}
