//! Differential tests of authoritative serving: the same zone served by NSD, Knot and
//! ringdns's `file` plugin, asked the same queries, the replies compared.
//!
//! - The rich zone `example.test.` (tests/data/auth/db.example.test: RFC 1034 §4.3.2 and
//!   friends: CNAME chains, delegations, glue, occlusion, wildcards, an empty non-terminal,
//!   DNAME, additional-section processing, RFC 3597 types) is asked a fixed list (every owner
//!   with each of its types, and the cases the zone file names) and then `AUTH_DIFF_QUERIES`
//!   (3000) random queries drawn from a seeded generator (`AUTH_DIFF_SEED` to replay one; the
//!   seed is printed and is in every failure message): existing names and types, random
//!   types, ENTs, names at, below and occluded by delegations, wildcard expansions, names
//!   below the DNAME, nonexistent and out-of-zone names, mixed-case names, DS at the cuts,
//!   ANY; with and without EDNS (and DO), over UDP and TCP, with RD/CD/AD set at random.
//! - A smaller zone (tests/data/auth/db.dnssec.test), signed at test time with NSEC
//!   (`nsec.test.`) and with NSEC3 (`nsec3.test.`) by tests/common/dnssec.rs, asked DO-bit
//!   queries: positive, NXDOMAIN, NODATA, wildcard, ENT, DS, DNSKEY, referrals.
//!
//! Replies are compared on the rcode, the flags AA, TC, RD, RA, AD and CD, the question
//! (exactly, case included), the presence of an OPT record and its DO bit, and the answer,
//! authority and additional sections as *sets* of records (owner names and names inside
//! RDATA compared case-insensitively, TTLs compared, order ignored). A UDP reply may differ
//! by truncation only when the full reply (asked over TCP) is larger than the UDP limit (512
//! without EDNS); the records each side kept must then come from the full reply.
//!
//! NSD (`minimal-responses: yes`) is the reference. Every accepted difference is one of the
//! rules in [`Rule`], each with where the RFCs stand; everything else fails the test with
//! the query, both replies and the seed. Each comparison lists the rules it accepts, and
//! counts how often the fixed and the random queries needed each (printed in its summary):
//! a listed rule that no fixed query needed fails the test, so the list holds no rule for
//! a difference that is gone. Only the fixed queries count for that, so that no seed (or a
//! small `AUTH_DIFF_QUERIES`) can make it fail by chance.
//!
//! ringdns is compared only when its binary has the `file` plugin (`ringdns -plugins` lists
//! `dns.file`). Until then its tests say loudly that they skipped; once plugin.cfg has a
//! `file:` line, a binary without it fails them instead.

mod common;

use common::TempDir;
use common::peers::dnssec::{Denial, sign_zone};
use common::peers::{self, Kind, Options, Peer, Zone, loud};
use hickory_proto::op::Message;
use hickory_proto::rr::{RData, RecordType};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::io::{Read, Write};
use std::net::{TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::time::Duration;

const ORIGIN: &str = "example.test.";
const T_A: u16 = 1;
const T_NS: u16 = 2;
const T_CNAME: u16 = 5;
const T_SOA: u16 = 6;
const T_MX: u16 = 15;
const T_AAAA: u16 = 28;
const T_SRV: u16 = 33;
const T_DNAME: u16 = 39;
const T_DS: u16 = 43;
const T_RRSIG: u16 = 46;
const T_NSEC: u16 = 47;
const T_NSEC3: u16 = 50;
const T_ANY: u16 = 255;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/auth")
        .join(name)
}

// ---- names ----------------------------------------------------------------------------------

/// Whether `name` is `zone` or below it (both lower-case, with the final dot).
fn is_under(name: &str, zone: &str) -> bool {
    zone == "." || name == zone || name.ends_with(&format!(".{zone}"))
}

/// The parent of `name` (`.` has none).
fn parent(name: &str) -> Option<&str> {
    if name == "." {
        return None;
    }
    match name.split_once('.') {
        Some((_, "")) => Some("."),
        Some((_, rest)) => Some(rest),
        None => None,
    }
}

fn type_name(t: u16) -> String {
    RecordType::from(t).to_string()
}

fn type_code(s: &str) -> Option<u16> {
    let up = s.to_ascii_uppercase();
    if let Some(n) = up.strip_prefix("TYPE") {
        return n.parse().ok();
    }
    up.parse::<RecordType>().ok().map(u16::from)
}

/// The owners of a zone file and their types, lower-case (a reader for the plain syntax of
/// the files in tests/data/auth: one record per line, owner in column 0 or blank for the
/// previous one, optional TTL and class, parentheses only around SOA fields).
fn zone_owners(path: &Path, origin: &str) -> BTreeMap<String, BTreeSet<u16>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out: BTreeMap<String, BTreeSet<u16>> = BTreeMap::new();
    let mut last = origin.to_string();
    let mut in_parens = false;
    for line in text.lines() {
        let line = line.split(';').next().unwrap_or("");
        if in_parens {
            in_parens = !line.contains(')');
            continue;
        }
        if line.trim().is_empty() || line.starts_with('$') {
            continue;
        }
        in_parens = line.contains('(') && !line.contains(')');
        let mut tokens = line.split_whitespace();
        if !line.starts_with(char::is_whitespace) {
            let o = tokens.next().unwrap().to_ascii_lowercase();
            last = match o.as_str() {
                "@" => origin.to_string(),
                o if o.ends_with('.') => o.to_string(),
                o => format!("{o}.{origin}"),
            };
        }
        let t = tokens
            .find(|t| !t.chars().all(|c| c.is_ascii_digit()) && !t.eq_ignore_ascii_case("IN"))
            .and_then(type_code)
            .unwrap_or_else(|| panic!("{}: no type in {line:?}", path.display()));
        out.entry(last.clone()).or_default().insert(t);
    }
    out
}

/// What the query generator knows of a zone.
struct ZoneFacts {
    origin: String,
    owners: BTreeMap<String, BTreeSet<u16>>,
    ents: Vec<String>,
    cuts: Vec<String>,
    occluded: Vec<String>,
    wild_parents: Vec<String>,
    dnames: Vec<String>,
}

impl ZoneFacts {
    fn read(path: &Path, origin: &str) -> ZoneFacts {
        let owners = zone_owners(path, origin);
        let mut ents = BTreeSet::new();
        for o in owners.keys() {
            let mut p = parent(o);
            while let Some(n) = p {
                if !is_under(n, origin) || n == origin {
                    break;
                }
                if !owners.contains_key(n) {
                    ents.insert(n.to_string());
                }
                p = parent(n);
            }
        }
        let cuts: Vec<String> = owners
            .iter()
            .filter(|(o, t)| t.contains(&T_NS) && o.as_str() != origin)
            .map(|(o, _)| o.clone())
            .collect();
        let occluded = owners
            .keys()
            .filter(|o| cuts.iter().any(|c| *o != c && is_under(o, c)))
            .cloned()
            .collect();
        let wild_parents = owners
            .keys()
            .filter_map(|o| o.strip_prefix("*.").map(str::to_string))
            .collect();
        let dnames = owners
            .iter()
            .filter(|(_, t)| t.contains(&T_DNAME))
            .map(|(o, _)| o.clone())
            .collect();
        ZoneFacts {
            origin: origin.to_string(),
            owners,
            ents: ents.into_iter().collect(),
            cuts,
            occluded,
            wild_parents,
            dnames,
        }
    }
}

// ---- queries --------------------------------------------------------------------------------

#[derive(Clone, Debug)]
struct Query {
    /// As sent (case kept).
    name: String,
    qtype: u16,
    tcp: bool,
    /// EDNS: the UDP size and the DO bit.
    edns: Option<(u16, bool)>,
    rd: bool,
    cd: bool,
    ad: bool,
}

impl Query {
    fn plain(name: &str, qtype: u16) -> Query {
        Query {
            name: name.to_string(),
            qtype,
            tcp: false,
            edns: None,
            rd: false,
            cd: false,
            ad: false,
        }
    }

    fn wire(&self, id: u16) -> Vec<u8> {
        let mut p = id.to_be_bytes().to_vec();
        let flags = (self.rd as u16) << 8 | (self.ad as u16) << 5 | (self.cd as u16) << 4;
        p.extend_from_slice(&flags.to_be_bytes());
        p.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0, self.edns.is_some() as u8]);
        p.extend_from_slice(&common::wire_name(&self.name));
        p.extend_from_slice(&self.qtype.to_be_bytes());
        p.extend_from_slice(&[0, 1]);
        if let Some((size, dnssec_ok)) = self.edns {
            p.push(0); // root
            p.extend_from_slice(&41u16.to_be_bytes());
            p.extend_from_slice(&size.to_be_bytes());
            p.extend_from_slice(&[0, 0, if dnssec_ok { 0x80 } else { 0 }, 0, 0, 0]);
        }
        p
    }

    /// The UDP size limit a reply to this query must fit: 512 without EDNS, else the
    /// client's size (at least 512) capped at 1232, the size NSD and Knot advertise.
    fn udp_limit(&self) -> usize {
        match self.edns {
            None => 512,
            Some((size, _)) => (size as usize).clamp(512, 1232),
        }
    }

    fn dnssec_ok(&self) -> bool {
        matches!(self.edns, Some((_, true)))
    }
}

impl fmt::Display for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} over {}",
            self.name,
            type_name(self.qtype),
            if self.tcp { "TCP" } else { "UDP" }
        )?;
        match self.edns {
            Some((size, d)) => write!(f, ", EDNS {size}{}", if d { " DO" } else { "" })?,
            None => write!(f, ", no EDNS")?,
        }
        for (on, n) in [(self.rd, "RD"), (self.cd, "CD"), (self.ad, "AD")] {
            if on {
                write!(f, " +{n}")?;
            }
        }
        Ok(())
    }
}

/// Asks `port` one query; the raw reply.
fn exchange(port: u16, q: &Query, id: u16) -> Result<Vec<u8>, String> {
    let packet = q.wire(id);
    if q.tcp {
        let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut out = (packet.len() as u16).to_be_bytes().to_vec();
        out.extend_from_slice(&packet);
        s.write_all(&out).map_err(|e| e.to_string())?;
        let mut len = [0u8; 2];
        s.read_exact(&mut len).map_err(|e| format!("TCP: {e}"))?;
        let mut buf = vec![0u8; u16::from_be_bytes(len) as usize];
        s.read_exact(&mut buf).map_err(|e| format!("TCP: {e}"))?;
        return Ok(buf);
    }
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(Duration::from_millis(700)))
        .unwrap();
    let mut buf = vec![0u8; 65535];
    for _ in 0..3 {
        s.send_to(&packet, ("127.0.0.1", port))
            .map_err(|e| e.to_string())?;
        while let Ok(n) = s.recv(&mut buf) {
            if n >= 2 && buf[..2] == id.to_be_bytes() {
                return Ok(buf[..n].to_vec());
            }
        }
    }
    Err("no reply over UDP (3 tries)".into())
}

// ---- replies --------------------------------------------------------------------------------

/// One record, for comparison: names lower-case.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Rec {
    owner: String,
    rtype: u16,
    /// For an RRSIG, the type it covers; else 0.
    covered: u16,
    ttl: u32,
    rdata: String,
}

impl fmt::Display for Rec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} {}",
            self.owner,
            self.ttl,
            type_name(self.rtype),
            self.rdata
        )
    }
}

impl Rec {
    /// The name an MX or SRV points to.
    fn target(&self) -> Option<String> {
        let f: Vec<&str> = self.rdata.split_whitespace().collect();
        match self.rtype {
            T_MX => f.get(1).map(|s| s.to_string()),
            T_SRV => f.get(3).map(|s| s.to_string()),
            _ => None,
        }
    }

    /// Whether this is `rtype` or an RRSIG over `rtype`.
    fn is(&self, rtype: u16) -> bool {
        self.rtype == rtype || (self.rtype == T_RRSIG && self.covered == rtype)
    }
}

fn rec_of(r: &hickory_proto::rr::Record) -> Rec {
    let rtype = u16::from(r.record_type());
    let (rdata, covered) = match &r.data {
        RData::Unknown { rdata, .. } => {
            let b = &rdata.anything;
            let covered = if rtype == T_RRSIG && b.len() >= 2 {
                u16::from_be_bytes([b[0], b[1]])
            } else {
                0
            };
            let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
            (format!("\\# {} {hex}", b.len()), covered)
        }
        d => {
            let s = d.to_string();
            // Types whose RDATA holds only names and numbers: names compare
            // case-insensitively (RFC 4343); other RDATA (TXT, CAA, …) is kept as is.
            match rtype {
                T_NS | T_CNAME | T_SOA | T_MX | T_SRV | T_DNAME | 12 => (s.to_ascii_lowercase(), 0),
                _ => (s, 0),
            }
        }
    };
    Rec {
        owner: r.name.to_ascii().to_ascii_lowercase(),
        rtype,
        covered,
        ttl: r.ttl,
        rdata,
    }
}

/// What is compared of a reply.
#[derive(Clone, Debug, PartialEq, Eq)]
struct View {
    rcode: u16,
    aa: bool,
    tc: bool,
    rd: bool,
    ra: bool,
    ad: bool,
    cd: bool,
    question: Vec<String>,
    /// `Some(do bit)` when the reply has an OPT record.
    opt: Option<bool>,
    answer: BTreeSet<Rec>,
    authority: BTreeSet<Rec>,
    additional: BTreeSet<Rec>,
}

impl View {
    fn parse(wire: &[u8]) -> Result<View, String> {
        let m = Message::from_vec(wire).map_err(|e| format!("reply does not parse: {e}"))?;
        let md = &m.metadata;
        let set = |rs: &[hickory_proto::rr::Record]| rs.iter().map(rec_of).collect();
        Ok(View {
            rcode: u16::from(md.response_code),
            aa: md.authoritative,
            tc: md.truncation,
            rd: md.recursion_desired,
            ra: md.recursion_available,
            ad: md.authentic_data,
            cd: md.checking_disabled,
            question: m
                .queries
                .iter()
                .map(|q| {
                    format!(
                        "{} {} {}",
                        q.name().to_ascii(),
                        type_name(u16::from(q.query_type())),
                        q.query_class()
                    )
                })
                .collect(),
            opt: m.edns.as_ref().map(|e| e.flags().dnssec_ok),
            answer: set(&m.answers),
            authority: set(&m.authorities),
            additional: set(&m.additionals),
        })
    }

    fn header(&self) -> String {
        let mut s = format!(
            "rcode {} ({})",
            self.rcode,
            hickory_proto::op::ResponseCode::from(
                (self.rcode >> 4) as u8,
                (self.rcode & 0xf) as u8
            )
        );
        for (on, n) in [
            (self.aa, "aa"),
            (self.tc, "tc"),
            (self.rd, "rd"),
            (self.ra, "ra"),
            (self.ad, "ad"),
            (self.cd, "cd"),
        ] {
            if on {
                s.push(' ');
                s.push_str(n);
            }
        }
        match self.opt {
            Some(d) => s.push_str(if d { ", OPT do" } else { ", OPT" }),
            None => s.push_str(", no OPT"),
        }
        s
    }

    fn same_header(&self, o: &View) -> bool {
        (
            self.rcode,
            self.aa,
            self.rd,
            self.ra,
            self.ad,
            self.cd,
            &self.question,
            self.opt,
        ) == (o.rcode, o.aa, o.rd, o.ra, o.ad, o.cd, &o.question, o.opt)
    }

    fn sections(&self) -> [(&'static str, &BTreeSet<Rec>); 3] {
        [
            ("answer", &self.answer),
            ("authority", &self.authority),
            ("additional", &self.additional),
        ]
    }
}

impl fmt::Display for View {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "    {}; question {:?}", self.header(), self.question)?;
        for (n, s) in self.sections() {
            for r in s {
                writeln!(f, "    {n:<10} {r}")?;
            }
        }
        Ok(())
    }
}

/// What differs between two views, line by line.
fn delta(a: &View, an: &str, b: &View, bn: &str) -> String {
    let mut s = String::new();
    if a.header() != b.header() || a.question != b.question {
        s.push_str(&format!(
            "    header  {an}: {}; {bn}: {}\n",
            a.header(),
            b.header()
        ));
        if a.question != b.question {
            s.push_str(&format!(
                "    question {an}: {:?}; {bn}: {:?}\n",
                a.question, b.question
            ));
        }
    }
    for ((n, x), (_, y)) in a.sections().into_iter().zip(b.sections()) {
        for r in x.difference(y) {
            s.push_str(&format!("    {n:<10} only {an}: {r}\n"));
        }
        for r in y.difference(x) {
            s.push_str(&format!("    {n:<10} only {bn}: {r}\n"));
        }
    }
    s
}

// ---- the accepted differences ---------------------------------------------------------------

/// The differences a comparison accepts, each where the RFCs leave the choice to the server
/// or, for ringdns, where CoreDNS's `file` answers otherwise and ringdns does as CoreDNS.
/// `a` is always the reference (NSD), `b` the other server. A rule removes from the views
/// what it accepts, after checking it (records it accepts must be the zone's own, asked of
/// the reference); the comparison passes when the views are then equal.
///
/// CoreDNS behaviours deliberately *not* accepted, because NSD follows the RFC there and a
/// ringdns that differs should be fixed (or this list amended with a reason):
/// - the SOA in a negative answer with the SOA record's own TTL: RFC 2308 §3 sets it to the
///   minimum of the SOA's TTL and its MINIMUM field (the zone has 3600 and 300);
/// - DNSSEC: a referral to an unsigned child without the NSEC/NSEC3 that proves there is no
///   DS (RFC 4035 §3.1.4, a MUST), and NSEC3 denial (CoreDNS does NSEC only; RFC 5155 §7.2);
/// - anything in the header: AA on answers and not on referrals, RD and CD copied, RA and
///   AD clear, the question echoed as asked (RFC 1035 §4.1.1, RFC 4035 §3.1.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Rule {
    /// Knot (and CoreDNS) add the A/AAAA records of in-zone MX and SRV targets to the
    /// additional section; NSD with `minimal-responses` does not. RFC 1034 §4.3.2 step 6 and
    /// RFC 2181 §9 leave additional-section data optional ("may be useful"). Both sides'
    /// such records are checked against the zone and removed.
    TargetAddresses,
    /// ANY: which RRsets a server returns for QTYPE ANY is its choice (RFC 8482 §4.1:
    /// one, several or all; NSD and Knot each return one, not the same one). Each RRset a
    /// side returns must be the one the reference returns for that type.
    AnyChoice,
    /// QTYPE RRSIG: NSD returns every RRSIG at the name, Knot those over one type (as for
    /// ANY). No RFC says which; RFC 4035 §3.1.5 only has validators not rely on such
    /// queries. Both must be non-empty, one a subset of the other.
    RrsigChoice,
    /// QTYPE RRSIG, NSEC or NSEC3 at a CNAME owner (the name asked or a step of its chain):
    /// RFC 1034 §4.3.2 follows a CNAME for every QTYPE but CNAME, while RRSIG and NSEC may
    /// exist beside a CNAME (RFC 4035 §2.5), so a server may answer from the name instead.
    /// NSD follows the CNAME for RRSIG and NSEC and not for NSEC3; Knot the other way
    /// round. One answer must be the other continued through CNAMEs of the zone, the
    /// shorter one NOERROR.
    DnssecTypeAtCname,
    /// QTYPE NSEC answered by wildcard expansion: NSD adds, in the authority section, the
    /// NSEC that proves no closer name exists (RFC 4035 §3.1.3.3, a MUST: NSD follows it);
    /// Knot leaves it out when it is the wildcard's own NSEC, already in the answer
    /// (expanded). Only that NSEC (and its RRSIG) may be missing.
    NsecProofInAnswer,
    /// NODATA for a literal wildcard name (`*.wild`) in an NSEC3 zone: NSD adds the closest
    /// encloser's NSEC3 as if the wildcard had been expanded (RFC 5155 §7.2.5); Knot gives
    /// only the NSEC3 matching the name (§7.2.3), which suffices since the name exists. The
    /// other side's authority must be the reference's less some NSEC3 RRsets.
    LiteralWildcardNsec3,
    /// ringdns as CoreDNS: the apex NS RRset (and its RRSIGs with DO) in the authority
    /// section of a positive answer (CoreDNS `file`: `return rrs, ap.ns(do), ...`). RFC 2181
    /// §6.1 and RFC 1034 §4.3.2 allow it; NSD does it without `minimal-responses`.
    ApexNsInAuthority,
    /// ringdns copies the query's CD bit into the reply, as RFC 4035 §3.1.6 says a
    /// security-aware name server MUST (and CoreDNS does, miekg's `SetReply`); NSD leaves
    /// it clear in an authoritative answer.
    CdCopied,
    /// A UDP reply truncated (TC, or records left out) where the full reply is larger than
    /// the UDP limit: each side's records must come from the full reply (RFC 2181 §9,
    /// RFC 9471 for glue).
    Truncation,
}

// The rules each comparison may use, applied in this order. Every rule listed must be
// needed by the comparison's fixed queries (the same every run, [`Queries::fixed`]): a rule
// no query needs any more is a difference the servers no longer have, and stays accepted
// only until it is taken off its list ([`run`] fails on it). Rules that ringdns no longer
// needs and that were removed: ANY answered as NODATA (ringdns answers ANY with the name's
// RRsets), referrals without sibling glue (ringdns adds it, as NSD), out-of-zone records
// in the answer (with one zone served, a CNAME leaving it gets none), QTYPE RRSIG with the
// signatures of one type (ringdns returns all of them, as NSD).

/// NSD vs Knot on the rich zone (unsigned).
const PEER_RICH_RULES: &[Rule] = &[
    Rule::TargetAddresses,
    Rule::AnyChoice,
    Rule::DnssecTypeAtCname,
];
/// NSD vs Knot on the signed zones.
const PEER_DNSSEC_RULES: &[Rule] = &[
    Rule::TargetAddresses,
    Rule::AnyChoice,
    Rule::RrsigChoice,
    Rule::DnssecTypeAtCname,
    Rule::NsecProofInAnswer,
    Rule::LiteralWildcardNsec3,
];
/// NSD vs ringdns on the rich zone.
const RINGDNS_RICH_RULES: &[Rule] = &[
    Rule::CdCopied,
    Rule::TargetAddresses,
    // Before AnyChoice, which empties the answers this rule looks at.
    Rule::ApexNsInAuthority,
    Rule::AnyChoice,
    Rule::DnssecTypeAtCname,
];
/// NSD vs ringdns on the signed zones.
const RINGDNS_DNSSEC_RULES: &[Rule] = &[
    Rule::CdCopied,
    Rule::TargetAddresses,
    // Before AnyChoice, which empties the answers this rule looks at.
    Rule::ApexNsInAuthority,
    Rule::AnyChoice,
    Rule::DnssecTypeAtCname,
    // not NsecProofInAnswer: NSD follows RFC 4035's MUST there
    Rule::LiteralWildcardNsec3,
];

/// The reference server, asked for what a rule must check (over TCP, cached).
struct Reference {
    name: String,
    port: u16,
    zones: Vec<String>,
    cache: RefCell<HashMap<(String, u16, bool), View>>,
}

impl Reference {
    fn zone_of(&self, name: &str) -> Option<&str> {
        self.zones
            .iter()
            .filter(|z| is_under(name, z))
            .max_by_key(|z| z.len())
            .map(String::as_str)
    }

    /// The reference's answer records for `name` `qtype` (with RRSIGs when `dnssec`).
    fn answer(&self, name: &str, qtype: u16, dnssec: bool) -> BTreeSet<Rec> {
        let key = (name.to_string(), qtype, dnssec);
        if let Some(v) = self.cache.borrow().get(&key) {
            return v.answer.clone();
        }
        let q = Query {
            tcp: true,
            edns: Some((4096, dnssec)),
            ..Query::plain(name, qtype)
        };
        let v = exchange(self.port, &q, 0x7777)
            .and_then(|w| View::parse(&w))
            .unwrap_or_else(|e| panic!("{}: {q}: {e}", self.name));
        let out = v.answer.clone();
        self.cache.borrow_mut().insert(key, v);
        out
    }

    /// Whether every record in `recs` (owner, type) is in the reference's data.
    fn has_all(&self, recs: &[Rec], dnssec: bool) -> bool {
        recs.iter().all(|r| {
            let t = if r.rtype == T_RRSIG {
                r.covered
            } else {
                r.rtype
            };
            self.answer(&r.owner, t, dnssec).contains(r)
        })
    }
}

/// Removes from `set` the records `pick` selects; returns them.
fn take(set: &mut BTreeSet<Rec>, pick: impl Fn(&Rec) -> bool) -> Vec<Rec> {
    let picked: Vec<Rec> = set.iter().filter(|r| pick(r)).cloned().collect();
    for r in &picked {
        set.remove(r);
    }
    picked
}

/// Applies `rule` to the pair; whether it changed anything.
fn apply(rule: Rule, r: &Reference, q: &Query, a: &mut View, b: &mut View) -> bool {
    let dnssec = q.dnssec_ok();
    match rule {
        Rule::CdCopied => {
            if q.cd && b.cd && !a.cd {
                a.cd = true;
                return true;
            }
            false
        }
        Rule::TargetAddresses => {
            let mut changed = false;
            for v in [a, b] {
                let targets: BTreeSet<String> = v.answer.iter().filter_map(Rec::target).collect();
                let picked = take(&mut v.additional, |x| {
                    (x.is(T_A) || x.is(T_AAAA)) && targets.contains(&x.owner)
                });
                if !picked.is_empty() {
                    if !r.has_all(&picked, dnssec) {
                        // Not the zone's data: put them back and let the difference show.
                        v.additional.extend(picked);
                        continue;
                    }
                    changed = true;
                }
            }
            changed
        }
        Rule::AnyChoice => {
            if q.qtype != T_ANY || a.answer == b.answer {
                return false;
            }
            for v in [&*a, &*b] {
                let mut sets: BTreeMap<(String, u16), Vec<Rec>> = BTreeMap::new();
                for x in &v.answer {
                    let t = if x.rtype == T_RRSIG {
                        x.covered
                    } else {
                        x.rtype
                    };
                    sets.entry((x.owner.clone(), t))
                        .or_default()
                        .push(x.clone());
                }
                if sets.is_empty() {
                    return false;
                }
                for ((owner, t), recs) in sets {
                    let want: BTreeSet<Rec> = r
                        .answer(&owner, t, dnssec)
                        .into_iter()
                        .filter(|x| x.owner == owner && x.is(t))
                        .collect();
                    if want != recs.into_iter().collect() {
                        return false;
                    }
                }
            }
            a.answer.clear();
            b.answer.clear();
            true
        }
        Rule::RrsigChoice => {
            let only_sigs =
                |v: &View| !v.answer.is_empty() && v.answer.iter().all(|x| x.rtype == T_RRSIG);
            if q.qtype != T_RRSIG
                || a.answer == b.answer
                || !only_sigs(a)
                || !only_sigs(b)
                || !(a.answer.is_subset(&b.answer) || b.answer.is_subset(&a.answer))
            {
                return false;
            }
            a.answer.clear();
            b.answer.clear();
            true
        }
        Rule::DnssecTypeAtCname => {
            if ![T_RRSIG, T_NSEC, T_NSEC3].contains(&q.qtype) || a.answer == b.answer {
                return false;
            }
            // One answer is the other continued through a CNAME of the zone.
            let (short, long) = if a.answer.is_subset(&b.answer) {
                (&*a, &*b)
            } else if b.answer.is_subset(&a.answer) {
                (&*b, &*a)
            } else {
                return false;
            };
            let qname = q.name.to_ascii_lowercase();
            let mut names: BTreeSet<String> = short
                .answer
                .iter()
                .filter(|x| x.rtype == T_CNAME)
                .map(|x| x.rdata.clone())
                .collect();
            names.insert(qname);
            let extra: Vec<Rec> = long.answer.difference(&short.answer).cloned().collect();
            let continues = extra
                .iter()
                .any(|x| x.rtype == T_CNAME && names.contains(&x.owner));
            if short.rcode != 0 || !continues || !r.has_all(&extra, dnssec) {
                return false;
            }
            b.clone_from(a);
            true
        }
        Rule::NsecProofInAnswer => {
            // QTYPE NSEC answered from a wildcard: the NSEC proving that no closer name
            // exists is the wildcard's own NSEC, expanded in the answer.
            if q.qtype != T_NSEC {
                return false;
            }
            let in_answer: BTreeSet<&str> = a
                .answer
                .iter()
                .chain(&b.answer)
                .filter(|x| x.rtype == T_NSEC)
                .map(|x| x.rdata.as_str())
                .collect();
            let owners: BTreeSet<String> = a
                .authority
                .iter()
                .filter(|x| x.rtype == T_NSEC && in_answer.contains(x.rdata.as_str()))
                .map(|x| x.owner.clone())
                .collect();
            let picked = take(&mut a.authority, |x| {
                owners.contains(&x.owner) && x.is(T_NSEC) && !b.authority.contains(x)
            });
            !picked.is_empty()
        }
        Rule::LiteralWildcardNsec3 => {
            // NODATA for a name whose first label is `*`: NSD adds the closest encloser's
            // NSEC3 as for a wildcard NODATA (RFC 5155 §7.2.5); the name exists, so the
            // NSEC3 matching it suffices (§7.2.3), as Knot answers.
            if !q.name.starts_with("*.") || a.rcode != 0 || !a.answer.is_empty() {
                return false;
            }
            let extra: Vec<Rec> = a.authority.difference(&b.authority).cloned().collect();
            if extra.is_empty()
                || !b.authority.is_subset(&a.authority)
                || !extra.iter().all(|x| x.is(T_NSEC3))
                || !b.authority.iter().any(|x| x.rtype == T_NSEC3)
            {
                return false;
            }
            for x in &extra {
                a.authority.remove(x);
            }
            true
        }
        Rule::ApexNsInAuthority => {
            if b.rcode != 0 || b.answer.is_empty() || !b.aa {
                return false;
            }
            let Some(zone) = r.zone_of(&b.answer.iter().next().unwrap().owner) else {
                return false;
            };
            let zone = zone.to_string();
            let extra: Vec<Rec> = b
                .authority
                .iter()
                .filter(|x| x.owner == zone && x.is(T_NS) && !a.authority.contains(x))
                .cloned()
                .collect();
            if extra.is_empty() || !r.has_all(&extra, dnssec) {
                return false;
            }
            for x in &extra {
                b.authority.remove(x);
            }
            true
        }
        Rule::Truncation => false,
    }
}

/// How one comparison ended.
enum Outcome {
    Same,
    Accepted(Vec<Rule>),
    /// What differs, and the rules that accepted part of it.
    Differ(String, Vec<Rule>),
}

/// Compares the reply `b` of the server `bn` with the reference's `a` to the query `q`.
fn compare(r: &Reference, bn: &str, b_port: u16, q: &Query, rules: &[Rule]) -> Outcome {
    let id = fastrand::u16(..);
    let get = |port: u16, q: &Query| exchange(port, q, id).and_then(|w| View::parse(&w));
    let a = match get(r.port, q) {
        Ok(v) => v,
        Err(e) => return Outcome::Differ(format!("    {}: {e}\n", r.name), Vec::new()),
    };
    let b = match get(b_port, q) {
        Ok(v) => v,
        Err(e) => return Outcome::Differ(format!("    {bn}: {e}\n"), Vec::new()),
    };
    if a == b {
        return Outcome::Same;
    }
    let mut used = Vec::new();
    let (mut a2, mut b2) = (a.clone(), b.clone());
    // Truncation: only for UDP, only where the full reply does not fit.
    if !q.tcp {
        let full_q = Query {
            tcp: true,
            ..q.clone()
        };
        let full = exchange(r.port, &full_q, id).ok();
        let full_size = full.as_ref().map_or(0, Vec::len);
        if let (Some(w), true) = (full, full_size > q.udp_limit()) {
            let full = View::parse(&w).unwrap();
            let within = |v: &View| {
                v.answer.is_subset(&full.answer)
                    && v.authority.is_subset(&full.authority)
                    && v.additional.is_subset(&full.additional)
            };
            if a.same_header(&b) && within(&a) && within(&b) {
                return Outcome::Accepted(vec![Rule::Truncation]);
            }
        } else if a.tc || b.tc {
            return Outcome::Differ(
                format!(
                    "    TC set although the full reply ({full_size} bytes) fits in {}\n{}",
                    q.udp_limit(),
                    delta(&a, &r.name, &b, bn)
                ),
                Vec::new(),
            );
        }
    }
    for &rule in rules {
        if apply(rule, r, q, &mut a2, &mut b2) {
            used.push(rule);
        }
    }
    if a2 == b2 {
        return Outcome::Accepted(used);
    }
    Outcome::Differ(
        format!(
            "{}  {}:\n{}  {bn}:\n{}",
            delta(&a2, &r.name, &b2, bn),
            r.name,
            a,
            b
        ),
        used,
    )
}

/// What a run found: a summary line, the unaccepted differences (one text per query), and
/// the rules of the list that no fixed query needed.
struct Report {
    summary: String,
    differ: Vec<String>,
    unneeded: Vec<Rule>,
}

/// Runs every query against the reference and `b`, counting per rule how often the fixed
/// and the random queries needed it (a rule that accepted part of a difference that stays
/// counts too).
fn report(
    r: &Reference,
    bn: &str,
    b_port: u16,
    queries: &Queries,
    rules: &[Rule],
    seed: u64,
) -> Report {
    let mut differ = Vec::new();
    let mut fixed: BTreeMap<Rule, usize> = BTreeMap::new();
    let mut random: BTreeMap<Rule, usize> = BTreeMap::new();
    let mut same = 0;
    let all = queries.fixed.iter().map(|q| (q, true));
    for (q, is_fixed) in all.chain(queries.random.iter().map(|q| (q, false))) {
        let used = match compare(r, bn, b_port, q, rules) {
            Outcome::Same => {
                same += 1;
                Vec::new()
            }
            Outcome::Accepted(used) => used,
            Outcome::Differ(d, used) => {
                differ.push(format!("  {q}\n{d}"));
                used
            }
        };
        let counts = if is_fixed { &mut fixed } else { &mut random };
        for rule in used {
            *counts.entry(rule).or_default() += 1;
        }
    }
    let n = queries.fixed.len() + queries.random.len();
    let unneeded: Vec<Rule> = rules
        .iter()
        .copied()
        .filter(|rule| !fixed.contains_key(rule))
        .collect();
    let summary = format!(
        "{} vs {bn}: {n} queries ({} fixed, {} random, seed {seed}): {same} identical, {} \
         accepted, {} differ; rules used by the fixed queries {fixed:?}, by the random ones \
         {random:?}, listed but not needed by the fixed ones {unneeded:?}",
        r.name,
        queries.fixed.len(),
        queries.random.len(),
        n - same - differ.len(),
        differ.len()
    );
    eprintln!("{summary}");
    Report {
        summary,
        differ,
        unneeded,
    }
}

/// [`report`], panicking with the unaccepted differences (the first 40) and the seed, and
/// when a rule of `rules` was not needed by the fixed queries.
fn run(r: &Reference, bn: &str, b_port: u16, queries: &Queries, rules: &[Rule], seed: u64) {
    let Report {
        summary,
        differ,
        unneeded,
    } = report(r, bn, b_port, queries, rules, seed);
    assert!(
        unneeded.is_empty(),
        "{summary}\nthe rules {unneeded:?} are accepted for {} vs {bn} but no fixed query \
         needs them: the difference is gone, take them off the list",
        r.name
    );
    if !differ.is_empty() {
        panic!(
            "{summary}\nreplay with AUTH_DIFF_SEED={seed}\n{}{}",
            differ
                .iter()
                .take(40)
                .map(String::as_str)
                .collect::<String>(),
            if differ.len() > 40 {
                format!("… and {} more\n", differ.len() - 40)
            } else {
                String::new()
            }
        );
    }
}

// ---- the query generator --------------------------------------------------------------------

/// Types asked besides those of the name: common ones, the zone's and some it lacks.
const TYPE_POOL: &[u16] = &[
    1, 2, 5, 6, 12, 13, 15, 16, 28, 33, 35, 39, 43, 44, 46, 47, 48, 50, 51, 64, 65, 99, 255, 257,
    65280,
];

fn seed() -> u64 {
    match std::env::var("AUTH_DIFF_SEED") {
        Ok(s) => s.parse().expect("AUTH_DIFF_SEED is a number"),
        Err(_) => {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                % 1_000_000_007
        }
    }
}

fn query_count() -> usize {
    std::env::var("AUTH_DIFF_QUERIES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3000)
}

fn label(rng: &mut fastrand::Rng) -> String {
    let n = rng.usize(1..=10);
    (0..n)
        .map(|i| {
            if i > 0 && rng.u8(..8) == 0 {
                '-'
            } else {
                rng.alphanumeric().to_ascii_lowercase()
            }
        })
        .collect::<String>()
        .trim_end_matches('-')
        .to_string()
}

fn pick<'a>(rng: &mut fastrand::Rng, v: &'a [String]) -> &'a str {
    &v[rng.usize(..v.len())]
}

/// A random name of one of the interesting kinds in the zone (lower-case).
fn random_name(rng: &mut fastrand::Rng, z: &ZoneFacts) -> String {
    let owners: Vec<String> = z.owners.keys().cloned().collect();
    match rng.u8(..100) {
        0..35 => pick(rng, &owners).to_string(),
        35..42 => z.origin.clone(),
        42..50 if !z.ents.is_empty() => pick(rng, &z.ents).to_string(),
        50..56 if !z.cuts.is_empty() => pick(rng, &z.cuts).to_string(),
        56..62 if !z.cuts.is_empty() => format!("{}.{}", label(rng), pick(rng, &z.cuts)),
        62..66 if !z.occluded.is_empty() => {
            let o = pick(rng, &z.occluded).to_string();
            if rng.bool() {
                o
            } else {
                format!("{}.{o}", label(rng))
            }
        }
        66..78 if !z.wild_parents.is_empty() => {
            let p = pick(rng, &z.wild_parents).to_string();
            match rng.u8(..4) {
                0 => format!("{}.{}.{p}", label(rng), label(rng)),
                1 => format!("*.{p}"),
                _ => format!("{}.{p}", label(rng)),
            }
        }
        78..84 if !z.dnames.is_empty() => {
            let d = pick(rng, &z.dnames).to_string();
            let l = match rng.u8(..3) {
                0 => "host".to_string(),
                1 => "cname".to_string(),
                _ => label(rng),
            };
            format!("{l}.{d}")
        }
        84..96 => {
            let base = if rng.bool() {
                z.origin.clone()
            } else {
                pick(rng, &owners).trim_start_matches("*.").to_string()
            };
            format!("{}.{base}", label(rng))
        }
        _ => [
            "example.net.",
            "test.",
            ".",
            "www.example.net.",
            "xexample.test.",
        ][rng.usize(..5)]
        .to_string(),
    }
}

fn random_type(rng: &mut fastrand::Rng, z: &ZoneFacts, name: &str) -> u16 {
    let own: Vec<u16> = z
        .owners
        .get(name)
        .map(|t| t.iter().copied().collect())
        .unwrap_or_default();
    match rng.u8(..100) {
        0..45 if !own.is_empty() => own[rng.usize(..own.len())],
        0..80 => TYPE_POOL[rng.usize(..TYPE_POOL.len())],
        80..85 => T_DS,
        _ => loop {
            // any type but OPT and the meta-types 128–254 (AXFR, IXFR, TSIG, …)
            let t = rng.u16(1..);
            if t != 41 && !(128..=254).contains(&t) {
                break t;
            }
        },
    }
}

fn mixed_case(rng: &mut fastrand::Rng, name: &str) -> String {
    name.chars()
        .map(|c| {
            if rng.bool() {
                c.to_ascii_uppercase()
            } else {
                c
            }
        })
        .collect()
}

/// The queries of a comparison: the fixed ones, the same every run (every rule a comparison
/// lists must be needed by one of them), and the random ones.
struct Queries {
    fixed: Vec<Query>,
    random: Vec<Query>,
}

/// The fixed queries (each owner with each of its types, plus ANY, a type it lacks and DS;
/// the DNSSEC types at CNAME owners; one with CD set), then `n` random ones.
fn queries(z: &ZoneFacts, rng: &mut fastrand::Rng, n: usize) -> Queries {
    let mut fixed = Vec::new();
    for (o, types) in &z.owners {
        let at_cname: &[u16] = if types.contains(&T_CNAME) {
            &[T_RRSIG, T_NSEC, T_NSEC3]
        } else {
            &[]
        };
        for &t in types.iter().chain(&[T_ANY, 13, T_DS]).chain(at_cname) {
            fixed.push(Query::plain(o, t));
            fixed.push(Query {
                edns: Some((1232, false)),
                tcp: true,
                ..Query::plain(o, t)
            });
        }
    }
    for n in z.ents.iter().chain(&z.cuts) {
        for t in [T_A, T_NS, T_DS, T_ANY] {
            fixed.push(Query::plain(n, t));
        }
    }
    fixed.push(Query {
        cd: true,
        ..Query::plain(&z.origin, T_SOA)
    });
    let mut out = Vec::new();
    for _ in 0..n {
        let name = random_name(rng, z);
        let qtype = random_type(rng, z, &name);
        let name = if rng.u8(..10) < 3 {
            mixed_case(rng, &name)
        } else {
            name
        };
        let edns = if rng.bool() {
            Some(([512, 1232, 4096][rng.usize(..3)], rng.u8(..10) < 3))
        } else {
            None
        };
        out.push(Query {
            name,
            qtype,
            tcp: rng.u8(..4) == 0,
            edns,
            rd: rng.bool(),
            cd: rng.u8(..7) == 0,
            ad: rng.u8(..7) == 0,
        });
    }
    Queries { fixed, random: out }
}

// ---- ringdns ----------------------------------------------------------------------------------

/// Whether ringdns is to be compared: its binary lists `dns.file`. A binary without it is
/// skipped loudly, unless plugin.cfg has a `file:` line (then `file` is meant to be there
/// and the test fails).
fn ringdns_has_file(test: &str) -> bool {
    let out = std::process::Command::new(common::binary())
        .arg("-plugins")
        .output()
        .expect("run ringdns -plugins");
    let listed = String::from_utf8_lossy(&out.stdout)
        .lines()
        .any(|l| l.trim() == "dns.file");
    if listed {
        return true;
    }
    let cfg = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("plugin.cfg"))
        .expect("read plugin.cfg");
    let in_cfg = cfg.lines().any(|l| l.trim_start().starts_with("file:"));
    assert!(
        !in_cfg,
        "{test}: plugin.cfg has a `file:` line but `{} -plugins` does not list dns.file",
        common::binary()
    );
    loud(&format!(
        "{test}: ringdns SKIPPED: its binary has no `file` plugin yet (`ringdns -plugins` \
         lacks dns.file, plugin.cfg has no `file:` line). Only NSD and Knot are compared; \
         ringdns is compared as soon as `file` is compiled in."
    ));
    false
}

// ---- the rich zone --------------------------------------------------------------------------

fn rich_zone() -> (Vec<Zone>, ZoneFacts) {
    let path = data("db.example.test");
    (
        vec![Zone::new(ORIGIN, &path)],
        ZoneFacts::read(&path, ORIGIN),
    )
}

fn nsd_options() -> Options {
    Options {
        nsd_minimal: true,
        ..Options::default()
    }
}

fn reference(nsd: &Peer, zones: &[Zone]) -> Reference {
    Reference {
        name: "nsd".into(),
        port: nsd.port,
        zones: zones.iter().map(|z| z.origin.clone()).collect(),
        cache: RefCell::new(HashMap::new()),
    }
}

#[test]
fn nsd_and_knot_agree_on_the_rich_zone() {
    const TEST: &str = "nsd_and_knot_agree_on_the_rich_zone";
    let (zones, facts) = rich_zone();
    let Some(nsd) = Peer::start(Kind::Nsd, &zones, &nsd_options(), TEST) else {
        return;
    };
    let Some(knot) = Peer::start(Kind::Knot, &zones, &Options::default(), TEST) else {
        return;
    };
    let seed = seed();
    eprintln!("{TEST}: seed {seed} (AUTH_DIFF_SEED={seed} replays it)");
    let qs = queries(&facts, &mut fastrand::Rng::with_seed(seed), query_count());
    run(
        &reference(&nsd, &zones),
        "knot",
        knot.port,
        &qs,
        PEER_RICH_RULES,
        seed,
    );
}

/// The comparison itself: NSD with `minimal-responses` against NSD without it (apex NS in
/// the authority section of positive answers, their addresses in the additional one), which
/// no rule of NSD vs Knot accepts, must be reported as differences.
#[test]
fn the_comparison_reports_a_difference() {
    const TEST: &str = "the_comparison_reports_a_difference";
    let (zones, facts) = rich_zone();
    let Some(nsd) = Peer::start(Kind::Nsd, &zones, &nsd_options(), TEST) else {
        return;
    };
    let Some(full) = Peer::start(Kind::Nsd, &zones, &Options::default(), TEST) else {
        return;
    };
    let qs = queries(&facts, &mut fastrand::Rng::with_seed(1), 0);
    let Report {
        summary, differ, ..
    } = report(
        &reference(&nsd, &zones),
        "nsd-full",
        full.port,
        &qs,
        PEER_RICH_RULES,
        1,
    );
    let www = differ
        .iter()
        .find(|d| d.starts_with("  www.example.test. A over UDP"))
        .unwrap_or_else(|| panic!("{summary}: www A is not reported"));
    assert!(
        www.contains("authority  only nsd-full: example.test. 3600 NS ns1.example.test."),
        "{www}"
    );
    // … and with the rule for it (as for ringdns), the apex NS is accepted there
    let one = Queries {
        fixed: vec![Query::plain("www.example.test.", T_A)],
        random: Vec::new(),
    };
    let Report {
        differ, unneeded, ..
    } = report(
        &reference(&nsd, &zones),
        "nsd-full",
        full.port,
        &one,
        &[Rule::ApexNsInAuthority, Rule::CdCopied],
        1,
    );
    assert_eq!(
        unneeded,
        [Rule::CdCopied],
        "a rule no query needs is reported, one that one needs is not"
    );
    assert_eq!(
        differ.len(),
        1,
        "the NS addresses in additional still differ"
    );
    assert!(!differ[0].contains("authority  only"), "{}", differ[0]);
}

#[test]
fn ringdns_file_agrees_with_nsd_on_the_rich_zone() {
    const TEST: &str = "ringdns_file_agrees_with_nsd_on_the_rich_zone";
    let (zones, facts) = rich_zone();
    if !ringdns_has_file(TEST) {
        return;
    }
    let Some(nsd) = Peer::start(Kind::Nsd, &zones, &nsd_options(), TEST) else {
        return;
    };
    let ringdns = peers::ringdns_file(&zones);
    let seed = seed();
    eprintln!("{TEST}: seed {seed} (AUTH_DIFF_SEED={seed} replays it)");
    let qs = queries(&facts, &mut fastrand::Rng::with_seed(seed), query_count());
    run(
        &reference(&nsd, &zones),
        "ringdns",
        ringdns.port,
        &qs,
        RINGDNS_RICH_RULES,
        seed,
    );
}

// ---- DNSSEC ---------------------------------------------------------------------------------

/// The source zone signed as `nsec.test.` (NSEC) and `nsec3.test.` (NSEC3), in `dir`.
fn signed_zones(dir: &TempDir, test: &str) -> Option<Vec<Zone>> {
    let src = data("db.dnssec.test");
    let mut out = Vec::new();
    for (origin, denial) in [("nsec.test.", Denial::Nsec), ("nsec3.test.", Denial::Nsec3)] {
        let s = sign_zone(&src, origin, &dir.0, denial, test)?;
        out.push(Zone::new(origin, &s.file));
    }
    Some(out)
}

/// DO-bit queries for each signed zone: positive, NXDOMAIN, NODATA, wildcard, ENT, CNAME,
/// DS (at a signed and an unsigned cut, elsewhere), DNSKEY, referrals; each over UDP and
/// TCP, plus mixed-case names and CD set at random (and always on the first). All fixed:
/// only the case and the RD and CD bits are drawn.
fn dnssec_queries(zones: &[Zone], rng: &mut fastrand::Rng) -> Queries {
    const NAMES: &[&str] = &[
        "",
        "www.",
        "alias.",
        "mail.",
        "ns1.",
        "nx.",
        "nx.www.",
        "foo.wild.",
        "a.b.wild.",
        "explicit.wild.",
        "*.wild.",
        "b.c.",
        "a.b.c.",
        "x.b.c.",
        "x.c.",
        "secure.",
        "x.secure.",
        "ns.secure.",
        "insecure.",
        "x.insecure.",
        "zzz.",
        "0.",
    ];
    const TYPES: &[u16] = &[1, 2, 6, 15, 16, 28, 43, 46, 47, 48, 50, 51, 255];
    let mut out = Vec::new();
    for z in zones {
        for n in NAMES {
            let name = format!("{n}{}", z.origin);
            for &t in TYPES {
                for tcp in [false, true] {
                    let name = if rng.u8(..4) == 0 {
                        mixed_case(rng, &name)
                    } else {
                        name.clone()
                    };
                    out.push(Query {
                        tcp,
                        edns: Some((if tcp { 4096 } else { 1232 }, true)),
                        cd: rng.u8(..4) == 0 || out.is_empty(),
                        rd: rng.bool(),
                        ..Query::plain(&name, t)
                    });
                }
            }
        }
    }
    Queries {
        fixed: out,
        random: Vec::new(),
    }
}

#[test]
fn dnssec_nsd_and_knot_agree() {
    const TEST: &str = "dnssec_nsd_and_knot_agree";
    let dir = TempDir::new();
    let Some(zones) = signed_zones(&dir, TEST) else {
        return;
    };
    let Some(nsd) = Peer::start(Kind::Nsd, &zones, &nsd_options(), TEST) else {
        return;
    };
    let Some(knot) = Peer::start(Kind::Knot, &zones, &Options::default(), TEST) else {
        return;
    };
    let seed = seed();
    eprintln!("{TEST}: seed {seed} (AUTH_DIFF_SEED={seed} replays it)");
    let qs = dnssec_queries(&zones, &mut fastrand::Rng::with_seed(seed));
    run(
        &reference(&nsd, &zones),
        "knot",
        knot.port,
        &qs,
        PEER_DNSSEC_RULES,
        seed,
    );
}

#[test]
fn dnssec_ringdns_file_agrees_with_nsd() {
    const TEST: &str = "dnssec_ringdns_file_agrees_with_nsd";
    if !ringdns_has_file(TEST) {
        return;
    }
    let dir = TempDir::new();
    let Some(zones) = signed_zones(&dir, TEST) else {
        return;
    };
    let Some(nsd) = Peer::start(Kind::Nsd, &zones, &nsd_options(), TEST) else {
        return;
    };
    let ringdns = peers::ringdns_file(&zones);
    let seed = seed();
    eprintln!("{TEST}: seed {seed} (AUTH_DIFF_SEED={seed} replays it)");
    let qs = dnssec_queries(&zones, &mut fastrand::Rng::with_seed(seed));
    run(
        &reference(&nsd, &zones),
        "ringdns",
        ringdns.port,
        &qs,
        RINGDNS_DNSSEC_RULES,
        seed,
    );
}
