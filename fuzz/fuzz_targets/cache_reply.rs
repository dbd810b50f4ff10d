//! Fuzz target `cache_reply`: see `checks::cache_reply` for what it feeds and asserts.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ringdns_fuzz::checks::cache_reply::check(data));
