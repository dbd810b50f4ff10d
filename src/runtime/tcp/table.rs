//! The TCP connections open on one listener of one core, and who gets a slot when it is
//! full. A flood of idle or slow connections must not shut out new clients (RFC 7766 §6.2.3
//! lets a server close idle connections under pressure): at the cap, the connection that
//! has gone longest without completing a message, and has no query in flight, is closed to
//! make room. One client address (an IPv6 client by its /64) may hold only so many slots.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::os::fd::RawFd;
use std::rc::Rc;

/// The caps of a listener's table on one core (the global block's `tcp_max_conns` and
/// `tcp_max_conns_per_ip`).
#[derive(Debug, Clone, Copy)]
pub struct TcpCaps {
    /// Connections open at once.
    pub total: usize,
    /// Connections open at once from one client address (0: no cap).
    pub per_client: usize,
}

/// What a client is counted as: its address, an IPv4-mapped one as IPv4, an IPv6 one by
/// its /64 (one host or site usually owns a whole /64, and could otherwise take a slot per
/// address it picks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientKey(IpAddr);

impl ClientKey {
    /// The key of a client address.
    pub fn of(ip: IpAddr) -> Self {
        ClientKey(match ip.to_canonical() {
            IpAddr::V6(v6) => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
            v4 => v4,
        })
    }
}

/// What one connection tells the table about itself; the connection's task updates it.
#[derive(Debug)]
pub struct ConnState {
    /// The accepted socket, to close it (shutdown) when the connection is evicted. Valid
    /// while the connection is registered: its registration is dropped in the same step as
    /// the socket, with no await between them.
    fd: RawFd,
    client: ClientKey,
    /// When the connection was accepted or last completed reading a message, on the
    /// table's clock: an order, not a time, so the query path reads no clock for it.
    since: Cell<u64>,
    clock: Rc<Cell<u64>>,
    /// Queries of this connection being served as tasks: such a connection is not idle.
    in_flight: Cell<u32>,
    /// Whether the table already closed this connection to make room.
    evicted: Cell<bool>,
}

impl ConnState {
    /// Notes that a whole message has been read: the connection is active.
    pub fn completed_message(&self) {
        self.since.set(tick(&self.clock));
    }

    /// Notes a query of this connection that starts waiting as a task.
    pub fn deferred_started(&self) {
        self.in_flight.set(self.in_flight.get() + 1);
    }

    /// Notes that a query of this connection served as a task has finished.
    pub fn deferred_finished(&self) {
        self.in_flight.set(self.in_flight.get().saturating_sub(1));
    }
}

/// Why a new connection was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Its client address holds `per_client` connections already.
    ClientCap,
    /// The table is full and every connection in it has a query in flight.
    Full,
}

/// What admitting a connection did.
#[derive(Debug)]
pub struct Admitted {
    /// The connection's registration; dropping it frees the slot.
    pub registration: Registration,
    /// Whether another connection was closed to make room.
    pub evicted_one: bool,
}

/// The open connections of one listener on one core.
#[derive(Debug)]
pub struct ConnTable {
    caps: Cell<TcpCaps>,
    conns: RefCell<Vec<Rc<ConnState>>>,
    per_client: RefCell<HashMap<ClientKey, usize>>,
    /// Connections closed by eviction whose tasks have not ended yet: they no longer count
    /// against the cap.
    evicted: Cell<usize>,
    /// Counts accepts and completed messages: what `since` is read on.
    clock: Rc<Cell<u64>>,
}

/// The next reading of a table's clock.
fn tick(clock: &Cell<u64>) -> u64 {
    let t = clock.get() + 1;
    clock.set(t);
    t
}

impl ConnTable {
    /// An empty table with these caps.
    pub fn new(caps: TcpCaps) -> Rc<Self> {
        Rc::new(ConnTable {
            caps: Cell::new(caps),
            conns: RefCell::new(Vec::new()),
            per_client: RefCell::new(HashMap::new()),
            evicted: Cell::new(0),
            clock: Rc::new(Cell::new(0)),
        })
    }

    /// Connections registered and not evicted.
    pub fn open(&self) -> usize {
        self.conns.borrow().len() - self.evicted.get()
    }

    /// Admits the connection on `fd` from `ip`, closing the connection idle longest when the
    /// table is full, or says why it cannot.
    pub fn admit(self: &Rc<Self>, fd: RawFd, ip: IpAddr) -> Result<Admitted, Refusal> {
        let caps = self.caps.get();
        let client = ClientKey::of(ip);
        if caps.per_client > 0
            && self.per_client.borrow().get(&client).copied().unwrap_or(0) >= caps.per_client
        {
            return Err(Refusal::ClientCap);
        }
        let evicted_one = if self.open() >= caps.total {
            if !self.evict_idlest() {
                return Err(Refusal::Full);
            }
            true
        } else {
            false
        };
        let state = Rc::new(ConnState {
            fd,
            client,
            since: Cell::new(tick(&self.clock)),
            clock: self.clock.clone(),
            in_flight: Cell::new(0),
            evicted: Cell::new(false),
        });
        self.conns.borrow_mut().push(state.clone());
        *self.per_client.borrow_mut().entry(client).or_insert(0) += 1;
        Ok(Admitted {
            registration: Registration {
                table: self.clone(),
                state,
            },
            evicted_one,
        })
    }

    /// Closes the connection that has gone longest without completing a message and has
    /// nothing in flight; false when there is none.
    fn evict_idlest(&self) -> bool {
        let conns = self.conns.borrow();
        let victim = conns
            .iter()
            .filter(|c| !c.evicted.get() && c.in_flight.get() == 0)
            .min_by_key(|c| c.since.get());
        let Some(victim) = victim else {
            return false;
        };
        victim.evicted.set(true);
        self.evicted.set(self.evicted.get() + 1);
        // Its task sees the end of the stream at its next read and ends, freeing the entry.
        let _ = nix::sys::socket::shutdown(victim.fd, nix::sys::socket::Shutdown::Both);
        true
    }

    fn remove(&self, state: &Rc<ConnState>) {
        let mut conns = self.conns.borrow_mut();
        if let Some(i) = conns.iter().position(|c| Rc::ptr_eq(c, state)) {
            conns.swap_remove(i);
        }
        if state.evicted.get() {
            self.evicted.set(self.evicted.get() - 1);
        }
        let mut per = self.per_client.borrow_mut();
        if let Some(n) = per.get_mut(&state.client) {
            *n -= 1;
            if *n == 0 {
                per.remove(&state.client);
            }
        }
    }
}

/// A connection's slot in its table, freed when dropped.
#[derive(Debug)]
pub struct Registration {
    table: Rc<ConnTable>,
    state: Rc<ConnState>,
}

impl Registration {
    /// The connection's state, which its task keeps up to date.
    pub fn state(&self) -> &Rc<ConnState> {
        &self.state
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.table.remove(&self.state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn caps(total: usize, per_client: usize) -> TcpCaps {
        TcpCaps { total, per_client }
    }

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
    }

    #[test]
    fn a_full_table_closes_the_connection_idle_longest_and_never_a_busy_one() {
        let t = ConnTable::new(caps(3, 0));
        // fd -1: shutdown fails harmlessly; the table's bookkeeping is what is tested.
        let a = t.admit(-1, ip(1)).unwrap().registration;
        let b = t.admit(-1, ip(2)).unwrap().registration;
        let c = t.admit(-1, ip(3)).unwrap().registration;
        // a is the oldest but has a query in flight; c completed a message since b came.
        a.state().deferred_started();
        c.state().completed_message();
        let d = t.admit(-1, ip(4)).unwrap();
        assert!(d.evicted_one);
        assert!(b.state().evicted.get(), "b was idle longest");
        assert!(!a.state().evicted.get() && !c.state().evicted.get());
        assert_eq!(t.open(), 3);
        drop(b);
        assert_eq!(
            t.open(),
            3,
            "the evicted connection's end frees nothing more"
        );
        assert_eq!(t.conns.borrow().len(), 3);
        // Every connection busy: the newcomer is refused.
        c.state().deferred_started();
        d.registration.state().deferred_started();
        assert_eq!(t.admit(-1, ip(5)).unwrap_err(), Refusal::Full);
        drop((a, c, d));
        assert_eq!(t.open(), 0);
        assert!(t.per_client.borrow().is_empty());
    }

    #[test]
    fn one_client_address_holds_at_most_its_cap() {
        let t = ConnTable::new(caps(100, 2));
        let a = t.admit(-1, ip(1)).unwrap();
        let _b = t.admit(-1, ip(1)).unwrap();
        assert_eq!(t.admit(-1, ip(1)).unwrap_err(), Refusal::ClientCap);
        // The same address as IPv4-mapped IPv6 is the same client.
        let mapped = IpAddr::V6(Ipv4Addr::new(127, 0, 0, 1).to_ipv6_mapped());
        assert_eq!(t.admit(-1, mapped).unwrap_err(), Refusal::ClientCap);
        assert!(t.admit(-1, ip(2)).is_ok(), "another address is admitted");
        drop(a);
        assert!(
            t.admit(-1, ip(1)).is_ok(),
            "a freed slot is the client's again"
        );
    }

    #[test]
    fn ipv6_clients_are_counted_by_their_64() {
        let a: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(ClientKey::of(a), ClientKey::of(b));
        assert_ne!(ClientKey::of(a), ClientKey::of(c));
    }
}
