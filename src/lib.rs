//! ringdns: a CoreDNS-compatible DNS server built for speed on Linux bare metal.
//!
//! This is the server package: the CLI, the configuration, the runtime and the chain
//! generated from plugin.cfg. The layers plugins build on are crates of their own
//! (crates/wire, crates/corefile, crates/metrics, crates/plugin), re-exported here under
//! the paths the server's modules use; ARCHITECTURE.md has the crate map and the floors.

// The chain is one nested type with a link per serving plugin. The compiler's layout of its
// future recurses through every link's future and the plugin.cfg line's type projections,
// about 8 levels a link: the default limit (128) held a dozen links, 512 overflowed at 64.
// 1024 holds more than 100; tests/chain_depth.rs builds 64 links (plus configuration-only
// lines between them) under this same limit, so the headroom is known before the chain grows.
#![recursion_limit = "1024"]

pub mod chain;
pub mod cli;
pub mod config;
pub mod metrics;
pub mod runtime;

/// The plugin API crate, under the path the server's modules (and its tests) use.
pub use ringdns_plugin as plugin;
pub use ringdns_plugin::{corefile, error, info, logging, warning, wire};

/// The version printed by `-version` and the startup banner.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
