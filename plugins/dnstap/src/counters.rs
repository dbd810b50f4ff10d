//! dnstap's per-core counters, in the metrics registry (labelled by the SOCKET as written,
//! so a rebuilt instance counts on). CoreDNS's dnstap exports no metrics of its own (it
//! logs its drops), so these families are ringdns's.

use ringdns_plugin::metrics::{Counter, Desc, Export, Kind, Sink};

/// One `dnstap` line's counts on one core.
#[derive(Debug, Default)]
pub struct Counters {
    /// Messages written to the reader.
    pub sent: Counter,
    /// Messages dropped: no reader, a full queue, or lost with a broken connection.
    pub dropped: Counter,
}

static SENT: Desc = Desc {
    name: "coredns_dnstap_sent_total",
    help: "dnstap messages written to the reader.",
    kind: Kind::Counter,
    labels: &["endpoint"],
};
static DROPPED: Desc = Desc {
    name: "coredns_dnstap_dropped_total",
    help: "dnstap messages dropped (no reader connected, queue full, connection lost).",
    kind: Kind::Counter,
    labels: &["endpoint"],
};

impl Export for Counters {
    fn export(&self, labels: &[String], _core: usize, out: &mut Sink) {
        out.counter(&SENT, &[&labels[0]], self.sent.get());
        out.counter(&DROPPED, &[&labels[0]], self.dropped.get());
    }
}
