//! prometheus: the real binary counts real queries over UDP and TCP and serves them at
//! `/metrics`, scraped here with a plain HTTP GET and read series by series.

mod common;

use common::authority::{ARecord, Authority, Zone};
use common::metrics::{scrape, scrape_until, value};
use common::{
    Server, free_port, http_get_full, query, query_full, run_expect_failure, tcp_exchange,
};
use std::time::{Duration, Instant};

/// Sends one UDP query and waits for its reply; returns the rcode.
fn udp(port: u16, packet: &[u8]) -> u8 {
    let r = common::udp_exchange(port, packet, Duration::from_secs(3)).expect("a reply");
    common::rcode(&r)
}

const A: u16 = 1;
const AAAA: u16 = 28;
const MX: u16 = 15;

/// Two scrapes of one server: what changed between them is what the test's own queries did
/// (the harness's readiness probes are counted too, before the first).
struct Delta {
    before: String,
    after: String,
}

impl Delta {
    fn of(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        value(&self.after, name, labels).unwrap_or(0.0)
            - value(&self.before, name, labels).unwrap_or(0.0)
    }
}

#[test]
fn queries_are_counted_by_zone_proto_family_type_rcode_and_plugin() {
    let auth = Authority::start(Zone {
        records: vec![ARecord {
            name: "www.test.".into(),
            ttl: 300,
            addr: [192, 0, 2, 1],
        }],
        soa_ttl: 3600,
        soa_minimum: 60,
        servfail_under_fail: false,
    });
    let hp = free_port();
    let (h, up) = (hp.port, auth.port);
    let s = Server::start(move |p| {
        format!(
            "who.example:{p} {{\n prometheus 127.0.0.1:{h}\n whoami\n}}\n\
             test:{p} {{\n prometheus 127.0.0.1:{h}\n forward . 127.0.0.1:{up}\n}}\n"
        )
    });
    let p = s.port;
    let before = scrape(h);
    // UDP: 3 A, 2 AAAA (one with DO) to whoami.
    for i in 0..3 {
        assert_eq!(udp(p, &query(0x100 + i, "who.example.", A)), 0);
    }
    assert_eq!(udp(p, &query(0x200, "a.who.example.", AAAA)), 0);
    let with_do = query_full(0x201, "a.who.example.", AAAA, 1, Some((1232, true)));
    assert_eq!(udp(p, &with_do), 0);
    // TCP: 2 MX and one type outside CoreDNS's list, on one connection.
    let replies = tcp_exchange(
        p,
        &[
            query(0x300, "who.example.", MX),
            query(0x301, "b.who.example.", MX),
            query(0x302, "who.example.", 99),
        ],
    );
    assert_eq!(replies.len(), 3);
    // NXDOMAIN from the upstream, through forward.
    assert_eq!(udp(p, &query(0x400, "nope.test.", A)), 3);
    assert_eq!(udp(p, &query(0x401, "nope2.test.", A)), 3);
    // REFUSED by the server: no block for the name, over UDP and TCP.
    assert_eq!(udp(p, &query(0x500, "outside.invalid.", A)), 5);
    let refused = tcp_exchange(p, &[query(0x501, "outside.invalid.", 16)]);
    assert_eq!(common::rcode(&refused[0]), 5);

    let server = format!("dns://:{p}");
    let srv = server.as_str();
    let req_labels = |zone: &'static str, proto: &'static str, ty: &'static str| {
        [
            ("server", srv),
            ("zone", zone),
            ("view", ""),
            ("proto", proto),
            ("family", "1"),
            ("type", ty),
        ]
    };
    let after = scrape_until(h, |t| {
        value(
            t,
            "coredns_dns_requests_total",
            &req_labels("dropped", "tcp", "TXT"),
        ) == Some(1.0)
    });
    let d = Delta { before, after };
    let t = &d.after;
    let req = |zone, proto, ty| d.of("coredns_dns_requests_total", &req_labels(zone, proto, ty));
    let who = "who.example.";
    assert_eq!(req(who, "udp", "A"), 3.0, "{t}");
    assert_eq!(req(who, "udp", "AAAA"), 2.0, "{t}");
    assert_eq!(req(who, "tcp", "MX"), 2.0, "{t}");
    assert_eq!(req(who, "tcp", "other"), 1.0, "{t}");
    assert_eq!(req(who, "udp", "MX"), 0.0, "{t}");
    assert_eq!(
        value(
            t,
            "coredns_dns_requests_total",
            &req_labels(who, "udp", "MX")
        ),
        None,
        "a series appears once counted: {t}"
    );
    assert_eq!(req("test.", "udp", "A"), 2.0, "{t}");
    assert_eq!(req("dropped", "udp", "A"), 1.0, "{t}");
    assert_eq!(req("dropped", "tcp", "TXT"), 1.0, "{t}");

    let resp = |zone: &str, rcode: &str, plugin: &str| {
        d.of(
            "coredns_dns_responses_total",
            &[
                ("server", srv),
                ("zone", zone),
                ("view", ""),
                ("rcode", rcode),
                ("plugin", plugin),
            ],
        )
    };
    assert_eq!(resp(who, "NOERROR", "whoami"), 8.0, "{t}");
    assert_eq!(resp("test.", "NXDOMAIN", "forward"), 2.0, "{t}");
    assert_eq!(resp("dropped", "REFUSED", ""), 2.0, "{t}");

    let zl = |zone: &'static str| [("server", srv), ("zone", zone), ("view", "")];
    let with = |zone: &'static str, extra: &[(&'static str, &'static str)]| {
        let mut v = zl(zone).to_vec();
        v.extend_from_slice(extra);
        v
    };
    assert_eq!(d.of("coredns_dns_do_requests_total", &zl(who)), 1.0, "{t}");
    assert_eq!(
        d.of("coredns_dns_request_duration_seconds_count", &zl(who)),
        8.0,
        "{t}"
    );
    assert_eq!(
        d.of(
            "coredns_dns_request_duration_seconds_bucket",
            &with(who, &[("le", "+Inf")])
        ),
        8.0,
        "{t}"
    );
    assert_eq!(
        d.of(
            "coredns_dns_request_size_bytes_count",
            &with(who, &[("proto", "tcp")])
        ),
        3.0,
        "{t}"
    );
    // whoami's replies are never empty: nothing in the le=0 bucket, all five below +Inf.
    assert_eq!(
        d.of(
            "coredns_dns_response_size_bytes_bucket",
            &with(who, &[("proto", "udp"), ("le", "0")])
        ),
        0.0,
        "{t}"
    );
    assert_eq!(
        d.of(
            "coredns_dns_response_size_bytes_bucket",
            &with(who, &[("proto", "udp"), ("le", "+Inf")])
        ),
        5.0,
        "{t}"
    );
    assert!(
        d.of(
            "coredns_dns_response_size_bytes_sum",
            &with(who, &[("proto", "udp")])
        ) > 5.0 * 40.0,
        "{t}"
    );

    for name in ["prometheus", "whoami"] {
        assert_eq!(
            value(t, "coredns_plugin_enabled", &with(who, &[("name", name)])),
            Some(1.0),
            "{name}: {t}"
        );
    }
    assert_eq!(
        value(
            t,
            "coredns_plugin_enabled",
            &with("test.", &[("name", "forward")])
        ),
        Some(1.0),
        "{t}"
    );
    assert_eq!(value(t, "coredns_panics_total", &[]), Some(0.0), "{t}");
    assert!(
        t.contains("# TYPE coredns_build_info gauge\ncoredns_build_info{version=\""),
        "{t}"
    );
    // Every counted query, by the core that served it.
    let per_core = |page: &str| -> f64 {
        page.lines()
            .filter(|l| l.starts_with("ringdns_core_queries_total{"))
            .map(|l| l.rsplit_once(' ').unwrap().1.parse::<f64>().unwrap())
            .sum()
    };
    assert_eq!(per_core(&d.after) - per_core(&d.before), 12.0, "{t}");
}

#[test]
fn the_endpoint_serves_only_metrics_in_the_text_format() {
    let hp = free_port();
    let h = hp.port;
    let _s = Server::start(move |p| format!(".:{p} {{\n prometheus 127.0.0.1:{h}\n whoami\n}}\n"));
    let (code, head, _) = http_get_full(h, "/metrics").unwrap();
    assert_eq!(code, 200);
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/plain; version=0.0.4"),
        "{head}"
    );
    assert_eq!(http_get_full(h, "/other").map(|x| x.0), Some(404));
}

#[test]
fn a_taken_metrics_port_is_a_start_up_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let (code, err) = run_expect_failure(&format!(
        ".:1053 {{\n prometheus 127.0.0.1:{port}\n whoami\n}}\n"
    ));
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!("listen tcp 127.0.0.1:{port}")),
        "{err}"
    );
}

#[test]
fn cache_hits_and_misses_and_forward_requests_are_exported() {
    // The upstream: a second ringdns answering A queries (erratic, never dropping).
    let upstream = Server::start(|p| format!(".:{p} {{\n erratic {{\n  drop 0\n }}\n}}\n"));
    let hp = free_port();
    let (h, up) = (hp.port, upstream.port);
    let s = Server::start(move |p| {
        format!(
            "{{\n workers 1\n}}\n.:{p} {{\n prometheus 127.0.0.1:{h}\n cache\n forward . 127.0.0.1:{up}\n}}\n"
        )
    });
    let p = s.port;
    let before = scrape(h);
    // a.example.: one miss then two hits; b.example.: one miss then one hit.
    for (i, name) in [
        "a.example.",
        "a.example.",
        "a.example.",
        "b.example.",
        "b.example.",
    ]
    .iter()
    .enumerate()
    {
        assert_eq!(udp(p, &query(0x700 + i as u16, name, A)), 0, "{name}");
    }
    let server = format!("dns://:{p}");
    let to = format!("127.0.0.1:{up}");
    let labels = |ty: Option<&'static str>| {
        let mut l = vec![("server", server.as_str()), ("zones", "."), ("view", "")];
        if let Some(ty) = ty {
            l.push(("type", ty));
        }
        l
    };
    let before_requests =
        value(&before, "coredns_cache_requests_total", &labels(None)).unwrap_or(0.0);
    let after = scrape_until(h, |t| {
        value(t, "coredns_cache_requests_total", &labels(None)) == Some(before_requests + 5.0)
    });
    let d = Delta { before, after };
    let t = &d.after;
    let cache = |name: &str, ty: Option<&'static str>| d.of(name, &labels(ty));
    assert_eq!(cache("coredns_cache_requests_total", None), 5.0, "{t}");
    assert_eq!(cache("coredns_cache_misses_total", None), 2.0, "{t}");
    assert_eq!(
        cache("coredns_cache_hits_total", Some("success")),
        3.0,
        "{t}"
    );
    assert_eq!(
        cache("coredns_cache_hits_total", Some("denial")),
        0.0,
        "{t}"
    );
    assert_eq!(cache("coredns_cache_entries", Some("success")), 2.0, "{t}");
    assert_eq!(cache("coredns_cache_drops_total", None), 0.0, "{t}");

    // forward asked the upstream twice (the two misses).
    let fwd = |name: &str, labels: &[(&str, &str)]| Some(d.of(name, labels));
    assert_eq!(
        fwd(
            "coredns_proxy_request_duration_seconds_count",
            &[("proxy_name", "forward"), ("to", &to), ("rcode", "NOERROR")]
        ),
        Some(2.0),
        "{t}"
    );
    assert_eq!(
        fwd("coredns_forward_requests_total", &[("to", &to)]),
        Some(2.0),
        "{t}"
    );
    assert_eq!(
        fwd(
            "coredns_forward_responses_total",
            &[("to", &to), ("rcode", "NOERROR")]
        ),
        Some(2.0),
        "{t}"
    );
    assert_eq!(
        fwd("ringdns_forward_queries_total", &[("from", ".")]),
        Some(2.0),
        "{t}"
    );
    let conn = d.of(
        "coredns_proxy_conn_cache_hits_total",
        &[("proxy_name", "forward"), ("to", &to), ("proto", "udp")],
    ) + d.of(
        "coredns_proxy_conn_cache_misses_total",
        &[("proxy_name", "forward"), ("to", &to), ("proto", "udp")],
    );
    assert_eq!(conn, 2.0, "one socket pick per exchange: {t}");
    assert_eq!(
        fwd(
            "coredns_proxy_healthcheck_failures_total",
            &[("proxy_name", "forward"), ("to", &to)]
        ),
        Some(0.0),
        "{t}"
    );
    assert_eq!(
        fwd("coredns_forward_healthcheck_broken_total", &[]),
        Some(0.0),
        "{t}"
    );
    assert_eq!(
        fwd("coredns_forward_max_concurrent_rejects_total", &[]),
        Some(0.0),
        "{t}"
    );

    // Who wrote the replies the clients got.
    let resp = |plugin: &str| {
        fwd(
            "coredns_dns_responses_total",
            &[
                ("server", &server),
                ("zone", "."),
                ("view", ""),
                ("rcode", "NOERROR"),
                ("plugin", plugin),
            ],
        )
    };
    assert_eq!(resp("cache"), Some(3.0), "{t}");
    assert_eq!(resp("forward"), Some(2.0), "{t}");
}

/// Rewrites the server's Corefile, sends SIGUSR1 and waits until the log shows `want` once
/// more than before.
fn reload_and_wait(s: &Server, text: &str, want: &str) {
    let before = s.stdout().matches(want).count();
    let tmp = s.dir.write("Corefile.next", text);
    std::fs::rename(tmp, s.dir.0.join("Corefile")).unwrap();
    s.signal("USR1");
    let t0 = Instant::now();
    while s.stdout().matches(want).count() == before {
        assert!(t0.elapsed() < Duration::from_secs(10), "{}", s.stdout());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn reloads_are_exported_and_counts_go_on_across_them() {
    let claim = free_port();
    let mport = claim.port;
    let corefile = |p: u16, plugin: &str| {
        format!(
            "example.org:{p} {{\n    prometheus 127.0.0.1:{mport}\n    reload 2s 1s\n    {plugin}\n}}\n"
        )
    };
    let s = Server::start(|p| corefile(p, "whoami"));
    let p = s.port;
    let requests = |text: &str| {
        value(
            text,
            "coredns_dns_requests_total",
            &[
                ("server", &format!("dns://:{p}")),
                ("zone", "example.org."),
                ("view", ""),
                ("proto", "udp"),
                ("family", "1"),
                ("type", "A"),
            ],
        )
    };
    for i in 0..3 {
        assert_eq!(udp(p, &query(i, "a.example.org.", 1)), 0);
    }
    let page = scrape_until(mport, |t| requests(t) == Some(3.0));
    assert_eq!(value(&page, "coredns_reload_failed_total", &[]), Some(0.0));
    let hash = |t: &str| {
        t.lines()
            .find(|l| l.starts_with("coredns_reload_version_info{"))
            .map(str::to_string)
    };
    let first = hash(&page).expect("the running configuration's hash is exported");
    assert!(first.contains("hash=\"sha512\""), "{first}");

    // A bad Corefile: counted, the old configuration (and its endpoint) keeps serving.
    reload_and_wait(&s, &corefile(p, "nonsense"), "[ERROR] SIGUSR1: ");
    let page = scrape(mport);
    assert_eq!(value(&page, "coredns_reload_failed_total", &[]), Some(1.0));
    assert_eq!(hash(&page).as_deref(), Some(first.as_str()));

    // A good one: a new hash, and the request counts go on from where they were.
    let erratic = "erratic {\n        drop 0\n    }";
    reload_and_wait(&s, &corefile(p, erratic), "[INFO] Reloading complete");
    for i in 0..2 {
        assert_eq!(udp(p, &query(10 + i, "b.example.org.", 1)), 0);
    }
    let page = scrape_until(mport, |t| requests(t) == Some(5.0));
    assert_eq!(value(&page, "coredns_reload_failed_total", &[]), Some(1.0));
    assert_ne!(hash(&page), Some(first));
}

#[test]
fn udp_batches_and_kernel_drops_are_exported_per_listener() {
    let claim = free_port();
    let mport = claim.port;
    let s =
        Server::start(|p| format!(".:{p} {{\n    prometheus 127.0.0.1:{mport}\n    whoami\n}}\n"));
    let p = s.port;
    let server = format!("dns://:{p}");
    let sum = |t: &str| value(t, "ringdns_udp_batch_size_sum", &[("server", &server)]);
    let count = |t: &str| value(t, "ringdns_udp_batch_size_count", &[("server", &server)]);
    // The harness's readiness probe may have reached the socket before the banner (on a
    // loaded machine): it is counted before this first scrape.
    let before = scrape(mport);
    let (sum0, count0) = (sum(&before).unwrap_or(0.0), count(&before).unwrap_or(0.0));
    for i in 0..7 {
        assert_eq!(udp(p, &query(i, "x.example.", 1)), 0);
    }
    // Every datagram was taken by some receive call: the batch sizes add up to 7.
    let page = scrape_until(mport, |t| sum(t) == Some(sum0 + 7.0));
    assert_eq!(sum(&page), Some(sum0 + 7.0), "{page}");
    let calls = count(&page).expect("a count of receive calls") - count0;
    assert!((1.0..=7.0).contains(&calls), "{calls}");
    assert_eq!(
        value(
            &page,
            "ringdns_udp_socket_drops_total",
            &[("server", &server)]
        ),
        Some(0.0),
        "{page}"
    );
}

#[test]
fn datagrams_the_kernel_drops_on_a_full_socket_are_counted() {
    let claim = free_port();
    let mport = claim.port;
    // A small receive buffer, and the server stopped while a burst arrives: the kernel has
    // to drop most of it.
    let s = Server::start(|p| {
        format!(
            "{{\n    udp_rcvbuf 4K\n    workers 1\n}}\n.:{p} {{\n    prometheus 127.0.0.1:{mport}\n    whoami\n}}\n"
        )
    });
    let p = s.port;
    let server = format!("dns://:{p}");
    let taken_of = |t: &str| value(t, "ringdns_udp_batch_size_sum", &[("server", &server)]);
    // The harness's readiness probe may have been received already: counted from here.
    let taken0 = taken_of(&scrape(mport)).unwrap_or(0.0);
    s.signal("STOP");
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    for i in 0..2000u16 {
        let _ = sock.send_to(&query(i, "x.example.", 1), ("127.0.0.1", p));
    }
    s.signal("CONT");
    let drops_of = |t: &str| value(t, "ringdns_udp_socket_drops_total", &[("server", &server)]);
    let page = scrape_until(mport, |t| drops_of(t).is_some_and(|d| d > 0.0));
    let drops = drops_of(&page).unwrap();
    let taken = taken_of(&page).unwrap_or(0.0) - taken0;
    // Nothing is counted twice: what was dropped was never received.
    assert!(
        drops > 0.0 && drops + taken <= 2000.0,
        "{drops} dropped, {taken} received"
    );
}

#[test]
fn the_process_families_of_coredns_dashboards_describe_the_server() {
    let hp = free_port();
    let h = hp.port;
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let s = Server::start(move |p| format!(".:{p} {{\n prometheus 127.0.0.1:{h}\n whoami\n}}\n"));
    let page = common::metrics::scrape(h);
    let value =
        |name| common::metrics::value(&page, name, &[]).unwrap_or_else(|| panic!("{name}\n{page}"));
    // The server's own figures, not the test's: its RSS as /proc tells it, its start.
    let status = std::fs::read_to_string(format!("/proc/{}/status", s.pid())).unwrap();
    let rss_kib: f64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap()
        .parse()
        .unwrap();
    let rss = value("process_resident_memory_bytes");
    assert!(
        (rss / 1024.0 - rss_kib).abs() < rss_kib / 2.0,
        "{rss} bytes against {rss_kib} KiB"
    );
    let start = value("process_start_time_seconds");
    assert!(
        start >= before - 2.0 && start <= before + 30.0,
        "{start} vs {before}"
    );
    assert!(value("process_open_fds") >= 5.0, "sockets, rings, the log");
    assert!(value("process_max_fds") >= value("process_open_fds"));
    assert!(value("process_virtual_memory_bytes") > rss);
    assert!(value("process_cpu_seconds_total") >= 0.0);
    assert!(
        page.contains("# TYPE process_cpu_seconds_total counter"),
        "{page}"
    );
}

#[test]
fn deferred_replies_leave_through_the_configured_udp_backend() {
    // erratic delays every query, so every reply is a deferred query's: it leaves through
    // the listener's reply task, which sends with a second instance of the listener's own
    // backend. Each backend counts what it sends under its own name.
    for (backend, other) in [("glommio", "mmsg"), ("mmsg", "glommio")] {
        let claim = free_port();
        let mport = claim.port;
        let s = Server::start(|p| {
            format!(
                "{{\n    udp_backend {backend}\n    workers 1\n}}\n.:{p} {{\n    prometheus 127.0.0.1:{mport}\n    erratic {{\n        delay 1 20ms\n    }}\n}}\n"
            )
        });
        let server = format!("dns://:{}", s.port);
        let sent = |t: &str, by: &str| {
            value(
                t,
                "ringdns_udp_deferred_replies_total",
                &[("server", &server), ("backend", by)],
            )
        };
        // The harness's readiness probe may have been answered (deferred) already.
        let before = sent(&scrape(mport), backend).unwrap_or(0.0);
        for i in 0..5 {
            assert_eq!(udp(s.port, &query(i, "x.example.", 1)), 0, "{backend}");
        }
        let page = scrape_until(mport, |t| sent(t, backend) == Some(before + 5.0));
        assert_eq!(
            sent(&page, backend),
            Some(before + 5.0),
            "{backend}: {page}"
        );
        assert_eq!(sent(&page, other), None, "{backend}: {page}");
    }
}
