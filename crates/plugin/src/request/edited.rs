//! A request for an edited query: what a plugin that changes the query before the rest of
//! the chain (header's `query` rules, bufsize) hands on in place of the client's. The rest
//! sees the edited query, and writes into the client's reply buffer; what it leaves on the
//! request (who wrote the reply, whether it was finalized, a refresh asked for, the times it
//! read) is carried back onto the client's request afterwards.

use super::Request;
use crate::wire::Query;
use std::cell::Cell;

/// What the rest of the chain left on a request for an edited query, to carry back onto
/// the client's ([`Request::carry`], [`Request::adopt`]).
#[derive(Debug, Clone, Copy)]
pub struct Carried {
    writer: Option<&'static str>,
    finalized: bool,
    refresh_requested: bool,
    received: Option<std::time::Instant>,
    pass: Option<Option<std::time::Instant>>,
}

impl<'a> Request<'a> {
    /// A request for `query` in place of this one's: the same client, listener, zone,
    /// transport, pass, times, lookup, connection and refresh mark, writing into this
    /// request's reply buffer (emptied). Once the rest of the chain served it, take what it
    /// left with [`Request::carry`] and give that to this request with [`Request::adopt`].
    pub fn with_query<'s>(&'s mut self, query: Query<'s>) -> Request<'s> {
        self.reply.clear();
        Request {
            query,
            client: self.client,
            local: self.local,
            proto: self.proto,
            zone: self.zone,
            server: self.server,
            reply: &mut *self.reply,
            can_wait: self.can_wait,
            finalized: false,
            refresh: self.refresh,
            refresh_requested: false,
            writer: None,
            received: Cell::new(self.received.get()),
            pass: self.pass.as_ref().map(|p| Cell::new(p.get())),
            lookup: self.lookup,
            stream: self.stream,
            meta: self.meta,
        }
    }

    /// A request for the same query carrying `meta` as its metadata, for the `metadata`
    /// plugin to hand the rest of the chain; like [`Request::with_query`] otherwise.
    pub fn with_metadata<'s>(&'s mut self, meta: &'s crate::metadata::Metadata) -> Request<'s> {
        let query = self.query;
        let mut sub = self.with_query(query);
        sub.meta = Some(meta);
        sub
    }

    /// What the plugins that served this request left on it, for [`Request::adopt`].
    pub fn carry(&self) -> Carried {
        Carried {
            writer: self.writer,
            finalized: self.finalized,
            refresh_requested: self.refresh_requested,
            received: self.received.get(),
            pass: self.pass.as_ref().map(Cell::get),
        }
    }

    /// Takes on what the rest of the chain left on the request for an edited query: its
    /// reply (already in this request's buffer) counts as written by the plugin that wrote
    /// it and as finalized if it was, a refresh it asked for is asked for, and the times it
    /// read are this request's.
    pub fn adopt(&mut self, c: Carried) {
        if self.writer.is_none() {
            self.writer = c.writer;
        }
        self.finalized = c.finalized;
        self.refresh_requested |= c.refresh_requested;
        if let Some(at) = c.received {
            self.received.set(Some(at));
        }
        if let (Some(p), Some(Some(at))) = (&self.pass, c.pass) {
            p.set(Some(at));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::wire::Query;
    use crate::{Proto, Request};

    /// `example. A IN`, RD clear.
    const QUERY: &[u8] = &[
        0x12, 0x34, 0x00, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 7, b'e', b'x', b'a', b'm', b'p', b'l',
        b'e', 0, 0, 1, 0, 1,
    ];

    #[test]
    fn the_edited_querys_request_writes_the_clients_reply_and_hands_back_what_it_left() {
        let at = "127.0.0.1:53".parse().unwrap();
        let mut reply = b"stale".to_vec();
        let mut req = Request::new(
            Query::parse(QUERY).unwrap(),
            at,
            at,
            Proto::Tcp,
            ".",
            "dns://:53",
            &mut reply,
            true,
        );
        req.start_later_pass();
        let mut edited = QUERY.to_vec();
        edited[2] |= 0x01; // RD
        let q = Query::parse(&edited).unwrap();
        let mut sub = req.with_query(q);
        assert!(sub.query.rd() && sub.can_wait() && sub.reply.is_empty());
        let (received, now) = (sub.received(), sub.now());
        crate::wire::MessageWriter::reply(&sub.query, sub.reply, 0).finish();
        sub.finalize_reply();
        sub.note_writer("inner", &crate::Status::written());
        sub.request_refresh();
        let carried = sub.carry();
        req.adopt(carried);
        assert!(!req.query.rd(), "the client's query is as it came");
        assert_eq!(req.writer(), Some("inner"));
        assert!(req.is_finalized() && req.refresh_requested());
        assert_eq!(
            (req.received(), req.now()),
            (received, now),
            "no clock read again"
        );
        assert_eq!(
            reply[2] & 0x01,
            0x01,
            "the reply echoes the edited query's RD"
        );
    }
}
