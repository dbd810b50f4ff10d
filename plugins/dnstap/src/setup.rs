//! `dnstap SOCKET [full] [writebuffer] [queue] { identity; version; extra; skipverify }`
//! and `dnstap listen SOCKET [full] { identity; version; extra; tls CERT KEY [CA];
//! skipverify }`, parsed as CoreDNS's `plugin/dnstap/setup.go` parses them, with its bounds
//! and messages.

use crate::listen::Hub;
use crate::tls;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::replacer::{self, Piece};
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

/// The `extra` field of a line's messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Extra {
    /// The same text in every message (empty: no field, as CoreDNS without `extra`).
    Literal(Vec<u8>),
    /// CoreDNS's replacer format (`{/forward/upstream}`, `{name}` …), filled in per message
    /// from the request and its metadata.
    Format(Vec<Piece>),
}

impl Extra {
    /// `extra TEXT`: a literal when TEXT holds no placeholder the replacer knows.
    pub fn parse(text: &str) -> Extra {
        let pieces = replacer::parse(text);
        if replacer::is_literal(&pieces) {
            Extra::Literal(text.as_bytes().to_vec())
        } else {
            Extra::Format(pieces)
        }
    }
}

/// The TLS side of a `dnstap listen tls://…` line (`tls CERT KEY [CA]`, `skipverify`).
pub struct ListenTls {
    /// The server configuration: the certificate, and the client check.
    pub config: Arc<rustls::ServerConfig>,
}

/// One `dnstap` line.
pub struct TapConfig {
    /// Where the reader is (with `listen`: where ringdns listens for sinks).
    pub endpoint: Endpoint,
    /// `dnstap listen`: sinks dial in; its fan-out to the connected sinks.
    pub listen: Option<Hub>,
    /// `tls CERT KEY [CA]` of a `listen tls://` line.
    pub listen_tls: Option<ListenTls>,
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
    /// `extra`.
    pub extra: Extra,
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
        let listen = args[0] == "listen";
        let args = if listen {
            if args.len() < 2 {
                return Err(d.plugin_err("dnstap", "dnstap listen requires an endpoint argument"));
            }
            &args[1..]
        } else {
            &args[..]
        };
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
            listen: listen.then(Hub::default),
            listen_tls: None,
            label: socket.clone(),
            full: args.get(1).is_some_and(|a| a == "full"),
            write_buffer: write_buffer * WRITE_BUF_SIZE,
            queue: queue * QUEUE_SIZE,
            identity: ringdns_plugin::hostname::hostname().into_bytes(),
            version: DEFAULT_VERSION.as_bytes().to_vec(),
            extra: Extra::Literal(Vec::new()),
            tls: None,
        };
        let mut skip_verify = false;
        let mut files = None;
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
                "tls" if !listen => {
                    return Err(d.plugin_err("dnstap", "tls directive only valid for listeners"));
                }
                "tls" if tls_name.is_none() => {
                    return Err(d.plugin_err(
                        "dnstap",
                        format!(
                            "tls directive only valid for tls:// listeners, not {}",
                            tap.label
                        ),
                    ));
                }
                "tls" => {
                    let args = d.remaining_args();
                    if args.len() < 2 {
                        return Err(d.plugin_err("dnstap", "tls requires cert and key file paths"));
                    }
                    if args.len() > 3 {
                        return Err(d.plugin_arg_err("dnstap"));
                    }
                    let read = tls::server_files(&args)
                        .map_err(|e| d.plugin_err("dnstap", format!("{}: {e}", tap.label)))?;
                    files = Some(read);
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
                        _ => tap.extra = Extra::parse(d.val()),
                    }
                }
                other => {
                    let msg = format!("unknown property '{other}'");
                    return Err(d.plugin_err("dnstap", msg));
                }
            }
        }
        if listen {
            if tls_name.is_some() {
                let Some(files) = files else {
                    return Err(d.plugin_err("dnstap", "TLS listener requires cert and key files"));
                };
                let config = tls::server_config(files, skip_verify)
                    .map_err(|e| d.plugin_err("dnstap", format!("{}: {e}", tap.label)))?;
                tap.listen_tls = Some(ListenTls { config });
            }
        } else if let Some(name) = tls_name {
            let config = tls::client_config(skip_verify)
                .map_err(|e| d.plugin_err("dnstap", format!("{}: {e}", tap.label)))?;
            tls::server_name(&name).map_err(|e| d.plugin_err("dnstap", e))?;
            tap.tls = Some(config);
        }
        taps.push(tap);
    }
    Ok(taps)
}
