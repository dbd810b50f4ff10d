use super::*;
use ringdns_plugin::Link;
use ringdns_plugin::wire::class::IN;
use ringdns_plugin::wire::rcode::{NOERROR, NXDOMAIN};
use ringdns_plugin::wire::rtype::{A, AAAA, CNAME, MX, OPT};
use ringdns_plugin::wire::{
    EdnsOptions, Header, Name, Owner, QueryBuilder, Section, expand_name, records,
};
use ringdns_testkit::{chain_once, config, udp_request, wire_name};
use std::cell::RefCell;

/// What the rest of the chain saw of a query.
#[derive(Debug, Default, Clone, PartialEq)]
struct Saw {
    name: String,
    qtype: u16,
    qclass: u16,
    options: Option<Vec<(u16, Vec<u8>)>>,
}

/// The rest of the chain: notes the query, answers with `answer` (owner, type, ttl,
/// rdata; `None` owner: the question) and `rcode`; SERVFAIL unwritten when `fail`.
#[derive(Default)]
struct Rest {
    saw: RefCell<Option<Saw>>,
    answer: Vec<(Option<&'static str>, u16, u32, Vec<u8>)>,
    rcode: u8,
    fail: bool,
    echo_options: bool,
}

ringdns_testkit::rest_of_chain!(Rest, answer);

impl Rest {
    fn answer(&self, req: &mut Request<'_>) -> Status {
        let q = req.query;
        *self.saw.borrow_mut() = Some(Saw {
            name: q.qname().to_string(),
            qtype: q.qtype(),
            qclass: q.qclass(),
            options: q
                .opt()
                .map(|o| o.iter().map(|(c, d)| (c, d.to_vec())).collect()),
        });
        if self.fail {
            return Status::rcode(SERVFAIL);
        }
        let mut w = MessageWriter::reply(&q, req.reply, self.rcode);
        for (owner, t, ttl, rdata) in &self.answer {
            let wire;
            let o = match owner {
                None => Owner::Question,
                Some(n) => {
                    wire = wire_name(n);
                    Owner::Wire(&wire)
                }
            };
            w.push(Section::Answer, o, *t, IN, *ttl, rdata).unwrap();
        }
        if self.echo_options
            && let Some(o) = q.opt()
        {
            let opts: Vec<(u16, &[u8])> = o.iter().collect();
            w.push_opt(o.udp_size, false, &opts).unwrap();
        }
        w.finish();
        req.finalize_reply();
        Status::written()
    }
}

/// A record of a reply as text: section, owner, type, TTL, and the names of its RDATA (or
/// its bytes).
fn text(reply: &[u8]) -> (String, Vec<String>) {
    let it = records(reply).unwrap();
    let qend = it.question_end();
    let mut q = Vec::new();
    expand_name(reply, 12, qend, &mut q).unwrap();
    let question = format!(
        "{} {}",
        Name::from_wire(&q).unwrap(),
        u16::from_be_bytes([reply[qend - 4], reply[qend - 3]])
    );
    let mut out = Vec::new();
    for r in it {
        let r = r.unwrap();
        if r.rtype == OPT {
            continue;
        }
        let mut o = Vec::new();
        expand_name(reply, r.owner.start, reply.len(), &mut o).unwrap();
        let data = match r.rtype {
            CNAME => {
                let mut t = Vec::new();
                expand_name(reply, r.rdata.start, r.rdata.end, &mut t).unwrap();
                Name::from_wire(&t).unwrap().to_string()
            }
            MX => {
                let mut t = Vec::new();
                expand_name(reply, r.rdata.start + 2, r.rdata.end, &mut t).unwrap();
                Name::from_wire(&t).unwrap().to_string()
            }
            _ => format!("{:?}", &reply[r.rdata.clone()]),
        };
        out.push(format!(
            "{:?} {} {} {} {data}",
            r.section,
            Name::from_wire(&o).unwrap(),
            r.rtype,
            r.ttl(reply)
        ));
    }
    (question, out)
}

/// The reply's OPT options, `None` without an OPT.
fn options(reply: &[u8]) -> Option<Vec<(u16, Vec<u8>)>> {
    let r = records(reply).unwrap().flatten().find(|r| r.rtype == OPT)?;
    Some(
        EdnsOptions::new(&reply[r.rdata])
            .map(|(c, d)| (c, d.to_vec()))
            .collect(),
    )
}

/// Serves `name`/`qtype` (with an OPT when `edns`) through a block with `lines` before
/// `rest`, at once and inline (the same on both): what the rest saw, the status and the
/// reply.
fn served(
    lines: &str,
    name: &str,
    qtype: u16,
    edns: bool,
    rest: Rest,
) -> (Option<Saw>, Status, Vec<u8>) {
    let (_, c) = config::<Rewrite>(&format!(". {{\n{lines}\n}}\n")).unwrap();
    let core = CoreInfo {
        index: 0,
        cpu: 0,
        cores: 1,
    };
    let chain = Link {
        plugin: Rewrite::build(&Arc::new(c), &core),
        rest,
    };
    let wire = wire_name(name);
    // wire_name lower-cases: keep the client's spelling.
    let mut wire = wire;
    let mut i = 0;
    let spelt: Vec<u8> = name.bytes().filter(|b| *b != b'.').collect();
    let mut k = 0;
    while i < wire.len() && wire[i] != 0 {
        let l = wire[i] as usize;
        wire[i + 1..i + 1 + l].copy_from_slice(&spelt[k..k + l]);
        k += l;
        i += 1 + l;
    }
    let b = QueryBuilder::new(Name::from_wire(&wire).unwrap(), qtype).id(7);
    let p = if edns {
        b.edns(1232, false).build()
    } else {
        b.build()
    };
    let mut seen = Vec::new();
    for at_once in [true, false] {
        let mut reply = Vec::new();
        let mut req = udp_request(&p, "192.0.2.77:5353".parse().unwrap(), &mut reply, false);
        let status = chain_once(&chain, &mut req, at_once);
        let saw = chain.rest.saw.borrow_mut().take();
        seen.push((saw, status, reply));
    }
    assert_eq!(seen[0], seen[1], "both passes");
    seen.remove(0)
}

fn a(owner: Option<&'static str>) -> (Option<&'static str>, u16, u32, Vec<u8>) {
    (owner, A, 60, vec![10, 0, 0, 1])
}

#[test]
fn an_exact_name_goes_on_rewritten_and_comes_back_as_asked() {
    let rest = Rest {
        answer: vec![a(None)],
        ..Rest::default()
    };
    let (saw, status, reply) = served(
        " rewrite name example.net example.org",
        "WWW.Example.NET.",
        A,
        false,
        Rest {
            answer: vec![],
            ..Rest::default()
        },
    );
    assert_eq!(
        saw.unwrap().name,
        "WWW.Example.NET.",
        "www.example.net is not example.net: untouched"
    );
    assert_eq!(status.rcode, NOERROR);
    assert_eq!(text(&reply).0, "WWW.Example.NET. 1");
    let (saw, _, reply) = served(
        " rewrite name example.net example.org",
        "Example.NET.",
        A,
        false,
        rest,
    );
    assert_eq!(saw.unwrap().name, "example.org.");
    let (q, rrs) = text(&reply);
    assert_eq!(q, "Example.NET. 1", "the client's question, its case too");
    assert_eq!(rrs, ["Answer Example.NET. 1 60 [10, 0, 0, 1]"]);
    assert_eq!(Header::new(&reply).id(), 7);
}

#[test]
fn a_query_no_rule_matches_gets_the_rests_reply_as_it_is() {
    let lines = " rewrite name suffix .a.test. .b.test.\n rewrite ttl exact x.test. 5";
    let (saw, _, reply) = served(
        lines,
        "www.example.org.",
        A,
        true,
        Rest {
            answer: vec![a(None)],
            ..Rest::default()
        },
    );
    assert_eq!(saw.as_ref().unwrap().name, "www.example.org.");
    let (q, rrs) = text(&reply);
    assert_eq!(
        (q.as_str(), rrs),
        (
            "www.example.org. 1",
            vec!["Answer www.example.org. 1 60 [10, 0, 0, 1]".to_string()]
        )
    );
}

#[test]
fn a_suffix_rule_with_answer_auto_maps_names_and_values_back() {
    let rest = Rest {
        answer: vec![
            (None, CNAME, 60, wire_name("web.service.consul.")),
            a(Some("web.service.consul.")),
        ],
        ..Rest::default()
    };
    let (saw, _, reply) = served(
        " rewrite name suffix .coredns.rocks .service.consul answer auto",
        "ftp.coredns.rocks.",
        A,
        false,
        rest,
    );
    assert_eq!(saw.unwrap().name, "ftp.service.consul.");
    assert_eq!(
        text(&reply).1,
        [
            "Answer ftp.coredns.rocks. 5 60 web.coredns.rocks.",
            "Answer web.coredns.rocks. 1 60 [10, 0, 0, 1]"
        ]
    );
}

#[test]
fn regex_answer_rules_rewrite_owners_and_values() {
    let mut mx = vec![0, 10];
    mx.extend(wire_name("mail.service.us-west-1.consul."));
    let rest = Rest {
        answer: vec![a(None), (None, MX, 60, mx)],
        ..Rest::default()
    };
    let lines = " rewrite stop {\n  name regex (.*)-(us-west-1)\\.coredns\\.rocks {1}.service.{2}.consul\n  answer name (.*)\\.service\\.(us-west-1)\\.consul {1}-{2}.coredns.rocks\n  answer value (.*)\\.service\\.(us-west-1)\\.consul {1}-{2}.coredns.rocks\n }";
    let (saw, _, reply) = served(lines, "ftp-us-west-1.coredns.rocks.", A, false, rest);
    assert_eq!(saw.unwrap().name, "ftp.service.us-west-1.consul.");
    assert_eq!(
        text(&reply).1,
        [
            "Answer ftp-us-west-1.coredns.rocks. 1 60 [10, 0, 0, 1]",
            "Answer ftp-us-west-1.coredns.rocks. 15 60 mail-us-west-1.coredns.rocks."
        ]
    );
}

#[test]
fn type_and_class_go_on_rewritten_and_the_question_comes_back() {
    let rest = Rest {
        answer: vec![(None, AAAA, 60, vec![0; 16])],
        ..Rest::default()
    };
    let (saw, _, reply) = served(" rewrite type A AAAA", "x.test.", A, false, rest);
    assert_eq!(saw.unwrap().qtype, AAAA);
    assert_eq!(text(&reply).0, "x.test. 1");
    let (saw, _, _) = served(" rewrite class CH IN", "x.test.", A, false, Rest::default());
    assert_eq!(saw.unwrap().qclass, IN, "a class-IN query is not rewritten");
}

#[test]
fn ttl_rules_clamp_and_stop_unless_continue() {
    let rest = || Rest {
        answer: vec![
            a(None),
            (None, A, 1000, vec![10, 0, 0, 2]),
            (None, A, 5, vec![10, 0, 0, 3]),
        ],
        ..Rest::default()
    };
    let (_, _, reply) = served(
        " rewrite ttl suffix .test. 30-300",
        "x.test.",
        A,
        false,
        rest(),
    );
    let ttls: Vec<String> = text(&reply).1;
    assert_eq!(
        ttls,
        [
            "Answer x.test. 1 60 [10, 0, 0, 1]",
            "Answer x.test. 1 300 [10, 0, 0, 2]",
            "Answer x.test. 1 30 [10, 0, 0, 3]"
        ]
    );
    // The first matching rule stops; with continue, the next one applies too.
    let (saw, _, reply) = served(
        " rewrite ttl x.test. 7\n rewrite name x.test. y.test.",
        "x.test.",
        A,
        false,
        rest(),
    );
    assert_eq!(saw.unwrap().name, "x.test.");
    assert!(text(&reply).1.iter().all(|r| r.contains(" 7 ")));
    let (saw, _, _) = served(
        " rewrite continue ttl x.test. 7\n rewrite name x.test. y.test.",
        "x.test.",
        A,
        false,
        rest(),
    );
    assert_eq!(saw.unwrap().name, "y.test.");
}

#[test]
fn rcode_rules_map_written_and_unwritten_rcodes() {
    let (_, status, reply) = served(
        " rewrite rcode suffix .test. SERVFAIL NOERROR",
        "x.test.",
        A,
        false,
        Rest {
            fail: true,
            ..Rest::default()
        },
    );
    assert_eq!(status.rcode, NOERROR);
    assert_eq!(Header::new(&reply).rcode(), NOERROR);
    assert_eq!(text(&reply).0, "x.test. 1");
    let (_, status, reply) = served(
        " rewrite rcode x.test. NXDOMAIN 0",
        "x.test.",
        A,
        false,
        Rest {
            rcode: NXDOMAIN,
            ..Rest::default()
        },
    );
    assert_eq!(
        (status.rcode, Header::new(&reply).rcode()),
        (NOERROR, NOERROR)
    );
}

#[test]
fn edns0_rules_change_the_querys_options_and_revert_them_in_the_reply() {
    let echo = || Rest {
        echo_options: true,
        ..Rest::default()
    };
    // Set on a query without OPT: the rest gets an OPT; the client's reply has none.
    let (saw, _, reply) = served(
        " rewrite edns0 local set 0xffee abcd",
        "x.test.",
        A,
        false,
        echo(),
    );
    assert_eq!(saw.unwrap().options, Some(vec![(0xffee, b"abcd".to_vec())]));
    assert_eq!(
        options(&reply),
        None,
        "RFC 6891: no OPT to a query without one"
    );
    // With revert, the reply loses the option again.
    let (_, _, reply) = served(
        " rewrite edns0 local set 0xffee abcd revert",
        "x.test.",
        A,
        true,
        echo(),
    );
    assert_eq!(options(&reply), Some(vec![]));
    let (_, _, reply) = served(
        " rewrite edns0 local set 0xffee abcd",
        "x.test.",
        A,
        true,
        echo(),
    );
    assert_eq!(options(&reply), Some(vec![(0xffee, b"abcd".to_vec())]));
    // Variables and the client subnet.
    let (saw, _, _) = served(
        " rewrite continue edns0 local set 0xffe0 {client_ip}\n rewrite continue edns0 local append 0xffe1 {client_port}\n rewrite continue edns0 local set 0xffe2 {protocol}\n rewrite edns0 subnet set 24 56",
        "x.test.",
        A,
        true,
        Rest::default(),
    );
    assert_eq!(
        saw.unwrap().options.unwrap(),
        vec![
            (0xffe0, vec![192, 0, 2, 77]),
            (0xffe1, 5353u16.to_be_bytes().to_vec()),
            (0xffe2, b"udp".to_vec()),
            (8, vec![0, 1, 24, 0, 192, 0, 2]),
        ]
    );
    // Replace changes only an option that is there; unset removes it.
    let (saw, _, _) = served(
        " rewrite edns0 nsid replace",
        "x.test.",
        A,
        true,
        Rest::default(),
    );
    assert_eq!(saw.unwrap().options.unwrap(), vec![]);
    let (saw, _, _) = served(
        " rewrite continue edns0 nsid set\n rewrite edns0 local unset 3",
        "x.test.",
        A,
        true,
        Rest::default(),
    );
    assert_eq!(saw.unwrap().options.unwrap(), vec![]);
}

#[test]
fn a_name_made_invalid_is_servfail_with_the_reason() {
    let (saw, status, _) = served(
        " rewrite name regex (.*) {1}..bad",
        "x.test.",
        A,
        false,
        Rest::default(),
    );
    assert_eq!(saw, None);
    assert_eq!(status.rcode, SERVFAIL);
    assert_eq!(
        status.error.unwrap().to_string(),
        "plugin/rewrite: invalid name after rewrite: x.test...bad."
    );
}

#[test]
fn subnets_keep_the_prefix_bytes_only() {
    use std::net::IpAddr;
    let ip: IpAddr = "2001:db8:abcd:12ff::1".parse().unwrap();
    assert_eq!(
        plan::subnet(ip, 24, 56),
        vec![0, 2, 56, 0, 0x20, 0x01, 0x0d, 0xb8, 0xab, 0xcd, 0x12]
    );
    let ip: IpAddr = "10.1.2.3".parse().unwrap();
    assert_eq!(plan::subnet(ip, 20, 56), vec![0, 1, 20, 0, 10, 1, 0]);
    assert_eq!(plan::subnet(ip, 0, 56), vec![0, 1, 0, 0]);
}
