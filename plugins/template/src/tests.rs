//! The plugin's answers, served in process through `serve_now` and `serve` with a stub for
//! the next plugin: CoreDNS's template_test.go cases (`TestHandler`, `TestMultiSection`).

use super::*;
use ringdns_plugin::wire::rcode::{NOERROR, NXDOMAIN, REFUSED};
use ringdns_plugin::wire::rtype::{A, MX, NS, OPT, PTR, SOA, TXT};
use ringdns_plugin::wire::{Header, QueryBuilder, records};
use std::net::SocketAddr;

/// What the next plugin returns: an rcode of its own (CoreDNS's tests' `rcodeFallthrough`).
const TO_NEXT: u8 = 201;

/// The plugin set up on `directives` in a block keyed `key`.
fn plugin(key: &str, directives: &str) -> TemplatePlugin {
    let text = format!("{key} {{\n{directives}\n}}\n");
    let (_, config) = ringdns_testkit::config_with_zones::<TemplatePlugin>(&text).unwrap();
    let core = CoreInfo {
        index: 0,
        cpu: 0,
        cores: 1,
    };
    TemplatePlugin::build(&Arc::new(config), &core).unwrap()
}

/// What a query got: the rcode, and the reply's records as text (`SECTION TYPE TTL OWNER
/// RDATA-BYTES`) when the plugin wrote one.
#[derive(Debug, PartialEq)]
struct Got {
    rcode: u8,
    error: Option<String>,
    aa: bool,
    records: Vec<(Section, u16, u32, String, Vec<u8>)>,
}

fn ask(p: &TemplatePlugin, name: &str, qclass: u16, qtype: u16) -> Got {
    let now = serve(p, name, qclass, qtype, true);
    let later = serve(p, name, qclass, qtype, false);
    assert_eq!(now, later, "serve_now and serve differ for {name} {qtype}");
    now
}

fn serve(p: &TemplatePlugin, name: &str, qclass: u16, qtype: u16, at_once: bool) -> Got {
    let w = ringdns_testkit::wire_name(name);
    let packet = QueryBuilder::new(Name::from_wire(&w).unwrap(), qtype)
        .class(qclass)
        .id(0x4242)
        .build();
    let client: SocketAddr = "10.240.0.1:5300".parse().unwrap();
    let (status, reply) = ringdns_testkit::serve_once(p, &packet, client, TO_NEXT, at_once);
    let error = status.error.map(|e| e.to_string());
    if reply.is_empty() {
        return Got {
            rcode: status.rcode,
            error,
            aa: false,
            records: Vec::new(),
        };
    }
    assert!(client_write(status.rcode) || status.rcode == NOERROR);
    let h = Header::new(&reply);
    let mut out = Vec::new();
    for r in records(&reply).unwrap() {
        let r = r.unwrap();
        let mut wire = Vec::new();
        ringdns_plugin::wire::expand_name(&reply, r.owner.start, reply.len(), &mut wire).unwrap();
        let owner = Name::from_wire(&wire).unwrap().to_string();
        out.push((
            r.section,
            r.rtype,
            r.ttl(&reply),
            owner,
            reply[r.rdata.clone()].to_vec(),
        ));
    }
    Got {
        rcode: h.rcode(),
        error,
        aa: h.aa(),
        records: out,
    }
}

const IP_A: &str = "template ANY ANY {
  match (^|[.])ip-10-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]$
  answer \"{{ .Name }} 60 IN A 10.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}\"
  fallthrough
}";

#[test]
fn a_record_from_the_groups() {
    let p = plugin(".", IP_A);
    let g = ask(&p, "IP-10-95-12-8.example.", 1, A);
    assert_eq!(g.rcode, NOERROR);
    assert!(g.aa, "CoreDNS sets AA");
    assert_eq!(
        g.records,
        [(
            Section::Answer,
            A,
            60,
            "ip-10-95-12-8.example.".into(),
            vec![10, 95, 12, 8]
        )]
    );
    // ExampleDomainNameMismatch: the regex does not match, fallthrough covers the name.
    assert_eq!(ask(&p, "test.invalid.", 1, A).rcode, TO_NEXT);
}

#[test]
fn parse_int_remote_mx_and_sections() {
    let p = plugin(
        ".",
        "template ANY ANY example {
  match ^ip0a(?P<b>[a-f0-9]{2})(?P<c>[a-f0-9]{2})(?P<d>[a-f0-9]{2})[.]example[.]$
  answer \"{{ .Name }} 60 IN A 10.{{ parseInt .Group.b 16 8 }}.{{ parseInt .Group.c 16 8 }}.{{ parseInt .Group.d 16 8 }}\"
  fallthrough
}
template IN A remote.test {
  answer \"{{ .Name }} 60 IN A {{ .Remote }}\"
}
template IN MX example {
  match ^ip-10-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]$
  answer \"{{ .Name }} 60 MX 10 {{ .Name }}\"
  additional \"{{ .Name }} 60 IN A 10.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}\"
  authority \"example. IN NS ns0.example.com.\"
}",
    );
    let g = ask(&p, "ip0a5f0c09.example.", 1, A);
    assert_eq!(g.records[0].4, vec![10, 95, 12, 9]);
    let g = ask(&p, "x.remote.test.", 1, A);
    assert_eq!(g.records[0].4, vec![10, 240, 0, 1]);
    let g = ask(&p, "ip-10-95-12-8.example.", 1, MX);
    let kinds: Vec<(Section, u16, u32)> = g.records.iter().map(|r| (r.0, r.1, r.2)).collect();
    assert_eq!(
        kinds,
        [
            (Section::Answer, MX, 60),
            (Section::Authority, NS, 3600),
            (Section::Additional, A, 60)
        ],
        "sections in wire order; no TTL is 3600"
    );
}

#[test]
fn nxdomain_servfail_and_errors() {
    let p = plugin(
        ".",
        "template ANY ANY invalid {
  rcode NXDOMAIN
  answer \"invalid. 60 {{ .Class }} SOA a.invalid. b.invalid. (1 60 60 60 60)\"
}
template ANY ANY servfail {
  rcode SERVFAIL
}
template ANY ANY broken {
  answer \"{{ .Name }} 60 IN TXT \\\"{{ index .Match 2 }}\\\"\"
}
template ANY ANY nonrr {
  additional \"{{ .Name }}\"
}",
    );
    let g = ask(&p, "test.invalid.", 1, MX);
    assert_eq!(
        (g.rcode, g.records.len(), g.records[0].1),
        (NXDOMAIN, 1, SOA)
    );
    let g = ask(&p, "x.servfail.", 1, A);
    assert_eq!((g.rcode, g.records.len(), g.error), (SERVFAIL, 0, None));
    let g = ask(&p, "test.broken.", 1, A);
    assert_eq!(g.rcode, SERVFAIL);
    assert_eq!(
        g.error.as_deref(),
        Some(
            "plugin/template: template: answer:1:26: executing \"answer\" at <index .Match 2>: error calling index: index out of range: 2"
        )
    );
    let g = ask(&p, "test.nonrr.", 1, A);
    assert_eq!(g.rcode, SERVFAIL);
    assert!(g.error.unwrap().starts_with("plugin/template: dns: "));
}

#[test]
fn extended_dns_error() {
    let p = plugin(
        ".",
        "template ANY ANY invalid {
  rcode NXDOMAIN
  authority \"invalid. 60 {{ .Class }} SOA ns.invalid. hostmaster.invalid. (1 60 60 60 60)\"
  ederror 21 \"Blocked due to RFC2606\"
}",
    );
    let g = ask(&p, "test.invalid.", 1, A);
    assert_eq!(g.rcode, NXDOMAIN);
    let opt = g.records.iter().find(|r| r.1 == OPT).expect("an OPT");
    let mut want = vec![0, 15, 0, 24, 0, 21];
    want.extend_from_slice(b"Blocked due to RFC2606");
    assert_eq!(opt.4, want);
    assert_eq!(
        opt.2 & 0x8000,
        0x8000,
        "DO set, as miekg's SetEdns0(4096, true)"
    );
}

/// template_test.go's TestMultiSection, in a block keyed `test.`.
#[test]
fn multi_section() {
    let p = plugin(
        "test.:8053",
        "template IN A {
  rcode REFUSED
}
template IN TXT {
  match \"$^\"
  rcode SERVFAIL
  fallthrough
}
template CH TXT coredns.invalid {
  answer \"{{ .Name }} 60 CH TXT \\\"test\\\"\"
}
template IN A example {
  match ^ip-10-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]$
  answer \"{{ .Name }} 60 IN A 10.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}\"
  fallthrough
}
template IN MX example {
  match ^ip-10-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]$
  answer \"{{ .Name }} 60 IN MX 10 {{ .Name }}\"
  additional \"{{ .Name }} 60 IN A 10.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}\"
}",
    );
    // The REFUSED reply is written, with AA, as CoreDNS writes it.
    let g = ask(&p, "some.test.", 1, A);
    assert_eq!((g.rcode, g.aa), (REFUSED, true));
    assert_eq!(ask(&p, "some.test.", 1, TXT).rcode, TO_NEXT);
    let g = ask(&p, "coredns.invalid.", 3, TXT);
    assert_eq!(g.rcode, NOERROR);
    assert_eq!(g.records[0].4, b"\x04test");
    assert_eq!(ask(&p, "ip-10-11-12-13.example.", 1, A).records[0].1, A);
    assert_eq!(ask(&p, "ip-10-11-12-13.example.", 1, MX).records[0].1, MX);
    assert_eq!(ask(&p, "something.example.", 1, A).rcode, TO_NEXT);
    assert_eq!(ask(&p, "something.example.", 1, MX).rcode, SERVFAIL);
    // Outside every template's zone: on to the next plugin.
    assert_eq!(ask(&p, "example.org.", 1, PTR).rcode, TO_NEXT);
}

#[test]
fn any_queries_take_the_template_s_class_and_type() {
    let p = plugin(
        ".",
        "template IN MX example {
  answer \"{{ .Name }} 60 {{ .Class }} TXT \\\"{{ .Type }}\\\"\"
}",
    );
    let g = ask(&p, "a.example.", 255, 255);
    assert_eq!(g.records[0].4, b"\x02MX");
}
