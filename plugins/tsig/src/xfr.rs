//! Signed zone transfers (RFC 8945 §5.3.1): the rest of the chain streams its messages
//! through a [`SigningStream`] that signs each one before it goes out, the first with the
//! request's MAC as prior MAC and the full TSIG variables, each later one with the previous
//! message's MAC and the TSIG timers only. Every message is signed (the RFC allows gaps of
//! up to 99; none is simpler and what dig and kdig check best). The uncommon path: each
//! streamed message is copied once, to append its TSIG.

use crate::mac::{Alg, MAX_MAC};
use crate::rr::{Signing, Tsig as Rr};
use crate::setup::Key;
use crate::unix_now;
use ringdns_plugin::{ReplyStream, SendFuture};
use std::cell::{Cell, RefCell};

/// The connection of a signed transfer: signs, then hands each message to the real one.
pub struct SigningStream<'a> {
    inner: &'a (dyn ReplyStream + 'a),
    key: &'a Key,
    alg: Alg,
    tsig: Rr,
    /// The MAC of the last message signed (at first the request's).
    prior: RefCell<([u8; MAX_MAC], usize)>,
    /// How many messages were signed.
    signed: Cell<usize>,
}

impl<'a> SigningStream<'a> {
    /// A stream for the transfer the verified request `packet` (its TSIG `tsig`, under `key`
    /// with `alg`) asked for, over `inner`.
    pub fn new(
        inner: &'a (dyn ReplyStream + 'a),
        (key, alg): (&'a Key, Alg),
        tsig: Rr,
        packet: &[u8],
    ) -> Self {
        let mut prior = [0u8; MAX_MAC];
        let mac = &packet[tsig.mac.0..tsig.mac.0 + tsig.mac.1];
        prior[..mac.len()].copy_from_slice(mac);
        SigningStream {
            inner,
            key,
            alg,
            tsig,
            prior: RefCell::new((prior, mac.len())),
            signed: Cell::new(0),
        }
    }

    /// How many messages went out signed through [`ReplyStream::send`] so far.
    pub fn sent(&self) -> usize {
        self.signed.get()
    }

    /// Signs the next message of the transfer (`msg`, finished, no TSIG yet) in place.
    pub fn sign(&self, msg: &mut Vec<u8>) {
        let mut prior = self.prior.borrow_mut();
        let s = Signing {
            key: self.tsig.key.as_bytes(),
            alg: self.tsig.alg.as_bytes(),
            secret: Some((self.alg, &self.key.secret)),
            prior_mac: &prior.0[..prior.1],
            time: unix_now(),
            fudge: self.tsig.fudge,
            error: 0,
            other: &[],
            subsequent: self.signed.get() > 0,
        };
        let mac = s.append(msg);
        *prior = mac;
        self.signed.set(self.signed.get() + 1);
    }
}

impl ReplyStream for SigningStream<'_> {
    fn send<'s>(&'s self, message: &'s [u8]) -> SendFuture<'s> {
        let mut msg = Vec::with_capacity(message.len() + 600);
        msg.extend_from_slice(message);
        self.sign(&mut msg);
        Box::pin(async move { self.inner.send(&msg).await })
    }
}
