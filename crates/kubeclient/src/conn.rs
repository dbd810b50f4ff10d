//! One GET: rate limit and inflight slot, connect (10 s per address, TCP keepalive, 1 s
//! read timeout), TLS handshake, the request, the response head; then the body to read.
//! Metrics are taken here, where client-go takes them.

use crate::config::ApiConfig;
use crate::http::{self, Body, Head};
use crate::metrics;
use socket2::{Domain, Protocol, SockAddr, Socket, TcpKeepalive, Type};
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// How long a TLS handshake may take (client-go's TLSHandshakeTimeout).
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// TCP keepalive (client-go's dialer: KeepAlive 30 s).
const KEEPALIVE: Duration = Duration::from_secs(30);
/// Of an error response's body, this much at most is read for its Status message.
const MAX_STATUS_BODY: usize = 64 * 1024;

/// The `User-Agent` of every request.
pub(crate) fn user_agent() -> String {
    format!(
        "ringdns/{} ({}/{}) kubernetes",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

/// Why a request gave no usable response.
#[derive(Debug)]
pub(crate) enum Error {
    /// The stop flag was set while waiting.
    Stopped,
    /// No response: connect, TLS, a read or write failed, or the token could not be read.
    Transport(String),
    /// A response with a status other than 2xx.
    Status {
        /// The HTTP status.
        code: u16,
        /// Its `Retry-After` (seconds), for 429.
        retry_after: Option<Duration>,
        /// The Status object's message, else the body's text.
        message: String,
    },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Stopped => write!(f, "stopped"),
            Error::Transport(m) => write!(f, "{m}"),
            Error::Status { code, message, .. } => write!(f, "HTTP {code}: {message}"),
        }
    }
}

/// Either a plain TCP stream or TLS over one.
pub(crate) trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

/// Sleeps `d` in slices of at most 100 ms; false if `stop` turned true.
pub(crate) fn sleep(d: Duration, stop: &dyn Fn() -> bool) -> bool {
    let end = Instant::now() + d;
    loop {
        if stop() {
            return false;
        }
        let now = Instant::now();
        if now >= end {
            return true;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(100)));
    }
}

/// GETs `path_query` (which starts with `/`): the body of a 2xx response, still on the
/// wire, or why there is none.
pub(crate) fn get(
    cfg: &ApiConfig,
    path_query: &str,
    stop: &dyn Fn() -> bool,
) -> Result<Body<Box<dyn Stream>>, Error> {
    let wait = cfg.limiter.reserve();
    metrics::rate_limiter_duration("GET", &cfg.host, wait);
    if !sleep(wait, stop) {
        return Err(Error::Stopped);
    }
    let _slot = cfg.limiter.enter(stop).ok_or(Error::Stopped)?;
    let t0 = Instant::now();
    let r = send(cfg, path_query, stop);
    metrics::request_duration("GET", &cfg.host, t0.elapsed());
    match &r {
        Ok((head, _)) => metrics::request_result(&head.status.to_string(), "GET", &cfg.host),
        Err(Error::Stopped) => {}
        Err(_) => metrics::request_result("<error>", "GET", &cfg.host),
    }
    let (head, mut body) = r?;
    if (200..300).contains(&head.status) {
        return Ok(body);
    }
    let retry_after = head
        .header("retry-after")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    // The Status object's message, if it comes within the idle time.
    let mut text = Vec::new();
    let t = Instant::now();
    while text.len() < MAX_STATUS_BODY && t.elapsed() < cfg.tuning.idle_timeout && !stop() {
        match body.step(&mut text) {
            Ok(http::Step::Data) | Ok(http::Step::Timeout) => {}
            Ok(http::Step::End) | Err(_) => break,
        }
    }
    let message = serde_json::from_slice::<StatusMessage>(&text)
        .ok()
        .and_then(|s| s.message)
        .unwrap_or_else(|| String::from_utf8_lossy(&text).trim().to_string());
    Err(Error::Status {
        code: head.status,
        retry_after,
        message,
    })
}

#[derive(serde::Deserialize)]
struct StatusMessage {
    message: Option<String>,
}

/// Connects, shakes hands, writes the request and reads the response head.
fn send(
    cfg: &ApiConfig,
    path_query: &str,
    stop: &dyn Fn() -> bool,
) -> Result<(Head, Body<Box<dyn Stream>>), Error> {
    let auth = cfg.auth.header().map_err(Error::Transport)?;
    let tcp = connect(cfg)?;
    let mut stream: Box<dyn Stream> = match &cfg.tls {
        None => Box::new(tcp),
        Some((tls, name)) => {
            let mut conn = rustls::ClientConnection::new(tls.clone(), name.clone())
                .map_err(|e| Error::Transport(format!("tls: {e}")))?;
            let mut tcp = tcp;
            let t = Instant::now();
            while conn.is_handshaking() {
                match conn.complete_io(&mut tcp) {
                    Ok(_) => {}
                    Err(e) if http::is_timeout(&e) => {
                        if stop() {
                            return Err(Error::Stopped);
                        }
                        if t.elapsed() > HANDSHAKE_TIMEOUT {
                            return Err(Error::Transport("net/http: TLS handshake timeout".into()));
                        }
                    }
                    Err(e) => return Err(Error::Transport(format!("tls: {e}"))),
                }
            }
            Box::new(rustls::StreamOwned::new(conn, tcp))
        }
    };
    let mut req = format!(
        "GET {}{} HTTP/1.1\r\nHost: {}\r\nUser-Agent: {}\r\nAccept: application/json\r\n",
        cfg.base_path,
        path_query,
        cfg.host,
        user_agent()
    );
    if let Some(a) = auth {
        req.push_str("Authorization: ");
        req.push_str(&a);
        req.push_str("\r\n");
    }
    req.push_str("Connection: close\r\n\r\n");
    stream
        .write_all(req.as_bytes())
        .and_then(|_| stream.flush())
        .map_err(|e| Error::Transport(format!("write: {e}")))?;
    let mut buf = Vec::new();
    let t = Instant::now();
    loop {
        if let Some((head, used)) = http::parse_head(&buf).map_err(Error::Transport)? {
            let framing = head.framing().map_err(Error::Transport)?;
            let rest = buf.split_off(used);
            return Ok((head, Body::new(stream, rest, framing)));
        }
        let mut chunk = [0u8; 8192];
        match stream.read(&mut chunk) {
            Ok(0) => return Err(Error::Transport("EOF before the response headers".into())),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if http::is_timeout(&e) => {
                if stop() {
                    return Err(Error::Stopped);
                }
                if t.elapsed() > cfg.tuning.idle_timeout {
                    return Err(Error::Transport("timeout awaiting response headers".into()));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::Transport(format!("read: {e}"))),
        }
    }
}

fn connect(cfg: &ApiConfig) -> Result<TcpStream, Error> {
    let (host, port) = &cfg.connect;
    let addrs: Vec<_> = (host.as_str(), *port)
        .to_socket_addrs()
        .map_err(|e| Error::Transport(format!("dial tcp {}: {e}", cfg.host)))?
        .collect();
    let mut last = format!("dial tcp {}: no address", cfg.host);
    for a in addrs {
        let s = match Socket::new(Domain::for_address(a), Type::STREAM, Some(Protocol::TCP)) {
            Ok(s) => s,
            Err(e) => {
                last = format!("dial tcp {a}: {e}");
                continue;
            }
        };
        match s.connect_timeout(&SockAddr::from(a), cfg.tuning.connect_timeout) {
            Ok(()) => {
                let _ = s.set_tcp_keepalive(
                    &TcpKeepalive::new()
                        .with_time(KEEPALIVE)
                        .with_interval(KEEPALIVE),
                );
                let _ = s.set_nodelay(true);
                let tcp: TcpStream = s.into();
                tcp.set_read_timeout(Some(cfg.tuning.read_tick))
                    .and_then(|_| tcp.set_write_timeout(Some(cfg.tuning.connect_timeout)))
                    .map_err(|e| Error::Transport(e.to_string()))?;
                return Ok(tcp);
            }
            Err(e) => last = format!("dial tcp {a}: connect: {e}"),
        }
    }
    Err(Error::Transport(last))
}
