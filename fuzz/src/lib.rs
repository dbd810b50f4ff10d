//! The fuzz targets' bodies, shared with the root's `tests/fuzz_regressions.rs` (which
//! includes the same files) so that a target and its regression test cannot drift apart.

#[path = "../checks/mod.rs"]
pub mod checks;
