//! A core's writer task for one `dnstap` line: dials the reader, speaks bidirectional Frame
//! Streams (READY -> ACCEPT -> START, data frames, STOP -> FINISH), and drains the core's
//! buffer. As CoreDNS's `dio.serve`: a write error drops what was being written and redials
//! at once; a failed dial is retried every 10 s; drops are logged every 10 s. Off the query
//! path: the queries only append to the buffer.

use crate::core::{CoreTaps, Sink};
use crate::fstrm::{self, CONTENT_TYPE, Control};
use crate::setup::{Endpoint, TapConfig};
use futures_lite::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use ringdns_plugin::glommio::net::{TcpStream, UnixStream};
use ringdns_plugin::glommio::timer::sleep;
use std::future::Future;
use std::io;
use std::rc::{Rc, Weak};
use std::sync::atomic::Ordering;
use std::task::Poll;
use std::time::{Duration, Instant};

/// CoreDNS's `tcpTimeout`: dialling, the handshake, and each write.
pub const TIMEOUT: Duration = Duration::from_secs(4);
/// CoreDNS's `errorCheckInterval`: redial and drop logging.
pub const ERROR_CHECK: Duration = Duration::from_secs(10);
/// How long the writer sleeps with nothing to write before it looks at the stop flag and
/// refreshes the core's clock pair.
const IDLE: Duration = Duration::from_millis(250);

/// `fut`, or a TimedOut error after `limit`.
async fn within<T>(limit: Duration, fut: impl Future<Output = io::Result<T>>) -> io::Result<T> {
    futures_lite::future::or(fut, async {
        sleep(limit).await;
        Err(io::Error::new(io::ErrorKind::TimedOut, "i/o timeout"))
    })
    .await
}

/// Reads one control frame, which must be `want`.
async fn read_control<S: AsyncRead + Unpin>(s: &mut S, want: Control) -> io::Result<fstrm::Parsed> {
    let bad = |e: String| io::Error::new(io::ErrorKind::InvalidData, e);
    let mut head = [0u8; 8];
    s.read_exact(&mut head).await?;
    let n = fstrm::control_len(head).map_err(|e| bad(e.to_string()))?;
    let mut body = [0u8; fstrm::CONTROL_MAX];
    s.read_exact(&mut body[..n]).await?;
    let p = fstrm::parse_control(&body[..n]).map_err(|e| bad(e.to_string()))?;
    if p.kind != want {
        return Err(bad(format!("got {:?}, want {want:?}", p.kind)));
    }
    Ok(p)
}

/// The handshake: READY, the reader's ACCEPT (naming our content type), START.
async fn handshake<S: AsyncRead + AsyncWrite + Unpin>(s: &mut S) -> io::Result<()> {
    let mut out = Vec::new();
    fstrm::write_control(&mut out, Control::Ready, CONTENT_TYPE);
    s.write_all(&out).await?;
    s.flush().await?;
    let accept = read_control(s, Control::Accept).await?;
    if !accept.content_types.iter().any(|c| c == CONTENT_TYPE) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "the reader does not accept protobuf:dnstap.Dnstap",
        ));
    }
    out.clear();
    fstrm::write_control(&mut out, Control::Start, CONTENT_TYPE);
    s.write_all(&out).await?;
    s.flush().await
}

/// STOP, and the reader's FINISH.
async fn finish<S: AsyncRead + AsyncWrite + Unpin>(s: &mut S) -> io::Result<()> {
    let mut out = Vec::new();
    fstrm::write_control(&mut out, Control::Stop, b"");
    s.write_all(&out).await?;
    s.flush().await?;
    read_control(s, Control::Finish).await.map(|_| ())
}

/// Why a session ended.
enum End {
    /// The server stops, or the chain was dropped: no redial.
    Done,
    /// The connection broke.
    Broken(io::Error),
}

/// Waits until the sink has frames, or `IDLE` passed.
pub async fn frames_or_idle(sink: &Sink) {
    let ready = std::future::poll_fn(|cx| {
        if sink.pending.borrow().frames > 0 {
            Poll::Ready(())
        } else {
            sink.waker.set(Some(cx.waker().clone()));
            Poll::Pending
        }
    });
    futures_lite::future::or(ready, sleep(IDLE)).await;
    sink.waker.set(None);
}

/// Writes the sink's frames to `s` until the connection breaks or the writer is told to
/// end; ends the stream with STOP/FINISH then.
async fn session<S: AsyncRead + AsyncWrite + Unpin>(
    s: &mut S,
    taps: &Weak<CoreTaps>,
    index: usize,
) -> End {
    let mut sending = Vec::with_capacity(64 << 10);
    let mut last_check = Instant::now();
    loop {
        let Some(core) = taps.upgrade() else {
            let _ = within(TIMEOUT, finish(s)).await;
            return End::Done;
        };
        let sink = core.sinks[index].clone();
        if core.shared.ending() {
            // What is queued goes out before STOP.
            let n = {
                let mut p = sink.pending.borrow_mut();
                std::mem::swap(&mut p.buf, &mut sending);
                std::mem::take(&mut p.frames)
            };
            sink.connected.set(false);
            drop(core);
            if within(TIMEOUT, s.write_all(&sending)).await.is_ok() {
                sink.counters.sent.add(n as u64);
            } else {
                sink.counters.dropped.add(n as u64);
            }
            let _ = within(TIMEOUT, finish(s)).await;
            return End::Done;
        }
        core.refresh_anchor();
        if last_check.elapsed() >= ERROR_CHECK {
            last_check = Instant::now();
            log_drops(&core, &sink);
        }
        drop(core);
        frames_or_idle(&sink).await;
        let n = {
            let mut p = sink.pending.borrow_mut();
            std::mem::swap(&mut p.buf, &mut sending);
            std::mem::take(&mut p.frames)
        };
        if n == 0 {
            continue;
        }
        let r = within(TIMEOUT, async {
            s.write_all(&sending).await?;
            s.flush().await
        })
        .await;
        sending.clear();
        match r {
            Ok(()) => sink.counters.sent.add(n as u64),
            Err(e) => {
                sink.counters.dropped.add(n as u64);
                sink.unlogged_drops
                    .set(sink.unlogged_drops.get() + n as u64);
                return End::Broken(e);
            }
        }
    }
}

/// Logs the drops of `sink` since the last time, as CoreDNS's `Dropped dnstap messages`.
pub fn log_drops(core: &CoreTaps, sink: &Sink) {
    let n = sink.unlogged_drops.replace(0);
    if n > 0 {
        let label = &core.shared.taps[sink.index].label;
        ringdns_plugin::warning!(
            "plugin/dnstap: Dropped dnstap messages: {n} ({label}, core {})",
            core.core
        );
    }
}

/// Dials the reader and runs a session on the connection.
async fn connect_and_serve(
    cfg: &TapConfig,
    taps: &Weak<CoreTaps>,
    index: usize,
) -> io::Result<End> {
    let mark = |sink_up: bool| {
        if let Some(core) = taps.upgrade() {
            core.sinks[index].connected.set(sink_up);
        }
    };
    let end = match &cfg.endpoint {
        Endpoint::Unix(path) => {
            let mut s = within(TIMEOUT, async {
                UnixStream::connect(path).await.map_err(io::Error::from)
            })
            .await?;
            within(TIMEOUT, handshake(&mut s)).await?;
            mark(true);
            session(&mut s, taps, index).await
        }
        Endpoint::Tcp(addr) => {
            let mut s = tcp(*addr, cfg.write_buffer).await?;
            within(TIMEOUT, handshake(&mut s)).await?;
            mark(true);
            session(&mut s, taps, index).await
        }
        Endpoint::Tls(addr, name) => {
            let tcp = tcp(*addr, cfg.write_buffer).await?;
            let config = cfg
                .tls
                .clone()
                .ok_or_else(|| io::Error::other("no TLS configuration"))?;
            let name = crate::tls::server_name(name).map_err(io::Error::other)?;
            let connect = futures_rustls::TlsConnector::from(config).connect(name, tcp);
            let mut s = within(TIMEOUT, connect).await?;
            within(TIMEOUT, handshake(&mut s)).await?;
            mark(true);
            session(&mut s, taps, index).await
        }
    };
    mark(false);
    Ok(end)
}

/// A TCP connection with CoreDNS's socket options: the write buffer, Nagle on.
async fn tcp(addr: std::net::SocketAddr, write_buffer: usize) -> io::Result<TcpStream> {
    let s = TcpStream::connect_timeout(addr, TIMEOUT)
        .await
        .map_err(io::Error::from)?;
    let sock = socket2_04::SockRef::from(&s);
    let _ = sock.set_send_buffer_size(write_buffer);
    let _ = s.set_nodelay(false);
    Ok(s)
}

/// Whether the writer should end: the chain was dropped, or the server stops.
fn over(taps: &Weak<CoreTaps>) -> bool {
    taps.upgrade().is_none_or(|c| c.shared.ending())
}

/// The writer of line `index` on this core, until the chain is dropped or the server stops.
pub async fn run(taps: Weak<CoreTaps>, index: usize) {
    let Some(core) = taps.upgrade() else { return };
    let shared = core.shared.clone();
    let first = core.core == 0;
    drop(core);
    shared.writers.fetch_add(1, Ordering::AcqRel);
    let cfg = &shared.taps[index];
    let mut logged = false;
    while !over(&taps) {
        match connect_and_serve(cfg, &taps, index).await {
            Ok(End::Done) => break,
            Ok(End::Broken(e)) => {
                ringdns_plugin::warning!("plugin/dnstap: connection to {} lost: {e}", cfg.label);
                logged = false;
                // CoreDNS redials at once after a write error.
                continue;
            }
            Err(e) => {
                // As CoreDNS, at start-up: "No connection to dnstap endpoint" (once per
                // outage, from the first core, not every 10 s from every core).
                if first && !logged {
                    ringdns_plugin::error!(
                        "plugin/dnstap: No connection to dnstap endpoint: {}: {e}",
                        cfg.label
                    );
                    logged = true;
                }
            }
        }
        // Wait for the next dial, looking at the stop flag and logging drops meanwhile.
        let t0 = Instant::now();
        while t0.elapsed() < ERROR_CHECK && !over(&taps) {
            if let Some(core) = taps.upgrade() {
                core.refresh_anchor();
            }
            sleep(IDLE).await;
        }
        if let Some(core) = taps.upgrade() {
            log_drops(&core, &core.sinks[index]);
        }
    }
    shared.writers.fetch_sub(1, Ordering::AcqRel);
}

/// Starts the core's writers (once per core's taps).
pub fn start(taps: &Rc<CoreTaps>) {
    if taps.started.replace(true) {
        return;
    }
    for i in 0..taps.sinks.len() {
        let weak = Rc::downgrade(taps);
        if taps.shared.taps[i].listen.is_some() {
            ringdns_plugin::glommio::spawn_local(crate::listen::run_core(weak, i)).detach();
        } else {
            ringdns_plugin::glommio::spawn_local(run(weak, i)).detach();
        }
    }
}
