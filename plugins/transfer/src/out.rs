//! The messages of a transfer, in messages of up to [`BATCH`] bytes of records (CoreDNS's
//! 63 000): the whole zone, SOA first and last (RFC 5936 §2.2); for an IXFR client whose
//! serial the zone's history reaches, the steps since then (RFC 1995 §4: the new SOA, each
//! step's old SOA, deletions, new SOA and additions, the new SOA again); or the SOA alone,
//! for an IXFR client that is up to date or asked over UDP (RFC 1995 §2, §4).

use ringdns_plugin::wire::rcode::{NOERROR, SERVFAIL};
use ringdns_plugin::wire::{MessageWriter, Owner, Section, records, rtype};
use ringdns_plugin::{PluginError, Request, Status};
use ringdns_zone::{StoredRecord, Zone};
use std::sync::Arc;

/// Bytes of records per message, below the 65 535 of a TCP frame with room for the header,
/// question and OPT.
const BATCH: usize = 63_000;

/// The serial an IXFR query says the client has: the one record of its authority section,
/// an SOA (RFC 1995 §3). `None` for a malformed IXFR.
pub fn ixfr_serial(packet: &[u8]) -> Option<u32> {
    let mut it = records(packet).ok()?;
    let mut soa = None;
    for r in it.by_ref() {
        let r = r.ok()?;
        match r.section {
            Section::Authority if soa.is_none() && r.rtype == rtype::SOA => soa = Some(r),
            Section::Additional => {}
            _ => return None,
        }
    }
    let r = soa?;
    let rdata = &packet[r.rdata.clone()];
    let at = skip_name(rdata, skip_name(rdata, 0)?)?;
    let serial = rdata.get(at..at + 4)?;
    Some(u32::from_be_bytes(serial.try_into().ok()?))
}

/// The offset after a (possibly compressed) name that starts at `at` in `rdata`.
fn skip_name(rdata: &[u8], mut at: usize) -> Option<usize> {
    loop {
        let len = *rdata.get(at)?;
        match len {
            0 => return Some(at + 1),
            l if l & 0xC0 == 0xC0 => return (at + 2 <= rdata.len()).then_some(at + 2),
            l if l & 0xC0 == 0 => at += 1 + usize::from(l),
            _ => return None,
        }
    }
}

/// Writes the reply that holds the zone's SOA alone.
pub fn soa_only(req: &mut Request<'_>, zone: &Zone) {
    let q = req.query;
    let soa = zone.soa();
    let mut w = MessageWriter::reply(&q, req.reply, NOERROR);
    w.set_aa(true);
    let pushed = w.push(
        Section::Answer,
        Owner::Question,
        soa.rtype,
        soa.class,
        soa.ttl,
        soa.rdata,
    );
    debug_assert!(pushed.is_ok(), "an SOA fits any message");
    w.finish();
    req.finalize_reply();
}

/// Sends the zone, or the steps since `client_serial` when the zone's history has them:
/// every message but the last through the connection, the last as the query's reply. A
/// connection that breaks ends the transfer with an error.
pub async fn full(
    req: &mut Request<'_>,
    data: Arc<Option<Zone>>,
    client_serial: Option<u32>,
) -> Status {
    let Some(zone) = data.as_ref() else {
        return Status::rcode(SERVFAIL);
    };
    let steps = client_serial.and_then(|c| zone.deltas_since(c));
    let sent = match steps {
        Some(steps) => {
            let rrs = std::iter::once(zone.soa())
                .chain(steps.iter().flat_map(|d| d.records()))
                .chain(std::iter::once(zone.soa()));
            send(req, rrs).await
        }
        None => {
            send(
                req,
                zone.transfer_records().chain(std::iter::once(zone.soa())),
            )
            .await
        }
    };
    let count = match sent {
        Ok(n) => n,
        Err(status) => return status,
    };
    let name = req.query.qname().to_string();
    let kind = if steps.is_some() { "incremental " } else { "" };
    ringdns_plugin::info!(
        "plugin/transfer: Outgoing {kind}transfer of {count} records of zone \"{}\" to {} for {} SOA serial",
        name.to_ascii_lowercase(),
        req.client.ip(),
        zone.serial()
    );
    Status::written()
}

/// Writes `rrs` as the answer of as many messages as they take; how many were sent.
async fn send<'z>(
    req: &mut Request<'_>,
    rrs: impl Iterator<Item = StoredRecord<'z>>,
) -> Result<usize, Status> {
    let Some(stream) = req.stream() else {
        return Err(Status::error(
            SERVFAIL,
            PluginError::new("transfer", "a transfer needs a TCP connection"),
        ));
    };
    let q = req.query;
    let mut rrs = rrs.peekable();
    let mut msg = Vec::with_capacity(BATCH + 1024);
    let mut count = 0usize;
    loop {
        let mut w = MessageWriter::reply(&q, &mut msg, NOERROR);
        w.set_aa(true);
        while let Some(r) = rrs.peek() {
            if w.count(Section::Answer) > 0 && w.len() + r.owner.len() + 10 + r.rdata.len() > BATCH
            {
                break;
            }
            let owner = Owner::Wire(r.owner);
            if let Err(e) = w.push(Section::Answer, owner, r.rtype, r.class, r.ttl, r.rdata) {
                return Err(Status::error(
                    SERVFAIL,
                    PluginError::new("transfer", e.to_string()),
                ));
            }
            rrs.next();
            count += 1;
        }
        w.finish();
        if rrs.peek().is_none() {
            break;
        }
        if let Err(e) = stream.send(&msg).await {
            return Err(Status::error(
                SERVFAIL,
                PluginError::new("transfer", format!("transfer to {}: {e}", req.client)),
            ));
        }
    }
    req.reply.clear();
    req.reply.extend_from_slice(&msg);
    req.finalize_reply();
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `example.org. IXFR` with `example.org. SOA` of `serial` in authority.
    fn ixfr(serial: u32, extra_answer: bool) -> Vec<u8> {
        let mut m = vec![0, 1, 0, 0, 0, 1, 0, u8::from(extra_answer), 0, 1, 0, 0];
        m.extend_from_slice(b"\x07example\x03org\x00");
        m.extend_from_slice(&[0, 251, 0, 1]);
        if extra_answer {
            m.extend_from_slice(&[0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 1]);
        }
        let mut rdata = vec![0xC0, 12, 0xC0, 12];
        rdata.extend_from_slice(&serial.to_be_bytes());
        rdata.extend_from_slice(&[0; 16]);
        m.extend_from_slice(&[0xC0, 12, 0, 6, 0, 1, 0, 0, 0, 60, 0, rdata.len() as u8]);
        m.extend_from_slice(&rdata);
        m
    }

    #[test]
    fn an_ixfr_gives_its_serial_in_an_authority_soa() {
        assert_eq!(ixfr_serial(&ixfr(2024, false)), Some(2024));
        assert_eq!(ixfr_serial(&ixfr(2024, true)), None, "answers: malformed");
        let mut none = ixfr(1, false);
        none[9] = 0; // NSCOUNT 0: no SOA
        none.truncate(29);
        assert_eq!(ixfr_serial(&none), None);
    }
}
