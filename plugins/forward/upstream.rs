//! One upstream as one core sees it: its pools of UDP sockets and TCP/TLS connections, and
//! the exchange of one query over the transport chosen for it.

use super::config::{ForwardConfig, Upstream};
use super::conn::{Conn, ConnError};
use super::counters::UpstreamCounters;
use super::dial;
use futures_rustls::client::TlsStream;
use glommio::net::{TcpStream, UdpSocket};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::io;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a new TCP or TLS connection may take to open.
const DIAL_TIMEOUT: Duration = Duration::from_secs(2);

/// The smallest UDP receive buffer; a reply that fills the buffer is asked again over TCP.
const UDP_BUFFER: usize = 4096;

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
    /// No matching reply within the read timeout.
    Timeout,
    /// The network said no (refused, unreachable, reset, …).
    Net(io::Error),
    /// A UDP reply may have been cut by the buffer: ask again over TCP.
    Overflow,
}

impl std::fmt::Display for ExchangeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExchangeError::Timeout => write!(f, "i/o timeout"),
            ExchangeError::Net(e) => write!(f, "{e}"),
            ExchangeError::Overflow => write!(f, "reply larger than the UDP buffer"),
        }
    }
}

struct IdleUdp {
    sock: UdpSocket,
    born: Instant,
    last: Instant,
}

/// An upstream's per-core state.
pub struct UpstreamCore {
    /// Where and how.
    pub up: Upstream,
    udp: RefCell<VecDeque<IdleUdp>>,
    tcp: RefCell<Vec<Rc<Conn<TcpStream>>>>,
    tls: RefCell<Vec<Rc<Conn<TlsStream<TcpStream>>>>>,
    /// This core's counters for it.
    pub counters: Arc<UpstreamCounters>,
}

/// True when `reply` is a response to `query` under `id`: QR set, same ID, one question
/// equal to the query's (name case-insensitively, type, class).
pub fn reply_matches(reply: &[u8], id: u16, question: &[u8]) -> bool {
    reply.len() >= 12 + question.len()
        && reply[0..2] == id.to_be_bytes()
        && reply[2] & 0x80 != 0
        && reply[4..6] == [0, 1]
        && reply[12..12 + question.len()].eq_ignore_ascii_case(question)
}

impl UpstreamCore {
    /// Empty pools for `up`.
    pub fn new(up: Upstream) -> Self {
        UpstreamCore {
            up,
            udp: RefCell::new(VecDeque::new()),
            tcp: RefCell::new(Vec::new()),
            tls: RefCell::new(Vec::new()),
            counters: Arc::new(UpstreamCounters::default()),
        }
    }

    /// Closes what has been idle longer than `expire` or lived longer than `max_age`.
    pub async fn prune(&self, cfg: &ForwardConfig) {
        let now = Instant::now();
        self.udp.borrow_mut().retain(|s| {
            now.duration_since(s.last) < cfg.expire
                && (cfg.max_age.is_zero() || now.duration_since(s.born) < cfg.max_age)
        });
        let stale: Vec<Rc<Conn<TcpStream>>> = take_stale(&self.tcp, now, cfg);
        for c in stale {
            c.close().await;
        }
        let stale: Vec<Rc<Conn<TlsStream<TcpStream>>>> = take_stale(&self.tls, now, cfg);
        for c in stale {
            c.close().await;
        }
        let mismatched: u64 = self
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
    }

    fn take_udp(&self, cfg: &ForwardConfig) -> Option<IdleUdp> {
        let now = Instant::now();
        let mut idle = self.udp.borrow_mut();
        while let Some(s) = idle.pop_front() {
            if now.duration_since(s.last) < cfg.expire
                && (cfg.max_age.is_zero() || now.duration_since(s.born) < cfg.max_age)
            {
                return Some(s);
            }
        }
        None
    }

    fn give_udp(&self, s: IdleUdp, cfg: &ForwardConfig) {
        let mut idle = self.udp.borrow_mut();
        if cfg.max_idle_conns == 0 || idle.len() < cfg.max_idle_conns {
            idle.push_back(s);
        }
    }

    /// Asks over UDP: `query` already carries `id`; the reply lands in `reply`.
    #[allow(clippy::too_many_arguments)]
    pub async fn udp_exchange(
        &self,
        cfg: &ForwardConfig,
        query: &[u8],
        id: u16,
        question: &[u8],
        limit: usize,
        timeout: Duration,
        reply: &mut Vec<u8>,
    ) -> Result<(), ExchangeError> {
        let s = match self.take_udp(cfg) {
            Some(s) => {
                self.counters.conn_cache_hits[0].inc();
                s
            }
            None => {
                self.counters.conn_cache_misses[0].inc();
                let now = Instant::now();
                IdleUdp {
                    sock: dial::udp(self.up.addr, cfg.source_address)
                        .map_err(ExchangeError::Net)?,
                    born: now,
                    last: now,
                }
            }
        };
        let deadline = Instant::now() + timeout;
        s.sock
            .send(query)
            .await
            .map_err(|e| ExchangeError::Net(e.into()))?;
        let size = limit.clamp(UDP_BUFFER, 65_535);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ExchangeError::Timeout);
            }
            let _ = s.sock.set_read_timeout(Some(left));
            reply.clear();
            reply.resize(size, 0);
            let n = match s.sock.recv(&mut reply[..]).await {
                Ok(n) => n,
                Err(e) => {
                    let e: io::Error = e.into();
                    return Err(match e.kind() {
                        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => {
                            ExchangeError::Timeout
                        }
                        _ => ExchangeError::Net(e),
                    });
                }
            };
            reply.truncate(n);
            if !reply_matches(reply, id, question) {
                self.counters.mismatched.inc();
                continue;
            }
            let mut s = s;
            s.last = Instant::now();
            self.give_udp(s, cfg);
            if n >= size {
                return Err(ExchangeError::Overflow);
            }
            return Ok(());
        }
    }

    /// Asks over TCP (or TLS with `tls`), on a pooled pipelined connection; a connection the
    /// peer closed is dialled again once.
    #[allow(clippy::too_many_arguments)]
    pub async fn stream_exchange(
        &self,
        cfg: &ForwardConfig,
        tls: Option<&Arc<rustls::ClientConfig>>,
        query: &mut [u8],
        question: &[u8],
        rng: &mut fastrand::Rng,
        timeout: Duration,
        reply: &mut Vec<u8>,
    ) -> Result<(), ExchangeError> {
        match tls {
            None => {
                let pool = &self.tcp;
                let dial = || dial::tcp(self.up.addr, cfg.source_address, DIAL_TIMEOUT);
                self.pooled(pool, dial, 1, cfg, query, question, rng, timeout, reply)
                    .await
            }
            Some(config) => {
                let pool = &self.tls;
                let name = self.up.tls_name.as_deref();
                let dial =
                    || dial::tls(self.up.addr, cfg.source_address, DIAL_TIMEOUT, config, name);
                self.pooled(pool, dial, 2, cfg, query, question, rng, timeout, reply)
                    .await
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn pooled<S, F, Fut>(
        &self,
        pool: &RefCell<Vec<Rc<Conn<S>>>>,
        dial: F,
        proto: usize,
        cfg: &ForwardConfig,
        query: &mut [u8],
        question: &[u8],
        rng: &mut fastrand::Rng,
        timeout: Duration,
        reply: &mut Vec<u8>,
    ) -> Result<(), ExchangeError>
    where
        S: futures_lite::io::AsyncRead
            + futures_lite::io::AsyncWrite
            + super::conn::Shutdown
            + Unpin
            + 'static,
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = io::Result<S>>,
    {
        for attempt in 0..2 {
            let now = Instant::now();
            let cached = pool
                .borrow()
                .iter()
                .find(|c| c.usable(now, cfg.max_age))
                .cloned();
            let conn = match cached {
                Some(c) if attempt == 0 => {
                    self.counters.conn_cache_hits[proto].inc();
                    c
                }
                _ => {
                    self.counters.conn_cache_misses[proto].inc();
                    let c = Conn::start(dial().await.map_err(ExchangeError::Net)?);
                    let mut p = pool.borrow_mut();
                    p.retain(|c| c.usable(now, cfg.max_age));
                    if cfg.max_idle_conns == 0 || p.len() < cfg.max_idle_conns {
                        p.push(c.clone());
                    }
                    c
                }
            };
            let id = conn.free_id(rng);
            query[0..2].copy_from_slice(&id.to_be_bytes());
            match conn.exchange(id, query, timeout).await {
                Ok(r) => {
                    if !reply_matches(&r, id, question) {
                        self.counters.mismatched.inc();
                        return Err(ExchangeError::Timeout);
                    }
                    *reply = r;
                    return Ok(());
                }
                // A cached connection the peer had closed: dial once more.
                Err(ConnError::Closed) if attempt == 0 => continue,
                Err(ConnError::Closed) => {
                    return Err(ExchangeError::Net(io::Error::new(
                        io::ErrorKind::ConnectionReset,
                        "connection closed",
                    )));
                }
                Err(ConnError::Timeout) => return Err(ExchangeError::Timeout),
                Err(ConnError::Io(e)) if attempt == 0 => {
                    let _ = e;
                    continue;
                }
                Err(ConnError::Io(e)) => return Err(ExchangeError::Net(e)),
            }
        }
        Err(ExchangeError::Timeout)
    }
}

fn take_stale<S>(
    pool: &RefCell<Vec<Rc<Conn<S>>>>,
    now: Instant,
    cfg: &ForwardConfig,
) -> Vec<Rc<Conn<S>>>
where
    S: futures_lite::io::AsyncRead
        + futures_lite::io::AsyncWrite
        + super::conn::Shutdown
        + Unpin
        + 'static,
{
    let mut p = pool.borrow_mut();
    let mut stale = Vec::new();
    p.retain(|c| {
        // Past max_age a connection takes no new queries; it closes once its last reply is in.
        let keep = if c.usable(now, cfg.max_age) {
            !c.idle_expired(now, cfg.expire)
        } else {
            c.has_pending() && !c.is_closed()
        };
        if !keep {
            stale.push(c.clone());
        }
        keep
    });
    stale
}
