//! One upstream as one core sees it: its pools of UDP sockets and TCP/TLS connections, and
//! the exchange of one query over the transport chosen for it.

use super::backoff::DialBackoff;
use super::config::{ForwardConfig, Upstream};
use super::conn::{Conn, ConnError};
use super::counters::UpstreamCounters;
use super::dial;
use super::udpmux::{self, UdpMux};
use futures_rustls::client::TlsStream;
use ringdns_plugin::glommio::net::TcpStream;
use ringdns_plugin::glommio::sync::Semaphore;
use ringdns_plugin::wire::{Header, reply};
use std::cell::RefCell;
use std::io;
use std::os::fd::AsRawFd;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a new TCP or TLS connection may take to open.
const DIAL_TIMEOUT: Duration = Duration::from_secs(2);

/// The transport of one exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// Plain UDP.
    Udp,
    /// Plain TCP.
    Tcp,
    /// TCP with TLS.
    Tls,
}

impl Via {
    /// Index into per-protocol counters.
    pub const fn index(self) -> usize {
        match self {
            Via::Udp => 0,
            Via::Tcp => 1,
            Via::Tls => 2,
        }
    }
}

/// Why an exchange failed.
#[derive(Debug)]
pub enum ExchangeError {
    /// No matching reply before the deadline.
    Timeout,
    /// The network said no (refused, unreachable, reset, …).
    Net(io::Error),
    /// A problem of this host, not of the upstream (out of file descriptors, no such local
    /// address): it says nothing about the upstream's health.
    Local(io::Error),
    /// The upstream answered with this error rcode and no question (it could not parse the
    /// query): the client gets FORMERR, as in CoreDNS; not a health failure.
    Rejected(u8),
}

impl ExchangeError {
    /// Sorts an I/O error into the upstream's fault or ours.
    fn from_io(e: io::Error) -> Self {
        match e.raw_os_error() {
            Some(
                libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM | libc::EADDRNOTAVAIL,
            ) => ExchangeError::Local(e),
            _ if matches!(
                e.kind(),
                io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
            ) =>
            {
                ExchangeError::Timeout
            }
            _ => ExchangeError::Net(e),
        }
    }

    /// Whether this failure should make the upstream be probed.
    pub fn is_upstream_fault(&self) -> bool {
        matches!(self, ExchangeError::Timeout | ExchangeError::Net(_))
    }
}

impl std::fmt::Display for ExchangeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExchangeError::Timeout => write!(f, "i/o timeout"),
            ExchangeError::Net(e) | ExchangeError::Local(e) => write!(f, "{e}"),
            ExchangeError::Rejected(rc) => write!(
                f,
                "upstream answered {} without a question",
                ringdns_plugin::wire::rcode_name(u16::from(*rc))
            ),
        }
    }
}

/// An upstream's per-core state.
pub struct UpstreamCore {
    /// Where and how.
    pub up: Upstream,
    udp: UdpMux,
    tcp: RefCell<Vec<Rc<Conn<TcpStream>>>>,
    tls: RefCell<Vec<Rc<Conn<TlsStream<TcpStream>>>>>,
    tcp_gate: Semaphore,
    tls_gate: Semaphore,
    tcp_backoff: DialBackoff,
    tls_backoff: DialBackoff,
    /// This core's counters for it.
    pub counters: Arc<UpstreamCounters>,
}

impl UpstreamCore {
    /// Empty pools for `up`.
    pub fn new(
        up: Upstream,
        source: Option<std::net::IpAddr>,
        rx: Rc<RefCell<super::udpio::Receiver>>,
    ) -> Self {
        UpstreamCore {
            udp: UdpMux::new(up.addr, source, rx),
            up,
            tcp: RefCell::new(Vec::new()),
            tls: RefCell::new(Vec::new()),
            tcp_gate: Semaphore::new(1),
            tls_gate: Semaphore::new(1),
            tcp_backoff: DialBackoff::default(),
            tls_backoff: DialBackoff::default(),
            counters: Arc::new(UpstreamCounters::default()),
        }
    }

    /// Closes what has been idle longer than `expire` or lived longer than `max_age`.
    pub fn prune(&self, cfg: &ForwardConfig) {
        let now = Instant::now();
        let mismatched: u64 = self.udp.maintain(cfg.expire.max(Duration::from_secs(1)))
            + self
                .tcp
                .borrow()
                .iter()
                .map(|c| c.take_mismatched())
                .sum::<u64>()
            + self
                .tls
                .borrow()
                .iter()
                .map(|c| c.take_mismatched())
                .sum::<u64>();
        self.counters.mismatched.add(mismatched);
        take_stale(&self.tcp, now, cfg);
        take_stale(&self.tls, now, cfg);
    }

    /// Asks over UDP before `deadline` on one of the upstream's shared sockets; the reply
    /// lands in `reply`. Replies with another ID never reach this query; one with our ID but
    /// another question is dropped (and counted) and the wait goes on.
    pub async fn udp_exchange(
        &self,
        ask: &mut Ask<'_>,
        rng: &mut fastrand::Rng,
        reply: &mut Vec<u8>,
    ) -> Result<(), ExchangeError> {
        let (fresh, outcome) = self
            .udp
            .exchange(ask.query, ask.question, rng, ask.deadline)
            .await;
        if fresh {
            self.counters.conn_cache_misses[0].inc();
        } else {
            self.counters.conn_cache_hits[0].inc();
        }
        match outcome {
            udpmux::Outcome::Reply(mut r, at) => {
                ask.answered = Some(at);
                // The mux hands over only replies with our ID: one with no question and an
                // error rcode is the upstream rejecting the query.
                if let Some(rc) = reply::rejection(&r) {
                    self.udp.recycle(r);
                    return Err(ExchangeError::Rejected(rc));
                }
                // The reply takes the request's place; the request's buffer goes to the mux
                // for a later reply (no allocation per query either way).
                std::mem::swap(reply, &mut r);
                self.udp.recycle(r);
                Ok(())
            }
            udpmux::Outcome::Failed(e) => Err(ExchangeError::from_io(e)),
            udpmux::Outcome::Timeout => Err(ExchangeError::Timeout),
        }
    }

    /// Asks over TCP (or TLS with `tls`) on a pooled, pipelined connection before
    /// `deadline`; a connection the peer had closed is replaced once.
    pub async fn stream_exchange(
        &self,
        cfg: &ForwardConfig,
        tls: Option<&Arc<rustls::ClientConfig>>,
        ask: &mut Ask<'_>,
        rng: &mut fastrand::Rng,
        reply: &mut Vec<u8>,
    ) -> Result<(), ExchangeError> {
        match tls {
            None => {
                let dial = |t| async move {
                    let s = dial::tcp(self.up.addr, cfg.source_address, t).await?;
                    let fd = s.as_raw_fd();
                    Ok((s, fd))
                };
                let pool = Pool {
                    conns: &self.tcp,
                    gate: &self.tcp_gate,
                    backoff: &self.tcp_backoff,
                    proto: 1,
                };
                self.pooled(pool, dial, cfg, ask, rng, reply).await
            }
            Some(config) => {
                let name = self.up.tls_name.as_deref();
                let dial = |t| async move {
                    let s = dial::tls(self.up.addr, cfg.source_address, t, config, name).await?;
                    let fd = s.get_ref().0.as_raw_fd();
                    Ok((s, fd))
                };
                let pool = Pool {
                    conns: &self.tls,
                    gate: &self.tls_gate,
                    backoff: &self.tls_backoff,
                    proto: 2,
                };
                self.pooled(pool, dial, cfg, ask, rng, reply).await
            }
        }
    }

    /// The least loaded usable connection of a pool.
    fn pick<S>(pool: &RefCell<Vec<Rc<Conn<S>>>>, cfg: &ForwardConfig) -> Option<Rc<Conn<S>>>
    where
        S: futures_lite::io::AsyncRead + futures_lite::io::AsyncWrite + Unpin + 'static,
    {
        let now = Instant::now();
        pool.borrow()
            .iter()
            .filter(|c| c.usable(now, cfg.max_age, cfg.expire))
            .min_by_key(|c| c.load())
            .cloned()
    }

    async fn pooled<S, F, Fut>(
        &self,
        pool: Pool<'_, S>,
        dial: F,
        cfg: &ForwardConfig,
        ask: &mut Ask<'_>,
        rng: &mut fastrand::Rng,
        reply: &mut Vec<u8>,
    ) -> Result<(), ExchangeError>
    where
        S: futures_lite::io::AsyncRead + futures_lite::io::AsyncWrite + Unpin + 'static,
        F: Fn(Duration) -> Fut,
        Fut: std::future::Future<Output = io::Result<(S, std::os::fd::RawFd)>>,
    {
        let proto = pool.proto;
        for attempt in 0..2 {
            let conn = match Self::pick(pool.conns, cfg).filter(|_| attempt == 0) {
                Some(c) => {
                    self.counters.conn_cache_hits[proto].inc();
                    c
                }
                None => {
                    // One dial at a time per upstream: queries arriving meanwhile use the
                    // connection it opens instead of each opening their own.
                    let _permit = pool
                        .gate
                        .acquire_permit(1)
                        .await
                        .map_err(|_| ExchangeError::Timeout)?;
                    match Self::pick(pool.conns, cfg).filter(|c| attempt == 0 || c.load() == 0) {
                        Some(c) => {
                            self.counters.conn_cache_hits[proto].inc();
                            c
                        }
                        None => {
                            let now = Instant::now();
                            if pool.backoff.holds(now).is_some() {
                                return Err(ExchangeError::Net(io::Error::new(
                                    io::ErrorKind::ConnectionRefused,
                                    "upstream closes connections before answering: not dialing it for a while",
                                )));
                            }
                            self.counters.conn_cache_misses[proto].inc();
                            let left = ask.deadline.saturating_duration_since(now);
                            if left.is_zero() {
                                return Err(ExchangeError::Timeout);
                            }
                            let (stream, fd) = dial(DIAL_TIMEOUT.min(left))
                                .await
                                .map_err(ExchangeError::from_io)?;
                            let c = Conn::start(stream, fd);
                            pool.conns.borrow_mut().push(c.clone());
                            c
                        }
                    }
                }
            };
            let result = conn.exchange(ask.query, rng, ask.deadline).await;
            if matches!(result, Err(ConnError::Closed | ConnError::Io(_))) {
                // Out of the pool at once, so its socket goes with the last query on it.
                pool.conns.borrow_mut().retain(|c| !c.is_closed());
                // Ended by the upstream (a failed write is its reset too), not by a timeout
                // of ours, before it ever answered.
                let by_peer = matches!(result, Err(ConnError::Io(_))) || conn.closed_by_peer();
                if by_peer && !conn.has_answered() {
                    pool.backoff.closed_unanswered(Instant::now());
                }
            }
            match result {
                Ok(r) => {
                    pool.backoff.answered();
                    // The connection handed over the reply with the ID it sent.
                    let id = Header::new(&r).id();
                    if let Some(rc) = reply::rejection(&r) {
                        return Err(ExchangeError::Rejected(rc));
                    }
                    if !reply::answers(&r, id, ask.question) {
                        self.counters.mismatched.inc();
                        return Err(ExchangeError::Timeout);
                    }
                    *reply = r;
                    return Ok(());
                }
                // A connection the peer had closed, or one without room: once more.
                Err(ConnError::Closed | ConnError::Full) if attempt == 0 => continue,
                Err(ConnError::Closed | ConnError::Full) => {
                    return Err(ExchangeError::Net(io::Error::new(
                        io::ErrorKind::ConnectionReset,
                        "connection closed",
                    )));
                }
                Err(ConnError::Timeout) => return Err(ExchangeError::Timeout),
                Err(ConnError::Io(_)) if attempt == 0 => continue,
                Err(ConnError::Io(e)) => return Err(ExchangeError::from_io(e)),
            }
        }
        Err(ExchangeError::Timeout)
    }
}

/// One transport's connections to an upstream, and what governs opening more.
struct Pool<'a, S> {
    conns: &'a RefCell<Vec<Rc<Conn<S>>>>,
    /// One dial at a time.
    gate: &'a Semaphore,
    backoff: &'a DialBackoff,
    /// Index into per-protocol counters.
    proto: usize,
}

/// One query's part of an exchange: the bytes to send (each attempt sends them with an ID
/// of its own), the question to match, the client's size limit and the deadline.
pub struct Ask<'a> {
    /// The client's query; its ID is replaced in what is sent.
    pub query: &'a [u8],
    /// The question entry (name, type, class) replies must repeat.
    pub question: &'a [u8],
    /// When this attempt must be over.
    pub deadline: Instant,
    /// When the reply came in, when the exchange knows it without a clock read of its own.
    pub answered: Option<Instant>,
}

impl Drop for UpstreamCore {
    /// A core's state goes (reload, stop): close its connections so their reader tasks end.
    fn drop(&mut self) {
        for c in self.tcp.borrow().iter() {
            c.shutdown();
        }
        for c in self.tls.borrow().iter() {
            c.shutdown();
        }
    }
}

/// Removes from a pool what may not serve again: closed connections, idle ones past
/// `expire`, and aged ones (past `max_age`) once their last reply is in. Those still open
/// are shut down.
fn take_stale<S>(pool: &RefCell<Vec<Rc<Conn<S>>>>, now: Instant, cfg: &ForwardConfig)
where
    S: futures_lite::io::AsyncRead + futures_lite::io::AsyncWrite + Unpin + 'static,
{
    // `max_idle_conns`: connections with nothing pending beyond this many are closed, the
    // longest-open first (the pool is in dial order).
    let mut idle = pool.borrow().iter().filter(|c| !c.has_pending()).count();
    pool.borrow_mut().retain(|c| {
        let aged = !cfg.max_age.is_zero() && c.age(now) >= cfg.max_age;
        let surplus = cfg.max_idle_conns > 0 && idle > cfg.max_idle_conns && !c.has_pending();
        let keep = !c.is_closed()
            && !c.idle_expired(now, cfg.expire)
            && (!aged || c.has_pending())
            && !surplus;
        if !keep {
            if !c.has_pending() {
                idle -= 1;
            }
            c.shutdown();
        }
        keep
    });
}
