//! CoreDNS's `coredns_dns64_requests_translated_total{server}`: the queries answered with
//! synthesised records, counted per core.

use ringdns_plugin::metrics::{Counter, Desc, Export, Kind, Sink, registry};
use std::cell::RefCell;
use std::sync::Arc;

static TRANSLATED: Desc = Desc {
    name: "coredns_dns64_requests_translated_total",
    help: "Counter of DNS requests translated by dns64.",
    kind: Kind::Counter,
    labels: &["server"],
};

/// One core's count for one listener.
#[derive(Default)]
struct Translated(Counter);

impl Export for Translated {
    fn export(&self, l: &[String], _core: usize, out: &mut Sink) {
        out.counter(&TRANSLATED, &[&l[0]], self.0.get());
    }
}

/// A core's counters, made as listeners first translate a query (a series appears with
/// its first count, as CoreDNS's vector's do).
pub struct Counters {
    core: usize,
    cells: RefCell<Vec<(Box<str>, Arc<Translated>)>>,
}

impl Counters {
    /// The counters of core `core`.
    pub fn new(core: usize) -> Self {
        Counters {
            core,
            cells: RefCell::default(),
        }
    }

    /// Counts a query of listener `server` answered with synthesised records.
    pub fn translated(&self, server: &str) {
        let mut cells = self.cells.borrow_mut();
        if let Some((_, c)) = cells.iter().find(|(s, _)| &**s == server) {
            c.0.inc();
            return;
        }
        let c: Arc<Translated> = registry::cell(&[server], self.core);
        c.0.inc();
        cells.push((server.into(), c));
    }
}
