//! DNS over TCP for one listener on one core: accept, then one task per connection reading
//! length-prefixed queries with CoreDNS's timeouts (the first message within 3 s, each later
//! one within 10 s, a reply written within 5 s), each message under one deadline whatever
//! arrives in between (`frames`), in a table whose caps an idle flood or one client cannot
//! exhaust (`table`). Connections pick up a reloaded configuration between queries (see
//! `swap`); the accept loop's socket stays open across reloads that keep it.

mod frames;
mod proxied;
mod table;

pub use table::TcpCaps;

use super::serve::{Verdict, serve_deferred, serve_inline, spawn_deferred, spawn_refreshes};
use super::stop::Stop;
use super::swap::View;
use crate::plugin::ReplyStream;
use crate::plugin::spare::SpareBufs;
use crate::plugin::{Handler, Proto};
use frames::{FrameReader, NoMessage};
use futures_lite::AsyncWriteExt;
use glommio::net::{TcpListener, TcpStream};
use glommio::sync::{RwLock, Semaphore};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, IntoRawFd};
use std::rc::Rc;
use std::time::{Duration, Instant};
use table::{ConnTable, Refusal};

/// Queries of one connection that may wait (as tasks) at once.
const MAX_DEFERRED_PER_CONNECTION: u64 = 64;

/// Queries a connection serves in a row before it lets the core's other tasks run.
/// glommio does not preempt, and with a client that keeps its pipeline full every read and
/// write completes at once: without a yield the connection would keep the core to itself
/// (UDP listeners, forward's workers). One executor turn per 64 queries costs nothing
/// measurable.
const QUERIES_BEFORE_YIELD: u64 = 64;

/// Replies of pipelined queries gathered before they are written at once.
const WRITE_AT: usize = 16 * 1024;

/// TCP limits of a listener.
#[derive(Debug, Clone, Copy)]
pub struct TcpLimits {
    /// Time for the whole first message of a connection.
    pub read: Duration,
    /// Time for each later message, from when the connection starts waiting for it (the
    /// message before it read, and the replies ready by then written).
    pub idle: Duration,
    /// Wait for a reply to be written.
    pub write: Duration,
    /// Queries per connection before it is closed (`timeouts { maxtcpqueries }`).
    pub max_queries: Option<u64>,
}

impl TcpLimits {
    /// The listener's `timeouts` (CoreDNS's defaults without).
    pub fn new(t: &crate::plugin::TcpTimeouts) -> Self {
        TcpLimits {
            read: t.read,
            idle: t.idle,
            write: t.write,
            max_queries: t.max_queries,
        }
    }
}

/// Accepts connections on the listener of `view` (the listening socket `sock`) until `stop`
/// is given (at shutdown, or when a reload removes the listener), then stops listening at
/// once. `caps` are the global block's.
pub async fn run<H: Handler + 'static>(
    mut view: View<H>,
    sock: socket2::Socket,
    caps: TcpCaps,
    stop: Rc<Stop>,
    core_index: usize,
) {
    let fd = sock.into_raw_fd();
    // SAFETY: the fd comes from a socket2 socket we owned and gave up; glommio's listener
    // becomes its only owner, and lives until this function returns.
    let listener = unsafe { TcpListener::from_raw_fd(fd) };
    let table = ConnTable::new(caps);
    let mut warned = Warned::default();
    let counters: std::sync::Arc<crate::metrics::tcp::TcpCounters> =
        crate::metrics::registry::cell(&[&view.core.listeners[view.li].name], core_index);
    // The connections' scratch buffers (replies, copies of deferred queries), lent while a
    // connection has work, so that an idle one holds none.
    let spare = Rc::new(SpareBufs::default());
    loop {
        let accepted = futures_lite::future::or(async { Some(listener.accept().await) }, async {
            stop.wait().await;
            None
        })
        .await;
        let stream = match accepted {
            None => break,
            Some(Ok(s)) => s,
            Some(Err(e)) => {
                crate::error!("tcp accept on {}: {e}", view.core.listeners[view.li].name);
                glommio::timer::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let Ok(client) = stream.peer_addr() else {
            continue;
        };
        view.refresh();
        let name = &view.core.listeners[view.li].name;
        let admitted = match table.admit(stream.as_raw_fd(), client.ip()) {
            Ok(a) => a,
            Err(refusal) => {
                match refusal {
                    Refusal::ClientCap => counters.client_limit.inc(),
                    Refusal::Full => counters.full.inc(),
                }
                warned.refused(refusal, caps, name, client);
                drop(stream);
                continue;
            }
        };
        if admitted.evicted_one {
            counters.evicted.inc();
            warned.evicted(caps, name);
        }
        counters.opened.inc();
        // Pipelined replies must not wait for the client's delayed ACK (Nagle); Go, and so
        // CoreDNS, sets this on every connection.
        let _ = stream.set_nodelay(true);
        let limits = TcpLimits::new(&view.core.meta[view.li].tcp);
        // `proxyproto`: the policy for this peer; `skip` reads no header.
        let proxy = view.core.listeners[view.li]
            .proxy
            .as_ref()
            .map(|p| p.policy(client.ip()))
            .filter(|p| *p != crate::plugin::ProxyPolicy::Skip);
        let (view, stop, counters) = (view.clone(), stop.clone(), counters.clone());
        let spare = spare.clone();
        glommio::spawn_local(async move {
            let registration = admitted.registration;
            let conn = Conn {
                client,
                proxy,
                limits,
                state: registration.state().clone(),
                spare,
            };
            connection(view, stream, conn, &stop).await;
            // `stream` was dropped as `connection` returned; the registration goes with it,
            // in the same step, so its fd is never used after the socket is released.
            drop(registration);
            counters.closed.inc();
        })
        .detach();
    }
    // The accept in flight keeps the socket open until glommio has submitted and completed
    // its cancellation (at its next reactor turn; for a core that is ending, at the ring's
    // teardown after the process exited). Meanwhile the kernel would still take connections
    // that nobody accepts and reset them later: a connection right after a stop must be
    // refused instead.
    if let Err(e) = nix::sys::socket::shutdown(fd, nix::sys::socket::Shutdown::Read) {
        crate::error!(
            "tcp listener {}: stop listening: {e}",
            view.core.listeners[view.li].name
        );
    }
}

/// How often each of the accept loop's warnings may be logged: a client hammering a cap
/// must not flood the log (the metrics count every case).
const WARN_EVERY: Duration = Duration::from_secs(10);

/// When the accept loop last logged each warning.
#[derive(Default)]
struct Warned {
    full: Option<Instant>,
    evicting: Option<Instant>,
    client: Option<Instant>,
}

/// Whether a warning last logged at `last` may be logged now; notes it if so.
fn due(last: &mut Option<Instant>) -> bool {
    let now = Instant::now();
    if last.is_none_or(|t| now.duration_since(t) >= WARN_EVERY) {
        *last = Some(now);
        return true;
    }
    false
}

impl Warned {
    fn refused(
        &mut self,
        why: Refusal,
        caps: TcpCaps,
        listener: &str,
        client: std::net::SocketAddr,
    ) {
        match why {
            Refusal::ClientCap if due(&mut self.client) => crate::warning!(
                "TCP connections per client ({}) reached on {listener} (this core) by {}; closing its new connections (counted in ringdns_tcp_connections_shed_total, logged at most every 10s)",
                caps.per_client,
                client.ip()
            ),
            Refusal::Full if due(&mut self.full) => crate::warning!(
                "TCP connection limit ({}) reached on {listener} (this core) with a query in flight on every connection; closing new connections (counted in ringdns_tcp_connections_shed_total, logged at most every 10s)",
                caps.total
            ),
            _ => {}
        }
    }

    fn evicted(&mut self, caps: TcpCaps, listener: &str) {
        if due(&mut self.evicting) {
            crate::warning!(
                "TCP connection limit ({}) reached on {listener} (this core); closing the connections idle longest to make room (counted in ringdns_tcp_connections_shed_total, logged at most every 10s)",
                caps.total
            );
        }
    }
}

/// A second handle on the connection's socket for writing, so replies can be written by the
/// reading loop and by deferred queries alike, one at a time, while the loop keeps reading.
fn writer_for(stream: &TcpStream, limits: &TcpLimits) -> std::io::Result<Rc<RwLock<TcpStream>>> {
    // SAFETY: the fd is open for as long as `stream` lives, which outlasts this borrow.
    let fd = unsafe { BorrowedFd::borrow_raw(stream.as_raw_fd()) }.try_clone_to_owned()?;
    // SAFETY: `fd` is a fresh duplicate that we own; the new stream becomes its only owner.
    let w = unsafe { TcpStream::from_raw_fd(fd.into_raw_fd()) };
    let _ = w.set_write_timeout(Some(limits.write));
    Ok(Rc::new(RwLock::new(w)))
}

/// Appends one reply to `out` as a TCP frame.
fn push_frame(out: &mut Vec<u8>, reply: &[u8]) -> std::io::Result<()> {
    let Ok(len) = u16::try_from(reply.len()) else {
        return Err(std::io::Error::other("reply longer than a TCP frame"));
    };
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(reply);
    Ok(())
}

/// Writes the frames gathered in `out` and empties it.
async fn write_out(w: &RwLock<TcpStream>, out: &mut Vec<u8>) -> std::io::Result<()> {
    if out.is_empty() {
        return Ok(());
    }
    let mut g = w
        .write()
        .await
        .map_err(|_| std::io::Error::other("connection closed"))?;
    g.write_all(out).await?;
    g.flush().await?;
    drop(g);
    out.clear();
    Ok(())
}

/// A deferred query's way to send messages ahead of its reply (a zone transfer's).
struct Connection<'w> {
    writer: &'w RwLock<TcpStream>,
}

impl ReplyStream for Connection<'_> {
    fn send<'a>(&'a self, message: &'a [u8]) -> crate::plugin::SendFuture<'a> {
        Box::pin(async move {
            let mut out = Vec::with_capacity(message.len() + 2);
            push_frame(&mut out, message)?;
            write_out(self.writer, &mut out).await
        })
    }
}

/// Hands a scratch buffer back to the pool, if it holds one.
fn give_back(spare: &SpareBufs, buf: &mut Vec<u8>) {
    if buf.capacity() > 0 {
        spare.put(std::mem::take(buf));
    }
}

/// What a connection's task knows besides its socket.
struct Conn {
    /// The peer; with a PROXY header, the client it names replaces it.
    client: std::net::SocketAddr,
    /// The PROXY policy for the peer, when a header is to be read first.
    proxy: Option<crate::plugin::ProxyPolicy>,
    limits: TcpLimits,
    /// Its entry in the listener's table.
    state: Rc<table::ConnState>,
    /// The listener's scratch buffers on this core.
    spare: Rc<SpareBufs>,
}

/// Serves one connection. A client may send many queries before reading (pipelining);
/// queries answered inline are written in order (those already buffered together, in one
/// write), and a query that has to wait is served as a task whose answer leaves when ready,
/// possibly after later ones.
async fn connection<H: Handler + 'static>(
    mut view: View<H>,
    mut stream: TcpStream,
    conn: Conn,
    stop: &Stop,
) {
    let Conn {
        mut client,
        proxy,
        limits,
        state,
        spare,
    } = conn;
    let Ok(writer) = writer_for(&stream, &limits) else {
        return;
    };
    let mut frames = FrameReader::default();
    if let Some(policy) = proxy {
        // Within the time for the first message; then the first message has its own.
        let read = proxied::client(
            &mut frames,
            &mut stream,
            (policy, client),
            limits.read,
            stop,
        );
        match read.await {
            Some(c) => client = c,
            None => return,
        }
    }
    let (mut reply, mut out) = (Vec::new(), Vec::new());
    let mut first = true;
    let mut served: u64 = 0;
    let waiting = Rc::new(Semaphore::new(MAX_DEFERRED_PER_CONNECTION));
    loop {
        if limits.max_queries.is_some_and(|m| served >= m) {
            // maxtcpqueries reached: close once the answers in flight are out.
            let _ = write_out(&writer, &mut out).await;
            break;
        }
        if !frames.has_message() {
            // Replies gathered for pipelined queries leave before the loop waits for more,
            // and the scratch buffers go back to the pool until there is work again.
            if write_out(&writer, &mut out).await.is_err() {
                break;
            }
            give_back(&spare, &mut out);
            give_back(&spare, &mut reply);
        }
        let wait = if first { limits.read } else { limits.idle };
        let query = match frames.next(&mut stream, wait, stop).await {
            Ok(q) => q,
            Err(NoMessage::Closed | NoMessage::Broken | NoMessage::Stopped) => break,
        };
        state.completed_message();
        first = false;
        served += 1;
        // A buffer with no capacity holds nothing: the pool's may replace it.
        for buf in [&mut reply, &mut out] {
            if buf.capacity() == 0 {
                *buf = spare.take();
            }
        }
        view.refresh();
        let (core, li) = (&view.core, view.li);
        let l = &core.listeners[li];
        match serve_inline(core, l, query, false, client, Proto::Tcp, &mut reply) {
            Verdict::Send => {
                if push_frame(&mut out, &reply).is_err()
                    || (out.len() >= WRITE_AT && write_out(&writer, &mut out).await.is_err())
                {
                    break;
                }
            }
            Verdict::Drop => {}
            Verdict::Defer => {
                // The message's time, for its deferred pass (log's duration, forward's
                // deadline): taken now, not when the task gets to run.
                let received = Instant::now();
                let packet = spare.copy_of(query);
                // Bound what one client can have waiting: past the limit, stop reading its
                // queries until one finishes (the replies gathered so far leave first).
                let permit = match waiting.try_acquire_static_permit(1) {
                    Ok(p) => p,
                    Err(_) => {
                        if write_out(&writer, &mut out).await.is_err() {
                            break;
                        }
                        let Ok(p) = waiting.acquire_static_permit(1).await else {
                            break;
                        };
                        p
                    }
                };
                let (writer, state, spare) = (writer.clone(), state.clone(), spare.clone());
                state.deferred_started();
                spawn_deferred(core.clone(), move |core| async move {
                    let _permit = permit;
                    let (mut reply, mut out) = (spare.take(), spare.take());
                    let l = &core.listeners[li];
                    let stream = Connection { writer: &writer };
                    let from = (client, Proto::Tcp, Some(&stream as &dyn ReplyStream));
                    if serve_deferred(&core, l, &packet, from, received, &mut reply).await
                        == Verdict::Send
                        && push_frame(&mut out, &reply).is_ok()
                    {
                        let _ = write_out(&writer, &mut out).await;
                    }
                    for buf in [packet, reply, out] {
                        spare.put(buf);
                    }
                    state.deferred_finished();
                });
            }
        }
        frames.consume();
        core.after_batch();
        spawn_refreshes(core);
        if stop.is_set() {
            let _ = write_out(&writer, &mut out).await;
            break;
        }
        if served.is_multiple_of(QUERIES_BEFORE_YIELD) {
            if write_out(&writer, &mut out).await.is_err() {
                break;
            }
            futures_lite::future::yield_now().await;
        }
    }
    give_back(&spare, &mut out);
    give_back(&spare, &mut reply);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::core::tests::{Notes, QUERY, one_block};
    use crate::runtime::swap::Current;
    use std::io::{Read, Write};

    /// `Notes`, spawning the task that sets `other_ran` when the first query is served.
    struct SpawnAtFirst(Notes);

    impl Handler for SpawnAtFirst {
        async fn serve(&self, req: &mut crate::plugin::Request<'_>) -> crate::plugin::Outcome {
            if self.0.served.get() == 0 {
                let flag = self.0.other_ran.clone();
                // glommio may poll a new task at once: its first poll only gets in line.
                glommio::spawn_local(async move {
                    futures_lite::future::yield_now().await;
                    flag.set(true)
                })
                .detach();
            }
            self.0.serve(req).await
        }

        fn is_end(&self) -> bool {
            false
        }

        fn after_batch(&self) {}
    }

    #[test]
    fn a_connection_that_keeps_its_pipeline_full_lets_other_tasks_run() {
        const QUERIES: usize = 20 * QUERIES_BEFORE_YIELD as usize;
        glommio::LocalExecutor::default().run(async {
            let notes = Notes::default();
            let (served_before, served) = (notes.served_before.clone(), notes.served.clone());
            // The other task is spawned with the first query, so it is ready to run from
            // then on and runs as soon as the connection gives the core back.
            let server = one_block(SpawnAtFirst(notes), false);
            let key = server.meta[0].key;
            let view = View::new(Rc::new(Current::new(server)), key).unwrap();
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let addr = listener.local_addr().unwrap();
            // Every query is in the socket before the connection is served: each read
            // completes at once.
            let mut client = std::net::TcpStream::connect(addr).unwrap();
            let mut frames = Vec::new();
            for _ in 0..QUERIES {
                frames.extend_from_slice(&(QUERY.len() as u16).to_be_bytes());
                frames.extend_from_slice(QUERY);
            }
            client.write_all(&frames).unwrap();
            let stream = listener.accept().await.unwrap();
            let limits = TcpLimits {
                read: Duration::from_secs(3),
                idle: Duration::from_secs(3),
                write: Duration::from_secs(3),
                max_queries: None,
            };
            let stop = Rc::new(Stop::new());
            let table = ConnTable::new(TcpCaps {
                total: 1,
                per_client: 0,
            });
            let client_addr = stream.peer_addr().unwrap();
            let admitted = table.admit(stream.as_raw_fd(), client_addr.ip()).unwrap();
            let conn = {
                let stop = stop.clone();
                glommio::spawn_local(async move {
                    let r = admitted.registration;
                    let conn = Conn {
                        client: client_addr,
                        proxy: None,
                        limits,
                        state: r.state().clone(),
                        spare: Rc::new(SpareBufs::default()),
                    };
                    connection(view, stream, conn, &stop).await
                })
            };
            for _ in 0..5000 {
                if served.get() == QUERIES {
                    break;
                }
                glommio::timer::sleep(Duration::from_millis(1)).await;
            }
            assert_eq!(served.get(), QUERIES);
            // The replies came back (the client reads them only now: they fit in the
            // socket buffers).
            let mut len = [0u8; 2];
            client.read_exact(&mut len).unwrap();
            let mut reply = vec![0u8; usize::from(u16::from_be_bytes(len))];
            client.read_exact(&mut reply).unwrap();
            assert_eq!(reply[..2], QUERY[..2], "the ID");
            assert!(reply[2] & 0x80 != 0, "a response");
            stop.trigger();
            drop(client);
            conn.await;
            assert!(
                served_before.get() <= QUERIES_BEFORE_YIELD as usize,
                "{} queries served before the other task ran",
                served_before.get()
            );
        });
    }
}
