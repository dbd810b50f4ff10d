//! tsig: TSIG (RFC 8945) for a block's zones, as CoreDNS's `plugin/tsig`: verifies signed
//! requests (BADKEY, BADSIG, BADTIME answered as RFC 8945 §5.2 says), refuses unsigned
//! queries of the required types, and signs the replies to signed requests in
//! [`Serve::amend`], after the rest of the chain wrote and finalized them, so the MAC covers
//! the bytes that are sent.

#![forbid(unsafe_code)]

mod mac;
mod rr;
mod setup;
mod xfr;

use mac::Alg;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::edit::Editor;
use ringdns_plugin::wire::rcode::{FORMERR, NOERROR, NOTAUTH, REFUSED, SERVFAIL};
use ringdns_plugin::wire::{Header, HeaderMut, MessageWriter, Query, flags};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, Request, Serve, ServeFuture, Serves, Status,
    client_write, next_or_failure,
};
use rr::{Found, Signing, Tsig as Rr};
use setup::{Config, Key, NAME};
use std::future::Future;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// RFC 8945 TSIG errors.
const BADSIG: u16 = 16;
const BADKEY: u16 = 17;
const BADTIME: u16 = 18;

/// The plugin's instance on one core.
pub struct Tsig {
    config: Arc<Config>,
    /// Hands the rest of the chain the verified query without its TSIG (as CoreDNS strips
    /// it), in the core's scratch buffer.
    editor: Editor,
}

/// What a request is to this plugin.
enum Check<'c> {
    /// Not this plugin's: unsigned and not required, or outside its zones.
    Skip,
    /// Unsigned, of a required type or opcode: REFUSED.
    Refuse,
    /// A misplaced TSIG or a MAC size RFC 8945 §5.2.2.1 forbids: FORMERR.
    FormErr,
    /// Verification failed with this TSIG error (the key and algorithm, for BADTIME's
    /// signed reply).
    Fail(Rr, u16, Option<(&'c Key, Alg)>),
    /// Verified, under this key and algorithm.
    Pass(Rr, &'c Key, Alg),
}

/// What serving does with a request.
// Stack-only and short-lived: boxing the TSIG would allocate per signed query.
#[allow(clippy::large_enum_variant)]
enum Decision<'c> {
    /// Answered here (REFUSED, FORMERR, NOTAUTH).
    Answer(Status),
    /// Handed on, without its TSIG (which starts at this offset) when it was verified.
    Next(Option<usize>),
    /// A verified request on a pass that streams (a zone transfer): handed on with a
    /// connection that signs every message.
    Stream(Rr, &'c Key, Alg),
}

/// The server's wall-clock time in seconds since the epoch (TSIG's Time Signed). Read only
/// for signed requests: the request's `received()` is an `Instant`, which has no epoch.
pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Tsig {
    /// Classifies the request; `with_time` adds the time check (amend leaves it out, so
    /// that a second clock reading cannot change serve's verdict). An unsigned query in a
    /// block without `require` costs the header's counts and nothing else.
    fn check(&self, req: &Request<'_>, with_time: bool) -> Check<'_> {
        let q = &req.query;
        let c = &*self.config;
        let p = q.packet();
        let found = rr::find(p, q.opt().is_some());
        if matches!(found, Found::None) && !c.required(q.qtype(), q.opcode()) {
            return Check::Skip;
        }
        if !c.zones.iter().any(|z| q.qname().is_subdomain_of(z)) {
            return Check::Skip;
        }
        let t = match found {
            Found::None => return Check::Refuse,
            Found::Bad => return Check::FormErr,
            Found::Tsig(t) => t,
        };
        // RFC 8945 §5.2.1: a key this server does not have, or an algorithm it does not
        // compute or the key is not for, is BADKEY.
        let known = t.algorithm.and_then(|alg| {
            c.key(t.key.as_bytes())
                .filter(|k| k.alg.is_none_or(|a| a == alg))
                .map(|k| (k, alg))
        });
        let Some((key, alg)) = known else {
            return Check::Fail(t, BADKEY, None);
        };
        if !alg.size_ok(t.mac.1) {
            return Check::FormErr;
        }
        let hdr = rr::request_header(p, &t);
        let mut vars = [0u8; rr::VARS_MAX];
        let other = &p[t.other.0..t.other.0 + t.other.1];
        let vn = rr::variables(
            &mut vars,
            t.key.as_bytes(),
            t.alg.as_bytes(),
            t.time,
            t.fudge,
            t.error,
            other.len(),
            false,
        );
        let mac = &p[t.mac.0..t.mac.0 + t.mac.1];
        let parts: [&[u8]; 4] = [&hdr, &p[12..t.start], &vars[..vn], other];
        if !alg.verify(&key.secret, &parts, mac) {
            return Check::Fail(t, BADSIG, None);
        }
        if with_time && unix_now().abs_diff(t.time) > u64::from(t.fudge) {
            return Check::Fail(t, BADTIME, Some((key, alg)));
        }
        Check::Pass(t, key, alg)
    }

    /// The decision before the rest of the chain. `streams`: this pass may hand the rest
    /// a signing connection (a deferred TCP pass with one).
    fn decide(&self, req: &mut Request<'_>, streams: bool) -> Decision<'_> {
        match self.check(req, true) {
            Check::Skip => Decision::Next(None),
            Check::Refuse => Decision::Answer(Status::rcode(REFUSED)),
            Check::FormErr => Decision::Answer(Status::rcode(FORMERR)),
            Check::Fail(t, error, key) => Decision::Answer(error_reply(req, &t, error, key)),
            Check::Pass(t, key, alg) if streams && req.stream().is_some() => {
                Decision::Stream(t, key, alg)
            }
            Check::Pass(t, ..) => Decision::Next(Some(t.start)),
        }
    }
}

/// NOTAUTH with the TSIG error (RFC 8945 §5.2, §5.3.2): unsigned (MAC size 0) for BADKEY
/// and BADSIG; for BADTIME signed with the request's key, the request's Time Signed kept and
/// the server's time in Other Data (§5.2.3).
fn error_reply(req: &mut Request<'_>, t: &Rr, error: u16, key: Option<(&Key, Alg)>) -> Status {
    MessageWriter::reply(&req.query, req.reply, NOTAUTH).finish();
    req.finalize_reply();
    let now = unix_now();
    let other = now.to_be_bytes();
    let p = req.query.packet();
    let s = Signing {
        key: t.key.as_bytes(),
        alg: t.alg.as_bytes(),
        secret: key.map(|(k, alg)| (alg, &k.secret[..])),
        prior_mac: if key.is_some() {
            &p[t.mac.0..t.mac.0 + t.mac.1]
        } else {
            &[]
        },
        time: if key.is_some() { t.time } else { now },
        fudge: t.fudge,
        error,
        other: if key.is_some() { &other[2..] } else { &[] },
        subsequent: false,
    };
    s.append(req.reply);
    Status::written()
}

/// The query without its TSIG, for the rest of the chain.
fn stripped(at: Option<usize>) -> Option<impl FnOnce(&mut Vec<u8>)> {
    at.map(|at| move |p: &mut Vec<u8>| rr::strip(p, at))
}

/// A verified request served with a connection that signs (a zone transfer): the rest
/// gets the query without its TSIG and a [`xfr::SigningStream`]; the last message, in the
/// reply, is signed here as the stream's next one when the stream sent any (else `amend`
/// signs the reply as any other).
async fn serve_streamed<N: Handler>(
    (t, key, alg): (Rr, &Key, Alg),
    req: &mut Request<'_>,
    next: &N,
) -> Status {
    let Some(conn) = req.stream() else {
        return Status::rcode(SERVFAIL);
    };
    let signer = xfr::SigningStream::new(conn, (key, alg), t, req.query.packet());
    let mut packet = req.query.packet().to_vec();
    rr::strip(&mut packet, t.start);
    let Ok(q) = Query::parse(&packet) else {
        return Status::rcode(FORMERR);
    };
    let mut sub = req.with_query(q);
    sub.set_stream(&signer);
    let outcome = next_or_failure(NAME, next, &mut sub).await;
    let carried = sub.carry();
    req.adopt(carried);
    let status = outcome.unwrap_or_else(|_| Status::deferred_on_wait(NAME));
    if signer.sent() > 0 && client_write(status.rcode) && !req.reply.is_empty() {
        if !req.is_finalized() {
            req.finalize_reply();
        }
        signer.sign(req.reply);
    }
    status
}

impl Plugin for Tsig {
    const NAME: &'static str = NAME;
    type Config = Config;
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Config, Error> {
        setup::parse(d, block)
    }
}

impl Serve for Tsig {
    fn build(config: &Arc<Config>, _core: &CoreInfo) -> Option<Self> {
        Some(Tsig {
            config: config.clone(),
            editor: Editor::default(),
        })
    }

    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        match self.decide(req, req.can_wait()) {
            Decision::Answer(s) => ServeFuture::ready(Ok(s)),
            Decision::Next(at) => ServeFuture::Next {
                fut: self.editor.serve(NAME, req, next, stripped(at)),
            },
            Decision::Stream(t, key, alg) => ServeFuture::Own {
                fut: Box::pin(serve_streamed((t, key, alg), req, next)),
            },
        }
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        match self.decide(req, false) {
            Decision::Answer(s) => Some(s),
            Decision::Next(at) => self.editor.serve_now(NAME, req, next, stripped(at)),
            Decision::Stream(..) => None,
        }
    }

    /// Signs the reply to a verified request: the rcode reply written if the rest left it
    /// to the server (CoreDNS writes it too, signed), finalized (OPT, truncation to the
    /// client's size), then the TSIG appended after the OPT, so the MAC covers the bytes
    /// that are sent. A reply that the TSIG would push past the client's size becomes the
    /// question alone with TC set (RFC 8945 §5.3).
    fn amend(&self, req: &mut Request<'_>, status: Status) -> Status {
        let Check::Pass(t, key, alg) = self.check(req, false) else {
            return status;
        };
        let mut status = status;
        if !client_write(status.rcode) {
            MessageWriter::reply(&req.query, req.reply, status.rcode).finish();
            req.finalize_reply();
            status = Status {
                rcode: NOERROR,
                ..status
            };
        } else if req.reply.is_empty() || rr::signed(req.reply) {
            // Nothing to send (the server sends nothing either), or signed already (the
            // last message of a signed transfer).
            return status;
        }
        if !req.is_finalized() {
            req.finalize_reply();
        }
        let p = req.query.packet();
        let s = Signing {
            key: t.key.as_bytes(),
            alg: t.alg.as_bytes(),
            secret: Some((alg, &key.secret)),
            prior_mac: &p[t.mac.0..t.mac.0 + t.mac.1],
            time: unix_now(),
            fudge: t.fudge,
            error: 0,
            other: &[],
            subsequent: false,
        };
        if req.reply.len() + s.record_len() > req.max_reply_size() {
            let aa = Header::of(req.reply).is_some_and(|h| h.aa());
            MessageWriter::reply(&req.query, req.reply, NOERROR).finish();
            let mut h = HeaderMut::new(req.reply);
            h.set_flag(flags::TC, true);
            h.set_flag(flags::AA, aa);
            req.finalize_reply();
        }
        s.append(req.reply);
        status
    }
}

ringdns_plugin::export!(Tsig);

#[cfg(test)]
mod tests;
