//! Authoritative zone data for ringdns's `file`, `auto`, `secondary` and `transfer`:
//! the zone-file parser ([`parse`]), the zone store shared read-only by every core
//! ([`Zone`]), and answering by RFC 1034 §4.3.2 with DNSSEC (RFC 4035, 5155).

#![forbid(unsafe_code)]

pub mod parse;
pub mod record;

pub use record::Record;
