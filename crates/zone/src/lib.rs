//! Authoritative zone data for ringdns's `file`, `auto`, `secondary` and `transfer`:
//! the zone-file parser ([`parse`]), the zone store shared read-only by every core
//! ([`Zone`]), and answering by RFC 1034 §4.3.2 with DNSSEC (RFC 4035, 5155)
//! ([`Zone::answer`]), and what the plugins that serve zones share: the block's zone
//! [`registry`], the zone that answers a query ([`pick`]), [`serving`] a query from a
//! zone, a zone file [`watch`]ed for changes.

#![forbid(unsafe_code)]

mod answer;
mod build;
pub mod canonical;
mod external;
pub mod journal;
pub mod load;
pub mod nsec3;
pub mod parse;
pub mod pick;
pub mod record;
pub mod registry;
pub mod serial;
pub mod serving;
mod walk;
pub mod watch;
mod zone;

pub use answer::{Answered, Wildcard};
pub use build::BuildError;
pub use record::Record;
pub use walk::StoredRecord;
pub use zone::Zone;

#[cfg(test)]
mod tests;
