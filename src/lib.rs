//! ringdns: a CoreDNS-compatible DNS server built for speed on Linux bare metal.
//!
//! The layout and the floors (which module may use which) are in ARCHITECTURE.md; in short:
//! `runtime` uses `config`, `chain`, `wire`; `config` uses `chain` and `corefile`; the
//! generated `chain` uses the plugins; plugins use `plugin`, `wire`; `plugin` uses `wire`
//! and `corefile`; `wire`, `corefile` and `logging` use nothing of ours.

#![recursion_limit = "512"]

pub mod chain;
pub mod cli;
pub mod config;
pub mod corefile;
pub mod logging;
pub mod metrics;
pub mod plugin;
pub mod runtime;
pub mod wire;

/// The version printed by `-version` and the startup banner.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
