//! Fuzz target `query`: see `checks::query` for what it feeds and asserts.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ringdns_fuzz::checks::query::check(data));
