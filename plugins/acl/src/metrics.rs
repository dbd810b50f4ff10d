//! CoreDNS's four acl families (`plugin/acl/metrics.go`), counted per core:
//!
//! - `coredns_acl_blocked_requests_total{server, zone, view}`,
//! - `coredns_acl_filtered_requests_total{server, zone, view}`,
//! - `coredns_acl_dropped_requests_total{server, zone, view}`: queries a rule of `zone`
//!   blocked, filtered or dropped;
//! - `coredns_acl_allowed_requests_total{server, view}`: queries handed on.
//!
//! A core makes a cell at the first count of its label set (so a series appears with its
//! first count, as CoreDNS's vectors' do) and keeps it: only that first count takes the
//! registry's lock and allocates. `view` is the block's `view` name, empty without one, so
//! two views of one zone and port count apart.

use crate::Action;
use ringdns_plugin::metrics::{Counter, Desc, Export, Kind, Sink, registry};
use std::cell::RefCell;
use std::sync::Arc;

const ZONE_LABELS: &[&str] = &["server", "zone", "view"];

static BLOCKED: Desc = Desc {
    name: "coredns_acl_blocked_requests_total",
    help: "Counter of DNS requests being blocked.",
    kind: Kind::Counter,
    labels: ZONE_LABELS,
};

static FILTERED: Desc = Desc {
    name: "coredns_acl_filtered_requests_total",
    help: "Counter of DNS requests being filtered.",
    kind: Kind::Counter,
    labels: ZONE_LABELS,
};

static DROPPED: Desc = Desc {
    name: "coredns_acl_dropped_requests_total",
    help: "Counter of DNS requests being dropped.",
    kind: Kind::Counter,
    labels: ZONE_LABELS,
};

static ALLOWED: Desc = Desc {
    name: "coredns_acl_allowed_requests_total",
    help: "Counter of DNS requests being allowed.",
    kind: Kind::Counter,
    labels: &["server", "view"],
};

/// One core's count of one denying action for one (server, zone); the type says which.
#[derive(Default)]
struct Denied<const A: u8>(Counter);

const BLOCK: u8 = 0;
const FILTER: u8 = 1;
const DROP: u8 = 2;

impl<const A: u8> Export for Denied<A> {
    fn export(&self, l: &[String], _core: usize, out: &mut Sink) {
        let desc = match A {
            BLOCK => &BLOCKED,
            FILTER => &FILTERED,
            _ => &DROPPED,
        };
        out.counter(desc, &[&l[0], &l[1], &l[2]], self.0.get());
    }
}

/// One core's allowed queries on one listener.
#[derive(Default)]
pub struct Allowed(Counter);

impl Allowed {
    /// Counts one query handed on.
    pub fn inc(&self) {
        self.0.inc();
    }
}

impl Export for Allowed {
    fn export(&self, l: &[String], _core: usize, out: &mut Sink) {
        out.counter(&ALLOWED, &[&l[0], &l[1]], self.0.get());
    }
}

type DeniedCells<const A: u8> = RefCell<Vec<(Box<str>, Box<str>, Arc<Denied<A>>)>>;

/// A core's acl counters, made as label sets first occur. A block has few listeners and
/// few zones: a scan finds a cell.
pub struct Counters {
    core: usize,
    view: Box<str>,
    allowed: RefCell<Vec<(Box<str>, Arc<Allowed>)>>,
    blocked: DeniedCells<BLOCK>,
    filtered: DeniedCells<FILTER>,
    dropped: DeniedCells<DROP>,
}

impl Counters {
    /// The counters of core `core` for a block of view `view` (empty without one).
    pub fn new(core: usize, view: &str) -> Self {
        Counters {
            core,
            view: view.into(),
            allowed: RefCell::default(),
            blocked: RefCell::default(),
            filtered: RefCell::default(),
            dropped: RefCell::default(),
        }
    }

    /// Counts a query handed on from listener `server`.
    pub fn allow(&self, server: &str) {
        self.with_allowed(server, |c| c.inc());
    }

    /// This core's allowed counter of listener `server`, shared, for a query's future to
    /// count once the rest of the chain has served it.
    pub fn allowed(&self, server: &str) -> Arc<Allowed> {
        self.with_allowed(server, Arc::clone)
    }

    fn with_allowed<T>(&self, server: &str, f: impl FnOnce(&Arc<Allowed>) -> T) -> T {
        let mut cells = self.allowed.borrow_mut();
        if let Some((_, c)) = cells.iter().find(|(s, _)| &**s == server) {
            return f(c);
        }
        let c: Arc<Allowed> = registry::cell(&[server, &self.view], self.core);
        let out = f(&c);
        cells.push((server.into(), c));
        out
    }

    /// Counts a query that `action` (block, filter or drop) denied by a rule of `zone`.
    pub fn denied(&self, action: Action, server: &str, zone: &str) {
        match action {
            Action::Block => self.count(&self.blocked, server, zone),
            Action::Filter => self.count(&self.filtered, server, zone),
            Action::Drop => self.count(&self.dropped, server, zone),
            Action::Allow => {}
        }
    }

    fn count<const A: u8>(&self, cells: &DeniedCells<A>, server: &str, zone: &str) {
        let mut cells = cells.borrow_mut();
        if let Some((_, _, c)) = cells
            .iter()
            .find(|(s, z, _)| &**s == server && &**z == zone)
        {
            c.0.inc();
            return;
        }
        let c: Arc<Denied<A>> = registry::cell(&[server, zone, &self.view], self.core);
        c.0.inc();
        cells.push((server.into(), zone.into(), c));
    }
}
