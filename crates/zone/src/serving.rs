//! Answering a query from one zone of shared data: the part of *file* that *auto* and
//! *secondary* serve with too (CoreDNS's auto and secondary embed file's `Zone` for the
//! same reason). The caller picks the zone that holds the query name; this module answers
//! from it on the inline pass, and on a deferred pass when a CNAME chain leaves the zone.

use crate::Answered;
use crate::registry::SharedZone;
use ringdns_plugin::metadata::{Metadata, ZONE_WILDCARD};
use ringdns_plugin::wire::rcode::{NOERROR, NXDOMAIN, REFUSED, SERVFAIL};
use ringdns_plugin::wire::{MessageWriter, rtype};
use ringdns_plugin::{
    Fallthrough, Handler, Outcome, Proto, Request, ServeFuture, Status, next_or_failure,
    next_or_failure_now,
};
use std::future::Future;
use std::sync::Arc;

/// What the zone lookup decided, before any I/O.
pub enum Local {
    /// A reply is written (or an rcode chosen): done.
    Status(Status),
    /// Not in the plugin's zones: the next plugin's, or REFUSED when there is none
    /// (CoreDNS's authoritative plugins).
    NotOurs,
    /// NXDOMAIN under `fallthrough`: the next plugin's (SERVFAIL when there is none).
    Next,
    /// The CNAME chain left the zone: the deferred pass looks the target up
    /// ([`crate::external::answer`]) in this zone's data.
    External(Arc<SharedZone>),
}

/// Answers `req` from `data` (the zone that holds its name) as far as the zone alone can:
/// transfers are refused (they are the *transfer* plugin's, which sits before), a zone not
/// loaded yet (or expired) is SERVFAIL, an NXDOMAIN under `fall` goes on.
pub fn local(req: &mut Request<'_>, data: &Arc<SharedZone>, fall: &Fallthrough) -> Local {
    let q = req.query;
    if matches!(q.qtype(), rtype::AXFR | rtype::IXFR) {
        return Local::Status(Status::rcode(REFUSED));
    }
    let guard = data.load();
    let Some(zone) = guard.as_ref() else {
        return Local::Status(Status::rcode(SERVFAIL));
    };
    let meta = req.metadata();
    let mut w = MessageWriter::reply(&q, req.reply, NOERROR);
    let answered = zone.answer(
        q.qname_bytes(),
        q.qtype(),
        q.do_bit(),
        req.proto == Proto::Udp,
        &mut w,
    );
    if let Answered::External { .. } = answered {
        // Published on the deferred pass, which answers again.
        return Local::External(Arc::clone(data));
    }
    publish_wildcard(meta, zone, answered);
    if w.rcode() == NXDOMAIN && fall.through(&q.qname()) {
        req.clear_reply();
        return Local::Next;
    }
    w.finish();
    req.finalize_reply();
    Local::Status(Status::written())
}

/// Publishes the wildcard that synthesised the answer (`*.example.org.`) as
/// [`ZONE_WILDCARD`], as CoreDNS's file does; where no metadata is collected the name is
/// not even looked at.
/// `meta` is the request's ([`Request::metadata`]), taken before its reply is written.
pub(crate) fn publish_wildcard(meta: Option<&Metadata>, zone: &crate::Zone, answered: Answered) {
    if let Some(m) = meta
        && let Some(w) = answered.wildcard()
    {
        m.set(ZONE_WILDCARD, zone.wildcard_name(w));
    }
}

/// [`ringdns_plugin::Serve::serve`] of a plugin that answered [`local`]ly with `local`.
pub fn serve<N: Handler>(
    plugin: &'static str,
    local: Local,
    req: &mut Request<'_>,
    next: &N,
) -> ServeFuture<impl Future<Output = Outcome>, impl Future<Output = Status>> {
    let ready = ServeFuture::ready;
    match local {
        Local::Status(s) => ready(Ok(s)),
        Local::NotOurs if next.is_end() => ready(Ok(Status::rcode(REFUSED))),
        Local::NotOurs | Local::Next => ServeFuture::Next {
            fut: next_or_failure(plugin, next, req),
        },
        Local::External(data) => {
            if !req.can_wait() {
                req.clear_reply();
                return ready(req.defer());
            }
            ServeFuture::Own {
                fut: crate::external::answer(req, data),
            }
        }
    }
}

/// [`ringdns_plugin::Serve::serve_now`] of a plugin that answered [`local`]ly with `local`.
pub fn serve_now<N: Handler>(
    plugin: &'static str,
    local: Local,
    req: &mut Request<'_>,
    next: &N,
) -> Option<Status> {
    match local {
        Local::Status(s) => Some(s),
        Local::NotOurs if next.is_end() => Some(Status::rcode(REFUSED)),
        Local::NotOurs | Local::Next => next_or_failure_now(plugin, next, req),
        Local::External(_) => {
            req.clear_reply();
            None
        }
    }
}

/// NOTIFY for a zone whose data is not transferred in (file, auto): dropped, as CoreDNS's
/// file does, with its log line.
pub fn drop_notify(plugin: &str, req: &Request<'_>, zone: &str) -> Local {
    ringdns_plugin::info!(
        "plugin/{plugin}: Dropping notify from {} for {zone}",
        req.client.ip()
    );
    Local::Status(Status::rcode(NOERROR))
}
