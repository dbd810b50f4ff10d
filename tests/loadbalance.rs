//! loadbalance: the real binary reorders the replies of hosts and file over real UDP and TCP
//! on loopback: shuffled addresses (the same set every time), a CNAME kept first, the first
//! address drawn by a weight file and by its new contents once it changed, addresses of
//! preferred subnets first, and CoreDNS's setup errors. That the reordering allocates
//! nothing is shown in tests/alloc.rs, with the counting allocator.
//!
//! Queries are built and replies read with hickory-proto (an implementation other than the
//! server's).

mod common;

use common::{Server, run_expect_failure, tcp_exchange, udp_exchange};
use hickory_proto::op::{Message, MessageType, OpCode, Query, ResponseCode};
use hickory_proto::rr::{Name, RData, RecordType};
use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

fn packet(id: u16, name: &str, rtype: RecordType) -> Vec<u8> {
    let mut m = Message::new(id, MessageType::Query, OpCode::Query);
    m.metadata.recursion_desired = true;
    m.add_query(Query::query(Name::from_ascii(name).unwrap(), rtype));
    m.to_vec().unwrap()
}

/// The answer section as text (`A 10.0.0.1`, `CNAME web.example.org.`), in order.
fn answers(reply: &[u8]) -> Vec<String> {
    let m = Message::from_vec(reply).expect("the reply parses");
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    m.answers
        .iter()
        .map(|r| match &r.data {
            RData::A(a) => format!("A {a}"),
            RData::AAAA(a) => format!("AAAA {a}"),
            RData::CNAME(c) => format!("CNAME {}", c.0),
            other => format!("{other:?}"),
        })
        .collect()
}

/// `n` replies to `name A` over UDP (each query one try of 2 s, three tries in all).
fn udp_answers(port: u16, name: &str, n: usize) -> Vec<Vec<String>> {
    (0..n)
        .map(|i| {
            let q = packet(i as u16, name, RecordType::A);
            let r = (0..3)
                .find_map(|_| udp_exchange(port, &q, Duration::from_secs(2)))
                .expect("a reply over UDP");
            answers(&r)
        })
        .collect()
}

/// `n` replies to `name A` over one TCP connection.
fn tcp_answers(port: u16, name: &str, n: usize) -> Vec<Vec<String>> {
    let qs: Vec<Vec<u8>> = (0..n)
        .map(|i| packet(i as u16, name, RecordType::A))
        .collect();
    let replies = tcp_exchange(port, &qs);
    assert_eq!(replies.len(), n, "every TCP query answered");
    replies.iter().map(|r| answers(r)).collect()
}

fn sorted(v: &[String]) -> Vec<String> {
    let mut v = v.to_vec();
    v.sort();
    v
}

const FOUR: [&str; 4] = ["A 10.0.0.1", "A 10.0.0.2", "A 10.0.0.3", "A 10.0.0.4"];

#[test]
fn hosts_addresses_are_shuffled_and_stay_the_same_set() {
    let s = Server::start(|p| {
        format!(
            "example.org:{p} {{\n loadbalance\n hosts {{\n 10.0.0.1 www.example.org\n 10.0.0.2 www.example.org\n 10.0.0.3 www.example.org\n 10.0.0.4 www.example.org\n }}\n}}\n"
        )
    });
    for (how, got) in [
        ("udp", udp_answers(s.port, "www.example.org.", 200)),
        ("tcp", tcp_answers(s.port, "www.example.org.", 200)),
    ] {
        let firsts: BTreeSet<&String> = got.iter().map(|a| &a[0]).collect();
        assert!(
            firsts.len() > 1,
            "{how}: one first address in 200 replies: {firsts:?}"
        );
        for a in &got {
            assert_eq!(sorted(a), FOUR, "{how}: the same four addresses");
        }
    }
}

/// A zone with a CNAME to a name of four addresses.
const ZONE: &str = "$ORIGIN example.org.\n@ 3600 IN SOA ns admin 1 7200 3600 1209600 3600\n@ 3600 IN NS ns\nns 3600 IN A 10.0.0.53\nwww 3600 IN CNAME web\nweb 3600 IN A 10.0.0.1\nweb 3600 IN A 10.0.0.2\nweb 3600 IN A 10.0.0.3\nweb 3600 IN A 10.0.0.4\n";

#[test]
fn a_cname_stays_first_before_shuffled_addresses() {
    let port = common::free_port();
    let n = port.port;
    let s = Server::try_start_with_files(
        port,
        &format!("example.org:{n} {{\n loadbalance\n file db.example.org\n}}\n"),
        &[],
        &[("db.example.org".to_string(), ZONE.as_bytes().to_vec())],
    )
    .unwrap();
    let mut firsts = BTreeSet::new();
    for a in udp_answers(s.port, "www.example.org.", 200)
        .into_iter()
        .chain(tcp_answers(s.port, "www.example.org.", 50))
    {
        assert_eq!(a[0], "CNAME web.example.org.", "{a:?}");
        assert_eq!(sorted(&a[1..]), FOUR, "{a:?}");
        firsts.insert(a[1].clone());
    }
    assert!(
        firsts.len() > 1,
        "the addresses after the CNAME are shuffled"
    );
}

/// Counts the first address of `n` UDP replies.
fn first_counts(port: u16, name: &str, n: usize) -> HashMap<String, usize> {
    let mut c = HashMap::new();
    for a in udp_answers(port, name, n) {
        *c.entry(a[0].clone()).or_insert(0) += 1;
    }
    c
}

#[test]
fn weighted_follows_the_weight_file_and_its_changes() {
    let zone = "$ORIGIN example.org.\n@ 3600 IN SOA ns admin 1 7200 3600 1209600 3600\n@ 3600 IN NS ns\nns 3600 IN A 10.0.0.53\nwww 3600 IN A 10.0.0.1\nwww 3600 IN A 10.0.0.2\nwww 3600 IN A 10.0.0.3\n";
    let port = common::free_port();
    let n = port.port;
    let s = Server::try_start_with_files(
        port,
        &format!(
            "example.org:{n} {{\n file db.example.org\n loadbalance weighted weights {{\n reload 1s\n }}\n}}\n"
        ),
        &[],
        &[
            ("db.example.org".to_string(), zone.as_bytes().to_vec()),
            ("weights".to_string(), b"www.example.org\n10.0.0.1 200\n10.0.0.2 1\n10.0.0.3 1\n".to_vec()),
        ],
    )
    .unwrap();
    assert!(
        s.stdout()
            .contains("[INFO] plugin/loadbalance: Successfully reloaded weight file"),
        "{}",
        s.stdout()
    );
    let c = first_counts(s.port, "www.example.org.", 300);
    // 200 of 202: nearly always the first.
    assert!(c.get("A 10.0.0.1").copied().unwrap_or(0) > 270, "{c:?}");
    // The file changes: now 10.0.0.3 is the heavy one.
    s.dir.replace(
        "weights",
        "# changed\nwww.example.org\n10.0.0.1 1\n10.0.0.2 1\n10.0.0.3 255\n",
    );
    let t0 = Instant::now();
    while s
        .stdout()
        .matches("Successfully reloaded weight file")
        .count()
        < 2
    {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "no reload of the weight file:\n{}",
            s.stdout()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let c = first_counts(s.port, "www.example.org.", 300);
    assert!(c.get("A 10.0.0.3").copied().unwrap_or(0) > 270, "{c:?}");
    // A bad change is an error and the weights stay.
    s.dir.replace("weights", "www.example.org\n10.0.0.1 0\n");
    assert!(
        s.wait_stdout(
            "[ERROR] plugin/loadbalance: wrong weight value:\"0\" in weight file",
            Duration::from_secs(10)
        ),
        "{}",
        s.stdout()
    );
    let c = first_counts(s.port, "www.example.org.", 100);
    assert!(c.get("A 10.0.0.3").copied().unwrap_or(0) > 85, "{c:?}");
}

#[test]
fn prefer_puts_the_subnets_first_in_their_order() {
    let s = Server::start(|p| {
        format!(
            "example.org:{p} {{\n loadbalance round_robin {{\n prefer 192.168.1.0/24 10.9.20.0/24\n }}\n hosts {{\n 8.8.8.8 www.example.org\n 10.9.20.1 www.example.org\n 192.168.1.7 www.example.org\n 10.9.20.2 www.example.org\n 1.1.1.1 www.example.org\n }}\n}}\n"
        )
    });
    let mut tails = BTreeSet::new();
    for a in udp_answers(s.port, "www.example.org.", 100) {
        assert_eq!(a[0], "A 192.168.1.7", "{a:?}");
        assert_eq!(sorted(&a[1..3]), ["A 10.9.20.1", "A 10.9.20.2"], "{a:?}");
        assert_eq!(sorted(&a[3..]), ["A 1.1.1.1", "A 8.8.8.8"], "{a:?}");
        tails.insert(a[3].clone());
    }
    assert_eq!(tails.len(), 2, "the rest is still shuffled");
}

#[test]
fn errors_and_other_replies() {
    let cases = [
        (
            "loadbalance random",
            "plugin/loadbalance: unknown policy: random",
        ),
        (
            "loadbalance round_robin x",
            "plugin/loadbalance: unknown property for round_robin",
        ),
        (
            "loadbalance weighted",
            "plugin/loadbalance: missing weight file argument",
        ),
        (
            "loadbalance weighted /nonexistent/w {\n reload 0s\n }",
            "plugin/loadbalance: weight file open error",
        ),
        (
            "loadbalance {\n prefer 10.0.0.0/33\n }",
            "plugin/loadbalance: invalid CIDR \"10.0.0.0/33\": invalid CIDR address: 10.0.0.0/33",
        ),
    ];
    for (directive, want) in cases {
        let (code, err) = run_expect_failure(&format!(".:0 {{\n {directive}\n whoami\n}}\n"));
        assert_ne!(code, 0, "{directive}");
        assert!(err.contains(want), "{directive}: {err}");
    }
    // A zone transfer is left alone: the zone's records in the same order every time.
    let port = common::free_port();
    let n = port.port;
    let s = Server::try_start_with_files(
        port,
        &format!(
            "example.org:{n} {{\n loadbalance\n file db.example.org\n transfer {{\n to *\n }}\n}}\n"
        ),
        &[],
        &[("db.example.org".to_string(), ZONE.as_bytes().to_vec())],
    )
    .unwrap();
    let transfer = || -> Vec<String> {
        common::tcp_transfer(s.port, &common::query(77, "example.org.", 252))
            .iter()
            .flat_map(|m| m.answers.iter())
            .map(|r| r.to_string())
            .collect()
    };
    let first = transfer();
    assert!(first.len() > 6, "{first:?}");
    for _ in 0..20 {
        assert_eq!(transfer(), first, "the order of the transfer's records");
    }
    // While the answers to A queries are shuffled.
    let firsts: BTreeSet<String> = udp_answers(s.port, "web.example.org.", 50)
        .into_iter()
        .map(|a| a[0].clone())
        .collect();
    assert!(firsts.len() > 1);
}
