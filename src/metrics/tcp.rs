//! ringdns's own TCP families, for seeing the connection caps at work: connections open per
//! listener, and those the table closed to make room or refused (`tcp_max_conns`,
//! `tcp_max_conns_per_ip`). Counted at accept and close only, never per query.

use ringdns_metrics::Counter;
use ringdns_metrics::registry::Export;
use ringdns_metrics::{Desc, Kind, Sink};

static OPEN: Desc = Desc {
    name: "ringdns_tcp_connections_open",
    help: "TCP connections open on a listener.",
    kind: Kind::Gauge,
    labels: &["server"],
};

static SHED: Desc = Desc {
    name: "ringdns_tcp_connections_shed_total",
    help: "TCP connections closed by the connection caps: reason evicted (idle longest, closed to make room for a newcomer), client_limit (a newcomer past tcp_max_conns_per_ip), full (a newcomer while every connection had a query in flight).",
    kind: Kind::Counter,
    labels: &["server", "reason"],
};

/// One core's counters for one TCP listener. Registry labels: server.
#[derive(Debug, Default)]
pub struct TcpCounters {
    /// Connections admitted.
    pub opened: Counter,
    /// Connections ended (after they were admitted).
    pub closed: Counter,
    /// Connections closed to make room.
    pub evicted: Counter,
    /// Newcomers refused for their client's cap.
    pub client_limit: Counter,
    /// Newcomers refused with every connection busy.
    pub full: Counter,
}

impl Export for TcpCounters {
    fn export(&self, labels: &[String], _core: usize, out: &mut Sink) {
        let server = &labels[0];
        let open = self.opened.get().saturating_sub(self.closed.get());
        out.gauge(&OPEN, &[server], open as f64);
        for (reason, c) in [
            ("evicted", &self.evicted),
            ("client_limit", &self.client_limit),
            ("full", &self.full),
        ] {
            out.counter(&SHED, &[server, reason], c.get());
        }
    }
}
