//! The winning reply, rewritten for the question the client asked (CoreDNS's `cnamer`):
//! the first answer record owned by another name than the one asked gets a CNAME from the
//! asked name in front of it, with that record's TTL, and the question is the client's
//! again. The reply was written for a longer or shorter question, so its records are copied
//! with their names uncompressed (as `lookup::append_answers` copies a lookup's), every
//! section and its OPT, which the request's `finalize_reply` then makes the client's.

use ringdns_plugin::wire::{
    Header, HeaderMut, MessageWriter, Owner, Query, Section, WriteError, class, expand_name,
    expand_rdata, records, rtype,
};

/// Writes into `out` the reply `reply` (to a search path element's query) as the reply to
/// `q`, the client's query; `owner` and `rdata` are scratch buffers. Fails only when the
/// reply does not parse or the result would exceed 65 535 bytes.
pub fn write(
    q: &Query<'_>,
    reply: &[u8],
    out: &mut Vec<u8>,
    owner: &mut Vec<u8>,
    rdata: &mut Vec<u8>,
) -> Result<(), WriteError> {
    let bad = WriteError::BadOwner;
    let h = Header::of(reply).ok_or(bad)?;
    let asked = q.qname();
    // The CNAME's target: the owner of the first answer that is not the asked name.
    let mut target: Option<(usize, u32)> = None;
    rdata.clear();
    for r in records(reply).map_err(|_| bad)? {
        let r = r.map_err(|_| bad)?;
        if r.section != Section::Answer {
            break;
        }
        owner.clear();
        expand_name(reply, r.owner.start, reply.len(), owner).map_err(|_| bad)?;
        if !asked.eq_ignore_ascii_case(owner) {
            rdata.extend_from_slice(owner);
            target = Some((rdata.len(), r.ttl(reply)));
            break;
        }
    }
    let mut w = MessageWriter::reply(q, out, h.rcode());
    let mut target_at = None;
    if let Some((len, ttl)) = target {
        // Owner: a pointer to the question; the target starts after the CNAME's fixed part.
        target_at = Some(w.len() + 2 + 10);
        w.push(
            Section::Answer,
            Owner::Question,
            rtype::CNAME,
            class::IN,
            ttl,
            &rdata[..len],
        )?;
    }
    let target_len = target.map_or(0, |(len, _)| len);
    for r in records(reply).map_err(|_| bad)? {
        let r = r.map_err(|_| bad)?;
        owner.clear();
        rdata.truncate(target_len);
        expand_name(reply, r.owner.start, reply.len(), owner).map_err(|_| bad)?;
        expand_rdata(reply, &r, rdata).map_err(|_| bad)?;
        // The records of the name the CNAME points to (spelt the same) point at its target.
        let o = match target_at {
            Some(at) if at < 0x4000 && owner[..] == rdata[..target_len] => {
                Owner::Pointer(at as u16)
            }
            _ => Owner::Wire(owner),
        };
        w.push(
            r.section,
            o,
            r.rtype,
            r.class,
            r.ttl(reply),
            &rdata[target_len..],
        )?;
    }
    w.finish();
    // Every flag as the answering plugin set it (AA, RA, AD, TC, the rcode); the ID is the
    // client's, which the element's query had too.
    HeaderMut::new(out).set_flags(h.flags());
    Ok(())
}
