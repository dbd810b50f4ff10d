//! The PROXY protocol on a listener with `proxyproto`: what a datagram's or a connection's
//! header means under the policy for its peer (go-proxyproto's `USE`, `IGNORE`, `REJECT`,
//! `SKIP`, as CoreDNS's `proxyproto` sets them), and the client address plugins then see.
//! Replies still go to the peer (the load balancer). Listeners without `proxyproto` never
//! come here: the socket loops branch once per batch (UDP) or connection (TCP).
//!
//! `header` finds and parses a header (`ppp`); `sessions` keeps UDP sessions.

pub mod header;
pub mod sessions;

use crate::plugin::{ProxyPolicy, ProxyProtocol};
use header::Found;
use sessions::Sessions;
use std::net::SocketAddr;
use std::time::Instant;

/// What to serve of a datagram.
#[derive(Debug, PartialEq, Eq)]
pub enum Datagram<'a> {
    /// The DNS bytes, as from this client.
    Serve {
        /// The bytes after the header (all of them without one).
        payload: &'a [u8],
        /// The client plugins see.
        client: SocketAddr,
    },
    /// Nothing: a header-only datagram that opened a session, a rejected header.
    Nothing,
    /// Dropped as CoreDNS drops it, with a warning: a header that is invalid, not v2, or
    /// not for UDP.
    Invalid,
}

/// One UDP listener's PROXY state on one core: its sessions, made when first needed.
#[derive(Default)]
pub struct UdpProxy {
    sessions: Option<Sessions>,
    /// Invalid datagrams seen, for logging the first and then one in [`WARN_EVERY`].
    invalid: u64,
}

/// Of the invalid datagrams of a listener and core, the first and then one in this many
/// are logged, so a flood cannot flood the log.
const WARN_EVERY: u64 = 1000;

impl UdpProxy {
    /// Takes a batch's settings (a reload may have changed them).
    pub fn configure(&mut self, p: &ProxyProtocol) {
        if !p.tracks_sessions() {
            self.sessions = None;
            return;
        }
        match &mut self.sessions {
            Some(s) => s.configure(p.session_ttl, p.session_cap()),
            None => self.sessions = Some(Sessions::new(p.session_ttl, p.session_cap())),
        }
    }

    /// What to serve of `packet` from `peer` at `now`, under `p`'s policy for the peer (as
    /// CoreDNS's `PacketConn.readFrom`).
    pub fn datagram<'a>(
        &mut self,
        p: &ProxyProtocol,
        packet: &'a [u8],
        peer: SocketAddr,
        now: Instant,
    ) -> Datagram<'a> {
        let policy = p.policy(peer.ip());
        if policy == ProxyPolicy::Skip {
            return Datagram::Serve {
                payload: packet,
                client: peer,
            };
        }
        let h = match header::find(packet, true) {
            Found::Absent | Found::More(_) => {
                let tracked = match (&mut self.sessions, policy) {
                    (Some(s), ProxyPolicy::Use) => s.lookup(peer, now),
                    _ => None,
                };
                return Datagram::Serve {
                    payload: packet,
                    client: tracked.unwrap_or(peer),
                };
            }
            Found::Invalid => return self.invalid(peer, "invalid header"),
            Found::Header(h) => h,
        };
        if !h.v2 {
            return self.invalid(peer, "version 1 (only v2 is read over UDP)");
        }
        // A LOCAL header stands for the peer itself, whatever its transport says.
        if !(h.local || (h.datagram && h.source.is_some())) {
            return self.invalid(peer, "not a UDP header");
        }
        let payload = &packet[h.len..];
        match (policy, h.source) {
            (ProxyPolicy::Reject, _) => Datagram::Nothing,
            (ProxyPolicy::Use, Some(client)) => {
                if let Some(s) = &mut self.sessions {
                    s.store(peer, client, now);
                    if payload.is_empty() {
                        return Datagram::Nothing;
                    }
                }
                Datagram::Serve { payload, client }
            }
            _ => Datagram::Serve {
                payload,
                client: peer,
            },
        }
    }

    fn invalid(&mut self, peer: SocketAddr, why: &str) -> Datagram<'static> {
        if self.invalid.is_multiple_of(WARN_EVERY) {
            crate::warning!(
                "dropping invalid Proxy Protocol packet from {peer}: {why} ({} so far on this listener and core, logged one in {WARN_EVERY})",
                self.invalid + 1
            );
        }
        self.invalid += 1;
        Datagram::Invalid
    }
}

/// What a connection's first bytes decide, once [`header::find`] could tell.
#[derive(Debug, PartialEq, Eq)]
pub enum Stream {
    /// Serve the connection as from `client`, after `skip` bytes of header.
    Serve {
        /// The header's length (0 without one).
        skip: usize,
        /// The client plugins see.
        client: SocketAddr,
    },
    /// Close it: an invalid header, or one the policy rejects.
    Close,
}

/// A connection's header under `policy` (not `skip`, which reads none), as go-proxyproto's
/// `Conn`: `use` takes its address (the peer's for LOCAL or UNKNOWN), `ignore` strips it,
/// `reject` closes a connection that has one. `None` while more bytes are needed.
pub fn stream(found: Found, policy: ProxyPolicy, peer: SocketAddr) -> Option<Stream> {
    Some(match found {
        Found::More(_) => return None,
        Found::Absent => Stream::Serve {
            skip: 0,
            client: peer,
        },
        Found::Invalid => Stream::Close,
        Found::Header(_) if policy == ProxyPolicy::Reject => Stream::Close,
        Found::Header(h) => Stream::Serve {
            skip: h.len,
            client: match (policy, h.source) {
                (ProxyPolicy::Use, Some(client)) => client,
                _ => peer,
            },
        },
    })
}
