//! The server's metrics: the shared registry and counters of ringdns-metrics (re-exported,
//! so `crate::metrics::registry` and friends name them), plus the families only the
//! server's runtime fills: TCP connections, UDP datagrams, reloads, build information.

pub use ringdns_metrics::*;

pub mod build;
pub mod reload;
pub mod tcp;
pub mod udp;
