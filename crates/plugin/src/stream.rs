//! Replies of more than one message: a zone transfer (RFC 5936 §2.2) answers one query with
//! a stream of messages on its TCP connection. The runtime gives deferred passes over TCP
//! a [`ReplyStream`] ([`crate::Request::stream`]); a plugin sends every message but the
//! last through it and writes the last into `req.reply` as for any query, so the outer
//! plugins (log, metrics) see the transfer end as one reply.

use std::future::Future;
use std::pin::Pin;

/// What [`ReplyStream::send`] returns: done when the message is written to the socket, or
/// the error that closed it. Boxed: streaming is the uncommon path (transfers), and the box
/// keeps the chain's future from growing for every query.
pub type SendFuture<'a> = Pin<Box<dyn Future<Output = std::io::Result<()>> + 'a>>;

/// The connection a deferred TCP query came on, for messages sent ahead of its reply.
pub trait ReplyStream {
    /// Writes `message` (one whole DNS message) to the client as its own TCP frame, now,
    /// ahead of the query's reply. Messages of other queries on the connection may come
    /// between two sends (RFC 5936 §4.1 lets a client match them by ID).
    fn send<'a>(&'a self, message: &'a [u8]) -> SendFuture<'a>;
}
