//! The dnstap schema (dnstap.pb's `dnstap.proto`, proto2) as prost derive structs, and the
//! encoder the query path uses: it writes the same bytes prost would from borrowed fields,
//! straight into a core's buffer, so a message costs no allocation (a `Dnstap` struct owns
//! its byte fields). The structs are the schema's reference: the tests decode what the
//! encoder wrote with them.

use prost::bytes::BufMut;
use prost::encoding::{WireType, encode_key, encode_varint, encoded_len_varint, key_len};
use std::net::IpAddr;

/// `dnstap.Dnstap`: the envelope of every frame.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Dnstap {
    /// The server's identity (`identity`, default the host name).
    #[prost(bytes = "vec", optional, tag = "1")]
    pub identity: Option<Vec<u8>>,
    /// The server's version (`version`).
    #[prost(bytes = "vec", optional, tag = "2")]
    pub version: Option<Vec<u8>>,
    /// `extra`.
    #[prost(bytes = "vec", optional, tag = "3")]
    pub extra: Option<Vec<u8>>,
    /// The message, for type MESSAGE.
    #[prost(message, optional, tag = "14")]
    pub message: Option<Message>,
    /// Always MESSAGE (1).
    #[prost(int32, required, tag = "15")]
    pub r#type: i32,
}

/// `dnstap.Message`: one DNS message seen by the server.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Message {
    /// [`MessageType`].
    #[prost(int32, required, tag = "1")]
    pub r#type: i32,
    /// INET (1) or INET6 (2).
    #[prost(int32, optional, tag = "2")]
    pub socket_family: Option<i32>,
    /// UDP (1), TCP (2).
    #[prost(int32, optional, tag = "3")]
    pub socket_protocol: Option<i32>,
    /// The address that sent the query (client; this server for a forwarder message).
    #[prost(bytes = "vec", optional, tag = "4")]
    pub query_address: Option<Vec<u8>>,
    /// The address that answers (the upstream for a forwarder message).
    #[prost(bytes = "vec", optional, tag = "5")]
    pub response_address: Option<Vec<u8>>,
    /// The query's source port.
    #[prost(uint32, optional, tag = "6")]
    pub query_port: Option<u32>,
    /// The responder's port.
    #[prost(uint32, optional, tag = "7")]
    pub response_port: Option<u32>,
    /// When the query was sent or received, seconds since the epoch.
    #[prost(uint64, optional, tag = "8")]
    pub query_time_sec: Option<u64>,
    /// Its nanoseconds.
    #[prost(fixed32, optional, tag = "9")]
    pub query_time_nsec: Option<u32>,
    /// The query in wire form (`full`).
    #[prost(bytes = "vec", optional, tag = "10")]
    pub query_message: Option<Vec<u8>>,
    /// The zone of a resolver's query (not written by CoreDNS).
    #[prost(bytes = "vec", optional, tag = "11")]
    pub query_zone: Option<Vec<u8>>,
    /// When the response was sent or received, seconds since the epoch.
    #[prost(uint64, optional, tag = "12")]
    pub response_time_sec: Option<u64>,
    /// Its nanoseconds.
    #[prost(fixed32, optional, tag = "13")]
    pub response_time_nsec: Option<u32>,
    /// The response in wire form (`full`).
    #[prost(bytes = "vec", optional, tag = "14")]
    pub response_message: Option<Vec<u8>>,
}

/// `Dnstap.Type`: MESSAGE.
pub const DNSTAP_MESSAGE: i32 = 1;

/// `Message.Type`, the kinds this server writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageType {
    /// A client's query as it arrived.
    ClientQuery = 5,
    /// The reply sent to the client.
    ClientResponse = 6,
    /// A query forward sent upstream.
    ForwarderQuery = 7,
    /// The upstream's reply.
    ForwarderResponse = 8,
}

/// `SocketFamily`.
pub const INET: i32 = 1;
/// `SocketFamily`.
pub const INET6: i32 = 2;
/// `SocketProtocol`.
pub const UDP: i32 = 1;
/// `SocketProtocol`.
pub const TCP: i32 = 2;

/// An address as dnstap stores it: 4 octets for IPv4 (an IPv4-mapped IPv6 address too, as
/// CoreDNS), else 16.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Addr {
    bytes: [u8; 16],
    v4: bool,
}

impl Addr {
    /// The dnstap form of `ip`.
    pub fn new(ip: IpAddr) -> Addr {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        match ip {
            IpAddr::V4(v4) => {
                let mut bytes = [0; 16];
                bytes[..4].copy_from_slice(&v4.octets());
                Addr { bytes, v4: true }
            }
            IpAddr::V6(v6) => Addr {
                bytes: v6.octets(),
                v4: false,
            },
        }
    }

    /// The octets.
    pub fn octets(&self) -> &[u8] {
        if self.v4 {
            &self.bytes[..4]
        } else {
            &self.bytes
        }
    }

    /// INET or INET6.
    pub fn family(&self) -> i32 {
        if self.v4 { INET } else { INET6 }
    }
}

/// A time as dnstap stores it: seconds and nanoseconds since the epoch.
pub type Time = (u64, u32);

/// One message, its fields borrowed: what a tap writes.
#[derive(Debug, Clone, Copy)]
pub struct Tap<'a> {
    /// Its kind.
    pub kind: MessageType,
    /// UDP or TCP.
    pub protocol: i32,
    /// Who sent the query, and from which port.
    pub query: Option<(Addr, u16)>,
    /// Who answers it, on which port.
    pub response: Option<(Addr, u16)>,
    /// When the query was sent or received.
    pub query_time: Option<Time>,
    /// When the response was sent or received.
    pub response_time: Option<Time>,
    /// The query's wire form (`full` only).
    pub query_message: Option<&'a [u8]>,
    /// The response's wire form (`full` only).
    pub response_message: Option<&'a [u8]>,
}

/// The envelope's fixed fields (the `dnstap` line's).
#[derive(Debug, Clone, Copy)]
pub struct Envelope<'a> {
    /// `identity`.
    pub identity: &'a [u8],
    /// `version`.
    pub version: &'a [u8],
    /// `extra`; empty means none (CoreDNS leaves it out then).
    pub extra: &'a [u8],
}

fn bytes_field(tag: u32, v: &[u8], out: &mut Vec<u8>) {
    encode_key(tag, WireType::LengthDelimited, out);
    encode_varint(v.len() as u64, out);
    out.put_slice(v);
}

fn varint_field(tag: u32, v: u64, out: &mut Vec<u8>) {
    encode_key(tag, WireType::Varint, out);
    encode_varint(v, out);
}

fn fixed32_field(tag: u32, v: u32, out: &mut Vec<u8>) {
    encode_key(tag, WireType::ThirtyTwoBit, out);
    out.put_u32_le(v);
}

/// Appends the `Message` of `tap` to `out`, fields in tag order as prost writes them.
pub fn encode_message(tap: &Tap<'_>, out: &mut Vec<u8>) {
    varint_field(1, tap.kind as u64, out);
    let family = tap.query.or(tap.response).map(|(a, _)| a.family());
    if let Some(f) = family {
        varint_field(2, f as u64, out);
    }
    varint_field(3, tap.protocol as u64, out);
    if let Some((a, _)) = &tap.query {
        bytes_field(4, a.octets(), out);
    }
    if let Some((a, _)) = &tap.response {
        bytes_field(5, a.octets(), out);
    }
    if let Some((_, p)) = tap.query {
        varint_field(6, u64::from(p), out);
    }
    if let Some((_, p)) = tap.response {
        varint_field(7, u64::from(p), out);
    }
    if let Some((s, n)) = tap.query_time {
        varint_field(8, s, out);
        fixed32_field(9, n, out);
    }
    if let Some(m) = tap.query_message {
        bytes_field(10, m, out);
    }
    if let Some((s, n)) = tap.response_time {
        varint_field(12, s, out);
        fixed32_field(13, n, out);
    }
    if let Some(m) = tap.response_message {
        bytes_field(14, m, out);
    }
}

/// Appends one data frame to `out`: the 4-byte big-endian length, then the `Dnstap` of
/// `env` around `tap`. `scratch` (cleared here) holds the inner message while its length
/// is measured; both buffers keep their memory for the next frame.
#[cfg(test)]
pub fn encode_frame(env: &Envelope<'_>, tap: &Tap<'_>, scratch: &mut Vec<u8>, out: &mut Vec<u8>) {
    scratch.clear();
    encode_message(tap, scratch);
    write_frame(env, scratch, out);
}

/// Appends one data frame to `out`: `env` around `message`, an encoded `Message`.
pub fn write_frame(env: &Envelope<'_>, message: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.put_u32(0);
    bytes_field(1, env.identity, out);
    bytes_field(2, env.version, out);
    if !env.extra.is_empty() {
        bytes_field(3, env.extra, out);
    }
    bytes_field(14, message, out);
    varint_field(15, DNSTAP_MESSAGE as u64, out);
    let len = (out.len() - start - 4) as u32;
    out[start..start + 4].copy_from_slice(&len.to_be_bytes());
}

/// The bytes [`encode_frame`] appends for `env` and a message of `message_len` bytes.
pub fn frame_len(env: &Envelope<'_>, message_len: usize) -> usize {
    let field = |tag: u32, n: usize| key_len(tag) + encoded_len_varint(n as u64) + n;
    4 + field(1, env.identity.len())
        + field(2, env.version.len())
        + if env.extra.is_empty() {
            0
        } else {
            field(3, env.extra.len())
        }
        + field(14, message_len)
        + key_len(15)
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message as _;

    fn tap<'a>(q: &'a [u8], r: &'a [u8]) -> Tap<'a> {
        Tap {
            kind: MessageType::ForwarderResponse,
            protocol: UDP,
            query: Some((Addr::new("::ffff:127.0.0.1".parse().unwrap()), 5353)),
            response: Some((Addr::new("127.0.0.2".parse().unwrap()), 53)),
            query_time: Some((1_700_000_000, 123_456_789)),
            response_time: Some((1_700_000_001, 5)),
            query_message: Some(q),
            response_message: Some(r),
        }
    }

    #[test]
    fn a_frame_decodes_with_the_schema_and_matches_prost_byte_for_byte() {
        let env = Envelope {
            identity: b"host",
            version: b"ringdns-0.1.0",
            extra: b"x",
        };
        let (mut scratch, mut out) = (Vec::new(), vec![9u8]);
        encode_frame(&env, &tap(b"QUERY", b"REPLY"), &mut scratch, &mut out);
        assert_eq!(out[0], 9, "appended after what was there");
        let len = u32::from_be_bytes(out[1..5].try_into().unwrap()) as usize;
        assert_eq!(len, out.len() - 5);
        assert_eq!(frame_len(&env, scratch.len()), out.len() - 1);
        let d = Dnstap::decode(&out[5..]).unwrap();
        let want = Dnstap {
            identity: Some(b"host".to_vec()),
            version: Some(b"ringdns-0.1.0".to_vec()),
            extra: Some(b"x".to_vec()),
            r#type: DNSTAP_MESSAGE,
            message: Some(Message {
                r#type: 8,
                socket_family: Some(INET),
                socket_protocol: Some(UDP),
                query_address: Some(vec![127, 0, 0, 1]),
                response_address: Some(vec![127, 0, 0, 2]),
                query_port: Some(5353),
                response_port: Some(53),
                query_time_sec: Some(1_700_000_000),
                query_time_nsec: Some(123_456_789),
                query_message: Some(b"QUERY".to_vec()),
                query_zone: None,
                response_time_sec: Some(1_700_000_001),
                response_time_nsec: Some(5),
                response_message: Some(b"REPLY".to_vec()),
            }),
        };
        assert_eq!(d, want);
        assert_eq!(out[5..], want.encode_to_vec()[..]);
    }

    #[test]
    fn without_full_or_extra_those_fields_are_absent() {
        let env = Envelope {
            identity: b"h",
            version: b"v",
            extra: b"",
        };
        let t = Tap {
            kind: MessageType::ClientQuery,
            protocol: TCP,
            query: Some((Addr::new("2001:db8::1".parse().unwrap()), 40000)),
            response: None,
            query_time: Some((1, 2)),
            response_time: None,
            query_message: None,
            response_message: None,
        };
        let (mut scratch, mut out) = (Vec::new(), Vec::new());
        encode_frame(&env, &t, &mut scratch, &mut out);
        let d = Dnstap::decode(&out[4..]).unwrap();
        assert_eq!(d.extra, None);
        let m = d.message.unwrap();
        assert_eq!(m.r#type, 5);
        assert_eq!(m.socket_family, Some(INET6));
        assert_eq!(m.socket_protocol, Some(TCP));
        assert_eq!(m.query_address.unwrap().len(), 16);
        assert_eq!((m.response_address, m.response_port), (None, None));
        assert_eq!((m.query_message, m.response_message), (None, None));
        assert_eq!(m.response_time_sec, None);
    }

    #[test]
    fn encoding_into_warm_buffers_reuses_their_memory() {
        let env = Envelope {
            identity: b"h",
            version: b"v",
            extra: b"",
        };
        let (mut scratch, mut out) = (Vec::with_capacity(256), Vec::with_capacity(4096));
        let (sp, op) = (scratch.as_ptr(), out.as_ptr());
        for _ in 0..10 {
            encode_frame(&env, &tap(b"q", b"r"), &mut scratch, &mut out);
        }
        assert_eq!((scratch.as_ptr(), out.as_ptr()), (sp, op));
    }
}
