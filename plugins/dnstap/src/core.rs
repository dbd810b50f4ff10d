//! A core's taps: for each `dnstap` line, a bounded buffer of encoded frames that the core's
//! writer task drains to the reader. The query path encodes straight into the buffer (no
//! allocation once it has grown to its working size) and never waits: a full buffer, or a
//! reader that is not connected, drops the frame and counts it.

use crate::Shared;
use crate::counters::Counters;
use crate::proto::{self, Addr, Envelope, MessageType, Tap};
use crate::setup::TapConfig;
use ringdns_plugin::tap::{CoreTap, Forwarded};
use ringdns_plugin::{CoreInfo, Proto};
use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::rc::{Rc, Weak};
use std::sync::Arc;
use std::task::Waker;
use std::time::{Duration, Instant, SystemTime};

/// Bytes a core may hold per queued message on average before it drops (with the message
/// bound, `queue` × this caps a core's buffer: 10 000 messages, 10 MiB by default).
pub const BYTES_PER_MESSAGE: usize = 1024;

/// Frames waiting for the writer.
#[derive(Default)]
pub struct Pending {
    /// Data frames, each with its 4-byte length.
    pub buf: Vec<u8>,
    /// How many.
    pub frames: usize,
}

/// One `dnstap` line on one core.
pub struct Sink {
    /// Its line's index in the block's configuration.
    pub index: usize,
    /// Frames for the writer.
    pub pending: RefCell<Pending>,
    /// The writer, waiting for frames.
    pub waker: Cell<Option<Waker>>,
    /// A reader took the stream (the handshake is done): frames are kept only then.
    pub connected: Cell<bool>,
    /// Drops since the writer last logged them.
    pub unlogged_drops: Cell<u64>,
    /// This core's counters (the registry's, so a reload counts on).
    pub counters: Arc<Counters>,
}

impl Sink {
    /// Whether the buffer can take `len` more bytes.
    fn room(&self, cfg: &TapConfig, p: &Pending, len: usize) -> bool {
        p.frames < cfg.queue && p.buf.len() + len <= cfg.queue * BYTES_PER_MESSAGE
    }

    fn drop_one(&self) {
        self.counters.dropped.inc();
        self.unlogged_drops.set(self.unlogged_drops.get() + 1);
    }
}

/// The core's taps of one block: one [`Sink`] per `dnstap` line, shared by the dnstap
/// instance (client messages) and forward's (upstream messages).
pub struct CoreTaps {
    /// The block's configuration.
    pub shared: Arc<Shared>,
    /// The core's index.
    pub core: usize,
    /// One per line.
    pub sinks: Vec<Rc<Sink>>,
    /// A clock reading pair (monotonic, wall), to turn the request's times into wall
    /// times without reading the wall clock per query; the writer refreshes it.
    anchor: Cell<(Instant, SystemTime)>,
    /// Where a message is encoded while its length is measured.
    scratch: RefCell<Vec<u8>>,
    /// The writers were started.
    pub started: Cell<bool>,
}

impl CoreTaps {
    /// The core's taps for `shared`.
    pub fn new(shared: Arc<Shared>, core: &CoreInfo) -> CoreTaps {
        let sinks = shared
            .taps
            .iter()
            .enumerate()
            .map(|(index, t)| {
                Rc::new(Sink {
                    index,
                    pending: RefCell::new(Pending {
                        buf: Vec::with_capacity(64 << 10),
                        frames: 0,
                    }),
                    waker: Cell::new(None),
                    connected: Cell::new(false),
                    unlogged_drops: Cell::new(0),
                    counters: ringdns_plugin::metrics::registry::cell(&[&t.label], core.index),
                })
            })
            .collect();
        CoreTaps {
            shared,
            core: core.index,
            sinks,
            anchor: Cell::new((Instant::now(), SystemTime::now())),
            scratch: RefCell::new(Vec::with_capacity(1024)),
            started: Cell::new(false),
        }
    }

    /// Takes a new clock reading pair (the writer does, about once a second).
    pub fn refresh_anchor(&self) {
        self.anchor.set((Instant::now(), SystemTime::now()));
    }

    /// `at` as dnstap's seconds and nanoseconds since the epoch.
    pub fn wall(&self, at: Instant) -> proto::Time {
        let (mono, wall) = self.anchor.get();
        let t = match at.checked_duration_since(mono) {
            Some(d) => wall + d,
            None => wall - mono.saturating_duration_since(at),
        };
        let d = t
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or(Duration::ZERO);
        (d.as_secs(), d.subsec_nanos())
    }

    /// Encodes one message for every line (`full` decides whether the wire messages go
    /// in) and wakes the writers that were idle.
    fn tap<'a>(&self, make: impl Fn(bool) -> Tap<'a>) {
        let mut scratch = self.scratch.borrow_mut();
        for sink in &self.sinks {
            let cfg = &self.shared.taps[sink.index];
            if !sink.connected.get() {
                sink.drop_one();
                continue;
            }
            let tap = make(cfg.full);
            scratch.clear();
            proto::encode_message(&tap, &mut scratch);
            let env = Envelope {
                identity: &cfg.identity,
                version: &cfg.version,
                extra: &cfg.extra,
            };
            let mut p = sink.pending.borrow_mut();
            if !sink.room(cfg, &p, proto::frame_len(&env, scratch.len())) {
                drop(p);
                sink.drop_one();
                continue;
            }
            proto::write_frame(&env, &scratch, &mut p.buf);
            p.frames += 1;
            drop(p);
            if let Some(w) = sink.waker.take() {
                w.wake();
            }
        }
    }

    /// CLIENT_QUERY: `query` from `client` over `proto`, received at `received`.
    pub fn client_query(&self, client: SocketAddr, proto: Proto, query: &[u8], received: Instant) {
        let qt = self.wall(received);
        let who = (Addr::new(client.ip()), client.port());
        self.tap(|full| Tap {
            kind: MessageType::ClientQuery,
            protocol: protocol(proto),
            query: Some(who),
            response: None,
            query_time: Some(qt),
            response_time: None,
            query_message: full.then_some(query),
            response_message: None,
        });
    }

    /// CLIENT_RESPONSE: `reply` to `client`, for a query received at `received`, sent at
    /// `sent`.
    pub fn client_response(
        &self,
        client: SocketAddr,
        proto: Proto,
        reply: &[u8],
        received: Instant,
        sent: Instant,
    ) {
        let (qt, rt) = (self.wall(received), self.wall(sent));
        let who = (Addr::new(client.ip()), client.port());
        self.tap(|full| Tap {
            kind: MessageType::ClientResponse,
            protocol: protocol(proto),
            query: Some(who),
            response: None,
            query_time: Some(qt),
            response_time: Some(rt),
            query_message: None,
            response_message: full.then_some(reply),
        });
    }
}

fn protocol(p: Proto) -> i32 {
    match p {
        Proto::Udp => proto::UDP,
        Proto::Tcp => proto::TCP,
    }
}

impl CoreTap for CoreTaps {
    fn forwarded(&self, x: &Forwarded<'_>) {
        let up = (Addr::new(x.upstream.ip()), x.upstream.port());
        let protocol = if x.tcp { proto::TCP } else { proto::UDP };
        let sent = self.wall(x.sent);
        self.tap(|full| Tap {
            kind: MessageType::ForwarderQuery,
            protocol,
            query: None,
            response: Some(up),
            query_time: Some(sent),
            response_time: None,
            query_message: full.then_some(x.query),
            response_message: None,
        });
        if let Some(reply) = x.reply {
            let answered = self.wall(x.answered);
            self.tap(|full| Tap {
                kind: MessageType::ForwarderResponse,
                protocol,
                query: None,
                response: Some(up),
                query_time: Some(sent),
                response_time: Some(answered),
                query_message: None,
                response_message: full.then_some(reply),
            });
        }
    }
}

thread_local! {
    /// The core's taps of each block (by its configuration's address and the core index),
    /// so that the dnstap instance and forward's, built apart, share one. Read and written
    /// at build time only.
    static CORES: RefCell<Vec<(usize, usize, Weak<CoreTaps>)>> = const { RefCell::new(Vec::new()) };
}

/// The core's taps of `shared`'s block, made by the first of dnstap and forward to ask.
pub fn for_core(shared: &Arc<Shared>, core: &CoreInfo) -> Rc<CoreTaps> {
    let key = Arc::as_ptr(shared) as usize;
    CORES.with(|c| {
        let mut c = c.borrow_mut();
        c.retain(|(_, _, w)| w.strong_count() > 0);
        if let Some(t) = c
            .iter()
            .find(|(k, i, _)| *k == key && *i == core.index)
            .and_then(|(_, _, w)| w.upgrade())
        {
            return t;
        }
        let t = Rc::new(CoreTaps::new(shared.clone(), core));
        c.push((key, core.index, Rc::downgrade(&t)));
        t
    })
}
