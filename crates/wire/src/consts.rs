//! Numeric constants of the DNS wire format that the rest of the server names
//! instead of repeating magic numbers.

/// Bits of the 16-bit flags word (header bytes 2..4).
pub mod flags {
    /// Response: set in every reply; a query with it set is ignored.
    pub const QR: u16 = 0x8000;
    /// Authoritative Answer.
    pub const AA: u16 = 0x0400;
    /// TrunCation: the reply was cut to fit the client's buffer.
    pub const TC: u16 = 0x0200;
    /// Recursion Desired (echoed in replies).
    pub const RD: u16 = 0x0100;
    /// Recursion Available.
    pub const RA: u16 = 0x0080;
    /// The reserved Z bit (cleared in FORMERR/NOTIMP replies, as miekg does).
    pub const Z: u16 = 0x0040;
    /// Authentic Data (DNSSEC).
    pub const AD: u16 = 0x0020;
    /// Checking Disabled (DNSSEC, echoed in replies).
    pub const CD: u16 = 0x0010;
    /// Mask of the opcode field (4 bits at bit 11).
    pub const OPCODE_MASK: u16 = 0x7800;
    /// Mask of the (low 4 bits of the) rcode.
    pub const RCODE_MASK: u16 = 0x000f;
}

/// Header opcodes.
pub mod opcode {
    /// Standard query: the only opcode (with NOTIFY) that miekg accepts.
    pub const QUERY: u8 = 0;
    /// Inverse query (obsolete): answered NOTIMP.
    pub const IQUERY: u8 = 1;
    /// Server status: answered NOTIMP.
    pub const STATUS: u8 = 2;
    /// Zone change notification (RFC 1996); accepted like QUERY.
    pub const NOTIFY: u8 = 4;
    /// Dynamic update (RFC 2136): answered NOTIMP.
    pub const UPDATE: u8 = 5;
    /// DNS Stateful Operations (RFC 8490): answered NOTIMP by default.
    pub const DSO: u8 = 6;
}

/// Response codes, as `u8` because they are written into a reply (values
/// above 15 need an OPT record to carry the upper 8 bits).
pub mod rcode {
    /// No error.
    pub const NOERROR: u8 = 0;
    /// Format error: the query could not be parsed.
    pub const FORMERR: u8 = 1;
    /// Server failure.
    pub const SERVFAIL: u8 = 2;
    /// The name does not exist.
    pub const NXDOMAIN: u8 = 3;
    /// Not implemented (unsupported opcode).
    pub const NOTIMP: u8 = 4;
    /// Refused (no zone, class not allowed, ACL).
    pub const REFUSED: u8 = 5;
    /// Name exists when it should not (UPDATE).
    pub const YXDOMAIN: u8 = 6;
    /// RRset exists when it should not (UPDATE).
    pub const YXRRSET: u8 = 7;
    /// RRset that should exist does not (UPDATE).
    pub const NXRRSET: u8 = 8;
    /// Not authoritative / not authorized.
    pub const NOTAUTH: u8 = 9;
    /// Name not contained in zone.
    pub const NOTZONE: u8 = 10;
    /// DSO type not implemented (RFC 8490).
    pub const DSOTYPENI: u8 = 11;
    /// Bad OPT version (EDNS): header rcode 0, OPT extended rcode 1.
    pub const BADVERS: u8 = 16;
    /// TSIG signature failure; same value as BADVERS (miekg prints it "BADSIG").
    pub const BADSIG: u8 = 16;
    /// Key not recognised (TSIG).
    pub const BADKEY: u8 = 17;
    /// Signature out of time window (TSIG).
    pub const BADTIME: u8 = 18;
    /// Bad TKEY mode.
    pub const BADMODE: u8 = 19;
    /// Duplicate key name (TKEY).
    pub const BADNAME: u8 = 20;
    /// Algorithm not supported (TKEY).
    pub const BADALG: u8 = 21;
    /// Bad truncation (TSIG).
    pub const BADTRUNC: u8 = 22;
    /// Bad or missing server cookie (RFC 7873).
    pub const BADCOOKIE: u8 = 23;
}

/// Resource record types the server refers to by name.
pub mod rtype {
    /// IPv4 address.
    pub const A: u16 = 1;
    /// Authoritative name server.
    pub const NS: u16 = 2;
    /// Canonical name (alias).
    pub const CNAME: u16 = 5;
    /// Start of authority.
    pub const SOA: u16 = 6;
    /// Domain name pointer (reverse lookups).
    pub const PTR: u16 = 12;
    /// Host information (used by the `any` plugin, RFC 8482).
    pub const HINFO: u16 = 13;
    /// Mail exchange.
    pub const MX: u16 = 15;
    /// Text strings.
    pub const TXT: u16 = 16;
    /// IPv6 address.
    pub const AAAA: u16 = 28;
    /// Service locator.
    pub const SRV: u16 = 33;
    /// Name redirection for a subtree.
    pub const DNAME: u16 = 39;
    /// EDNS(0) pseudo-record.
    pub const OPT: u16 = 41;
    /// Delegation signer.
    pub const DS: u16 = 43;
    /// DNSSEC signature.
    pub const RRSIG: u16 = 46;
    /// DNSSEC authenticated denial.
    pub const NSEC: u16 = 47;
    /// DNSSEC public key.
    pub const DNSKEY: u16 = 48;
    /// Hashed authenticated denial.
    pub const NSEC3: u16 = 50;
    /// The NSEC3 parameters of a zone (at its apex).
    pub const NSEC3PARAM: u16 = 51;
    /// Service binding.
    pub const SVCB: u16 = 64;
    /// HTTPS service binding.
    pub const HTTPS: u16 = 65;
    /// Transaction signature (must be the last record of a message).
    pub const TSIG: u16 = 250;
    /// Incremental zone transfer.
    pub const IXFR: u16 = 251;
    /// Full zone transfer.
    pub const AXFR: u16 = 252;
    /// Any type (query only).
    pub const ANY: u16 = 255;

    /// The type of an address's record: A for IPv4, AAAA for IPv6; what an answer of
    /// addresses compares with the query type.
    pub const fn of_addr(ip: &std::net::IpAddr) -> u16 {
        match ip {
            std::net::IpAddr::V4(_) => A,
            std::net::IpAddr::V6(_) => AAAA,
        }
    }
}

/// Record classes.
pub mod class {
    /// Internet.
    pub const IN: u16 = 1;
    /// Chaos (version.bind and friends).
    pub const CH: u16 = 3;
    /// Hesiod.
    pub const HS: u16 = 4;
    /// NONE (UPDATE).
    pub const NONE: u16 = 254;
    /// Any class.
    pub const ANY: u16 = 255;
}

/// EDNS(0) option codes.
pub mod edns {
    /// Long-lived queries (draft).
    pub const LLQ: u16 = 1;
    /// Update lease.
    pub const UL: u16 = 2;
    /// Name server identifier (RFC 5001).
    pub const NSID: u16 = 3;
    /// Client subnet (RFC 7871).
    pub const SUBNET: u16 = 8;
    /// SOA expire (RFC 7314).
    pub const EXPIRE: u16 = 9;
    /// DNS cookie (RFC 7873).
    pub const COOKIE: u16 = 10;
    /// TCP keepalive (RFC 7828).
    pub const TCP_KEEPALIVE: u16 = 11;
    /// Padding (RFC 7830).
    pub const PADDING: u16 = 12;
    /// Extended DNS error (RFC 8914).
    pub const EDE: u16 = 15;

    /// The options CoreDNS copies from a request's OPT into a reply that
    /// has none (`plugin/pkg/edns`): NSID, EXPIRE, COOKIE, TCP-KEEPALIVE,
    /// PADDING.
    pub const SUPPORTED: [u16; 5] = [NSID, EXPIRE, COOKIE, TCP_KEEPALIVE, PADDING];
}

/// Length of the fixed DNS header.
pub const HEADER_LEN: usize = 12;
/// Smallest reply size a UDP client can be limited to (RFC 1035 / 6891).
pub const MIN_UDP_SIZE: usize = 512;
/// Largest DNS message (the TCP length prefix is 16 bits).
pub const MAX_MSG_SIZE: usize = 65535;
/// Largest wire-format name, root label included.
pub const MAX_NAME_LEN: usize = 255;
/// Largest label.
pub const MAX_LABEL_LEN: usize = 63;
/// Offset of the question name in every message: compression pointers
/// to the question use it (`0xC00C`).
pub const QUESTION_OFFSET: usize = 12;
/// The two bytes of a compression pointer to the question name.
pub const QUESTION_POINTER: [u8; 2] = [0xC0, 0x0C];
