//! A CNAME chain that leaves the zone: its target is looked up through the server (another
//! block, `hosts`, `forward`, …), as CoreDNS's `upstream` does, and what comes back is
//! appended to the chain, with its rcode (RFC 6604 §3).

use crate::Answered;
use crate::registry::SharedZone;
use ringdns_plugin::wire::rcode::{NOERROR, NXDOMAIN, SERVFAIL};
use ringdns_plugin::wire::{MessageWriter, Name, QueryBuilder, header_rcode};
use ringdns_plugin::{Request, Status};
use std::sync::Arc;

/// The deferred pass of a query whose chain left the zone `shared`.
pub async fn answer(req: &mut Request<'_>, shared: Arc<SharedZone>) -> Status {
    let q = req.query;
    // Held across the lookup: an `Arc`, not a guard.
    let data = shared.load_full();
    let Some(zone) = data.as_ref() else {
        return Status::rcode(SERVFAIL);
    };
    let via = req.lookup();
    let dnssec = q.do_bit();
    let meta = req.metadata();
    let mut w = MessageWriter::reply(&q, req.reply, NOERROR);
    let answered = zone.answer(
        q.qname_bytes(),
        q.qtype(),
        dnssec,
        req.proto == ringdns_plugin::Proto::Udp,
        &mut w,
    );
    crate::serving::publish_wildcard(meta, zone, answered);
    let (target, len) = match answered {
        Answered::External { target, len, .. } => (target, len as usize),
        // The zone changed between the passes and now answers alone.
        Answered::Done { .. } => {
            w.finish();
            req.finalize_reply();
            return Status::written();
        }
    };
    let mut negative = false;
    let looked_up = match (via, Name::from_wire(&target[..len])) {
        (Some(via), Ok(name)) => {
            let mut b = QueryBuilder::new(name, q.qtype()).id(q.id()).rd(true);
            if q.opt().is_some() {
                b = b.edns(4096, dnssec);
            }
            via.lookup(&b.build()).await
        }
        _ => None,
    };
    match looked_up {
        None => w.set_rcode(SERVFAIL),
        Some(reply) => {
            // As CoreDNS's lookup result: NXDOMAIN and SERVFAIL carry over (RFC 6604);
            // any other rcode (REFUSED: nothing serves the target) leaves the chain a
            // NOERROR answer, negative when nothing was found.
            let got = header_rcode(&reply).unwrap_or(SERVFAIL);
            let rcode = match got {
                r @ (NXDOMAIN | SERVFAIL) => r,
                _ => NOERROR,
            };
            let appended = ringdns_plugin::lookup::append_answers(&reply, &mut w);
            w.set_rcode(rcode);
            negative = got == NXDOMAIN || (got == NOERROR && appended == 0);
        }
    }
    let rcode = w.rcode();
    if rcode == NOERROR || rcode == NXDOMAIN {
        zone.end_external(q.qname_bytes(), negative, dnssec, &mut w);
    }
    drop(data);
    w.finish();
    req.finalize_reply();
    Status::written()
}
