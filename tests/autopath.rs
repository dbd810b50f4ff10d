//! autopath: the real binary walks a pod's search path server-side, over UDP and TCP on
//! loopback. The block's `autopath cluster.local FILE` reads a resolv.conf this test writes
//! (`search default.svc.cluster.local svc.cluster.local cluster.local`); *hosts* holds the
//! cluster's names and falls through to *forward*, whose upstream is another ringdns of the
//! test's own whose templates know `outside.test.` and answer NXDOMAIN for every other name. So a
//! name outside the cluster gets one reply with the CNAME from the asked name, a name of the
//! first element none, an all-NXDOMAIN walk the first NXDOMAIN; successes are counted in
//! `coredns_autopath_success_total`, and bad setups fail or are logged as CoreDNS's.
//!
//! Replies are read with hickory-proto (an implementation other than the server's). That a
//! walk answered at once (no element waits) allocates nothing is shown in tests/alloc.rs.

mod common;

use common::{Server, TempDir, free_port, query, run_expect_failure};
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::{RData, Record};
use std::time::Duration;

/// A Corefile with one worker and one root block holding `body`.
fn corefile(port: u16, body: &str) -> String {
    format!("{{\n workers 1\n}}\n.:{port} {{\n{body}\n}}\n")
}

/// The upstream: `outside.test.` has an address, every other name is NXDOMAIN with an SOA.
fn upstream() -> Server {
    Server::start(|p| {
        corefile(
            p,
            r#"    template IN A test {
        match ^outside[.]test[.]$
        answer "outside.test. 3600 IN A 192.0.2.1"
        fallthrough
    }
    template ANY ANY . {
        rcode NXDOMAIN
        authority ". 60 IN SOA ns.upstream. hostmaster.upstream. 1 7200 1800 86400 30"
    }"#,
        )
    })
}

/// The server under test and its upstream, resolv.conf and metrics port.
struct Front {
    server: Server,
    metrics: u16,
    _upstream: Server,
    _dir: TempDir,
}

fn front() -> Front {
    let up = upstream();
    let dir = TempDir::new();
    let resolv = dir.write(
        "resolv.conf",
        "nameserver 10.96.0.10\nsearch default.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n",
    );
    let mp = free_port();
    let metrics = mp.port;
    let body = format!(
        r#"    prometheus 127.0.0.1:{metrics}
    autopath cluster.local {resolv}
    hosts {{
        10.0.0.10 web.default.svc.cluster.local
        10.0.0.20 db.svc.cluster.local
        fallthrough
    }}
    forward . 127.0.0.1:{up}"#,
        resolv = resolv.display(),
        up = up.port
    );
    drop(mp);
    let server = Server::start(move |p| corefile(p, &body));
    Front {
        server,
        metrics,
        _upstream: up,
        _dir: dir,
    }
}

/// The records of a section as `TYPE TTL OWNER DATA`.
fn show(records: &[Record]) -> Vec<String> {
    records
        .iter()
        .map(|r| {
            let data = match &r.data {
                RData::A(a) => a.0.to_string(),
                RData::CNAME(c) => c.0.to_string(),
                RData::SOA(s) => format!("{} {}", s.mname, s.rname),
                other => format!("{other:?}"),
            };
            format!("{} {} {} {data}", r.record_type(), r.ttl, r.name)
        })
        .collect()
}

/// The reply to `name A` over UDP, checked to be the same bytes over TCP.
fn ask(port: u16, name: &str) -> Message {
    let (udp, tcp) = common::udp_and_tcp(port, &query(0x0a70, name, 1));
    assert_eq!(udp, tcp, "UDP and TCP replies differ for {name}");
    Message::from_vec(&udp).expect("the reply parses")
}

fn question(m: &Message) -> String {
    m.queries[0].name().to_string()
}

#[test]
fn a_pods_search_path_is_walked_server_side() {
    let f = front();
    let port = f.server.port;

    // A name outside the cluster: one reply, the CNAME from the asked name first.
    let m = ask(port, "outside.test.default.svc.cluster.local.");
    assert_eq!(m.metadata.response_code, ResponseCode::NoError, "{m:?}");
    assert_eq!(question(&m), "outside.test.default.svc.cluster.local.");
    assert_eq!(
        show(&m.answers),
        [
            "CNAME 3600 outside.test.default.svc.cluster.local. outside.test.",
            "A 3600 outside.test. 192.0.2.1"
        ]
    );

    // A name of the first element: its own answer, no CNAME.
    let m = ask(port, "web.default.svc.cluster.local.");
    assert_eq!(
        show(&m.answers),
        ["A 3600 web.default.svc.cluster.local. 10.0.0.10"]
    );

    // A name of the second element: a CNAME to it.
    let m = ask(port, "db.default.svc.cluster.local.");
    assert_eq!(
        show(&m.answers),
        [
            "CNAME 3600 db.default.svc.cluster.local. db.svc.cluster.local.",
            "A 3600 db.svc.cluster.local. 10.0.0.20"
        ]
    );

    // Every element NXDOMAIN: the first element's reply, as the upstream gave it.
    let m = ask(port, "nowhere.default.svc.cluster.local.");
    assert_eq!(m.metadata.response_code, ResponseCode::NXDomain);
    assert_eq!(question(&m), "nowhere.default.svc.cluster.local.");
    assert!(m.answers.is_empty());
    assert_eq!(
        show(&m.authorities),
        ["SOA 60 . ns.upstream. hostmaster.upstream."]
    );

    // Outside autopath's zone, and outside the first element: untouched.
    let m = ask(port, "outside.test.");
    assert_eq!(show(&m.answers), ["A 3600 outside.test. 192.0.2.1"]);
    let m = ask(port, "outside.test.svc.cluster.local.");
    assert_eq!(m.metadata.response_code, ResponseCode::NXDomain);

    // The first element itself: CoreDNS's TrimZone error.
    let m = ask(port, "default.svc.cluster.local.");
    assert_eq!(m.metadata.response_code, ResponseCode::ServFail);

    // Three successes, each over UDP and TCP: outside.test, db, and web (as CoreDNS, a
    // walk that ends at its first element counts too).
    let server = format!("dns://:{port}");
    let page = common::metrics::scrape_until(f.metrics, |p| {
        common::metrics::value(p, "coredns_autopath_success_total", &[("server", &server)])
            == Some(6.0)
    });
    assert_eq!(
        common::metrics::value(
            &page,
            "coredns_autopath_success_total",
            &[("server", &server)]
        ),
        Some(6.0),
        "{page}"
    );
    assert!(
        page.contains(
            "# HELP coredns_autopath_success_total Counter of requests that did autopath."
        ),
        "{page}"
    );
}

#[test]
fn the_client_case_and_edns_are_kept() {
    let f = front();
    let q = common::query_full(
        0x0a71,
        "Outside.Test.DEFAULT.svc.cluster.local.",
        1,
        1,
        Some((1232, true)),
    );
    let (udp, tcp) = common::udp_and_tcp(f.server.port, &q);
    assert_eq!(udp, tcp);
    let m = Message::from_vec(&udp).unwrap();
    assert_eq!(question(&m), "Outside.Test.DEFAULT.svc.cluster.local.");
    assert_eq!(
        show(&m.answers),
        [
            // The target as the upstream's answer spells its owner.
            "CNAME 3600 Outside.Test.DEFAULT.svc.cluster.local. outside.test.",
            "A 3600 outside.test. 192.0.2.1"
        ]
    );
    let edns = m.edns.expect("an OPT for an EDNS query");
    assert_eq!(edns.max_payload(), 1232);
    assert!(edns.flags().dnssec_ok);
}

#[test]
fn setup_errors_are_coredns_words() {
    let (code, err) = run_expect_failure(".:0 {\n    autopath\n}\n");
    assert_ne!(code, 0);
    assert!(
        err.contains("plugin/autopath: no resolv-conf specified"),
        "{err}"
    );
    let (code, err) = run_expect_failure(".:0 {\n    autopath /nonexistent/resolv.conf\n}\n");
    assert_ne!(code, 0);
    assert!(
        err.contains(
            "plugin/autopath: failed to parse \"/nonexistent/resolv.conf\": \
             open /nonexistent/resolv.conf: no such file or directory"
        ),
        "{err}"
    );
}

#[test]
fn a_plugin_of_the_block_that_gives_no_search_path_is_reported() {
    // whoami is in the block and registers no AutoPather: CoreDNS's error, logged, and the
    // block serves without autopath.
    let s = Server::start(|p| corefile(p, "    autopath @whoami\n    whoami"));
    assert!(
        s.wait_stdout(
            "[ERROR] plugin/autopath: whoami does not implement the AutoPather interface",
            Duration::from_secs(5)
        ),
        "{}",
        s.stdout()
    );
    let m = common::ask(s.port, &query(1, "a.example.", 1));
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert_eq!(m.additionals.len(), 2, "whoami's answer: {m:?}");
    // Once per load, not once per core or query.
    assert_eq!(s.stdout().matches("does not implement").count(), 1);

    // A plugin the block does not use: nothing to do, nothing said.
    let s = Server::start(|p| corefile(p, "    autopath @kubernetes\n    whoami"));
    let m = common::ask(s.port, &query(2, "a.example.", 1));
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert!(!s.stdout().contains("autopath"), "{}", s.stdout());
}

#[test]
fn the_readme_example_walks_as_it_says() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("plugins/autopath");
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    let example = readme
        .split("~~~ corefile\n")
        .nth(1)
        .and_then(|b| b.split("~~~").next())
        .expect("a corefile example");
    let resolv = std::fs::read(dir.join("examples/resolv.conf")).unwrap();
    let port = free_port();
    let n = port.port;
    let text = example.replace("1053", &n.to_string());
    let files = [("resolv.conf".to_string(), resolv)];
    let s = Server::try_start_with_files(port, &text, &[], &files).unwrap();
    let m = ask(s.port, "www.example.org.default.svc.cluster.local.");
    assert_eq!(
        show(&m.answers),
        [
            "CNAME 3600 www.example.org.default.svc.cluster.local. www.example.org.",
            "A 3600 www.example.org. 198.51.100.7"
        ]
    );
    let m = ask(s.port, "web.default.svc.cluster.local.");
    assert_eq!(
        show(&m.answers),
        ["A 3600 web.default.svc.cluster.local. 10.0.0.10"]
    );
}
