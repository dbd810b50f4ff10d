//! CoreDNS's one autopath family (`plugin/autopath/metrics.go`),
//! `coredns_autopath_success_total{server}`: queries answered from a search path element,
//! counted per core. A core makes a listener's cell at its first success there (so the
//! series appears with the first success, as CoreDNS's vector's does) and keeps it.

use ringdns_plugin::metrics::{Counter, Desc, Export, Kind, Sink, registry};
use std::cell::RefCell;
use std::sync::Arc;

static SUCCESS: Desc = Desc {
    name: "coredns_autopath_success_total",
    help: "Counter of requests that did autopath.",
    kind: Kind::Counter,
    labels: &["server"],
};

/// One core's successes on one listener.
#[derive(Default)]
struct Success(Counter);

impl Export for Success {
    fn export(&self, l: &[String], _core: usize, out: &mut Sink) {
        out.counter(&SUCCESS, &[&l[0]], self.0.get());
    }
}

/// A core's success counters, by listener (a block has few: a scan finds one).
pub struct Counters {
    core: usize,
    cells: RefCell<Vec<(Box<str>, Arc<Success>)>>,
}

impl Counters {
    /// The counters of core `core`.
    pub fn new(core: usize) -> Self {
        Counters {
            core,
            cells: RefCell::new(Vec::new()),
        }
    }

    /// Counts a query that autopath answered from its search path, on listener `server`.
    pub fn success(&self, server: &str) {
        let mut cells = self.cells.borrow_mut();
        if let Some((_, c)) = cells.iter().find(|(s, _)| &**s == server) {
            c.0.inc();
            return;
        }
        let c: Arc<Success> = registry::cell(&[server], self.core);
        c.0.inc();
        cells.push((server.into(), c));
    }
}
