//! One core's life: build its server, run a UDP and a TCP loop per listener, take the new
//! configurations the main thread sends (swap the server, open the loops of added listeners,
//! stop those of removed ones), and stop gracefully.

use super::core::CoreServer;
use super::sockets::ListenerSockets;
use super::stop::Stop;
use super::swap::{Current, Swap, View};
use super::{DRAIN, STOP_POLL, tcp, udp};
use crate::chain::Chain;
use crate::config::{Config, ListenerKey, Tuning};
use crate::plugin::CoreInfo;
use glommio::task::JoinHandle;
use std::os::fd::IntoRawFd;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::time::{Duration, Instant};

/// The main thread's lines to a core.
pub struct MainLines {
    /// Process-wide stop flag (SIGINT, SIGTERM, end of lameduck).
    pub stop: Arc<AtomicBool>,
    /// Incremented once the core has built its chains.
    pub started: Arc<AtomicUsize>,
    /// Set by the main thread once every core is built and `/ready` says so: only then do
    /// the cores start reading their sockets (queries wait in the kernel meanwhile), so a
    /// client that got an answer always finds `/ready` at 200.
    pub go: Arc<AtomicBool>,
    /// New configurations.
    pub swaps: Receiver<Swap>,
    /// The core's index, sent back once a swap is applied.
    pub acks: Sender<usize>,
}

/// A listener served on this core: its key and the signal that stops its loops.
struct Live {
    key: ListenerKey,
    stop: Rc<Stop>,
}

/// What a core keeps while it runs.
struct Worker {
    info: CoreInfo,
    /// The global block as the process started: it does not change on reload.
    tuning: Tuning,
    current: Rc<Current<Chain>>,
    live: Vec<Live>,
    /// The socket loops, awaited at stop (dropping a glommio task would cancel it).
    tasks: Vec<JoinHandle<()>>,
}

/// Serves `config` on this core until the stop flag, applying swaps as they come.
pub async fn core_main(
    config: Arc<Config>,
    info: CoreInfo,
    socks: Vec<(ListenerKey, ListenerSockets)>,
    link: MainLines,
) {
    let mut w = Worker {
        info,
        tuning: config.tuning.clone(),
        // Current: its plugins start here, on this core's executor.
        current: Rc::new(Current::new(CoreServer::build(&config, &info))),
        live: Vec::new(),
        tasks: Vec::new(),
    };
    drop(config);
    link.started.fetch_add(1, Ordering::AcqRel);
    while !link.go.load(Ordering::Acquire) {
        if link.stop.load(Ordering::Acquire) {
            return;
        }
        glommio::timer::sleep(Duration::from_millis(1)).await;
    }
    for (key, s) in socks {
        w.open(key, s);
    }
    while !link.stop.load(Ordering::Acquire) {
        while let Ok(swap) = link.swaps.try_recv() {
            w.apply(swap);
            let _ = link.acks.send(info.index);
        }
        glommio::timer::sleep(STOP_POLL).await;
    }
    for l in &w.live {
        l.stop.trigger();
    }
    for t in std::mem::take(&mut w.tasks) {
        let _ = t.await;
    }
    let core = w.current.get();
    let t0 = Instant::now();
    while core.inflight.get() > 0 && t0.elapsed() < DRAIN {
        glommio::timer::sleep(Duration::from_millis(5)).await;
    }
    core.after_batch();
}

impl Worker {
    /// Builds the new server, makes it current (which runs its plugins' start hooks), and
    /// opens and closes listeners to match.
    fn apply(&mut self, swap: Swap) {
        let prev = self.current.get();
        let next = CoreServer::build(&swap.config, &self.info).sharing_inflight_with(&prev);
        drop(prev);
        self.current.replace(next);
        let wanted: Vec<ListenerKey> = swap.config.listeners.iter().map(|l| l.key()).collect();
        self.live.retain(|l| {
            let keep = wanted.contains(&l.key);
            if !keep {
                l.stop.trigger();
            }
            keep
        });
        for (key, s) in swap.added {
            self.open(key, s);
        }
    }

    /// Starts the UDP and TCP loops of one socket pair of listener `key`.
    fn open(&mut self, key: ListenerKey, s: ListenerSockets) {
        let Some(view) = View::new(self.current.clone(), key) else {
            crate::error!("no listener {key:?} in the configuration; its sockets are closed");
            return;
        };
        // A wildcard listener has two socket pairs (IPv4, IPv6) and one stop signal.
        let stop = match self.live.iter().find(|l| l.key == key) {
            Some(l) => l.stop.clone(),
            None => {
                let stop = Rc::new(Stop::new());
                self.live.push(Live {
                    key,
                    stop: stop.clone(),
                });
                stop
            }
        };
        // SAFETY: the fd comes from a socket2 socket we own and give up here; glommio's
        // socket becomes its only owner.
        let udp = Rc::new(unsafe {
            <glommio::net::UdpSocket as std::os::fd::FromRawFd>::from_raw_fd(s.udp.into_raw_fd())
        });
        let t = &self.tuning;
        self.tasks.push(
            glommio::spawn_local(udp::run(
                view.clone(),
                t.udp_backend,
                udp,
                t.udp_batch,
                stop.clone(),
                self.info.index,
            ))
            .detach(),
        );
        let caps = tcp::TcpCaps {
            total: t.tcp_max_conns,
            per_client: t.tcp_max_conns_per_ip,
        };
        self.tasks.push(
            glommio::spawn_local(tcp::run(view, s.tcp, caps, stop, self.info.index)).detach(),
        );
    }
}
