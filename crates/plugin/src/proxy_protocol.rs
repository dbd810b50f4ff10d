//! The `proxyproto` settings of a listener: which peers' PROXY protocol headers are read and
//! what is done with them (CoreDNS's `ProxyProtoConnPolicy` and its UDP session tracking).
//! The plugin records them in [`crate::BlockSetup::proxy_protocol`]; the server applies them
//! to every block of the listener, as CoreDNS applies them to its whole server.

use crate::reverse::Cidr;
use std::net::IpAddr;
use std::time::Duration;

/// What to do with a connection or datagram's PROXY header, as go-proxyproto's policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyPolicy {
    /// Read the header and take the client address it carries.
    Use,
    /// Read and strip the header, keep the peer's own address.
    Ignore,
    /// Close the connection (drop the datagram) that carries a header.
    Reject,
    /// Do not look for a header: the bytes are served as they came.
    Skip,
}

/// UDP sessions kept per listener and core when `udp_session_tracking` gives no maximum
/// (CoreDNS's `udpSessionMaxEntries`).
pub const DEFAULT_MAX_SESSIONS: usize = 10_240;

/// One block's `proxyproto` settings, and after grouping, a listener's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyProtocol {
    /// `allow`: the networks whose headers are used; empty means every peer.
    pub allow: Vec<Cidr>,
    /// `default`: the policy for peers outside `allow` (`ignore`), when it was given.
    pub default: Option<ProxyPolicy>,
    /// `udp_session_tracking`'s duration; zero (or a negative one) keeps no sessions.
    pub session_ttl: Duration,
    /// `udp_session_tracking`'s maximum; `None` means [`DEFAULT_MAX_SESSIONS`].
    pub max_sessions: Option<usize>,
}

impl ProxyProtocol {
    /// The policy for a peer, as CoreDNS's setup decides it: with no `allow`, `default` if
    /// given, else `use`; with `allow`, `use` inside the networks, else `default` (`ignore`).
    pub fn policy(&self, peer: IpAddr) -> ProxyPolicy {
        if self.allow.is_empty() {
            return self.default.unwrap_or(ProxyPolicy::Use);
        }
        if self.allow.iter().any(|n| n.contains(peer)) {
            return ProxyPolicy::Use;
        }
        self.default.unwrap_or(ProxyPolicy::Ignore)
    }

    /// How many UDP sessions a listener keeps per core.
    pub fn session_cap(&self) -> usize {
        self.max_sessions.unwrap_or(DEFAULT_MAX_SESSIONS)
    }

    /// Whether headerless datagrams take the address of their peer's last header.
    pub fn tracks_sessions(&self) -> bool {
        !self.session_ttl.is_zero()
    }
}
