//! Answering a query from a [`Zone`] by RFC 1034 §4.3.2: exact matches, CNAME chains
//! inside the zone, delegations, wildcards (RFC 4592), DNAME (RFC 6672), negative answers
//! with the SOA (RFC 2308), and, for DO queries of a signed zone, the signatures and the
//! NSEC (RFC 4035) or NSEC3 (RFC 5155) proofs. It writes into the server's reply buffer
//! through `MessageWriter` and allocates nothing.

use crate::canonical;
use crate::zone::{NONE, Node, Set, Zone, flag};
use ringdns_wire::rcode::{NOERROR, NXDOMAIN, SERVFAIL, YXDOMAIN};
use ringdns_wire::rtype;
use ringdns_wire::{MessageWriter, Name, Owner, Section};

/// CNAME (and DNAME) steps followed inside the zone before giving up, as CoreDNS.
const MAX_CHAIN: usize = 8;

/// What answering left to the caller.
// The target is returned by value, on the stack: no allocation on the query path.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answered {
    /// The reply is complete; `wildcard` is the wildcard that synthesised it, if one did.
    Done { wildcard: Option<Wildcard> },
    /// The answer section ends in a CNAME whose target (lower-case wire form, the first
    /// `len` bytes) is outside the zone: the caller may look it up elsewhere and append
    /// what it finds. The reply as written is a valid NOERROR answer without it.
    /// `wildcard` as for `Done` (a wildcard CNAME).
    External {
        target: [u8; 255],
        len: u8,
        wildcard: Option<Wildcard>,
    },
}

impl Answered {
    /// The wildcard that synthesised the answer for the query name (RFC 4592): what
    /// CoreDNS's file publishes as `zone/wildcard`.
    pub fn wildcard(&self) -> Option<Wildcard> {
        match *self {
            Answered::Done { wildcard } | Answered::External { wildcard, .. } => wildcard,
        }
    }
}

/// A wildcard node of the zone that answered, by index: a copy of nothing, so that the
/// answers no wildcard made pay nothing for it. Its name is [`Zone::wildcard_name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wildcard(u32);

/// The NSEC or NSEC3 records an answer needs beyond those of its own sets.
#[derive(Clone, Copy)]
enum Proof<'n> {
    /// None: a plain positive answer.
    None,
    /// A wildcard answer: no name closer to `cur` exists.
    Wildcard { cur: &'n [u8], ce: &'n [u8] },
}

/// The reply being written.
struct Out<'a, 'b, 'z> {
    z: &'z Zone,
    w: &'a mut MessageWriter<'b>,
    dnssec: bool,
    /// ANY over UDP: one RRset (RFC 8482 §4.1), not all of them.
    any_one: bool,
    /// The query name, lower-case: names that are suffixes of it are written as pointers.
    qname: &'a [u8],
    extras: [u32; 32],
    nextras: usize,
    /// Name offsets of the NSEC/NSEC3 nodes written, so none goes twice.
    proofs: [u32; 8],
    nproofs: usize,
    /// A wildcard synthesised a CNAME of the chain (DO): the name it answered (first
    /// `pending_len` bytes) and its closest encloser's length, whose proof goes into
    /// authority with the chain's end.
    pending: [u8; 255],
    pending_len: usize,
    pending_ce: usize,
    /// The wildcard node that stands for the query name (NONE: none), as CoreDNS's
    /// `wildElem`: set only for the first name of the chain and a wildcard with records.
    wildcard: u32,
}

impl<'a, 'b, 'z> Out<'a, 'b, 'z> {
    fn new(z: &'z Zone, w: &'a mut MessageWriter<'b>, dnssec: bool, qname: &'a [u8]) -> Self {
        Out {
            z,
            w,
            // An unsigned zone has no DNSSEC records to give, even to DO queries (no DS
            // in referrals, no proofs).
            dnssec: dnssec && z.signed,
            any_one: false,
            qname,
            extras: [0; 32],
            nextras: 0,
            proofs: [0; 8],
            nproofs: 0,
            pending: [0; 255],
            pending_len: 0,
            pending_ce: 0,
            wildcard: NONE,
        }
    }

    /// The owner to write for a lower-case name: the question itself, a pointer into it
    /// for a suffix, else the name's bytes.
    fn owner<'n>(&self, name: &'n [u8]) -> Owner<'n> {
        let q = self.qname;
        if name.len() <= q.len() && q.ends_with(name) {
            let off = q.len() - name.len();
            let mut pos = 0;
            while pos < off {
                pos += q[pos] as usize + 1;
            }
            if pos == off {
                return if off == 0 {
                    Owner::Question
                } else {
                    Owner::Pointer((ringdns_wire::HEADER_LEN + off) as u16)
                };
            }
        }
        Owner::Wire(name)
    }

    fn push(&mut self, sec: Section, owner: &[u8], rtype_: u16, ttl: u32, rdata: &[u8]) {
        let o = self.owner(owner);
        // A message past 64 KiB just stops growing: finalize cuts it to the client's size.
        let _ = self.w.push(sec, o, rtype_, self.z.class, ttl, rdata);
    }

    /// A set (with its signatures for DO), owned by `owner`; `ttl` overrides the TTLs
    /// (the SOA of a negative answer).
    fn set(&mut self, sec: Section, owner: &[u8], s: &Set, ttl: Option<u32>) {
        let z = self.z;
        for rr in z.rrs(s) {
            self.push(
                sec,
                owner,
                s.rtype,
                ttl.unwrap_or(rr.ttl).min(rr.ttl),
                rr.rdata,
            );
        }
        if self.dnssec && s.sigs != NONE {
            let sigs = z.sets[s.sigs as usize];
            for rr in z.rrs(&sigs) {
                self.push(
                    sec,
                    owner,
                    rtype::RRSIG,
                    ttl.unwrap_or(rr.ttl).min(rr.ttl),
                    rr.rdata,
                );
            }
        }
        if sec == Section::Answer {
            self.want_extras(s);
        }
    }

    /// Notes the nodes whose addresses go into additional with set `s` (each once).
    fn want_extras(&mut self, s: &Set) {
        for &n in self.z.extras_of(s) {
            if self.nextras < self.extras.len() && !self.extras[..self.nextras].contains(&n) {
                self.extras[self.nextras] = n;
                self.nextras += 1;
            }
        }
    }

    /// A node's set of `rtype`, when present.
    fn node_set(&mut self, sec: Section, owner: &[u8], n: &Node, rtype_: u16) -> bool {
        match self.z.find_set(n, rtype_) {
            Some(s) => {
                let s = *s;
                self.set(sec, owner, &s, None);
                true
            }
            None => false,
        }
    }

    /// An NSEC or NSEC3 node's proof records, once per reply.
    fn proof_node(&mut self, n: &Node, rtype_: u16) {
        if !self.dnssec || self.proofs[..self.nproofs].contains(&n.name) {
            return;
        }
        if self.nproofs < self.proofs.len() {
            self.proofs[self.nproofs] = n.name;
            self.nproofs += 1;
        }
        let z = self.z;
        let name = z.name_of(n);
        self.node_set(Section::Authority, name, n, rtype_);
    }

    /// The NSEC that covers (or matches) `name`.
    fn nsec_covering(&mut self, name: &[u8]) {
        let z = self.z;
        if let Some(i) = z.covering_nsec(name) {
            let n = z.nodes[i as usize];
            self.proof_node(&n, rtype::NSEC);
        }
    }

    /// The NSEC3 that matches `name`; false when there is none.
    fn nsec3_matching(&mut self, name: &[u8]) -> bool {
        let Some(c) = &self.z.nsec3 else { return false };
        match c.matching(name) {
            Some(n) => {
                let n = *n;
                self.proof_node(&n, rtype::NSEC3);
                true
            }
            None => false,
        }
    }

    /// The NSEC3 that covers `name`.
    fn nsec3_covering(&mut self, name: &[u8]) {
        let Some(c) = &self.z.nsec3 else { return };
        if let Some(n) = c.covering(name) {
            let n = *n;
            self.proof_node(&n, rtype::NSEC3);
        }
    }

    /// RFC 5155 §7.2.1: the closest provable encloser's matching NSEC3 and the NSEC3
    /// covering the next closer name.
    fn nsec3_closest_encloser_proof(&mut self, name: &[u8]) {
        let z = self.z;
        let Some(c) = &z.nsec3 else { return };
        if let Some((ce, next)) = crate::nsec3::closest_provable(c, name, z.origin.len()) {
            self.nsec3_matching(ce);
            self.nsec3_covering(next);
        }
    }

    /// The apex SOA for a negative answer: TTL min(SOA TTL, MINIMUM) (RFC 2308 §3).
    fn negative_soa(&mut self) {
        let z = self.z;
        let apex = z.nodes[0];
        if let Some(s) = z.find_set(&apex, rtype::SOA) {
            let s = *s;
            let rd = z.first_rr(&s).rdata;
            let m = rd.len() - 4;
            let minimum = u32::from_be_bytes([rd[m], rd[m + 1], rd[m + 2], rd[m + 3]]);
            let origin = z.name_of(&apex);
            self.set(Section::Authority, origin, &s, Some(minimum));
        }
    }

    /// Authority and additional of a positive answer.
    fn positive(&mut self, answered_apex_ns: bool, proof: Proof<'_>) {
        let z = self.z;
        let apex = z.nodes[0];
        if !answered_apex_ns {
            let origin = z.name_of(&apex);
            self.node_set(Section::Authority, origin, &apex, rtype::NS);
        }
        self.pending_proof();
        if self.dnssec
            && let Proof::Wildcard { cur, ce } = proof
        {
            if z.nsec3.is_some() {
                self.nsec3_covering(next_closer(cur, ce));
            } else {
                self.nsec_covering(cur);
            }
        }
        self.additional();
    }

    /// The addresses of the answer's targets.
    fn additional(&mut self) {
        let z = self.z;
        for i in 0..self.nextras {
            let n = z.nodes[self.extras[i] as usize];
            let name = z.name_of(&n);
            self.node_set(Section::Additional, name, &n, rtype::A);
            self.node_set(Section::Additional, name, &n, rtype::AAAA);
        }
    }
}

/// The name one label longer than `ce` on the way to `cur` (RFC 5155's next closer).
fn next_closer<'n>(cur: &'n [u8], ce: &[u8]) -> &'n [u8] {
    let mut n = cur;
    while canonical::parent(n).len() > ce.len() {
        n = canonical::parent(n);
    }
    n
}

/// What one step of resolution leads to.
enum Step {
    Done,
    /// Go on with the name now in the `next` buffer (its length).
    Follow(usize),
}

impl Zone {
    /// Answers a query for `qname` (wire form, any case; at or below the origin) and
    /// `qtype` into `w`, a reply already started; `dnssec` is the query's DO bit, `udp`
    /// whether it came over UDP (where ANY gets one RRset, RFC 8482 §4.1, against
    /// amplification; over TCP every RRset of the name). Sets AA (cleared for a referral)
    /// and the rcode.
    pub fn answer(
        &self,
        qname: &[u8],
        qtype: u16,
        dnssec: bool,
        udp: bool,
        w: &mut MessageWriter<'_>,
    ) -> Answered {
        let mut qbuf = [0u8; 255];
        let qlower = canonical::lower_into(qname, &mut qbuf);
        w.set_aa(true);
        let mut o = Out::new(self, w, dnssec, qlower);
        o.any_one = udp;
        let mut bufs = [[0u8; 255]; 2];
        let mut cur_len = qlower.len();
        bufs[0][..cur_len].copy_from_slice(qlower);
        let mut seen = [0u64; MAX_CHAIN + 1];
        for step in 0..=MAX_CHAIN {
            let (a, b) = bufs.split_at_mut(1);
            let (cur, next) = if step % 2 == 0 {
                (&a[0][..cur_len], &mut b[0])
            } else {
                (&b[0][..cur_len], &mut a[0])
            };
            match self.step(&mut o, cur, qtype, next, step == 0) {
                Step::Done => return o.done(),
                Step::Follow(len) => {
                    // Hashed only when a chain goes on: a plain answer pays nothing for
                    // loop detection.
                    seen[step] = self.hash(cur);
                    let target = &next[..len];
                    if !canonical::is_at_or_below(target, &self.origin) {
                        // The chain leaves the zone: the caller looks further, appends
                        // what it finds and ends the reply with `end_external`.
                        let mut t = [0u8; 255];
                        t[..len].copy_from_slice(target);
                        return Answered::External {
                            target: t,
                            len: len as u8,
                            wildcard: o.found_wildcard(),
                        };
                    }
                    let h = self.hash(target);
                    if seen[..=step].contains(&h) {
                        // A loop: what is written is the whole chain.
                        o.positive(false, Proof::None);
                        return o.done();
                    }
                    cur_len = len;
                }
            }
        }
        // Too long a chain: stop, as CoreDNS does, with a server failure.
        o.w.set_rcode(SERVFAIL);
        o.done()
    }

    /// The owner name of wildcard `w` (`*.example.org.`, lower case) of this zone, the
    /// one whose [`Zone::answer`] returned it.
    pub fn wildcard_name(&self, w: Wildcard) -> Name<'_> {
        let n = self.nodes.get(w.0 as usize);
        n.and_then(|n| Name::from_wire(self.name_of(n)).ok())
            .unwrap_or(Name::ROOT)
    }

    /// Ends a reply whose chain left the zone ([`Answered::External`]) after the caller
    /// appended what it found for the target: the apex NS in authority, or the SOA when
    /// that lookup was negative (`negative`: NXDOMAIN or no data).
    pub fn end_external(
        &self,
        qname: &[u8],
        negative: bool,
        dnssec: bool,
        w: &mut MessageWriter<'_>,
    ) {
        let mut qbuf = [0u8; 255];
        let qlower = canonical::lower_into(qname, &mut qbuf);
        let mut o = Out::new(self, w, dnssec, qlower);
        if negative {
            o.negative_soa();
        } else {
            o.positive(false, Proof::None);
        }
    }

    fn step(
        &self,
        o: &mut Out<'_, '_, '_>,
        cur: &[u8],
        qtype: u16,
        next: &mut [u8; 255],
        first: bool,
    ) -> Step {
        // The common case: the name exists and is authoritative data.
        if let Some(i) = self.find(cur) {
            let f = self.nodes[i as usize].flags;
            if f & flag::OCCLUDED == 0 && (f & flag::CUT == 0 || qtype == rtype::DS) {
                let n = self.nodes[i as usize];
                return self.data(o, cur, &n, qtype, next, None);
            }
        }
        // Walk down from the apex: a delegation or a DNAME above the name decides.
        let apex = &self.nodes[0];
        if apex.flags & flag::DNAME != 0 && cur.len() > self.origin.len() {
            return self.dname(o, cur, 0, qtype, next);
        }
        let mut starts = [0usize; 128];
        let mut nl = 0;
        let mut pos = 0;
        while cur[pos] != 0 {
            starts[nl] = pos;
            nl += 1;
            pos += cur[pos] as usize + 1;
        }
        let zl = canonical::label_count(&self.origin);
        let mut ce = 0u32;
        for k in (zl + 1)..=nl {
            let s = &cur[starts[nl - k]..];
            let Some(i) = self.find(s) else {
                return self.not_found(o, cur, ce, qtype, next, first);
            };
            let f = self.nodes[i as usize].flags;
            if f & flag::CUT != 0 && !(k == nl && qtype == rtype::DS) {
                return self.referral(o, i, first);
            }
            if f & flag::DNAME != 0 && k < nl {
                return self.dname(o, cur, i, qtype, next);
            }
            ce = i;
        }
        // The whole name exists (as data or as an empty non-terminal).
        let n = self.nodes[ce as usize];
        self.data(o, cur, &n, qtype, next, None)
    }

    /// Answers from node `n` for the name `cur`: the node itself, or the wildcard that
    /// stands for `cur` (`wild` = the closest encloser's name).
    fn data(
        &self,
        o: &mut Out<'_, '_, '_>,
        cur: &[u8],
        n: &Node,
        qtype: u16,
        next: &mut [u8; 255],
        wild: Option<&[u8]>,
    ) -> Step {
        let proof = match wild {
            Some(ce) => Proof::Wildcard { cur, ce },
            None => Proof::None,
        };
        if n.count > 0 && qtype == rtype::ANY {
            for s in self.sets_of(n) {
                if s.rtype != rtype::RRSIG {
                    let s = *s;
                    o.set(Section::Answer, cur, &s, None);
                    if o.any_one {
                        break;
                    }
                }
            }
            // ANY is answered minimally beyond its RRsets: no additional-section addresses.
            o.nextras = 0;
            o.positive(false, proof);
            return Step::Done;
        }
        if qtype == rtype::RRSIG {
            let mut any = false;
            for s in self.sets_of(n) {
                if s.rtype == rtype::RRSIG {
                    let s = *s;
                    for rr in self.rrs(&s) {
                        o.push(Section::Answer, cur, rtype::RRSIG, rr.ttl, rr.rdata);
                    }
                    any = true;
                }
            }
            if any {
                o.positive(false, proof);
                return Step::Done;
            }
        } else if let Some(s) = self.find_set(n, qtype) {
            let s = *s;
            o.set(Section::Answer, cur, &s, None);
            o.positive(qtype == rtype::NS && cur == &*self.origin, proof);
            return Step::Done;
        } else if n.flags & flag::CNAME != 0
            && let Some(s) = self.find_set(n, rtype::CNAME)
        {
            let s = *s;
            o.set(Section::Answer, cur, &s, None);
            let rr = self.first_rr(&s);
            let t = canonical::lower_into(rr.rdata, next);
            if let Some(ce) = wild
                && o.dnssec
                && o.pending_len == 0
            {
                // The wildcard's proof goes into authority with the chain's end.
                o.pending[..cur.len()].copy_from_slice(cur);
                o.pending_len = cur.len();
                o.pending_ce = ce.len();
            }
            return Step::Follow(t.len());
        }
        self.nodata(o, cur, n, wild);
        Step::Done
    }

    /// NOERROR without data: the SOA, and the proof that the type is absent.
    fn nodata(&self, o: &mut Out<'_, '_, '_>, cur: &[u8], n: &Node, wild: Option<&[u8]>) {
        o.w.set_rcode(NOERROR);
        o.negative_soa();
        if !o.dnssec {
            return;
        }
        o.pending_proof();
        if self.nsec3.is_some() {
            match wild {
                Some(ce) => {
                    // RFC 5155 §7.2.5: closest encloser, next closer, and the wildcard.
                    o.nsec3_matching(ce);
                    o.nsec3_covering(next_closer(cur, ce));
                    o.proof_node(n, rtype::NSEC3);
                    let name = self.name_of(n);
                    o.nsec3_matching(name);
                }
                None => {
                    if !o.nsec3_matching(cur) {
                        // Opt-out (a DS query at an unsigned delegation): §7.2.4.
                        o.nsec3_closest_encloser_proof(cur);
                    }
                }
            }
            return;
        }
        if n.flags & flag::NSEC != 0 {
            o.proof_node(n, rtype::NSEC);
        } else {
            // An empty non-terminal: the NSEC whose span covers it.
            o.nsec_covering(cur);
        }
        if wild.is_some() {
            o.nsec_covering(cur);
        }
    }

    /// The name does not exist below the closest encloser `ce`: a wildcard answers, or
    /// NXDOMAIN. `first`: `cur` is the query name (not a CNAME's target).
    fn not_found(
        &self,
        o: &mut Out<'_, '_, '_>,
        cur: &[u8],
        ce: u32,
        qtype: u16,
        next: &mut [u8; 255],
        first: bool,
    ) -> Step {
        let ce_node = self.nodes[ce as usize];
        let ce_name = self.name_of(&ce_node);
        let mut wbuf = [0u8; 255];
        let wlen = ce_name.len() + 2;
        let wc: Option<&[u8]> = if wlen <= 255 {
            wbuf[0] = 1;
            wbuf[1] = b'*';
            wbuf[2..wlen].copy_from_slice(ce_name);
            Some(&wbuf[..wlen])
        } else {
            None
        };
        if let Some(wc) = wc
            && let Some(wi) = self.find(wc)
        {
            let wn = self.nodes[wi as usize];
            // CoreDNS names the wildcard only when it holds records (an empty
            // non-terminal `*` answers NODATA without it), and only for the query name:
            // a target of its chain is looked up through the server, with its own metadata.
            if first && wn.count > 0 {
                o.wildcard = wi;
            }
            return self.data(o, cur, &wn, qtype, next, Some(ce_name));
        }
        o.w.set_rcode(NXDOMAIN);
        o.negative_soa();
        o.pending_proof();
        if o.dnssec {
            if self.nsec3.is_some() {
                o.nsec3_matching(ce_name);
                o.nsec3_covering(next_closer(cur, ce_name));
                if let Some(wc) = wc {
                    o.nsec3_covering(wc);
                }
            } else {
                o.nsec_covering(cur);
                if let Some(wc) = wc {
                    o.nsec_covering(wc);
                }
            }
        }
        Step::Done
    }

    /// A delegation at node `cut`: its NS in authority, AA clear (unless a CNAME chain
    /// of this zone led here), glue in additional, and DS or its absence for DO.
    fn referral(&self, o: &mut Out<'_, '_, '_>, cut: u32, first: bool) -> Step {
        let n = self.nodes[cut as usize];
        let name = self.name_of(&n);
        if first {
            o.w.set_aa(false);
        }
        if let Some(s) = self.find_set(&n, rtype::NS) {
            let s = *s;
            // NS at a delegation is not signed; its glue goes to additional.
            for rr in self.rrs(&s) {
                o.push(Section::Authority, name, rtype::NS, rr.ttl, rr.rdata);
            }
            o.want_extras(&s);
        }
        if o.dnssec && !o.node_set(Section::Authority, name, &n, rtype::DS) {
            if self.nsec3.is_some() {
                if !o.nsec3_matching(name) {
                    o.nsec3_closest_encloser_proof(name);
                }
            } else {
                o.proof_node(&n, rtype::NSEC);
            }
        }
        o.pending_proof();
        o.additional();
        Step::Done
    }

    /// A DNAME at node `d` above `cur`: the DNAME, the CNAME it synthesises, and on to
    /// the new name (RFC 6672 §3.3).
    fn dname(
        &self,
        o: &mut Out<'_, '_, '_>,
        cur: &[u8],
        d: u32,
        qtype: u16,
        next: &mut [u8; 255],
    ) -> Step {
        let n = self.nodes[d as usize];
        let owner = self.name_of(&n);
        let Some(s) = self.find_set(&n, rtype::DNAME) else {
            return Step::Done;
        };
        let s = *s;
        o.set(Section::Answer, owner, &s, None);
        let rr = self.first_rr(&s);
        let prefix = &cur[..cur.len() - owner.len()];
        let len = prefix.len() + rr.rdata.len();
        if len > 255 {
            o.w.set_rcode(YXDOMAIN);
            return Step::Done;
        }
        next[..prefix.len()].copy_from_slice(prefix);
        let mut tbuf = [0u8; 255];
        let t = canonical::lower_into(rr.rdata, &mut tbuf);
        next[prefix.len()..len].copy_from_slice(t);
        if &next[..len] == cur {
            o.w.set_rcode(SERVFAIL);
            return Step::Done;
        }
        // The synthesised CNAME: unsigned, the DNAME's TTL.
        let target = &next[..len];
        o.push(Section::Answer, cur, rtype::CNAME, rr.ttl, target);
        if qtype == rtype::CNAME {
            o.positive(false, Proof::None);
            return Step::Done;
        }
        Step::Follow(len)
    }
}

impl Out<'_, '_, '_> {
    /// The wildcard found for the query name, if any.
    fn found_wildcard(&self) -> Option<Wildcard> {
        (self.wildcard != NONE).then_some(Wildcard(self.wildcard))
    }

    /// A complete reply.
    fn done(&self) -> Answered {
        Answered::Done {
            wildcard: self.found_wildcard(),
        }
    }

    /// The proof of a wildcard that synthesised a CNAME earlier in the chain.
    fn pending_proof(&mut self) {
        if self.pending_len == 0 || !self.dnssec {
            return;
        }
        let p = self.pending;
        let cur = &p[..self.pending_len];
        let ce = &cur[cur.len() - self.pending_ce..];
        if self.z.nsec3.is_some() {
            self.nsec3_covering(next_closer(cur, ce));
        } else {
            self.nsec_covering(cur);
        }
    }
}
