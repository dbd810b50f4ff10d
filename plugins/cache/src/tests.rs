//! The cache between a query and a stand-in for the rest of the chain, on the server's
//! passes, with the request's time set as the server sets it.

use super::*;
use ringdns_plugin::wire::rtype::A;
use ringdns_plugin::wire::{MessageWriter, Name, Owner, QueryBuilder, Section, records};
use ringdns_plugin::{Proto, Status};
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// Answers every query at once with one A record of TTL 300.
struct Upstream;

impl Handler for Upstream {
    async fn serve(&self, req: &mut Request<'_>) -> Outcome {
        let mut w = MessageWriter::reply(&req.query, req.reply, NOERROR);
        w.push(Section::Answer, Owner::Question, A, 1, 300, &[192, 0, 2, 1])
            .unwrap();
        w.finish();
        req.finalize_reply();
        Ok(Status::written())
    }

    fn is_end(&self) -> bool {
        false
    }

    fn after_batch(&self) {}
}

/// The instance a Corefile's `cache` builds, on a core index of this file's own.
fn cache(text: &str) -> Cache {
    let cf = ringdns_plugin::corefile::parse("Corefile", text, &|n| n == "cache").unwrap();
    let mut block = BlockSetup {
        zones: vec![".".into()],
        ..BlockSetup::default()
    };
    let mut d = Dispenser::new(&cf.blocks[0].directives[0].tokens);
    let shared = Arc::new(Cache::setup(&mut d, &mut block).unwrap());
    let core = CoreInfo {
        index: 301,
        cpu: 0,
        cores: 1,
    };
    Cache::build(&shared, &core).unwrap()
}

/// Serves `packet` as the socket loop serves a query of a batch received at `at`: at once,
/// else its future polled once. The reply's first answer TTL.
fn inline_at(c: &Cache, packet: &[u8], at: Instant) -> u32 {
    let mut reply = Vec::new();
    let client = "192.0.2.7:5353".parse().unwrap();
    let q = Query::parse(packet).unwrap();
    let mut req = Request::new(
        q,
        client,
        client,
        Proto::Udp,
        ".",
        "dns://:53",
        &mut reply,
        false,
    );
    req.set_received(at);
    let status = match c.serve_now(&mut req, &Upstream) {
        Some(s) => s,
        None => {
            let fut = pin!(c.serve(&mut req, &Upstream));
            match fut.poll(&mut Context::from_waker(Waker::noop())) {
                Poll::Ready(Ok(s)) => s,
                other => panic!("{other:?}"),
            }
        }
    };
    assert_eq!(status, Status::written());
    let answer = records(&reply).unwrap().next().unwrap().unwrap();
    answer.ttl(&reply)
}

#[test]
fn ttls_count_down_on_the_requests_time() {
    let c = cache(". {\n cache\n}\n");
    let wire = name_to_wire("a.example.org.").unwrap();
    let p = QueryBuilder::new(Name::from_wire(&wire).unwrap(), A).build();
    let t = Instant::now();
    assert_eq!(
        inline_at(&c, &p, t),
        300,
        "the miss, stored at its batch's time"
    );
    // Ten seconds later by the requests' time, whatever the clock says.
    assert_eq!(inline_at(&c, &p, t + Duration::from_secs(10)), 290);
    assert_eq!(inline_at(&c, &p, t + Duration::from_secs(100)), 200);
}
