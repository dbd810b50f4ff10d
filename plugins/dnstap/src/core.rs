//! A core's taps: for each `dnstap` line, a bounded buffer of encoded frames that the core's
//! writer task drains to the reader. The query path encodes straight into the buffer (no
//! allocation once it has grown to its working size) and never waits: a full buffer, or a
//! reader that is not connected, drops the frame and counts it. A line whose `extra` has
//! placeholders renders it per message into the core's scratch text; a literal `extra`
//! is copied from the configuration, as before.

use crate::Shared;
use crate::counters::Counters;
use crate::proto::{self, Addr, Envelope, MessageType, Tap};
use crate::setup::{Extra, TapConfig};
use ringdns_plugin::replacer;
use ringdns_plugin::tap::{CoreTap, Forwarded};
use ringdns_plugin::{CoreInfo, Proto, Request};
use std::cell::{Cell, RefCell};
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
    /// A reader took the stream (the handshake is done; with `listen`, at least one sink
    /// is connected): frames are kept only then.
    pub connected: Cell<bool>,
    /// Whether a frame kept back for want of a reader counts as dropped: yes for a reader
    /// ringdns dials, no for `listen` (with no sink connected there is no one to drop for).
    pub counts_unconnected: bool,
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
        self.drop_n(1);
    }

    /// Counts `n` messages dropped (and to log).
    pub fn drop_n(&self, n: u64) {
        self.counters.dropped.add(n);
        self.unlogged_drops.set(self.unlogged_drops.get() + n);
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
    /// Where a line's `extra` format is rendered for the message being built.
    extra: RefCell<String>,
    /// Per line: the `extra` of the query being served on a pass that may not wait,
    /// rendered before the rest of the chain ran (its CLIENT_QUERY is built after).
    query_extra: Vec<RefCell<String>>,
    /// Some line's `extra` has placeholders.
    pub formats: bool,
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
                    counts_unconnected: t.listen.is_none(),
                    unlogged_drops: Cell::new(0),
                    counters: ringdns_plugin::metrics::registry::cell(&[&t.label], core.index),
                })
            })
            .collect();
        let formats = shared
            .taps
            .iter()
            .any(|t| matches!(t.extra, Extra::Format(_)));
        let query_extra = shared
            .taps
            .iter()
            .map(|t| match t.extra {
                Extra::Format(_) => RefCell::new(String::with_capacity(256)),
                Extra::Literal(_) => RefCell::new(String::new()),
            })
            .collect();
        CoreTaps {
            formats,
            query_extra,
            extra: RefCell::new(String::with_capacity(256)),
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

    /// Renders the `extra` of every line with placeholders for `req` as it is now (before
    /// the rest of the chain ran), for the CLIENT_QUERY [`CoreTaps::client_query`] builds
    /// later with `saved` set.
    pub fn save_query_extra(&self, req: &Request<'_>) {
        for (cfg, out) in self.shared.taps.iter().zip(&self.query_extra) {
            if let Extra::Format(pieces) = &cfg.extra {
                let mut out = out.borrow_mut();
                out.clear();
                replacer::render(pieces, req, None, &mut out);
            }
        }
    }

    /// Encodes one message for every line (`full` decides whether the wire messages go
    /// in), its `extra` rendered for `req` (or the one saved for the query, `saved`), and
    /// wakes the writers that were idle.
    fn tap<'a>(&self, req: &Request<'_>, saved: bool, make: impl Fn(bool) -> Tap<'a>) {
        let mut scratch = self.scratch.borrow_mut();
        for sink in &self.sinks {
            let cfg = &self.shared.taps[sink.index];
            if !sink.connected.get() {
                if sink.counts_unconnected {
                    sink.drop_one();
                }
                continue;
            }
            let tap = make(cfg.full);
            scratch.clear();
            proto::encode_message(&tap, &mut scratch);
            let rendered;
            let extra: &[u8] = match &cfg.extra {
                Extra::Literal(text) => text,
                Extra::Format(_) if saved => {
                    rendered = self.query_extra[sink.index].borrow();
                    rendered.as_bytes()
                }
                Extra::Format(pieces) => {
                    let mut out = self.extra.borrow_mut();
                    out.clear();
                    replacer::render(pieces, req, None, &mut out);
                    drop(out);
                    rendered = self.extra.borrow();
                    rendered.as_bytes()
                }
            };
            let env = Envelope {
                identity: &cfg.identity,
                version: &cfg.version,
                extra,
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

    /// CLIENT_QUERY: the query of `req`; its `extra` the one saved before the rest of the
    /// chain ran when `saved`, else rendered now.
    pub fn client_query(&self, req: &Request<'_>, saved: bool) {
        let qt = self.wall(req.received());
        let who = (Addr::new(req.client.ip()), req.client.port());
        let protocol = protocol(req.proto);
        let query = req.query.packet();
        self.tap(req, saved, |full| Tap {
            kind: MessageType::ClientQuery,
            protocol,
            query: Some(who),
            response: None,
            query_time: Some(qt),
            response_time: None,
            query_message: full.then_some(query),
            response_message: None,
        });
    }

    /// CLIENT_RESPONSE: the reply of `req` (written into `req.reply`), sent at `sent`.
    pub fn client_response(&self, req: &Request<'_>, sent: Instant) {
        let (qt, rt) = (self.wall(req.received()), self.wall(sent));
        let who = (Addr::new(req.client.ip()), req.client.port());
        let protocol = protocol(req.proto);
        let reply = &req.reply[..];
        self.tap(req, false, |full| Tap {
            kind: MessageType::ClientResponse,
            protocol,
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
    fn forwarded(&self, req: &Request<'_>, x: &Forwarded<'_>) {
        let up = (Addr::new(x.upstream.ip()), x.upstream.port());
        let protocol = if x.tcp { proto::TCP } else { proto::UDP };
        let sent = self.wall(x.sent);
        self.tap(req, false, |full| Tap {
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
            self.tap(req, false, |full| Tap {
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
