//! template: the real binary answers from CoreDNS's README templates over UDP and TCP on
//! loopback (A and PTR from the name's groups, NXDOMAIN with an SOA and an extended DNS
//! error, SERVFAIL when no regex matches and nothing falls through, fallthrough to the
//! next template and to the next plugin), counts in CoreDNS's metrics, and refuses bad
//! templates at start with `FILE:LINE - message`.
//!
//! Replies are read with hickory-proto (an implementation other than the server's), the
//! OPT record's options with the server's own record walker.

mod common;

use common::{Server, free_port, query_full, run_expect_failure};
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::{RData, RecordType};

/// A Corefile with one worker and one root block holding `body`.
fn corefile(port: u16, body: &str) -> String {
    format!("{{\n workers 1\n}}\n.:{port} {{\n{body}\n}}\n")
}

fn start(body: &str) -> Server {
    let body = body.to_string();
    Server::start(move |p| corefile(p, &body))
}

/// The raw reply to `name qtype` (class IN; EDNS with DO off when `edns`) over UDP, checked
/// to be the same bytes over TCP.
fn raw(port: u16, name: &str, qtype: u16, edns: bool) -> Vec<u8> {
    let q = query_full(0x7e57, name, qtype, 1, edns.then_some((1232, false)));
    let (udp, tcp) = common::udp_and_tcp(port, &q);
    let m = Message::from_vec(&udp).expect("the reply parses");
    // whoami's records tell the transports apart; everything else is the same.
    if m.additionals
        .iter()
        .all(|r| r.record_type() != RecordType::SRV)
    {
        assert_eq!(udp, tcp, "UDP and TCP replies differ for {name} {qtype}");
    }
    udp
}

fn ask(port: u16, name: &str, qtype: u16) -> Message {
    Message::from_vec(&raw(port, name, qtype, false)).unwrap()
}

/// The records of a section as `TYPE TTL OWNER DATA`.
fn show(records: &[hickory_proto::rr::Record]) -> Vec<String> {
    records
        .iter()
        .map(|r| {
            let data = match &r.data {
                RData::A(a) => a.0.to_string(),
                RData::PTR(p) => p.0.to_string(),
                RData::CNAME(c) => c.0.to_string(),
                RData::NS(n) => n.0.to_string(),
                RData::MX(mx) => format!("{} {}", mx.preference, mx.exchange),
                RData::SOA(s) => format!("{} {} {}", s.mname, s.rname, s.minimum),
                other => format!("{other:?}"),
            };
            format!("{} {} {} {data}", r.record_type(), r.ttl, r.name)
        })
        .collect()
}

/// whoami's reply: the query reached the plugin after the templates.
#[track_caller]
fn assert_whoami(m: &Message) {
    assert_eq!(m.metadata.response_code, ResponseCode::NoError, "{m:?}");
    assert!(m.answers.is_empty(), "{m:?}");
    assert_eq!(m.additionals.len(), 2, "whoami's A and SRV: {m:?}");
}

const IP_TEMPLATES: &str = r#"
    template IN A example {
      match "^ip-(?P<a>[0-9]*)-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]$"
      answer "{{ .Name }} 60 IN A {{ .Group.a }}.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}"
      fallthrough
    }
    template IN PTR in-addr.arpa {
      match ^(?P<d>[0-9]*)[.](?P<c>[0-9]*)[.](?P<b>[0-9]*)[.](?P<a>[0-9]*)[.]in-addr[.]arpa[.]$
      answer "{{ .Name }} 60 IN PTR ip-{{ .Group.a }}-{{ .Group.b }}-{{ .Group.c }}-{{ .Group.d }}.example."
    }
    template IN MX example {
      match ^ip-10-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]$
      answer "{{ .Name }} 60 IN MX 10 {{ .Name }}"
      additional "{{ .Name }} 60 IN A 10.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}"
      authority "example. 60 IN NS ns0.example."
    }
    whoami
"#;

#[test]
fn a_ptr_and_mx_from_the_name() {
    let s = start(IP_TEMPLATES);
    let m = ask(s.port, "IP-10-1-2-3.example.", 1);
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert!(m.metadata.authoritative, "AA, as CoreDNS sets it");
    // The owner is `.Name`: the name lower-cased.
    assert_eq!(show(&m.answers), ["A 60 ip-10-1-2-3.example. 10.1.2.3"]);
    assert!(m.authorities.is_empty() && m.additionals.is_empty());

    let m = ask(s.port, "3.2.1.10.in-addr.arpa.", 12);
    assert_eq!(
        show(&m.answers),
        ["PTR 60 3.2.1.10.in-addr.arpa. ip-10-1-2-3.example."]
    );

    let m = ask(s.port, "ip-10-1-2-3.example.", 15);
    assert_eq!(
        show(&m.answers),
        ["MX 60 ip-10-1-2-3.example. 10 ip-10-1-2-3.example."]
    );
    assert_eq!(show(&m.authorities), ["NS 60 example. ns0.example."]);
    assert_eq!(show(&m.additionals), ["A 60 ip-10-1-2-3.example. 10.1.2.3"]);

    // No regex of the A template matches: it falls through, past the others (another
    // type), to whoami.
    assert_whoami(&ask(s.port, "www.example.", 1));
    // Outside every template's zone: whoami.
    assert_whoami(&ask(s.port, "example.org.", 1));
    // The MX template has no fallthrough: SERVFAIL.
    let m = ask(s.port, "www.example.", 15);
    assert_eq!(m.metadata.response_code, ResponseCode::ServFail);
    assert!(m.answers.is_empty());
    // Nor has the PTR template.
    let m = ask(s.port, "x.in-addr.arpa.", 12);
    assert_eq!(m.metadata.response_code, ResponseCode::ServFail);
}

#[test]
fn nxdomain_with_soa_and_an_extended_error() {
    let s = start(
        r#"
    template ANY ANY invalid {
      rcode NXDOMAIN
      authority "invalid. 60 {{ .Class }} SOA ns.invalid. hostmaster.invalid. (1 60 60 60 60)"
      ederror 21 "Blocked according to RFC2606"
    }
    whoami
"#,
    );
    let mut ede = 21u16.to_be_bytes().to_vec();
    ede.extend_from_slice(b"Blocked according to RFC2606");
    for edns in [true, false] {
        let reply = raw(s.port, "www.example.invalid.", 1, edns);
        let m = Message::from_vec(&reply).unwrap();
        assert_eq!(m.metadata.response_code, ResponseCode::NXDomain, "{m:?}");
        assert!(m.metadata.authoritative);
        assert!(m.answers.is_empty());
        assert_eq!(
            show(&m.authorities),
            ["SOA 60 invalid. ns.invalid. hostmaster.invalid. 60"]
        );
        // CoreDNS adds the OPT for the error whether or not the client sent one.
        assert_eq!(
            common::opt_options(&reply),
            Some(vec![(15, ede.clone())]),
            "EDNS {edns}"
        );
    }
    assert_whoami(&ask(s.port, "example.org.", 1));
}

#[test]
fn fallthrough_to_the_next_template_and_a_zone_list() {
    let s = start(
        r#"
    template IN A example {
      match "^ip0a(?P<b>[a-f0-9]{2})(?P<c>[a-f0-9]{2})(?P<d>[a-f0-9]{2})[.]example[.]$"
      answer "{{ .Name }} 60 IN A 10.{{ parseInt .Group.b 16 8 }}.{{ parseInt .Group.c 16 8 }}.{{ parseInt .Group.d 16 8 }}"
      fallthrough only.example
    }
    template IN A example {
      answer "{{ .Name }} 30 IN A 192.0.2.{{ len .Name }}"
    }
    whoami
"#,
    );
    let m = ask(s.port, "ip0a7b0cff.example.", 1);
    assert_eq!(show(&m.answers), ["A 60 ip0a7b0cff.example. 10.123.12.255"]);
    // The first template falls through for names under only.example, to the second.
    let m = ask(s.port, "a.only.example.", 1);
    assert_eq!(show(&m.answers), ["A 30 a.only.example. 192.0.2.15"]);
    // Elsewhere in example. it does not: SERVFAIL.
    let m = ask(s.port, "a.other.example.", 1);
    assert_eq!(m.metadata.response_code, ResponseCode::ServFail);
}

#[test]
fn metrics_count_matches_and_failures() {
    let hp = free_port();
    let h = hp.port;
    let s = start(&format!(
        r#" prometheus 127.0.0.1:{h}
    template IN A example {{
      match "^ip-(?P<a>[0-9]+)[.]example[.]$"
      answer "{{{{ .Name }}}} 60 IN A 10.0.0.{{{{ .Group.a }}}}"
    }}
    template IN TXT example {{
      answer "{{{{ .Name }}}} 60 IN TXT {{{{ index .Match 3 }}}}"
    }}
    template IN MX example {{
      answer "{{{{ .Name }}}} 60 IN MX {{{{ .Name }}}}"
    }}"#
    ));
    for _ in 0..3 {
        assert_eq!(ask(s.port, "ip-7.example.", 1).answers.len(), 1);
    }
    assert_eq!(
        ask(s.port, "a.example.", 16).metadata.response_code,
        ResponseCode::ServFail
    );
    assert_eq!(
        ask(s.port, "a.example.", 15).metadata.response_code,
        ResponseCode::ServFail
    );
    let server = format!("dns://:{}", s.port);
    let page = common::metrics::scrape(h);
    let labels = |t: &'static str| {
        [
            ("server", server.clone()),
            ("zone", "example.".to_string()),
            ("view", String::new()),
            ("class", "IN".to_string()),
            ("type", t.to_string()),
        ]
    };
    let get = |name: &str, l: &[(&str, String)]| {
        let l: Vec<(&str, &str)> = l.iter().map(|(k, v)| (*k, v.as_str())).collect();
        common::metrics::value(&page, name, &l)
    };
    // Three A queries over UDP and three over TCP.
    assert_eq!(
        get("coredns_template_matches_total", &labels("A")),
        Some(6.0),
        "{page}"
    );
    assert_eq!(
        get("coredns_template_matches_total", &labels("TXT")),
        Some(2.0),
        "{page}"
    );
    let mut failed = labels("TXT").to_vec();
    failed.push(("section", "answer".into()));
    failed.push(("template", "{{.Name}} 60 IN TXT {{index .Match 3}}".into()));
    assert_eq!(
        get("coredns_template_template_failures_total", &failed),
        Some(2.0),
        "{page}"
    );
    let mut bad_rr = labels("MX").to_vec();
    bad_rr.push(("section", "answer".into()));
    bad_rr.push(("template", "{{.Name}} 60 IN MX {{.Name}}".into()));
    assert_eq!(
        get("coredns_template_rr_failures_total", &bad_rr),
        Some(2.0),
        "{page}"
    );
    drop(s);
}

#[test]
fn bad_templates_do_not_start() {
    for (body, line, want) in [
        (
            " template IN A {\n  answer \"{{ notAFunction }}\"\n }",
            6,
            "could not compile template: {{ notAFunction }}, template: answer:1:3: function \"notAFunction\" not defined",
        ),
        (
            " template IN A {\n  authority \"{{ .Message.Answer }}\"\n }",
            6,
            "could not compile template: {{ .Message.Answer }}, template: authority:1:3: .Message.Answer is not supported by ringdns",
        ),
        (
            " template IN A {\n  var ip 1\n }",
            6,
            "'var' is not supported: ringdns does not implement the expr language",
        ),
        (
            " template IN A {\n  rcode NOPE\n }",
            6,
            "unknown rcode NOPE",
        ),
        (" template IN X", 5, "invalid RR class X"),
    ] {
        let text = corefile(1053, body);
        let (code, err) = run_expect_failure(&text);
        assert_eq!(code, 1, "exit status for:\n{text}\nstderr: {err}");
        let want = format!("Corefile:{line} - Error during parsing: plugin/template: {want}");
        assert!(err.contains(&want), "for:\n{text}\nwant {want:?} in: {err}");
    }
}

#[test]
fn a_cname_answer_to_an_a_query_has_its_target_looked_up_through_the_server() {
    let s = Server::start(|p| {
        format!(
            "example.org:{p} {{\n template IN ANY example.org {{\n  match \"^(www|gone)[.]example[.]org[.]$\"\n  \
             answer \"{{{{ .Name }}}} 60 IN CNAME {{{{ index .Match 1 }}}}.example.net.\"\n }}\n}}\n\
             example.net:{p} {{\n hosts {{\n  192.0.2.7 www.example.net\n  fallthrough\n }}\n}}\n"
        )
    });
    let m = ask(s.port, "www.example.org.", 1);
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert_eq!(
        show(&m.answers),
        [
            "CNAME 60 www.example.org. www.example.net.",
            "A 3600 www.example.net. 192.0.2.7"
        ],
        "the CNAME, then the target's address (UDP and TCP alike)"
    );
    // Not A or AAAA: the CNAME alone, as CoreDNS.
    let m = ask(s.port, "www.example.org.", 16);
    assert_eq!(
        show(&m.answers),
        ["CNAME 60 www.example.org. www.example.net."]
    );
    // A target nothing answers: the CNAME alone.
    let m = ask(s.port, "gone.example.org.", 1);
    assert_eq!(
        show(&m.answers),
        ["CNAME 60 gone.example.org. gone.example.net."]
    );
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
}
