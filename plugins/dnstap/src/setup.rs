//! `dnstap SOCKET [full] [writebuffer] [queue] { identity; version; extra; skipverify }`,
//! parsed as CoreDNS's `plugin/dnstap/setup.go` parses it, with its bounds and messages.

use crate::tls;
use ringdns_plugin::corefile::{Dispenser, Error};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;

/// CoreDNS's bound on the write buffer multiplier (MiB).
pub const MAX_WRITE_BUF: usize = 1024;
/// CoreDNS's bound on the queue multiplier (× 10 000 messages).
pub const MAX_QUEUE: usize = 4096;
/// Messages per queue multiplier (CoreDNS's `queueSize`).
pub const QUEUE_SIZE: usize = 10_000;
/// Bytes per write buffer multiplier (CoreDNS's `tcpWriteBufSize`).
pub const WRITE_BUF_SIZE: usize = 1 << 20;

/// The reader's address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A unix socket path (`unix://PATH` or a bare path).
    Unix(PathBuf),
    /// `tcp://HOST:PORT`, resolved at setup.
    Tcp(SocketAddr),
    /// `tls://HOST:PORT`: the address and the name the certificate must hold.
    Tls(SocketAddr, String),
}

/// One `dnstap` line.
pub struct TapConfig {
    /// Where the reader is.
    pub endpoint: Endpoint,
    /// The SOCKET as written, for logs and metrics labels.
    pub label: String,
    /// `full`: the wire messages go in.
    pub full: bool,
    /// The socket's send buffer, bytes (TCP and TLS).
    pub write_buffer: usize,
    /// How many messages a core may hold for the reader before it drops.
    pub queue: usize,
    /// `identity` (the host name by default).
    pub identity: Vec<u8>,
    /// `version` (`ringdns-VERSION` by default).
    pub version: Vec<u8>,
    /// `extra`, literal text; empty for none.
    pub extra: Vec<u8>,
    /// The client configuration of a `tls://` endpoint (`skipverify` applied).
    pub tls: Option<Arc<rustls::ClientConfig>>,
}

/// The version field by default, as CoreDNS's `CoreDNS-VERSION`.
pub const DEFAULT_VERSION: &str = concat!("ringdns-", env!("CARGO_PKG_VERSION"));

fn host_port(d: &Dispenser<'_>, endpoint: &str, rest: &str) -> Result<SocketAddr, Error> {
    // Go's url.Parse: the host is what comes before a path.
    let host = rest.split('/').next().unwrap_or_default();
    if host.is_empty() {
        return Err(d.arg_err());
    }
    host.to_socket_addrs()
        .map_err(|e| d.plugin_err("dnstap", format!("{endpoint}: {e}")))?
        .next()
        .ok_or_else(|| d.plugin_err("dnstap", format!("{endpoint}: no address")))
}

fn multiple(
    d: &Dispenser<'_>,
    text: &str,
    what: &str,
    unit: &str,
    max: usize,
) -> Result<usize, Error> {
    let v: i64 = text.parse().map_err(|_| {
        d.plugin_err(
            "dnstap",
            format!(
                "dnstap: invalid {what} {text:?}: strconv.Atoi: parsing {text:?}: invalid syntax"
            ),
        )
    })?;
    if v < 1 || v > max as i64 {
        return Err(d.plugin_err(
            "dnstap",
            format!("dnstap: {what} must be between 1 and {max} ({unit}): {v}"),
        ));
    }
    Ok(v as usize)
}

/// Every `dnstap` line of the block, in order.
pub fn parse(d: &mut Dispenser<'_>) -> Result<Vec<TapConfig>, Error> {
    let mut taps = Vec::new();
    while d.next() {
        let args = d.remaining_args();
        if args.is_empty() {
            return Err(d.plugin_arg_err("dnstap"));
        }
        if args[0] == "listen" {
            if args.len() < 2 {
                return Err(d.plugin_err("dnstap", "dnstap listen requires an endpoint argument"));
            }
            return Err(d.plugin_err(
                "dnstap",
                "dnstap listen (the collector dials in) is not supported yet",
            ));
        }
        if args.len() > 4 {
            return Err(d.plugin_arg_err("dnstap"));
        }
        let mut write_buffer = 1;
        let mut queue = 1;
        if let Some(w) = args.get(2) {
            write_buffer = multiple(d, w, "MultipleTcpWriteBuf", "MiB units", MAX_WRITE_BUF)?;
        }
        if let Some(q) = args.get(3) {
            queue = multiple(d, q, "MultipleQueue", "x10k messages", MAX_QUEUE)?;
        }
        let socket = &args[0];
        let mut tls_name = None;
        let endpoint = if let Some(rest) = socket.strip_prefix("tls://") {
            let addr = host_port(d, socket, rest)?;
            let host = rest.split('/').next().unwrap_or_default();
            let name = host
                .rsplit_once(':')
                .map_or(host, |(h, _)| h)
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string();
            tls_name = Some(name.clone());
            Endpoint::Tls(addr, name)
        } else if let Some(rest) = socket.strip_prefix("tcp://") {
            Endpoint::Tcp(host_port(d, socket, rest)?)
        } else {
            Endpoint::Unix(PathBuf::from(
                socket.strip_prefix("unix://").unwrap_or(socket),
            ))
        };
        let mut tap = TapConfig {
            endpoint,
            label: socket.clone(),
            full: args.get(1).is_some_and(|a| a == "full"),
            write_buffer: write_buffer * WRITE_BUF_SIZE,
            queue: queue * QUEUE_SIZE,
            identity: ringdns_plugin::hostname::hostname().into_bytes(),
            version: DEFAULT_VERSION.as_bytes().to_vec(),
            extra: Vec::new(),
            tls: None,
        };
        let mut skip_verify = false;
        while d.next_block() {
            match d.val() {
                "skipverify" if tls_name.is_none() => {
                    return Err(d.plugin_err(
                        "dnstap",
                        format!(
                            "skipverify is only valid for tls:// endpoints, not {}",
                            tap.label
                        ),
                    ));
                }
                "skipverify" => skip_verify = true,
                "tls" => {
                    return Err(d.plugin_err("dnstap", "tls directive only valid for listeners"));
                }
                "identity" | "version" | "extra" => {
                    let key = d.val().to_string();
                    if !d.next_arg() {
                        return Err(d.plugin_arg_err("dnstap"));
                    }
                    let v = d.val().as_bytes().to_vec();
                    match key.as_str() {
                        "identity" => tap.identity = v,
                        "version" => tap.version = v,
                        _ => {
                            if v.contains(&b'{') {
                                return Err(d.plugin_err(
                                    "dnstap",
                                    "extra with {placeholders} (metadata replacement) is not supported yet",
                                ));
                            }
                            tap.extra = v;
                        }
                    }
                }
                other => {
                    let msg = format!("unknown property '{other}'");
                    return Err(d.plugin_err("dnstap", msg));
                }
            }
        }
        if let Some(name) = tls_name {
            let config = tls::client_config(skip_verify)
                .map_err(|e| d.plugin_err("dnstap", format!("{}: {e}", tap.label)))?;
            tls::server_name(&name).map_err(|e| d.plugin_err("dnstap", e))?;
            tap.tls = Some(config);
        }
        taps.push(tap);
    }
    Ok(taps)
}
