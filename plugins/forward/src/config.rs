//! What one `forward` line of the Corefile configures (CoreDNS's `plugin/forward`). Filled by setup.rs,
//! read by every core.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

/// How an upstream is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UpstreamProto {
    /// Plain DNS: UDP (or TCP when the client used TCP, or with force_tcp).
    Dns,
    /// DNS over TLS (always TCP + TLS).
    Tls,
}

/// One upstream (a TO entry after resolv.conf expansion and de-duplication).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    /// Address and port (53 for dns, 853 for tls when not given).
    pub addr: SocketAddr,
    /// Transport.
    pub proto: UpstreamProto,
    /// TLS server name for this upstream: `tls://IP%name`, else `tls_servername`, else none
    /// (then the IP address is verified).
    pub tls_name: Option<String>,
    /// How CoreDNS names it in metrics (`to` label): `IP:port` without the scheme, the IP as
    /// written (e.g. `127.0.0.1:53`, `1.1.1.1:853`).
    pub label: String,
}

/// Upstream ordering per query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// A fresh random permutation per query (default).
    Random,
    /// Rotate the starting upstream per query.
    RoundRobin,
    /// Always in configuration order.
    Sequential,
}

/// Client TLS settings (`tls [CERT KEY [CA]]` / `tls CA`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsSettings {
    /// Client certificate chain (PEM), for mutual TLS.
    pub cert: Option<PathBuf>,
    /// Client private key (PEM).
    pub key: Option<PathBuf>,
    /// CA bundle (PEM) to verify upstreams with; `None` = the system roots.
    pub ca: Option<PathBuf>,
}

/// The health-check settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthCheck {
    /// Probe interval while an upstream is failing (default 500ms).
    pub interval: Duration,
    /// RD flag of probes (false with `no_rec`).
    pub recursion_desired: bool,
    /// Probe name, lower-case FQDN (default `.`).
    pub domain: String,
}

/// Everything one `forward FROM TO... { … }` line says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardConfig {
    /// FROM: the zone forwarded, lower-case FQDN (first zone when a CIDR expands to several).
    pub from: String,
    /// `except`: names (and below) not forwarded, lower-case FQDN.
    pub except: Vec<String>,
    /// TO, de-duplicated, at most 15.
    pub upstreams: Vec<Upstream>,
    /// `force_tcp`.
    pub force_tcp: bool,
    /// `prefer_udp`.
    pub prefer_udp: bool,
    /// `expire`: idle time after which a pooled connection is closed (default 10s).
    pub expire: Duration,
    /// `max_age`: absolute connection lifetime, zero = unlimited (must be ≥ expire).
    pub max_age: Duration,
    /// `max_idle_conns`: idle connections kept per upstream and protocol, 0 = unlimited.
    pub max_idle_conns: usize,
    /// `read_timeout` (default 2s, > 0).
    pub read_timeout: Duration,
    /// `max_fails` (default 2; 0 = never mark down, no health checks).
    pub max_fails: u32,
    /// `max_connect_attempts`: attempts per query, 0 = no cap (default: CoreDNS's default).
    pub max_connect_attempts: u32,
    /// `health_check`.
    pub health_check: HealthCheck,
    /// `policy`.
    pub policy: Policy,
    /// `tls`.
    pub tls: TlsSettings,
    /// `tls_servername`.
    pub tls_servername: Option<String>,
    /// `max_concurrent`: 0 = off.
    pub max_concurrent: u64,
    /// `next RCODE...`: rcodes that hand the query to the next forward line.
    pub next: Vec<u8>,
    /// `next_on_nodata`.
    pub next_on_nodata: bool,
    /// `failover RCODE...`: rcodes that try the next upstream of this line.
    pub failover: Vec<u8>,
    /// `failfast_all_unhealthy_upstreams`.
    pub failfast_all_unhealthy: bool,
    /// `source_address`.
    pub source_address: Option<IpAddr>,
}
