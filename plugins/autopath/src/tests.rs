//! CoreDNS's autopath tests (`autopath_test.go`, `setup_test.go`) ported, with a next
//! handler that answers per name as theirs does, and what ringdns adds: the three passes,
//! `@PLUGIN` through the registry, the client's case and EDNS.

use super::*;
use ringdns_plugin::autopath::{AutoPathers, SearchPath};
use ringdns_plugin::corefile::parse;
use ringdns_plugin::metrics::registry;
use ringdns_plugin::wire::rcode::{NOERROR, REFUSED};
use ringdns_plugin::wire::{
    Header, MessageWriter, Owner, Section, expand_name, expand_rdata, records, rtype,
};
use ringdns_plugin::{Proto, wire};
use ringdns_testkit::wire_name;
use std::cell::Cell;
use std::net::{IpAddr, SocketAddr};
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// CoreDNS's `nextHandler`: answers the names of its map with their rcode (NXDOMAIN with
/// an SOA, NOERROR with `NAME 3600 IN A 127.0.0.53`), and any other name with SERVFAIL,
/// writing nothing. A name in `wait` defers on a pass that may not wait; a name in `fail`
/// fails with an error. Counts the queries it sees.
#[derive(Default)]
struct PerName {
    names: Vec<(&'static str, u8)>,
    wait: Vec<&'static str>,
    fail: Vec<&'static str>,
    seen: Cell<usize>,
    asked: std::cell::RefCell<Vec<String>>,
}

impl PerName {
    fn new(names: &[(&'static str, u8)]) -> Self {
        PerName {
            names: names.to_vec(),
            ..PerName::default()
        }
    }

    fn answer(&self, req: &mut Request<'_>) -> Option<Status> {
        let name = req.query.qname().to_string();
        let lower = name.to_ascii_lowercase();
        if self.wait.contains(&lower.as_str()) && !req.can_wait() {
            return None;
        }
        self.seen.set(self.seen.get() + 1);
        self.asked.borrow_mut().push(name);
        if self.fail.contains(&lower.as_str()) {
            return Some(Status::error(SERVFAIL, PluginError::new("test", "boom")));
        }
        let Some(&(_, rcode)) = self.names.iter().find(|(n, _)| *n == lower) else {
            return Some(Status::rcode(SERVFAIL));
        };
        let q = req.query;
        let mut w = MessageWriter::reply(&q, req.reply, rcode);
        if rcode == NXDOMAIN {
            let mut soa = wire_name("example.org.");
            soa.extend(wire_name("example.org."));
            soa.extend(1502165581u32.to_be_bytes());
            for v in [14400u32, 3600, 604800, 14400] {
                soa.extend(v.to_be_bytes());
            }
            let owner = wire_name("example.org.");
            w.push(
                Section::Authority,
                Owner::Wire(&owner),
                rtype::SOA,
                1,
                1800,
                &soa,
            )
            .unwrap();
        } else {
            w.push(
                Section::Answer,
                Owner::Question,
                rtype::A,
                1,
                3600,
                &[127, 0, 0, 53],
            )
            .unwrap();
        }
        w.finish();
        req.finalize_reply();
        Some(Status::rcode(rcode))
    }
}

impl Handler for PerName {
    async fn serve(&self, req: &mut Request<'_>) -> Outcome {
        match self.answer(req) {
            Some(s) => Ok(s),
            None => req.defer(),
        }
    }

    fn serve_now(&self, req: &mut Request<'_>) -> Option<Status> {
        self.answer(req)
    }

    fn is_end(&self) -> bool {
        false
    }

    fn after_batch(&self) {}
}

/// The three ways a query reaches the plugin.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Pass {
    Now,
    Inline,
    Deferred,
}

const ALL: [Pass; 3] = [Pass::Now, Pass::Inline, Pass::Deferred];

fn client() -> SocketAddr {
    "10.1.2.3:5353".parse().unwrap()
}

/// Serves `packet` with `ap` before `next` on `pass`: the status (`None` when the pass
/// gave up: `serve_now`'s `None` or a deferral) and the reply.
fn run(ap: &AutoPath, next: &PerName, packet: &[u8], pass: Pass) -> (Option<Status>, Vec<u8>) {
    run_on(ap, next, packet, pass, "dns://:53")
}

/// [`run`] on listener `server`.
fn run_on(
    ap: &AutoPath,
    next: &PerName,
    packet: &[u8],
    pass: Pass,
    server: &str,
) -> (Option<Status>, Vec<u8>) {
    let q = Query::parse(packet).unwrap();
    let mut reply = Vec::new();
    let mut req = Request::new(
        q,
        client(),
        client(),
        Proto::Udp,
        ".",
        server,
        &mut reply,
        pass == Pass::Deferred,
    );
    let status = match pass {
        Pass::Now => ap.serve_now(&mut req, next),
        _ => {
            let fut = pin!(ap.serve(&mut req, next));
            match fut.poll(&mut Context::from_waker(Waker::noop())) {
                Poll::Ready(Ok(s)) => Some(s),
                Poll::Ready(Err(_)) => None,
                Poll::Pending => panic!("nothing here waits"),
            }
        }
    };
    (status, reply)
}

/// `name A IN`, RD, without EDNS.
fn query(name: &str) -> Vec<u8> {
    let mut p = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
    p.extend(wire_name(name));
    p.extend([0, 1, 0, 1]);
    p
}

/// The same with an OPT (UDP size 1232, DO set).
fn query_edns(name: &str) -> Vec<u8> {
    let mut p = query(name);
    p[11] = 1;
    p.extend([0, 0, 41, 0x04, 0xd0, 0, 0, 0x80, 0, 0, 0]);
    p
}

/// A reply's records as `SECTION OWNER TTL TYPE DATA` (names as written, case kept).
fn show(reply: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    for r in records(reply).unwrap() {
        let r = r.unwrap();
        let mut owner = Vec::new();
        expand_name(reply, r.owner.start, reply.len(), &mut owner).unwrap();
        let owner = Name::from_wire(&owner).unwrap().to_string();
        let mut rd = Vec::new();
        expand_rdata(reply, &r, &mut rd).unwrap();
        let data = match r.rtype {
            rtype::A => format!("{}.{}.{}.{}", rd[0], rd[1], rd[2], rd[3]),
            rtype::CNAME => Name::from_wire(&rd).unwrap().to_string(),
            rtype::SOA => "SOA".to_string(),
            rtype::OPT => format!("{} {:08x}", r.class, r.ttl(reply)),
            t => format!("TYPE{t}"),
        };
        let sec = ["AN", "NS", "AR"][r.section as usize];
        let t = match r.rtype {
            rtype::A => "A",
            rtype::CNAME => "CNAME",
            rtype::SOA => "SOA",
            rtype::OPT => "OPT",
            _ => "?",
        };
        out.push(format!("{sec} {owner} {} {t} {data}", r.ttl(reply)));
    }
    out
}

/// The question name of a reply, as written.
fn question(reply: &[u8]) -> String {
    let mut end = 12;
    while reply[end] != 0 {
        end += 1 + usize::from(reply[end]);
    }
    Name::from_wire(&reply[12..=end]).unwrap().to_string()
}

/// A block set up from `body` (one `autopath` line), with `directives` as the block's.
fn config_in(body: &str, directives: &[&'static str]) -> (BlockSetup, Result<Config, String>) {
    let text = format!(". {{\n{body}\n}}\n");
    let cf = parse("Corefile", &text, &|n| n == NAME).unwrap();
    let mut block = BlockSetup {
        zones: vec![".".to_string()],
        directives: directives.to_vec(),
        ..BlockSetup::default()
    };
    let d = &cf.blocks[0].directives[0];
    let mut disp = Dispenser::new(&d.tokens);
    let config = setup::parse(&mut disp, &mut block).map_err(|e| e.to_string());
    (block, config)
}

fn core(index: usize) -> CoreInfo {
    CoreInfo {
        index,
        cpu: 0,
        cores: 1,
    }
}

/// CoreDNS's `newTestAutoPath`: zone `.`, search `example.org. example.com. com. ""`.
fn test_autopath() -> AutoPath {
    let config = Config {
        zones: vec![vec![0]],
        search: setup::search_path(&["example.org".into(), "example.com".into(), "com".into()]),
        plugin: None,
    };
    AutoPath::build(&Arc::new(config), &core(0)).unwrap()
}

fn test_next() -> PerName {
    PerName::new(&[
        ("b.example.org.", NXDOMAIN),
        ("b.com.", NOERROR),
        ("a.example.com.", NOERROR),
    ])
}

#[test]
fn search_path_expansion_answers_with_a_cname_first() {
    // TestAutoPath, case 1: b.example.org is NXDOMAIN, b.example.com SERVFAIL, b.com
    // answers.
    let ap = test_autopath();
    for pass in ALL {
        let next = test_next();
        let (status, reply) = run(&ap, &next, &query("b.example.org."), pass);
        assert_eq!(status, Some(Status::rcode(NOERROR)), "{pass:?}");
        assert_eq!(
            show(&reply),
            [
                "AN b.example.org. 3600 CNAME b.com.",
                "AN b.com. 3600 A 127.0.0.53"
            ],
            "{pass:?}"
        );
        assert_eq!(question(&reply), "b.example.org.");
        let h = Header::of(&reply).unwrap();
        assert!(h.qr() && h.rd());
        assert_eq!(h.id(), 0x1234);
        assert_eq!(
            *next.asked.borrow(),
            ["b.example.org.", "b.example.com.", "b.com."]
        );
    }
}

#[test]
fn a_name_outside_the_first_element_passes_untouched() {
    // TestAutoPath, case 2: a.example.com is not under example.org.
    let ap = test_autopath();
    for pass in ALL {
        let next = test_next();
        let (status, reply) = run(&ap, &next, &query("a.example.com."), pass);
        assert_eq!(status, Some(Status::rcode(NOERROR)));
        assert_eq!(show(&reply), ["AN a.example.com. 3600 A 127.0.0.53"]);
        assert_eq!(next.seen.get(), 1, "asked once, as it came");
    }
}

#[test]
fn no_answer_anywhere_is_the_first_elements_rcode_for_the_server() {
    // TestAutoPathNoAnswer: every element is SERVFAIL, so nothing is written.
    let ap = test_autopath();
    for pass in ALL {
        let next = test_next();
        let (status, reply) = run(&ap, &next, &query("c.example.org."), pass);
        let status = status.unwrap();
        assert!(!client_write(status.rcode), "{pass:?}: {status:?}");
        assert!(reply.is_empty());
        assert_eq!(next.seen.get(), 4, "every element, the sentinel last");
        assert_eq!(next.asked.borrow().last().unwrap(), "c.");
    }
}

#[test]
fn all_nxdomain_returns_the_first_reply_as_it_came() {
    let ap = test_autopath();
    let next = PerName::new(&[
        ("d.example.org.", NXDOMAIN),
        ("d.example.com.", NXDOMAIN),
        ("d.com.", NXDOMAIN),
        ("d.", NXDOMAIN),
    ]);
    for pass in ALL {
        let (status, reply) = run(&ap, &next, &query("d.example.org."), pass);
        assert_eq!(status, Some(Status::rcode(NXDOMAIN)));
        assert_eq!(Header::of(&reply).unwrap().rcode(), NXDOMAIN);
        assert_eq!(show(&reply), ["NS example.org. 1800 SOA SOA"]);
        assert_eq!(question(&reply), "d.example.org.");
    }
    assert_eq!(next.seen.get(), 12);
}

#[test]
fn the_first_element_answering_is_sent_without_a_cname() {
    let ap = test_autopath();
    let next = PerName::new(&[("e.example.org.", NOERROR)]);
    let (status, reply) = run(&ap, &next, &query("e.example.org."), Pass::Now);
    assert_eq!(status, Some(Status::rcode(NOERROR)));
    assert_eq!(show(&reply), ["AN e.example.org. 3600 A 127.0.0.53"]);
    assert_eq!(next.seen.get(), 1);
}

#[test]
fn the_first_element_itself_is_servfail_as_coredns_trimzone_overshoots() {
    let ap = test_autopath();
    let next = test_next();
    let (status, reply) = run(&ap, &next, &query("example.org."), Pass::Now);
    let status = status.unwrap();
    assert_eq!(status.rcode, SERVFAIL);
    assert_eq!(
        status.error.unwrap().to_string(),
        "plugin/autopath: trimzone: overshot qname: example.org.for zone example.org."
    );
    assert!(reply.is_empty());
    assert_eq!(next.seen.get(), 0);
}

#[test]
fn an_error_ends_the_walk_with_it() {
    let ap = test_autopath();
    let mut next = test_next();
    next.fail = vec!["b.example.com."];
    let (status, reply) = run(&ap, &next, &query("b.example.org."), Pass::Inline);
    let status = status.unwrap();
    assert_eq!(status.rcode, SERVFAIL);
    assert_eq!(status.error.unwrap().to_string(), "plugin/test: boom");
    assert!(reply.is_empty());
    assert_eq!(next.seen.get(), 2, "b.com. is not asked");
}

#[test]
fn an_element_that_must_wait_gives_the_query_to_the_deferred_pass() {
    let ap = test_autopath();
    let mut next = test_next();
    next.wait = vec!["b.com."];
    // At once: not now, the request untouched.
    let (status, reply) = run(&ap, &next, &query("b.example.org."), Pass::Now);
    assert!(status.is_none());
    assert!(reply.is_empty());
    // Inline: deferred.
    let (status, reply) = run(&ap, &next, &query("b.example.org."), Pass::Inline);
    assert!(status.is_none());
    assert!(reply.is_empty());
    // Deferred: walked to the end.
    let (status, reply) = run(&ap, &next, &query("b.example.org."), Pass::Deferred);
    assert_eq!(status, Some(Status::rcode(NOERROR)));
    assert_eq!(show(&reply).len(), 2);
    // Nothing kept a scratch set: each walk handed its own back.
    assert_eq!(ap.pool.borrow().len(), 1);
}

#[test]
fn the_client_case_is_the_questions_and_the_cnames_owner() {
    let ap = test_autopath();
    let next = test_next();
    let (_, reply) = run(&ap, &next, &query("B.Example.ORG."), Pass::Now);
    assert_eq!(question(&reply), "B.Example.ORG.");
    assert_eq!(
        show(&reply),
        [
            "AN B.Example.ORG. 3600 CNAME B.com.",
            "AN B.com. 3600 A 127.0.0.53"
        ]
    );
    // CoreDNS keeps the base as asked and the elements as normalised.
    assert_eq!(
        *next.asked.borrow(),
        ["B.example.org.", "B.example.com.", "B.com."]
    );
}

#[test]
fn an_edns_query_gets_one_opt_from_the_answer() {
    let ap = test_autopath();
    let next = test_next();
    let (_, reply) = run(&ap, &next, &query_edns("b.example.org."), Pass::Now);
    assert_eq!(
        show(&reply),
        [
            "AN b.example.org. 3600 CNAME b.com.",
            "AN b.com. 3600 A 127.0.0.53",
            "AR . 32768 OPT 1232 00008000"
        ]
    );
    assert!(Query::parse(&query_edns("x.")).unwrap().do_bit());
}

#[test]
fn records_of_the_target_point_at_it() {
    let ap = test_autopath();
    let next = test_next();
    let (_, reply) = run(&ap, &next, &query("b.example.org."), Pass::Now);
    let rs: Vec<_> = records(&reply).unwrap().map(Result::unwrap).collect();
    // The A's owner is a 2-byte pointer to the CNAME's target.
    assert_eq!(rs[1].owner.len(), 2);
    assert_eq!(usize::from(reply[rs[1].owner.start + 1]), rs[0].rdata.start);
}

#[test]
fn a_zone_autopath_does_not_have_passes_untouched() {
    let config = Config {
        zones: vec![wire_name("example.net.")],
        search: setup::search_path(&["example.org".into()]),
        plugin: None,
    };
    let ap = AutoPath::build(&Arc::new(config), &core(0)).unwrap();
    let next = test_next();
    let (status, reply) = run(&ap, &next, &query("b.example.org."), Pass::Now);
    assert_eq!(status, Some(Status::rcode(NXDOMAIN)));
    assert_eq!(show(&reply), ["NS example.org. 1800 SOA SOA"]);
    assert_eq!(next.seen.get(), 1);
}

#[test]
fn first_in_search_path_as_coredns() {
    // TestInSearchPath.
    let path = setup::search_path(&[
        "default.svc.cluster.local.".into(),
        "svc.cluster.local.".into(),
        "cluster.local.".into(),
    ]);
    let ap = AutoPath::build(
        &Arc::new(Config {
            zones: vec![vec![0]],
            search: path,
            plugin: None,
        }),
        &core(0),
    )
    .unwrap();
    for (name, walks) in [
        ("google.com.", false),
        ("default.svc.cluster.local.", true),
        ("a.default.svc.cluster.local.", true),
        ("a.b.svc.cluster.local.", false),
    ] {
        let next = PerName::default();
        let (status, _) = run(&ap, &next, &query(name), Pass::Now);
        let passed = next.seen.get() == 1 && status == Some(Status::rcode(SERVFAIL));
        assert_eq!(
            !passed,
            walks,
            "{name}: {status:?}, {} seen",
            next.seen.get()
        );
    }
}

#[test]
fn successes_are_counted_per_listener() {
    const LISTENER: &str = "dns://:5399";
    let ap = AutoPath::build(
        &Arc::new(Config {
            zones: vec![vec![0]],
            search: setup::search_path(&["example.org".into(), "com".into()]),
            plugin: None,
        }),
        &core(7),
    )
    .unwrap();
    let next = test_next();
    let count = || {
        registry::collect()
            .get("coredns_autopath_success_total", &[LISTENER])
            .map(|s| s.count())
    };
    assert_eq!(count(), None, "no series before the first success");
    let on = |name: &str, pass| run_on(&ap, &next, &query(name), pass, LISTENER);
    on("b.example.org.", Pass::Now);
    on("b.example.org.", Pass::Deferred);
    // Not autopath answers: not counted.
    on("a.example.com.", Pass::Now);
    on("c.example.org.", Pass::Now);
    assert_eq!(count(), Some(2.0));
}

/// An AutoPather of the test's own: one search path for clients in 10.0.0.0/8, none for
/// others, as kubernetes gives one for known pods.
struct Pods;

impl AutoPather for Pods {
    fn search_path(&self, client: IpAddr, _qname: &Name<'_>, out: &mut SearchPath) {
        out.clear();
        if matches!(client, IpAddr::V4(a) if a.octets()[0] == 10) {
            out.push(&[&wire_name("ns1.svc.cluster.local.")]);
            out.push(&[&wire_name("svc.cluster.local.")]);
            out.push(&[b"\x00"]);
        }
    }
}

#[test]
fn a_plugins_search_path_comes_through_the_registry() {
    let (block, config) = config_in(
        "autopath @kubernetes",
        &["autopath", "kubernetes", "forward"],
    );
    let config = Arc::new(config.unwrap());
    // kubernetes' setup runs after autopath's and registers.
    block
        .block_shared::<AutoPathers>()
        .register("kubernetes", Arc::new(Pods));
    let ap = AutoPath::build(&config, &core(0)).unwrap();
    let next = PerName::new(&[
        ("web.ns1.svc.cluster.local.", NXDOMAIN),
        ("web.svc.cluster.local.", NXDOMAIN),
        ("web.", NOERROR),
    ]);
    let (status, reply) = run(&ap, &next, &query("web.ns1.svc.cluster.local."), Pass::Now);
    assert_eq!(status, Some(Status::rcode(NOERROR)));
    assert_eq!(
        show(&reply),
        [
            "AN web.ns1.svc.cluster.local. 3600 CNAME web.",
            "AN web. 3600 A 127.0.0.53"
        ]
    );
}

#[test]
fn a_plugin_not_in_the_block_leaves_autopath_nothing_to_do() {
    let (_, config) = config_in("autopath @kubernetes", &["autopath", "forward"]);
    assert!(AutoPath::build(&Arc::new(config.unwrap()), &core(0)).is_none());
}

#[test]
fn a_plugin_in_the_block_that_gives_no_path_is_reported_once() {
    let (_, config) = config_in("autopath @whoami", &["autopath", "whoami"]);
    let config = Arc::new(config.unwrap());
    assert!(AutoPath::build(&config, &core(0)).is_none());
    let p = config.plugin.as_ref().unwrap();
    assert!(p.reported.load(Ordering::Relaxed), "logged");
    assert!(AutoPath::build(&config, &core(1)).is_none());
}

/// CoreDNS's setup_test.go resolv.conf.
const RESOLV_CONF: &str =
    "nameserver 1.2.3.4\ndomain foo.com\nsearch bar.com baz.com\noptions ndots:5\n";

fn names(path: &SearchPath) -> Vec<String> {
    path.iter()
        .map(|n| Name::from_wire(n).unwrap().to_string())
        .collect()
}

#[test]
fn setup_as_coredns() {
    let dir = std::env::temp_dir().join(format!("ringdns-autopath-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let resolv = dir.join("resolv.conf");
    std::fs::write(&resolv, RESOLV_CONF).unwrap();
    let resolv = resolv.display().to_string();

    // positive
    let (_, c) = config_in("autopath @kubernetes", &[]);
    let c = c.unwrap();
    assert_eq!(c.plugin.as_ref().unwrap().name, "kubernetes");
    assert_eq!(c.zones, [vec![0]], "the block's");
    let (_, c) = config_in("autopath example.org @kubernetes", &[]);
    assert_eq!(c.unwrap().zones, [wire_name("example.org.")]);
    let (_, c) = config_in("autopath 10.0.0.0/8 @kubernetes", &[]);
    assert_eq!(c.unwrap().zones, [wire_name("10.in-addr.arpa.")]);
    let (_, c) = config_in(&format!("autopath {resolv}"), &[]);
    let c = c.unwrap();
    assert!(c.plugin.is_none());
    assert_eq!(names(&c.search), ["bar.com.", "baz.com.", "."]);

    // negative
    let (_, e) = config_in("autopath kubernetes", &[]);
    assert_eq!(
        e.err().unwrap(),
        "Corefile:2 - Error during parsing: plugin/autopath: failed to parse \"kubernetes\": \
         open kubernetes: no such file or directory"
    );
    let (_, e) = config_in("autopath", &[]);
    assert_eq!(
        e.err().unwrap(),
        "Corefile:2 - Error during parsing: plugin/autopath: no resolv-conf specified"
    );
    let (_, e) = config_in("autopath \"\"", &[]);
    assert!(e.err().unwrap().contains("failed to parse \"\""));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_search_list_is_normalised_and_ends_with_the_root() {
    let p = setup::search_path(&["Default.SVC.cluster.local".into(), "example.org.".into()]);
    assert_eq!(
        names(&p),
        ["default.svc.cluster.local.", "example.org.", "."]
    );
    // A name that cannot be one is left out.
    let p = setup::search_path(&["a..b".into(), "c".into()]);
    assert_eq!(names(&p), ["c.", "."]);
    assert_eq!(names(&setup::search_path(&[])), ["."]);
}

#[test]
fn a_later_autopath_replaces_the_earlier_ones_source_and_zones() {
    let (_, c) = config_in(
        "autopath example.org @kubernetes\nautopath example.net @other",
        &[],
    );
    let c = c.unwrap();
    assert_eq!(c.plugin.unwrap().name, "other");
    assert_eq!(c.zones, [wire_name("example.net.")]);
}

#[test]
fn a_server_written_rcode_from_next_is_not_an_answer() {
    // REFUSED (the server writes it) goes on like SERVFAIL.
    let ap = test_autopath();
    let next = PerName::new(&[("f.example.org.", REFUSED), ("f.com.", NOERROR)]);
    let (status, reply) = run(&ap, &next, &query("f.example.org."), Pass::Now);
    assert_eq!(status, Some(Status::rcode(NOERROR)));
    assert_eq!(show(&reply)[0], "AN f.example.org. 3600 CNAME f.com.");
    let _ = wire::rcode::NOERROR;
}
