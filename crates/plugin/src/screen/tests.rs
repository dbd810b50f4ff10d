//! A screening plugin in front of the rest of the chain, served as the server serves a
//! query: it answers what it takes on every pass, hands the rest on untouched, and fails as
//! `NextOrFailure` when nothing follows it.

use super::*;
use crate::corefile::{Dispenser, Error};
use crate::wire::rcode::{NOERROR, SERVFAIL};
use crate::wire::{Header, MessageWriter, Query};
use crate::{BlockSetup, End, Link, PluginError, Proto, Serve, Serves};
use std::cell::Cell;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// `example. A IN`.
const QUERY_A: &[u8] = &[
    0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 7, b'e', b'x', b'a', b'm', b'p', b'l', b'e', 0,
    0, 1, 0, 1,
];

/// `example. TXT IN`.
const QUERY_TXT: &[u8] = &[
    0x12, 0x35, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 7, b'e', b'x', b'a', b'm', b'p', b'l', b'e', 0,
    0, 16, 0, 1,
];

/// Answers TXT queries with an empty NOERROR reply and counts how often it is asked.
#[derive(Default)]
struct Txt {
    asked: Cell<usize>,
}

impl Plugin for Txt {
    const NAME: &'static str = "txt";
    type Config = ();
    type Place = Screens;

    fn setup(_d: &mut Dispenser<'_>, _block: &mut BlockSetup) -> Result<(), Error> {
        Ok(())
    }
}

impl Screen for Txt {
    fn build(_config: &Arc<()>, _core: &CoreInfo) -> Option<Self> {
        Some(Txt::default())
    }

    fn screen(&self, req: &mut Request<'_>) -> Option<Status> {
        self.asked.set(self.asked.get() + 1);
        if req.query.qtype() != 16 {
            return None;
        }
        MessageWriter::reply(&req.query, req.reply, NOERROR).finish();
        Some(Status::written())
    }
}

/// The rest of the chain: answers with rcode 9 (NOTAUTH, which the server sends as
/// written) in `serve` once it may wait, never at once.
struct Later;

impl Plugin for Later {
    const NAME: &'static str = "later";
    type Config = ();
    type Place = Serves;

    fn setup(_d: &mut Dispenser<'_>, _block: &mut BlockSetup) -> Result<(), Error> {
        Ok(())
    }
}

impl Serve for Later {
    fn build(_config: &Arc<()>, _core: &CoreInfo) -> Option<Self> {
        Some(Later)
    }

    async fn serve<N: Handler>(&self, req: &mut Request<'_>, _next: &N) -> Outcome {
        if !req.can_wait() {
            return req.defer();
        }
        MessageWriter::reply(&req.query, req.reply, 9).finish();
        Ok(Status::rcode(9))
    }
}

const CORE: CoreInfo = CoreInfo {
    index: 0,
    cpu: 0,
    cores: 1,
};

fn chain() -> ScreenLink<Txt, Link<Later, End>> {
    Screens::link(Some(&Arc::new(())), &CORE, || Link {
        plugin: Later::build(&Arc::new(()), &CORE),
        rest: End,
    })
}

fn request<'a>(packet: &'a [u8], reply: &'a mut Vec<u8>, can_wait: bool) -> Request<'a> {
    let at = "127.0.0.1:53".parse().unwrap();
    let q = Query::parse(packet).unwrap();
    Request::new(q, at, at, Proto::Udp, ".", "dns://:53", reply, can_wait)
}

fn poll_once(fut: impl Future<Output = Outcome>) -> Poll<Outcome> {
    pin!(fut).poll(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn a_query_it_takes_is_answered_at_once_and_inline_by_it() {
    let c = chain();
    let mut reply = Vec::new();
    let mut req = request(QUERY_TXT, &mut reply, false);
    assert_eq!(c.serve_now(&mut req), Some(Status::written()));
    assert_eq!(req.writer(), Some("txt"));
    let mut reply = Vec::new();
    let mut req = request(QUERY_TXT, &mut reply, false);
    assert_eq!(
        poll_once(c.serve(&mut req)),
        Poll::Ready(Ok(Status::written()))
    );
    assert_eq!(req.writer(), Some("txt"));
    assert_eq!(Header::of(&reply).unwrap().id(), 0x1235);
}

#[test]
fn a_query_it_does_not_take_goes_through_every_pass_to_the_rest() {
    let c = chain();
    let mut reply = Vec::new();
    let mut req = request(QUERY_A, &mut reply, false);
    assert_eq!(
        c.serve_now(&mut req),
        None,
        "the rest cannot answer at once"
    );
    assert_eq!(
        poll_once(c.serve(&mut req)),
        Poll::Ready(Err(crate::Deferred(())))
    );
    assert!(reply.is_empty(), "nothing written before the deferral");
    let mut reply = Vec::new();
    let mut req = request(QUERY_A, &mut reply, true);
    assert_eq!(
        poll_once(c.serve(&mut req)),
        Poll::Ready(Ok(Status::rcode(9)))
    );
    assert_eq!(req.writer(), Some("later"));
    assert_eq!(
        c.plugin.as_ref().unwrap().asked.get(),
        3,
        "asked on each pass"
    );
}

#[test]
fn with_nothing_after_it_a_query_it_does_not_take_fails_in_its_name() {
    let c: ScreenLink<Txt, End> = Screens::link(Some(&Arc::new(())), &CORE, || End);
    let failed = Status::error(SERVFAIL, PluginError::new("txt", "no next plugin found"));
    let mut reply = Vec::new();
    let mut req = request(QUERY_A, &mut reply, false);
    assert_eq!(c.serve_now(&mut req), Some(failed.clone_status()));
    assert_eq!(poll_once(c.serve(&mut req)), Poll::Ready(Ok(failed)));
    assert!(!c.is_end());
}

#[test]
fn an_empty_slot_is_the_rest_of_the_chain() {
    let c: ScreenLink<Txt, Link<Later, End>> = Screens::link(None, &CORE, || Link {
        plugin: None,
        rest: End,
    });
    assert!(c.is_end());
    let mut names = Vec::new();
    c.plugin_names(&mut names);
    assert!(names.is_empty());
    let mut reply = Vec::new();
    let mut req = request(QUERY_TXT, &mut reply, false);
    assert_eq!(
        c.serve_now(&mut req),
        Some(Status::rcode(SERVFAIL)),
        "End's"
    );
    let mut names = Vec::new();
    chain().plugin_names(&mut names);
    assert_eq!(names, ["txt", "later"]);
}

/// `Status` is not `Clone` (its error is owned); the tests compare two of the same.
trait CloneStatus {
    fn clone_status(&self) -> Status;
}

impl CloneStatus for Status {
    fn clone_status(&self) -> Status {
        Status {
            rcode: self.rcode,
            error: self.error.clone(),
        }
    }
}
