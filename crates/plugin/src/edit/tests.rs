//! A plugin that sets RD in the query through an [`Editor`], in front of answers that come
//! on each of the server's passes: the rest sees the edited query, the client's request
//! keeps its own, and the reply (written by the rest) is the client's.

use super::*;
use crate::corefile::{Dispenser, Error};
use crate::wire::MessageWriter;
use crate::wire::flags::RD;
use crate::{BlockSetup, CoreInfo, End, Link, Plugin, Proto, Serve, Serves};
use std::cell::Cell;
use std::sync::Arc;

/// `example. A IN`, RD clear.
const QUERY: &[u8] = &[
    0x12, 0x34, 0x00, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 7, b'e', b'x', b'a', b'm', b'p', b'l', b'e', 0,
    0, 1, 0, 1,
];

/// Sets RD in every query (`edit` true), or hands it on as it came.
struct SetsRd {
    edit: bool,
    editor: Editor,
}

impl Plugin for SetsRd {
    const NAME: &'static str = "setsrd";
    type Config = bool;
    type Place = Serves;

    fn setup(_d: &mut Dispenser<'_>, _block: &mut BlockSetup) -> Result<bool, Error> {
        Ok(true)
    }
}

/// The edit: RD set in the copy's flags.
fn set_rd() -> impl FnOnce(&mut Vec<u8>) {
    |p| p[2] |= (RD >> 8) as u8
}

impl Serve for SetsRd {
    fn build(edit: &Arc<bool>, _core: &CoreInfo) -> Option<Self> {
        Some(SetsRd {
            edit: **edit,
            editor: Editor::default(),
        })
    }

    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        let edit = self.edit.then(set_rd);
        self.editor.serve(Self::NAME, req, next, edit)
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        let edit = self.edit.then(set_rd);
        self.editor.serve_now(Self::NAME, req, next, edit)
    }
}

/// The rest of the chain: answers on the first pass it may, noting whether it saw RD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answers {
    AtOnce,
    Inline,
    WhenItMayWait,
}

thread_local! {
    static SAW_RD: Cell<Option<bool>> = const { Cell::new(None) };
}

impl Plugin for Answers {
    const NAME: &'static str = "answers";
    type Config = Answers;
    type Place = Serves;

    fn setup(_d: &mut Dispenser<'_>, _block: &mut BlockSetup) -> Result<Answers, Error> {
        Ok(Answers::AtOnce)
    }
}

impl Serve for Answers {
    fn build(config: &Arc<Answers>, _core: &CoreInfo) -> Option<Self> {
        Some(**config)
    }

    async fn serve<N: Handler>(&self, req: &mut Request<'_>, _next: &N) -> Outcome {
        if *self == Answers::WhenItMayWait && !req.can_wait() {
            return req.defer();
        }
        Ok(answer(req))
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, _next: &N) -> Option<Status> {
        (*self == Answers::AtOnce).then(|| answer(req))
    }
}

fn answer(req: &mut Request<'_>) -> Status {
    SAW_RD.with(|s| s.set(Some(req.query.rd())));
    MessageWriter::reply(&req.query, req.reply, 0).finish();
    req.finalize_reply();
    Status::written()
}

const CORE: CoreInfo = CoreInfo {
    index: 0,
    cpu: 0,
    cores: 1,
};

fn poll_once(fut: impl Future<Output = Outcome>) -> Poll<Outcome> {
    pin!(fut).poll(&mut Context::from_waker(Waker::noop()))
}

/// Serves the query as the server does: at once, else inline, else deferred. The reply,
/// whether the rest saw RD, and the client's request's writer and finalized mark.
fn served(edit: bool, answers: Answers) -> (Vec<u8>, bool, Option<&'static str>, bool) {
    let chain = Link {
        plugin: SetsRd::build(&Arc::new(edit), &CORE),
        rest: Link {
            plugin: Answers::build(&Arc::new(answers), &CORE),
            rest: End,
        },
    };
    SAW_RD.with(|s| s.set(None));
    let at = "127.0.0.1:53".parse().unwrap();
    let mut reply = Vec::new();
    let q = Query::parse(QUERY).unwrap();
    let mut req = Request::new(q, at, at, Proto::Udp, ".", "dns://:53", &mut reply, false);
    let done = match chain.serve_now(&mut req) {
        Some(_) => true,
        None => match poll_once(chain.serve(&mut req)) {
            Poll::Ready(Ok(_)) => true,
            Poll::Ready(Err(_)) => {
                assert!(req.reply.is_empty(), "nothing written before the deferral");
                false
            }
            Poll::Pending => panic!("pending inline"),
        },
    };
    let (writer, finalized) = if done {
        assert!(!req.query.rd(), "the client's query as it came");
        (req.writer(), req.is_finalized())
    } else {
        let mut req = Request::new(q, at, at, Proto::Udp, ".", "dns://:53", &mut reply, true);
        let Poll::Ready(Ok(_)) = poll_once(chain.serve(&mut req)) else {
            panic!("the deferred pass serves");
        };
        assert!(!req.query.rd());
        (req.writer(), req.is_finalized())
    };
    let saw = SAW_RD.with(Cell::get).expect("the rest answered");
    (reply, saw, writer, finalized)
}

#[test]
fn the_rest_sees_the_edited_query_on_every_pass_and_writes_the_clients_reply() {
    for answers in [Answers::AtOnce, Answers::Inline, Answers::WhenItMayWait] {
        let (reply, saw, writer, finalized) = served(true, answers);
        assert!(saw, "{answers:?}: RD set for the rest");
        assert_eq!(
            reply[2] & 0x01,
            0x01,
            "{answers:?}: the reply echoes the edited RD"
        );
        assert_eq!(&reply[..2], &QUERY[..2], "{answers:?}: the client's ID");
        assert_eq!(writer, Some("answers"), "{answers:?}: the rest wrote it");
        assert!(finalized, "{answers:?}");
    }
}

#[test]
fn without_an_edit_the_query_goes_on_as_it_came() {
    for answers in [Answers::AtOnce, Answers::Inline, Answers::WhenItMayWait] {
        let (reply, saw, writer, _) = served(false, answers);
        assert!(!saw, "{answers:?}");
        assert_eq!(reply[2] & 0x01, 0, "{answers:?}");
        assert_eq!(writer, Some("answers"));
    }
}
