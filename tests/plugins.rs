//! Plugin behaviour seen from outside: log classes and formats, errors consolidation, bind,
//! root, erratic.

mod common;

use common::{Server, ask, query, udp_exchange};
use hickory_proto::op::ResponseCode;
use std::time::Duration;

const A: u16 = 1;
const MX: u16 = 15;

#[test]
fn log_class_filters_by_reply_class_and_names_by_zone() {
    // erratic answers A (success) and SERVFAILs MX (error).
    let s = Server::start(|p| {
        format!(
            ".:{p} {{\n log only.test \"{{name}} {{type}} {{rcode}}\" {{\n  class error\n }}\n erratic {{\n  drop 0\n }}\n}}\n"
        )
    });
    ask(s.port, &query(1, "ok.only.test.", A));
    ask(s.port, &query(2, "bad.only.test.", MX));
    ask(s.port, &query(3, "bad.other.test.", MX));
    assert!(
        s.wait_stdout(
            "[INFO] bad.only.test. MX SERVFAIL\n",
            Duration::from_secs(3)
        ),
        "{}",
        s.stdout()
    );
    std::thread::sleep(Duration::from_millis(200));
    let out = s.stdout();
    assert!(
        !out.contains("ok.only.test."),
        "success filtered out:\n{out}"
    );
    assert!(
        !out.contains("other.test."),
        "outside the name scope:\n{out}"
    );
}

#[test]
fn log_combined_format_adds_the_opcode() {
    let s = Server::start(|p| format!(".:{p} {{\n log . {{combined}}\n whoami\n}}\n"));
    ask(s.port, &query(4, "c.test.", A));
    assert!(s.wait_stdout("NOERROR qr,aa,rd ", Duration::from_secs(3)));
    let line = s
        .stdout()
        .lines()
        .find(|l| l.contains("c.test."))
        .unwrap()
        .to_string();
    assert!(line.ends_with("s \"0\""), "{line}");
}

#[test]
fn errors_consolidate_counts_matching_errors_per_period() {
    let s = Server::start(|p| {
        format!(
            "{{\n workers 1\n}}\nx.test:{p} {{\n errors {{\n  consolidate 1s \"no next plugin found$\" warning\n }}\n log\n}}\n.:{p} {{\n whoami\n}}\n"
        )
    });
    for i in 0..3 {
        assert_eq!(
            ask(s.port, &query(10 + i, "x.test.", A))
                .metadata
                .response_code,
            ResponseCode::ServFail
        );
    }
    assert!(
        s.wait_stdout(
            "[WARNING] plugin/errors: 3 errors like 'no next plugin found$' occurred in last 1s",
            Duration::from_secs(4)
        ),
        "{}",
        s.stdout()
    );
    assert!(
        !s.stdout().contains("[ERROR] plugin/errors"),
        "consolidated, not logged one by one"
    );
}

#[test]
fn errors_show_first_logs_the_first_error_of_a_period() {
    let s = Server::start(|p| {
        format!(
            "{{\n workers 1\n}}\ny.test:{p} {{\n errors {{\n  consolidate 1s \"no next\" error show_first\n }}\n log\n}}\n.:{p} {{\n whoami\n}}\n"
        )
    });
    for i in 0..2 {
        ask(s.port, &query(20 + i, "y.test.", A));
    }
    assert!(
        s.wait_stdout(
            "2 errors like 'no next' occurred in last 1s",
            Duration::from_secs(4)
        ),
        "{}",
        s.stdout()
    );
    let firsts = s
        .stdout()
        .matches("[ERROR] plugin/errors: 2 y.test. A:")
        .count();
    assert_eq!(firsts, 1, "{}", s.stdout());
}

#[test]
fn bind_except_removes_addresses() {
    // lo has 127.0.0.1 (and ::1); except 127.0.0.1 leaves no IPv4 listener.
    let s = Server::start(|p| {
        format!(
            "{{\n workers 1\n}}\n.:{p} {{\n bind 127.0.0.2 127.0.0.1 {{\n  except 127.0.0.2\n }}\n whoami\n}}\n"
        )
    });
    let q = query(30, "b.test.", A);
    assert!(udp_exchange(s.port, &q, Duration::from_secs(1)).is_some());
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    sock.send_to(&q, ("127.0.0.2", s.port)).unwrap();
    let mut buf = [0u8; 512];
    assert!(sock.recv_from(&mut buf).is_err(), "127.0.0.2 was excepted");
    assert!(
        s.wait_stdout(
            &format!(".:{} on 127.0.0.1", s.port),
            Duration::from_secs(3)
        ),
        "{}",
        s.stdout()
    );
}

#[test]
fn root_warns_about_a_missing_directory_and_serves() {
    let s = Server::start(|p| format!(".:{p} {{\n root /nonexistent/ringdns\n whoami\n}}\n"));
    assert!(
        s.stdout()
            .contains("[WARNING] plugin/root: Root path does not exist: /nonexistent/ringdns"),
        "{}",
        s.stdout()
    );
}

#[test]
fn erratic_drops_and_truncates_every_nth_query() {
    let s = Server::start(|p| {
        format!("{{\n workers 1\n}}\n.:{p} {{\n erratic {{\n  drop 3\n  truncate 2\n }}\n}}\n")
    });
    // The readiness probe used query 0 (dropped: 0 % 3 == 0) or was answered; count from here.
    let mut answered = 0;
    let mut truncated = 0;
    for i in 0..12u16 {
        if let Some(r) = udp_exchange(
            s.port,
            &query(100 + i, "e.test.", A),
            Duration::from_millis(300),
        ) {
            answered += 1;
            truncated += usize::from(r[2] & 0x02 != 0);
        }
    }
    assert_eq!(answered, 8, "every third of 12 dropped");
    assert!(
        (3..=5).contains(&truncated),
        "about half truncated: {truncated}"
    );
}

#[test]
fn erratic_answers_axfr_with_a_small_zone() {
    let s = Server::start(|p| format!(".:{p} {{\n erratic {{\n  drop 0\n }}\n}}\n"));
    let r = common::tcp_exchange(s.port, &[query(5, "xfr.test.", 252)]);
    let m = hickory_proto::op::Message::from_vec(&r[0]).unwrap();
    let types: Vec<String> = m
        .answers
        .iter()
        .map(|a| a.record_type().to_string())
        .collect();
    assert_eq!(types, ["SOA", "NS", "NS", "AAAA", "AAAA", "SOA"]);
    assert_eq!(m.answers[3].name.to_string(), "a.xfr.test.");
    let ns = format!("{:?}", m.answers[1].data);
    assert!(ns.contains("b.xfr.test."), "{ns}");
}
