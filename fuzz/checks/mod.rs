//! What each fuzz target feeds the code and asserts, one module per target. Compiled twice:
//! into the fuzz crate (`fuzz/src/lib.rs`) for `cargo fuzz`, and into the root's
//! `tests/fuzz_regressions.rs`, which runs every seed and every saved crash through the same
//! function under plain `cargo test`.

pub mod cache_reply;
pub mod corefile;
pub mod query;

/// A target's body: runs one input, panics when a promise is broken.
pub type Check = fn(&[u8]);

/// The targets by name, as their corpus and regression folders are named.
pub const TARGETS: &[(&str, Check)] = &[
    ("query", query::check),
    ("corefile", corefile::check),
    ("cache_reply", cache_reply::check),
];
