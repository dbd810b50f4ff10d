//! One resource record as the zone-file parser and zone transfers produce it, before the
//! zone store arranges records into RRsets.

/// A record in wire form: what the store is built from. Names are absolute and
/// uncompressed, case as written in the source (the store lower-cases owner names for
/// lookup; RDATA is kept byte for byte, so signatures over it stay valid).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The owner name, absolute, uncompressed wire form.
    pub owner: Box<[u8]>,
    /// The record type (`ringdns_wire::rtype`).
    pub rtype: u16,
    /// The record class (1 = IN).
    pub class: u16,
    /// The TTL in seconds.
    pub ttl: u32,
    /// The RDATA, uncompressed wire form.
    pub rdata: Box<[u8]>,
}
