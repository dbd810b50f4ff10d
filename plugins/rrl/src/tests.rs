//! The plugin between a query and a stand-in for the rest of the chain: what it lets
//! through, drops and slips, on both paths (`serve_now` and `serve`), with the clock held
//! still by a batch time. Each test counts on a core index of its own (the counters are
//! process-wide, one per core).

use super::*;
use ringdns_plugin::metrics::Sample;
use ringdns_plugin::wire::rcode::{NXDOMAIN, SERVFAIL};
use ringdns_plugin::wire::rtype::{A, MX, NS, SOA, TXT};
use ringdns_plugin::wire::{MessageWriter, Name, Owner, Query, QueryBuilder, Section};
use std::cell::Cell;
use std::net::SocketAddr;

thread_local! {
    /// The time the requests of a test are served at while it holds a [`BatchTime`].
    static HELD: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Holds the clock still for the requests made while it lives, as the socket loop's batch
/// time does for the queries of one batch (the requests carry it: `Request::set_received`).
struct BatchTime;

impl BatchTime {
    fn start() -> Self {
        HELD.with(|h| h.set(Some(Instant::now())));
        BatchTime
    }
}

impl Drop for BatchTime {
    fn drop(&mut self) {
        HELD.with(|h| h.set(None));
    }
}

/// A request for `p` from `client`, at the held time when a test holds one.
fn request<'a>(
    p: &'a [u8],
    client: SocketAddr,
    proto: Proto,
    reply: &'a mut Vec<u8>,
    can_wait: bool,
) -> Request<'a> {
    let mut req = Request::new(
        Query::parse(p).unwrap(),
        client,
        client,
        proto,
        ".",
        "dns://:53",
        reply,
        can_wait,
    );
    if let Some(at) = HELD.with(Cell::get) {
        req.set_received(at);
    }
    req
}

/// Stands in for the rest of the chain, answering by query type: A an answer, TXT
/// NXDOMAIN (SOA of example.org in authority), NS a referral to sub.example.org, MX a
/// SERVFAIL returned for the server to write. Counts the queries it sees.
struct Rest {
    at_once: bool,
    seen: Cell<usize>,
}

impl Rest {
    fn new() -> Self {
        Rest {
            at_once: true,
            seen: Cell::new(0),
        }
    }

    fn answer(&self, req: &mut Request<'_>) -> Status {
        self.seen.set(self.seen.get() + 1);
        let qtype = req.query.qtype();
        if qtype == MX {
            return Status::rcode(SERVFAIL);
        }
        let rcode = if qtype == TXT { NXDOMAIN } else { NOERROR };
        let mut w = MessageWriter::reply(&req.query, req.reply, rcode);
        match qtype {
            A => w.push(Section::Answer, Owner::Question, A, 1, 60, &[192, 0, 2, 1]),
            TXT => w.push(
                Section::Authority,
                Owner::Wire(b"\x07example\x03org\x00"),
                SOA,
                1,
                60,
                &[0; 22],
            ),
            _ => w.push(
                Section::Authority,
                Owner::Wire(b"\x03sub\x07example\x03org\x00"),
                NS,
                1,
                60,
                b"\x02ns\x03sub\x07example\x03org\x00",
            ),
        }
        .unwrap();
        w.push(
            Section::Additional,
            Owner::Question,
            A,
            1,
            60,
            &[192, 0, 2, 9],
        )
        .unwrap();
        w.finish();
        req.finalize_reply();
        Status::written()
    }
}

impl Handler for Rest {
    async fn serve(&self, req: &mut Request<'_>) -> Outcome {
        Ok(self.answer(req))
    }

    fn serve_now(&self, req: &mut Request<'_>) -> Option<Status> {
        self.at_once.then(|| self.answer(req))
    }

    fn is_end(&self) -> bool {
        false
    }

    fn after_batch(&self) {}
}

/// The instance a Corefile's `rrl` builds on core `index` of `cores`.
fn rrl(text: &str, index: usize, cores: usize) -> Rrl {
    let cf = ringdns_plugin::corefile::parse("Corefile", text, &|n| n == "rrl").unwrap();
    let dir = &cf.blocks[0].directives[0];
    let mut block = BlockSetup {
        zones: vec![".".into()],
        ..BlockSetup::default()
    };
    let mut d = Dispenser::new(&dir.tokens);
    let shared = Arc::new(Rrl::setup(&mut d, &mut block).unwrap());
    let core = CoreInfo {
        index,
        cpu: 0,
        cores,
    };
    Rrl::build(&shared, &core).unwrap()
}

fn packet(name: &str, qtype: u16) -> Vec<u8> {
    let wire = name_to_wire(name).unwrap();
    QueryBuilder::new(Name::from_wire(&wire).unwrap(), qtype)
        .id(0xabcd)
        .build()
}

/// What became of one query.
#[derive(Debug, PartialEq, Eq)]
enum Fate {
    Sent,
    Slipped,
    Dropped,
    /// The server writes the rcode.
    Server(u8),
}

/// Serves one query through rrl and `rest` (at once when `rest` can), from `client`.
fn ask(r: &Rrl, rest: &Rest, name: &str, qtype: u16, client: &str, proto: Proto) -> Fate {
    let p = packet(name, qtype);
    let mut reply = Vec::new();
    let client = client.parse().unwrap();
    let mut req = request(&p, client, proto, &mut reply, true);
    let status = match r.serve_now(&mut req, rest) {
        Some(s) => s,
        None => futures_lite::future::block_on(r.serve(&mut req, rest)).expect("not deferred"),
    };
    if !client_write(status.rcode) {
        return Fate::Server(status.rcode);
    }
    if reply.is_empty() {
        assert!(status.error.is_some(), "a drop says why");
        return Fate::Dropped;
    }
    if reply[2] & 0x02 != 0 {
        assert_eq!(&reply[6..12], &[0; 6], "a slip has empty sections");
        assert_eq!(&reply[12..], &p[12..], "and the question");
        assert_eq!(&reply[..2], &p[..2], "and the query's ID");
        return Fate::Slipped;
    }
    Fate::Sent
}

/// `n` queries of one kind from one client, tallied.
fn flood(r: &Rrl, rest: &Rest, name: &str, qtype: u16, client: &str, n: usize) -> [usize; 3] {
    let mut t = [0; 3];
    for _ in 0..n {
        match ask(r, rest, name, qtype, client, Proto::Udp) {
            Fate::Sent => t[0] += 1,
            Fate::Slipped => t[1] += 1,
            Fate::Dropped => t[2] += 1,
            f => panic!("{f:?}"),
        }
    }
    t
}

fn exceeded(family: &str, ip: &str) -> u64 {
    match ringdns_plugin::metrics::registry::collect().get(family, &[ip]) {
        Some(Sample::Int(n)) => *n,
        None => 0,
        s => panic!("{s:?}"),
    }
}

const CLIENT: &str = "198.51.100.7:5353";

#[test]
fn a_flood_gets_the_allowance_then_nothing() {
    let _t = BatchTime::start();
    let r = rrl(". {\n rrl {\n responses-per-second 10\n }\n}", 201, 1);
    let rest = Rest::new();
    // Its own addresses: the counters are process-wide and the other tests drop for CLIENT.
    let client = "203.0.113.7:5353";
    assert_eq!(
        flood(&r, &rest, "a.example.org.", A, client, 50),
        [10, 0, 40]
    );
    // Another type, another name, or another prefix is another account.
    assert_eq!(flood(&r, &rest, "a.example.org.", NS, client, 1), [1, 0, 0]);
    assert_eq!(flood(&r, &rest, "b.example.org.", A, client, 1), [1, 0, 0]);
    assert_eq!(
        flood(&r, &rest, "a.example.org.", A, "203.0.114.7:1", 1),
        [1, 0, 0]
    );
    // The same /24 is the same client.
    assert_eq!(
        flood(&r, &rest, "a.example.org.", A, "203.0.113.99:1", 1),
        [0, 0, 1]
    );
    // And the name's case does not matter.
    assert_eq!(flood(&r, &rest, "A.EXAMPLE.org.", A, client, 1), [0, 0, 1]);
    assert_eq!(
        exceeded("coredns_rrl_responses_exceeded_total", "203.0.113.7"),
        41
    );
    // The label is the client's address, not its prefix (coredns/rrl's `state.IP()`).
    assert_eq!(
        exceeded("coredns_rrl_responses_exceeded_total", "203.0.113.99"),
        1
    );
    assert_eq!(rest.seen.get(), 55, "the chain answered every query");
}

#[test]
fn the_deferred_path_is_limited_the_same() {
    let _t = BatchTime::start();
    let r = rrl(". {\n rrl {\n responses-per-second 5\n }\n}", 202, 1);
    let rest = Rest {
        at_once: false,
        seen: Cell::new(0),
    };
    assert_eq!(
        flood(&r, &rest, "a.example.org.", A, CLIENT, 20),
        [5, 0, 15]
    );
}

#[test]
fn every_slip_ratio_th_drop_is_a_truncated_reply() {
    let _t = BatchTime::start();
    let r = rrl(
        ". {\n rrl {\n responses-per-second 4\n slip-ratio 2\n }\n}",
        203,
        1,
    );
    let rest = Rest::new();
    assert_eq!(
        flood(&r, &rest, "a.example.org.", A, CLIENT, 24),
        [4, 10, 10]
    );
    let always = rrl(
        ". {\n rrl {\n responses-per-second 4\n slip-ratio 1\n }\n}",
        203,
        1,
    );
    assert_eq!(
        flood(&always, &rest, "a.example.org.", A, CLIENT, 24),
        [4, 20, 0]
    );
}

#[test]
fn report_only_sends_everything_and_counts() {
    let _t = BatchTime::start();
    let r = rrl(
        ". {\n rrl {\n responses-per-second 3\n requests-per-second 2\n report-only\n }\n}",
        204,
        1,
    );
    let rest = Rest::new();
    assert_eq!(
        flood(&r, &rest, "a.example.org.", A, "192.0.2.204:1", 10),
        [10, 0, 0]
    );
    assert_eq!(
        exceeded("coredns_rrl_responses_exceeded_total", "192.0.2.204"),
        7
    );
    assert_eq!(
        exceeded("coredns_rrl_requests_exceeded_total", "192.0.2.204"),
        8
    );
}

#[test]
fn each_core_allows_its_share() {
    let _t = BatchTime::start();
    let r = rrl(". {\n rrl {\n responses-per-second 10\n }\n}", 205, 2);
    let rest = Rest::new();
    assert_eq!(
        flood(&r, &rest, "a.example.org.", A, CLIENT, 20),
        [5, 0, 15]
    );
}

#[test]
fn nxdomains_and_referrals_count_under_their_zone() {
    let _t = BatchTime::start();
    let r = rrl(
        ". {\n rrl {\n responses-per-second 100\n nxdomains-per-second 3\n referrals-per-second 2\n }\n}",
        206,
        1,
    );
    let rest = Rest::new();
    // Three different missing names of one zone share one NXDOMAIN account...
    for n in ["x.example.org.", "y.example.org.", "z.example.org."] {
        assert_eq!(flood(&r, &rest, n, TXT, CLIENT, 1), [1, 0, 0], "{n}");
    }
    assert_eq!(
        flood(&r, &rest, "w.example.org.", TXT, CLIENT, 1),
        [0, 0, 1]
    );
    // ...and referrals to one zone another, whatever the name asked.
    assert_eq!(
        flood(&r, &rest, "a.sub.example.org.", NS, CLIENT, 2),
        [2, 0, 0]
    );
    assert_eq!(
        flood(&r, &rest, "b.sub.example.org.", NS, CLIENT, 1),
        [0, 0, 1]
    );
}

#[test]
fn what_the_server_writes_tcp_and_other_zones_are_not_limited() {
    let _t = BatchTime::start();
    let r = rrl(
        ". {\n rrl example.org {\n responses-per-second 1\n errors-per-second 1\n }\n}",
        207,
        1,
    );
    let rest = Rest::new();
    for _ in 0..5 {
        assert_eq!(
            ask(&r, &rest, "a.example.org.", MX, CLIENT, Proto::Udp),
            Fate::Server(SERVFAIL)
        );
        assert_eq!(
            ask(&r, &rest, "a.example.org.", A, CLIENT, Proto::Tcp),
            Fate::Sent
        );
        assert_eq!(
            ask(&r, &rest, "a.example.net.", A, CLIENT, Proto::Udp),
            Fate::Sent
        );
    }
    assert_eq!(r.accounts(), 0);
}

#[test]
fn requests_over_the_limit_never_reach_the_chain() {
    let _t = BatchTime::start();
    let r = rrl(". {\n rrl {\n requests-per-second 4\n }\n}", 208, 1);
    let rest = Rest::new();
    assert_eq!(
        flood(&r, &rest, "a.example.org.", A, "192.0.2.208:1", 10),
        [4, 0, 6]
    );
    assert_eq!(rest.seen.get(), 4);
    // Over TCP too.
    assert_eq!(
        ask(&r, &rest, "a.example.org.", A, "192.0.2.208:2", Proto::Tcp),
        Fate::Dropped
    );
    assert_eq!(
        exceeded("coredns_rrl_requests_exceeded_total", "192.0.2.208"),
        7
    );
}

#[test]
fn a_query_the_rest_cannot_answer_at_once_leaves_no_trace() {
    let _t = BatchTime::start();
    let r = rrl(
        ". {\n rrl {\n responses-per-second 1\n requests-per-second 1\n }\n}",
        209,
        1,
    );
    let rest = Rest {
        at_once: false,
        seen: Cell::new(0),
    };
    let p = packet("a.example.org.", A);
    for _ in 0..10 {
        let mut reply = Vec::new();
        let client = CLIENT.parse().unwrap();
        let mut req = request(&p, client, Proto::Udp, &mut reply, false);
        assert!(r.serve_now(&mut req, &rest).is_none());
    }
    assert_eq!(r.accounts(), 0);
    // Served for real, the first query is within both limits.
    assert_eq!(flood(&r, &rest, "a.example.org.", A, CLIENT, 1), [1, 0, 0]);
    assert_eq!(r.accounts(), 2);
}

#[test]
fn max_table_size_bounds_the_accounts() {
    let _t = BatchTime::start();
    let r = rrl(
        ". {\n rrl {\n responses-per-second 1\n max-table-size 3\n }\n}",
        210,
        1,
    );
    let rest = Rest::new();
    for i in 0..10 {
        flood(&r, &rest, &format!("n{i}.example.org."), A, CLIENT, 1);
    }
    assert_eq!(r.accounts(), 3);
    // A name not tracked is not limited: coredns/rrl stops limiting new responses.
    assert_eq!(flood(&r, &rest, "n9.example.org.", A, CLIENT, 5), [5, 0, 0]);
    // A tracked one is.
    assert_eq!(flood(&r, &rest, "n0.example.org.", A, CLIENT, 1), [0, 0, 1]);
}

#[test]
fn the_accounts_run_on_the_requests_time() {
    let r = rrl(". {\n rrl {\n responses-per-second 10\n }\n}", 211, 1);
    let _t = BatchTime::start();
    let rest = Rest::new();
    assert_eq!(
        flood(&r, &rest, "a.example.org.", A, CLIENT, 20),
        [10, 0, 10]
    );
    // An hour later by the requests' time, whatever the clock says: the debt is paid and
    // the allowance is back.
    HELD.with(|h| h.set(h.get().map(|t| t + std::time::Duration::from_secs(3600))));
    assert_eq!(
        flood(&r, &rest, "a.example.org.", A, CLIENT, 20),
        [10, 0, 10]
    );
}
