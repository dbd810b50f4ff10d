//! `dnstap listen SOCKET`: ringdns listens and every sink that connects gets the stream
//! (bidirectional Frame Streams with the sink as the reader: READY -> its ACCEPT -> START,
//! data frames, STOP -> its FINISH), as CoreDNS's `listener.go`.
//!
//! The query path is the one of a dialled reader: each core encodes into its own bounded
//! buffer ([`crate::core::Sink`]) and wakes its writer task. For a `listen` line that task
//! ([`run_core`]) hands each batch of frames (one shared copy) to every connected sink's
//! queue. One listener thread per line accepts connections and gives each sink a thread
//! that does the handshake and writes what the cores queued for it, in order. A sink's
//! queue is bounded (10 000 × **queue** messages, 1 KiB each on average, over all cores): a
//! batch that does not fit is dropped for that sink only and counted; a write not done
//! within 4 s closes that sink's connection (what was queued for it is counted as dropped),
//! as CoreDNS closes a sink whose write fails. The cores learn of new and closed sinks from
//! a generation number, off the query path.

use crate::Shared;
use crate::core::{BYTES_PER_MESSAGE, CoreTaps, Sink};
use crate::fstrm::{self, CONTENT_TYPE, Control};
use crate::setup::{Endpoint, TapConfig};
use crate::writer::{ERROR_CHECK, TIMEOUT, frames_or_idle, log_drops};
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::rc::Weak;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, mpsc};
use std::time::{Duration, Instant};

/// How often the listener looks for a connection (and at the stop flag) when none came.
const ACCEPT_POLL: Duration = Duration::from_millis(100);
/// How often a listener whose address is taken (the old configuration's, on a reload)
/// tries to bind again.
const BIND_RETRY: Duration = Duration::from_millis(250);
/// How long a stopping listener waits for the cores' last batches before it ends the
/// sinks' streams.
const LAST_BATCHES: Duration = Duration::from_secs(2);

/// A `listen` line's connected sinks, shared by its listener, its sinks' threads and the
/// cores' writer tasks.
#[derive(Default)]
pub struct Hub {
    set: Mutex<PeerSet>,
    /// Bumped whenever a sink joins or leaves, so a core re-reads the set only then.
    generation: AtomicU64,
    /// The listener thread was started (by the first core's writer).
    started: AtomicBool,
    /// The cores' writer tasks running: when none is left the chain was dropped.
    cores: AtomicUsize,
    /// Connections accepted, to name them in logs.
    accepted: AtomicU64,
}

#[derive(Default)]
struct PeerSet {
    peers: Vec<Arc<Peer>>,
    /// The listener ends: a sink whose handshake finishes now is sent STOP at once.
    closing: bool,
}

impl Hub {
    fn set(&self) -> MutexGuard<'_, PeerSet> {
        self.set.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One connected sink, as the cores see it.
struct Peer {
    tx: mpsc::Sender<Job>,
    /// Frames and bytes queued for it, over all cores (the bound).
    frames: AtomicUsize,
    bytes: AtomicUsize,
    /// Its connection was closed: the cores stop handing it batches.
    closed: AtomicBool,
}

/// What a sink's thread is given.
enum Job {
    /// Frames to write, and where to count how it went.
    Data {
        bytes: Arc<[u8]>,
        frames: usize,
        tally: Arc<Tally>,
    },
    /// The stream ends: STOP, FINISH.
    Stop,
}

/// A core's counts from the sinks' threads (the core's counters are its own to add to):
/// its writer task moves them into the metrics.
#[derive(Default)]
struct Tally {
    sent: AtomicU64,
    dropped: AtomicU64,
}

fn hub(cfg: &TapConfig) -> &Hub {
    cfg.listen.as_ref().expect("a listen line has a hub")
}

/// The core's writer task of `listen` line `index`: hands the core's frames to every
/// connected sink until the chain is dropped or the server stops. The first core's also
/// starts the line's listener thread.
pub async fn run_core(taps: Weak<CoreTaps>, index: usize) {
    let Some(core) = taps.upgrade() else { return };
    let shared = core.shared.clone();
    drop(core);
    let cfg = &shared.taps[index];
    let hub = hub(cfg);
    shared.writers.fetch_add(1, Ordering::AcqRel);
    hub.cores.fetch_add(1, Ordering::AcqRel);
    if !hub.started.swap(true, Ordering::AcqRel) {
        spawn_listener(&shared, index);
    }
    let tally = Arc::new(Tally::default());
    let mut peers: Vec<Arc<Peer>> = Vec::new();
    let mut generation = u64::MAX;
    let mut last_check = Instant::now();
    loop {
        let Some(core) = taps.upgrade() else { break };
        let sink = core.sinks[index].clone();
        let ending = core.shared.ending();
        core.refresh_anchor();
        harvest(&tally, &sink);
        let g = hub.generation.load(Ordering::Acquire);
        if g != generation {
            generation = g;
            peers = hub.set().peers.clone();
        }
        peers.retain(|p| !p.closed.load(Ordering::Acquire));
        sink.connected.set(!ending && !peers.is_empty());
        if last_check.elapsed() >= ERROR_CHECK {
            last_check = Instant::now();
            log_drops(&core, &sink);
        }
        drop(core);
        if !ending {
            frames_or_idle(&sink).await;
        }
        let batch = {
            let mut p = sink.pending.borrow_mut();
            let frames = std::mem::take(&mut p.frames);
            let bytes = (frames > 0).then(|| Arc::<[u8]>::from(&p.buf[..]));
            p.buf.clear();
            bytes.map(|b| (b, frames))
        };
        if let Some((bytes, frames)) = batch {
            hand(cfg, &peers, &bytes, frames, &tally, &sink);
        }
        if ending {
            break;
        }
    }
    hub.cores.fetch_sub(1, Ordering::AcqRel);
    shared.writers.fetch_sub(1, Ordering::AcqRel);
}

/// Moves what the sinks' threads counted for this core into its counters.
fn harvest(tally: &Tally, sink: &Sink) {
    sink.counters.sent.add(tally.sent.swap(0, Ordering::AcqRel));
    let dropped = tally.dropped.swap(0, Ordering::AcqRel);
    if dropped > 0 {
        sink.drop_n(dropped);
    }
}

/// Queues a batch for every connected sink that has room for it; the others drop it.
fn hand(
    cfg: &TapConfig,
    peers: &[Arc<Peer>],
    bytes: &Arc<[u8]>,
    frames: usize,
    tally: &Arc<Tally>,
    sink: &Sink,
) {
    let max_bytes = cfg.queue * BYTES_PER_MESSAGE;
    for p in peers {
        let full = p.frames.load(Ordering::Acquire) + frames > cfg.queue
            || p.bytes.load(Ordering::Acquire) + bytes.len() > max_bytes;
        if full || p.closed.load(Ordering::Acquire) {
            sink.drop_n(frames as u64);
            continue;
        }
        p.frames.fetch_add(frames, Ordering::AcqRel);
        p.bytes.fetch_add(bytes.len(), Ordering::AcqRel);
        let job = Job::Data {
            bytes: bytes.clone(),
            frames,
            tally: tally.clone(),
        };
        if p.tx.send(job).is_err() {
            p.frames.fetch_sub(frames, Ordering::AcqRel);
            p.bytes.fetch_sub(bytes.len(), Ordering::AcqRel);
            sink.drop_n(frames as u64);
        }
    }
}

fn spawn_listener(shared: &Arc<Shared>, index: usize) {
    shared.writers.fetch_add(1, Ordering::AcqRel);
    let mine = shared.clone();
    let spawned = std::thread::Builder::new()
        .name("dnstap-listen".into())
        .spawn(move || {
            listener(&mine, index);
            mine.writers.fetch_sub(1, Ordering::AcqRel);
        });
    if let Err(e) = spawned {
        shared.writers.fetch_sub(1, Ordering::AcqRel);
        ringdns_plugin::error!(
            "plugin/dnstap: Failed to start dnstap listener: {}: {e}",
            shared.taps[index].label
        );
    }
}

/// A bound listening socket.
enum Bound {
    /// The path, and the socket file's inode (so that only our own file is removed).
    Unix(UnixListener, PathBuf, u64),
    Tcp(TcpListener),
}

/// An accepted connection, before the handshakes.
enum Conn {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Bound {
    fn bind(endpoint: &Endpoint) -> io::Result<Bound> {
        let b = match endpoint {
            Endpoint::Unix(path) => {
                let l = UnixListener::bind(path)?;
                let ino = std::fs::metadata(path).map(|m| m.ino()).unwrap_or(0);
                Bound::Unix(l, path.clone(), ino)
            }
            Endpoint::Tcp(addr) | Endpoint::Tls(addr, _) => Bound::Tcp(TcpListener::bind(addr)?),
        };
        match &b {
            Bound::Unix(l, ..) => l.set_nonblocking(true)?,
            Bound::Tcp(l) => l.set_nonblocking(true)?,
        }
        Ok(b)
    }

    fn accept(&self) -> io::Result<Conn> {
        Ok(match self {
            Bound::Unix(l, ..) => Conn::Unix(l.accept()?.0),
            Bound::Tcp(l) => Conn::Tcp(l.accept()?.0),
        })
    }

    /// Stops listening; a unix socket's file is removed first (as Go's listener does on
    /// close), when it is still ours.
    fn close(self) {
        if let Bound::Unix(_, path, ino) = &self
            && std::fs::metadata(path).is_ok_and(|m| m.ino() == *ino)
        {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Whether the listener ends: the server stops, a newer configuration took over, or the
/// chain was dropped (no core's writer is left).
fn over(shared: &Shared, hub: &Hub) -> bool {
    shared.ending() || hub.cores.load(Ordering::Acquire) == 0
}

/// The listener thread of line `index`: binds (again and again while the address is taken),
/// accepts sinks, and at the end sends each STOP and waits for their threads.
fn listener(shared: &Arc<Shared>, index: usize) {
    let cfg = &shared.taps[index];
    let hub = hub(cfg);
    let mut logged = false;
    let bound = loop {
        if over(shared, hub) {
            return;
        }
        match Bound::bind(&cfg.endpoint) {
            Ok(b) => break b,
            Err(e) => {
                if !logged {
                    ringdns_plugin::error!(
                        "plugin/dnstap: Failed to start dnstap listener: {}: {e}",
                        cfg.label
                    );
                    logged = true;
                }
                std::thread::sleep(BIND_RETRY);
            }
        }
    };
    let mut threads = Vec::new();
    while !over(shared, hub) {
        match bound.accept() {
            Ok(conn) => {
                let n = hub.accepted.fetch_add(1, Ordering::Relaxed) + 1;
                let mine = shared.clone();
                let spawned = std::thread::Builder::new()
                    .name("dnstap-sink".into())
                    .spawn(move || sink_thread(&mine, index, conn, n));
                match spawned {
                    Ok(t) => threads.push(t),
                    Err(e) => ringdns_plugin::warning!(
                        "plugin/dnstap: Error accepting dnstap connection: {e}"
                    ),
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::sleep(ACCEPT_POLL),
            Err(e) => {
                ringdns_plugin::warning!("plugin/dnstap: Error accepting dnstap connection: {e}");
                std::thread::sleep(ACCEPT_POLL);
            }
        }
        threads.retain(|t| !t.is_finished());
    }
    bound.close();
    let t0 = Instant::now();
    while hub.cores.load(Ordering::Acquire) > 0 && t0.elapsed() < LAST_BATCHES {
        std::thread::sleep(Duration::from_millis(10));
    }
    {
        let mut set = hub.set();
        set.closing = true;
        for p in &set.peers {
            let _ = p.tx.send(Job::Stop);
        }
    }
    for t in threads {
        let _ = t.join();
    }
}

/// A sink's thread: the TLS handshake (`tls://`), the Frame Streams handshake, then the
/// frames the cores queue for it until STOP or a failed write.
fn sink_thread(shared: &Arc<Shared>, index: usize, conn: Conn, n: u64) {
    let cfg = &shared.taps[index];
    let result = match conn {
        Conn::Unix(s) => {
            let _ = s.set_nonblocking(false);
            let _ = s.set_read_timeout(Some(TIMEOUT));
            let _ = s.set_write_timeout(Some(TIMEOUT));
            session(cfg, s)
        }
        Conn::Tcp(s) => {
            let _ = s.set_nonblocking(false);
            let _ = s.set_read_timeout(Some(TIMEOUT));
            let _ = s.set_write_timeout(Some(TIMEOUT));
            // CoreDNS's socket options: Nagle on, and the write buffer.
            let _ = s.set_nodelay(false);
            let _ = socket2_04::SockRef::from(&s).set_send_buffer_size(cfg.write_buffer);
            match &cfg.listen_tls {
                Some(tls) => tls_session(cfg, tls.config.clone(), s),
                None => session(cfg, s),
            }
        }
    };
    if let Err(e) = result {
        let e = if e.kind() == io::ErrorKind::WouldBlock {
            io::Error::new(io::ErrorKind::TimedOut, "i/o timeout")
        } else {
            e
        };
        ringdns_plugin::warning!(
            "plugin/dnstap: dnstap sink {n} on {} closed: {e}",
            cfg.label
        );
    }
}

fn tls_session(
    cfg: &TapConfig,
    config: Arc<rustls::ServerConfig>,
    mut tcp: TcpStream,
) -> io::Result<()> {
    let mut conn = rustls::ServerConnection::new(config).map_err(io::Error::other)?;
    while conn.is_handshaking() {
        conn.complete_io(&mut tcp)?;
    }
    session(cfg, rustls::StreamOwned::new(conn, tcp))
}

/// Reads one control frame, which must be `want`.
fn read_control<S: Read>(s: &mut S, want: Control) -> io::Result<fstrm::Parsed> {
    let bad = |e: String| io::Error::new(io::ErrorKind::InvalidData, e);
    let mut head = [0u8; 8];
    s.read_exact(&mut head)?;
    let n = fstrm::control_len(head).map_err(|e| bad(e.to_string()))?;
    let mut body = [0u8; fstrm::CONTROL_MAX];
    s.read_exact(&mut body[..n])?;
    let p = fstrm::parse_control(&body[..n]).map_err(|e| bad(e.to_string()))?;
    if p.kind != want {
        return Err(bad(format!("got {:?}, want {want:?}", p.kind)));
    }
    Ok(p)
}

fn write_control<S: Write>(s: &mut S, kind: Control, content_type: &[u8]) -> io::Result<()> {
    let mut out = Vec::new();
    fstrm::write_control(&mut out, kind, content_type);
    s.write_all(&out)?;
    s.flush()
}

/// The sink's session: READY, its ACCEPT, START; the frames; STOP, its FINISH.
fn session<S: Read + Write>(cfg: &TapConfig, mut s: S) -> io::Result<()> {
    write_control(&mut s, Control::Ready, CONTENT_TYPE)?;
    let accept = read_control(&mut s, Control::Accept)?;
    if !accept.content_types.iter().any(|c| c == CONTENT_TYPE) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "the sink does not accept protobuf:dnstap.Dnstap",
        ));
    }
    write_control(&mut s, Control::Start, CONTENT_TYPE)?;
    let hub = hub(cfg);
    let (tx, rx) = mpsc::channel();
    let peer = Arc::new(Peer {
        tx,
        frames: AtomicUsize::new(0),
        bytes: AtomicUsize::new(0),
        closed: AtomicBool::new(false),
    });
    {
        let mut set = hub.set();
        if set.closing {
            drop(set);
            return finish(&mut s);
        }
        set.peers.push(peer.clone());
    }
    hub.generation.fetch_add(1, Ordering::AcqRel);
    let result = pump(&mut s, &rx, &peer);
    peer.closed.store(true, Ordering::Release);
    hub.set().peers.retain(|p| !Arc::ptr_eq(p, &peer));
    hub.generation.fetch_add(1, Ordering::AcqRel);
    // What was queued for a sink whose connection broke is lost.
    while let Ok(job) = rx.try_recv() {
        if let Job::Data { frames, tally, .. } = job {
            tally.dropped.fetch_add(frames as u64, Ordering::AcqRel);
        }
    }
    result
}

/// Writes the queued frames in order until STOP (then STOP, FINISH) or a failed write.
fn pump<S: Read + Write>(s: &mut S, rx: &mpsc::Receiver<Job>, peer: &Peer) -> io::Result<()> {
    loop {
        match rx.recv() {
            Ok(Job::Data {
                bytes,
                frames,
                tally,
            }) => {
                let r = s.write_all(&bytes).and_then(|()| s.flush());
                peer.frames.fetch_sub(frames, Ordering::AcqRel);
                peer.bytes.fetch_sub(bytes.len(), Ordering::AcqRel);
                let count = if r.is_ok() {
                    &tally.sent
                } else {
                    &tally.dropped
                };
                count.fetch_add(frames as u64, Ordering::AcqRel);
                r?;
            }
            Ok(Job::Stop) | Err(_) => return finish(s),
        }
    }
}

/// STOP, and the sink's FINISH.
fn finish<S: Read + Write>(s: &mut S) -> io::Result<()> {
    write_control(s, Control::Stop, b"")?;
    read_control(s, Control::Finish).map(|_| ())
}
