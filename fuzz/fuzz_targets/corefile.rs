//! Fuzz target `corefile`: see `checks::corefile` for what it feeds and asserts.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ringdns_fuzz::checks::corefile::check(data));
