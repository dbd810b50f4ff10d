//! Groups the blocks' zones into listeners (transport, bind address, port), as CoreDNS groups
//! configs into servers, and checks that no zone is served twice (but by blocks with a view).

use super::Block;
use super::keys::{self, Transport, ZoneAddr};
use crate::plugin::{ProxyProtocol, TcpTimeouts};
use crate::wire::name_to_wire;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};

/// What makes a listener the same across configurations: its transport, bound address and
/// socket count (`multisocket`; `None`, one per core). A reload keeps the sockets of a
/// listener whose key it keeps, so the runtime (its socket loops, the swap of a new
/// configuration) finds listeners by it; a new count is a new listener, whose sockets join
/// the port's SO_REUSEPORT group before the old ones close.
pub type ListenerKey = (Transport, SocketAddr, Option<usize>);

/// Where queries arrive and which block each zone goes to.
#[derive(Debug, Clone)]
pub struct Listener {
    /// Only `Dns` for now.
    pub transport: Transport,
    /// The bound address; the IPv6 wildcard (dual-stack) when no `bind` was given.
    pub addr: SocketAddr,
    /// CoreDNS's name for it (`dns://:53`, `dns://127.0.0.1:53`), for logs and metrics.
    pub name: String,
    /// Zone → block, in Corefile order; a zone has several blocks when views choose among
    /// them.
    pub routes: Vec<Route>,
    /// Some block on this listener accepts CH-class queries (chaos or forward present).
    pub allow_chaos: bool,
    /// `multisocket`: how many socket pairs, from the first block on this listener (CoreDNS's
    /// `group[0].NumSockets`); `None`, one per core.
    pub sockets: Option<usize>,
    /// TCP timeouts and query cap: from the first block on this listener with `timeouts`.
    pub tcp: TcpTimeouts,
    /// `proxyproto`: which peers' PROXY headers are read, as CoreDNS's server takes them
    /// from its blocks (see [`merge_proxy`]); `None` reads none.
    pub proxy: Option<ProxyProtocol>,
    /// `FILE:LINE` of the first key of the block that first asked for this listener, so
    /// that an address that cannot be bound at start or reload names its place.
    pub origin: String,
    tcp_set: bool,
}

impl Listener {
    /// Its [`ListenerKey`]: the same in two configurations means the same listener.
    pub fn key(&self) -> ListenerKey {
        (self.transport, self.addr, self.sockets)
    }
}

/// One zone served on a listener.
#[derive(Debug, Clone)]
pub struct Route {
    /// Lower-case FQDN.
    pub zone: String,
    /// The same in lower-case wire form, for matching.
    pub zone_wire: Vec<u8>,
    /// Index into `Config::blocks`.
    pub block: usize,
}

/// Builds the listeners; an error names the offending block's index.
pub fn group(blocks: &[Block]) -> Result<Vec<Listener>, (usize, String)> {
    let mut all: Vec<(&ZoneAddr, &[IpAddr], bool)> = Vec::new();
    for (bi, b) in blocks.iter().enumerate() {
        for z in &b.zones {
            all.push((z, &b.setup.bind, b.setup.view.is_some()));
        }
        keys::check_zones(all.iter().copied()).map_err(|m| (bi, m))?;
    }

    let mut out: Vec<Listener> = Vec::new();
    for (bi, b) in blocks.iter().enumerate() {
        let hosts: Vec<Option<IpAddr>> = if b.setup.bind.is_empty() {
            vec![None]
        } else {
            b.setup.bind.iter().copied().map(Some).collect()
        };
        for z in &b.zones {
            let zone_wire =
                name_to_wire(&z.zone).map_err(|e| (bi, format!("zone {}: {e}", z.zone)))?;
            for host in &hosts {
                let addr =
                    SocketAddr::new(host.unwrap_or(IpAddr::V6(Ipv6Addr::UNSPECIFIED)), z.port);
                let name = match host {
                    None => format!("{}://:{}", z.transport.scheme(), z.port),
                    Some(_) => format!("{}://{}", z.transport.scheme(), addr),
                };
                let idx = match out
                    .iter()
                    .position(|l| l.transport == z.transport && l.addr == addr)
                {
                    Some(i) => i,
                    None => {
                        out.push(Listener {
                            transport: z.transport,
                            addr,
                            name,
                            routes: Vec::new(),
                            allow_chaos: false,
                            sockets: b.setup.sockets,
                            tcp: TcpTimeouts::default(),
                            proxy: None,
                            origin: String::new(),
                            tcp_set: false,
                        });
                        out.len() - 1
                    }
                };
                let l = &mut out[idx];
                l.allow_chaos |= b.setup.allow_chaos;
                if let (Some(t), false) = (b.setup.tcp_timeouts, l.tcp_set) {
                    l.tcp = t;
                    l.tcp_set = true;
                }
                if let Some(p) = &b.setup.proxy_protocol {
                    merge_proxy(&mut l.proxy, p);
                }
                // A zone twice on a listener is a block with a view beside others: each is a
                // route, in Corefile order, asked in turn.
                if !l
                    .routes
                    .iter()
                    .any(|r| r.zone_wire == zone_wire && r.block == bi)
                {
                    l.routes.push(Route {
                        zone: z.zone.clone(),
                        zone_wire: zone_wire.clone(),
                        block: bi,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// Takes a block's `proxyproto` into its listener's as CoreDNS's `NewServer` takes each
/// site's into the server: the policy (`allow`, `default`) of the last block that sets it,
/// the session duration and cap of the last block that gives a positive one. So blocks of
/// one listener never conflict; CoreDNS accepts them all the same.
fn merge_proxy(into: &mut Option<ProxyProtocol>, block: &ProxyProtocol) {
    let Some(l) = into else {
        *into = Some(block.clone());
        return;
    };
    l.allow.clone_from(&block.allow);
    l.default = block.default;
    if block.tracks_sessions() {
        l.session_ttl = block.session_ttl;
    }
    if block.max_sessions.is_some() {
        l.max_sessions = block.max_sessions;
    }
}
