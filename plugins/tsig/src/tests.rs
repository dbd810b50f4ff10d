use super::*;
use crate::mac::Alg;
use crate::rr::Found;
use ringdns_plugin::Link;
use ringdns_plugin::wire::class::IN;
use ringdns_plugin::wire::rtype::{A, AAAA, TSIG};
use ringdns_plugin::wire::{Header, Name, Owner, QueryBuilder, Section, records};
use ringdns_testkit::{chain_once, config, config_with_zones, udp_request, wire_name};

/// The key of the captured requests: `test.key.`, secret "secret-key-for-tests".
const SECRET_B64: &str = "c2VjcmV0LWtleS1mb3ItdGVzdHM=";
const SECRET: &[u8] = b"secret-key-for-tests";

/// `example.org. A` (no EDNS) as dig 9.18 signed it with `-y ALG:test.key.:SECRET_B64`,
/// captured off the wire: the MACs were computed by BIND, not by this crate.
const DIG: [(Alg, &str); 5] = [
    (
        Alg::Sha1,
        "fe3701200001000000000001076578616d706c65036f726700000100010474657374036b65790000fa00ff00000000002f09686d61632d736861310000006b15134f012c0014c85d51fa2a2a8479b1c85f56a6752c1bddfb82a1fe3700000000",
    ),
    (
        Alg::Sha224,
        "3c6901200001000000000001076578616d706c65036f726700000100010474657374036b65790000fa00ff0000000000390b686d61632d7368613232340000006b15134f012c001c8e45018e9a9e575f6aced63f8eee73bc77df9f5f25e99620e95644653c6900000000",
    ),
    (
        Alg::Sha256,
        "4b8501200001000000000001076578616d706c65036f726700000100010474657374036b65790000fa00ff00000000003d0b686d61632d7368613235360000006b15134f012c00203add8b23af82a3a502f5bbd838ef686ca6007c47c1d6cc64539b87803637cc424b8500000000",
    ),
    (
        Alg::Sha384,
        "ca3301200001000000000001076578616d706c65036f726700000100010474657374036b65790000fa00ff00000000004d0b686d61632d7368613338340000006b15134f012c00303b8b995b9110f1e5c35133c62e63aa968993a4afc0760d51a1d39b6a507f925044e26740157779a9461fac17c37ea869ca3300000000",
    ),
    (
        Alg::Sha512,
        "f9ce01200001000000000001076578616d706c65036f726700000100010474657374036b65790000fa00ff00000000005d0b686d61632d7368613531320000006b15134f012c00409b9658c026150f3fda1b5e5325075153f4c0c651be488f829e04755015dc6220ccc3e19fe950a9a979fdf8f2ca310f57fb9acdd4dcd7aff7119a45796bd9c8bff9ce00000000",
    ),
];

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn tsig(text: &str) -> Tsig {
    let (_, c) = config_with_zones::<Tsig>(text).unwrap();
    let core = CoreInfo {
        index: 0,
        cpu: 0,
        cores: 1,
    };
    Tsig::build(&Arc::new(c), &core).unwrap()
}

/// A block for `.` with `test.key.` of `alg` and the given extra lines.
fn with_key(alg: Alg, extra: &str) -> Tsig {
    tsig(&format!(
        ". {{\n tsig . {{\n  secret test.key. {SECRET_B64} {}\n{extra} }}\n}}\n",
        alg.name()
    ))
}

fn client() -> std::net::SocketAddr {
    "127.0.0.1:5353".parse().unwrap()
}

/// Signs `packet` (no TSIG yet) as a client does (RFC 8945 §4.3.1: message, TSIG
/// variables), at `time` with `fudge`, its MAC cut to `mac_len` bytes.
fn sign_request(packet: &[u8], alg: Alg, secret: &[u8], time: u64, mac_len: usize) -> Vec<u8> {
    let key = wire_name("test.key.");
    let mut vars = [0u8; rr::VARS_MAX];
    let vn = rr::variables(&mut vars, &key, alg.wire(), time, 300, 0, 0, false);
    let mut mac = [0u8; mac::MAX_MAC];
    alg.sign(secret, &[packet, &vars[..vn]], &mut mac);
    let mut m = packet.to_vec();
    m.extend_from_slice(&key);
    m.extend_from_slice(&TSIG.to_be_bytes());
    m.extend_from_slice(&[0, 255, 0, 0, 0, 0]);
    let rdlen = alg.wire().len() + 16 + mac_len;
    m.extend_from_slice(&(rdlen as u16).to_be_bytes());
    m.extend_from_slice(alg.wire());
    m.extend_from_slice(&time.to_be_bytes()[2..]);
    m.extend_from_slice(&300u16.to_be_bytes());
    m.extend_from_slice(&(mac_len as u16).to_be_bytes());
    m.extend_from_slice(&mac[..mac_len]);
    m.extend_from_slice(&packet[..2]);
    m.extend_from_slice(&[0, 0, 0, 0]);
    let ar = u16::from_be_bytes([m[10], m[11]]) + 1;
    m[10..12].copy_from_slice(&ar.to_be_bytes());
    m
}

fn query(qtype: u16, edns: bool) -> Vec<u8> {
    let wire = wire_name("example.org.");
    let b = QueryBuilder::new(Name::from_wire(&wire).unwrap(), qtype).id(0x4242);
    if edns {
        b.edns(1232, false).build()
    } else {
        b.build()
    }
}

/// The rest of the chain: `records` A answers, or `rcode` for the server to write; it
/// checks that it never sees a TSIG (stripped, as CoreDNS strips it).
struct Answers {
    records: usize,
    rcode: u8,
}

ringdns_testkit::rest_of_chain!(Answers, answer);

impl Answers {
    fn answer(&self, req: &mut Request<'_>) -> Status {
        let p = req.query.packet();
        assert!(
            matches!(rr::find(p, req.query.opt().is_some()), Found::None),
            "the rest of the chain saw the TSIG"
        );
        if self.rcode != NOERROR {
            return Status::rcode(self.rcode);
        }
        let mut w = MessageWriter::reply(&req.query, req.reply, NOERROR);
        for i in 0..self.records {
            w.push(
                Section::Answer,
                Owner::Question,
                A,
                IN,
                60,
                &[10, 0, 0, i as u8],
            )
            .unwrap();
        }
        w.finish();
        req.finalize_reply();
        Status::written()
    }
}

/// Serves `packet` through the plugin before `rest`, at once or inline; the status, and
/// the reply as the server would send it.
fn serve(plugin: Tsig, rest: Answers, packet: &[u8], at_once: bool) -> (Status, Vec<u8>) {
    let chain = Link {
        plugin: Some(plugin),
        rest,
    };
    let mut reply = Vec::new();
    let mut req = udp_request(packet, client(), &mut reply, false);
    let status = chain_once(&chain, &mut req, at_once);
    if !client_write(status.rcode) {
        MessageWriter::reply(&req.query, req.reply, status.rcode).finish();
    }
    (status, reply)
}

/// The reply's TSIG, and the reply as its MAC covers it (TSIG off, ARCOUNT one less).
fn reply_tsig(reply: &[u8]) -> (rr::Tsig, Vec<u8>) {
    let Found::Tsig(t) = rr::find(reply, false) else {
        panic!("the reply has no TSIG");
    };
    let mut covered = reply[..t.start].to_vec();
    let end = covered.len();
    rr::strip(&mut covered, end);
    covered[..2].copy_from_slice(&t.orig_id.to_be_bytes());
    (t, covered)
}

/// Checks the reply's MAC as a client does (RFC 8945 §4.3.1: request MAC, reply, TSIG
/// variables including Other Data).
fn reply_verifies(reply: &[u8], request: &[u8], alg: Alg, secret: &[u8]) -> bool {
    let Found::Tsig(rt) = rr::find(request, false) else {
        panic!("the request has no TSIG");
    };
    let req_mac = &request[rt.mac.0..rt.mac.0 + rt.mac.1];
    let (t, covered) = reply_tsig(reply);
    let other = &reply[t.other.0..t.other.0 + t.other.1];
    let mut vars = [0u8; rr::VARS_MAX];
    let vn = rr::variables(
        &mut vars,
        t.key.as_bytes(),
        t.alg.as_bytes(),
        t.time,
        t.fudge,
        t.error,
        other.len(),
        false,
    );
    let size = (req_mac.len() as u16).to_be_bytes();
    let mac = &reply[t.mac.0..t.mac.0 + t.mac.1];
    alg.verify(secret, &[&size, req_mac, &covered, &vars[..vn], other], mac)
        && mac.len() == alg.len()
}

#[test]
fn bind_signed_requests_verify_for_every_algorithm() {
    for (alg, hex) in DIG {
        let packet = unhex(hex);
        let t = with_key(alg, "");
        let mut reply = Vec::new();
        let req = udp_request(&packet, client(), &mut reply, false);
        assert!(
            matches!(t.check(&req, false), Check::Pass(..)),
            "{} verifies",
            alg.name()
        );
        let mut bad = packet.clone();
        let last = bad.len() - 10; // a byte of the MAC
        bad[last] ^= 1;
        let req = udp_request(&bad, client(), &mut reply, false);
        assert!(
            matches!(t.check(&req, false), Check::Fail(_, BADSIG, None)),
            "{}: a flipped MAC bit is BADSIG",
            alg.name()
        );
    }
}

#[test]
fn a_key_without_an_algorithm_takes_each_of_the_five_and_signs_with_it() {
    let t = || {
        tsig(&format!(
            ". {{\n tsig {{\n  secret test.key. {SECRET_B64}\n }}\n}}\n"
        ))
    };
    for (alg, hex) in DIG {
        let packet = unhex(hex);
        let mut reply = Vec::new();
        let req = udp_request(&packet, client(), &mut reply, false);
        assert!(matches!(t().check(&req, false), Check::Pass(_, _, a) if a == alg));
        let signed = sign_request(&query(A, true), alg, SECRET, unix_now(), alg.len());
        let (_, reply) = serve(
            t(),
            Answers {
                records: 1,
                rcode: 0,
            },
            &signed,
            true,
        );
        assert!(
            reply_verifies(&reply, &signed, alg, SECRET),
            "{}",
            alg.name()
        );
    }
    // hmac-md5 is no algorithm of this server: BADKEY.
    let mut md5 = unhex(DIG[2].1);
    let at = md5.windows(11).position(|w| w == b"hmac-sha256").unwrap();
    md5[at..at + 11].copy_from_slice(b"hmac-md5.ab");
    let mut reply = Vec::new();
    let req = udp_request(&md5, client(), &mut reply, false);
    assert!(matches!(
        t().check(&req, false),
        Check::Fail(_, BADKEY, None)
    ));
}

#[test]
fn a_wrong_secret_is_badsig_and_an_unknown_key_or_algorithm_badkey() {
    let packet = unhex(DIG[2].1);
    let other = tsig(". {\n tsig {\n  secret test.key. b3RoZXI=\n }\n}\n");
    let mut reply = Vec::new();
    let req = udp_request(&packet, client(), &mut reply, false);
    assert!(matches!(
        other.check(&req, false),
        Check::Fail(_, BADSIG, None)
    ));
    let unknown = tsig(&format!(
        ". {{\n tsig {{\n  secret other.key. {SECRET_B64}\n }}\n}}\n"
    ));
    assert!(matches!(
        unknown.check(&req, false),
        Check::Fail(_, BADKEY, None)
    ));
    let sha512 = with_key(Alg::Sha512, "");
    assert!(matches!(
        sha512.check(&req, false),
        Check::Fail(_, BADKEY, None)
    ));
}

#[test]
fn badkey_and_badsig_are_unsigned_notauth_with_the_error() {
    let packet = unhex(DIG[2].1);
    for (plugin, error) in [
        (
            tsig(". {\n tsig {\n  secret test.key. b3RoZXI=\n }\n}\n"),
            BADSIG,
        ),
        (
            tsig(". {\n tsig {\n  secret nope. b3RoZXI=\n }\n}\n"),
            BADKEY,
        ),
    ] {
        let (status, reply) = serve(
            plugin,
            Answers {
                records: 1,
                rcode: 0,
            },
            &packet,
            true,
        );
        assert_eq!(status.rcode, NOERROR, "written");
        let h = Header::new(&reply);
        assert_eq!(h.rcode(), NOTAUTH);
        assert_eq!(h.ancount(), 0);
        let (t, _) = reply_tsig(&reply);
        assert_eq!(t.error, error);
        assert_eq!(t.mac.1, 0, "unsigned (RFC 8945 §5.3.2)");
        assert_eq!(t.other.1, 0);
        assert_eq!(t.orig_id, 0x4b85);
    }
}

#[test]
fn badtime_is_signed_with_the_request_time_and_the_server_time_in_other_data() {
    let stale = unix_now() - 3600;
    let packet = sign_request(&query(A, false), Alg::Sha256, SECRET, stale, 32);
    for at_once in [true, false] {
        let (_, reply) = serve(
            with_key(Alg::Sha256, ""),
            Answers {
                records: 1,
                rcode: 0,
            },
            &packet,
            at_once,
        );
        assert_eq!(Header::new(&reply).rcode(), NOTAUTH);
        let (t, _) = reply_tsig(&reply);
        assert_eq!(t.error, BADTIME);
        assert_eq!(t.time, stale, "the request's Time Signed");
        assert_eq!(t.other.1, 6);
        let o = &reply[t.other.0..t.other.0 + 6];
        let server = o.iter().fold(0u64, |a, b| (a << 8) | u64::from(*b));
        assert!(server.abs_diff(unix_now()) < 5, "the server's time");
        assert!(
            reply_verifies(&reply, &packet, Alg::Sha256, SECRET),
            "signed"
        );
    }
    // Within the fudge: answered.
    let fresh = sign_request(&query(A, false), Alg::Sha256, SECRET, unix_now() - 200, 32);
    let (_, reply) = serve(
        with_key(Alg::Sha256, ""),
        Answers {
            records: 1,
            rcode: 0,
        },
        &fresh,
        true,
    );
    assert_eq!(Header::new(&reply).rcode(), NOERROR);
}

#[test]
fn a_verified_request_gets_a_signed_reply_from_the_rest_without_its_tsig() {
    for (alg, _) in DIG {
        for edns in [false, true] {
            for at_once in [true, false] {
                let packet = sign_request(&query(A, edns), alg, SECRET, unix_now(), alg.len());
                let (status, reply) = serve(
                    with_key(alg, ""),
                    Answers {
                        records: 2,
                        rcode: 0,
                    },
                    &packet,
                    at_once,
                );
                assert_eq!(status.rcode, NOERROR);
                let h = Header::new(&reply);
                assert_eq!((h.rcode(), h.ancount()), (NOERROR, 2));
                assert!(
                    reply_verifies(&reply, &packet, alg, SECRET),
                    "{}",
                    alg.name()
                );
                let (t, _) = reply_tsig(&reply);
                assert_eq!((t.error, t.orig_id), (0, 0x4242));
                // The OPT comes before the TSIG, which is last.
                let types: Vec<u16> = records(&reply)
                    .unwrap()
                    .map(|r| r.unwrap())
                    .filter(|r| r.section == Section::Additional)
                    .map(|r| r.rtype)
                    .collect();
                let want: &[u16] = if edns { &[41, TSIG] } else { &[TSIG] };
                assert_eq!(types, want);
            }
        }
    }
}

#[test]
fn an_error_of_the_rest_is_written_and_signed() {
    let packet = sign_request(&query(A, false), Alg::Sha256, SECRET, unix_now(), 32);
    let (status, reply) = serve(
        with_key(Alg::Sha256, ""),
        Answers {
            records: 0,
            rcode: SERVFAIL,
        },
        &packet,
        true,
    );
    assert_eq!(
        status.rcode, NOERROR,
        "written here, so the server keeps it"
    );
    assert_eq!(Header::new(&reply).rcode(), SERVFAIL);
    assert!(reply_verifies(&reply, &packet, Alg::Sha256, SECRET));
}

#[test]
fn a_truncated_mac_is_accepted_down_to_the_rfc_minimum_and_formerr_below() {
    for (alg, ok, bad) in [
        (Alg::Sha1, 10, 9),
        (Alg::Sha256, 16, 15),
        (Alg::Sha512, 32, 31),
    ] {
        let good = sign_request(&query(A, false), alg, SECRET, unix_now(), ok);
        let (_, reply) = serve(
            with_key(alg, ""),
            Answers {
                records: 1,
                rcode: 0,
            },
            &good,
            true,
        );
        assert_eq!(
            Header::new(&reply).rcode(),
            NOERROR,
            "{} cut to {ok}",
            alg.name()
        );
        assert!(
            reply_verifies(&reply, &good, alg, SECRET),
            "the reply's MAC is whole"
        );
        let short = sign_request(&query(A, false), alg, SECRET, unix_now(), bad);
        let (status, _) = serve(
            with_key(alg, ""),
            Answers {
                records: 1,
                rcode: 0,
            },
            &short,
            true,
        );
        assert_eq!(status.rcode, FORMERR, "{} cut to {bad}", alg.name());
    }
}

#[test]
fn a_tsig_that_is_not_the_last_record_is_formerr() {
    let mut packet = sign_request(&query(A, false), Alg::Sha256, SECRET, unix_now(), 32);
    // An A record after the TSIG, in additional.
    packet.extend_from_slice(&[0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 10, 0, 0, 1]);
    packet[11] += 1;
    let (status, _) = serve(
        with_key(Alg::Sha256, ""),
        Answers {
            records: 1,
            rcode: 0,
        },
        &packet,
        true,
    );
    assert_eq!(status.rcode, FORMERR);
    // Class IN, or a TTL: FORMERR too (§4.2).
    let good = sign_request(&query(A, false), Alg::Sha256, SECRET, unix_now(), 32);
    let class_at = query(A, false).len() + wire_name("test.key.").len() + 2;
    let rest = || Answers {
        records: 1,
        rcode: 0,
    };
    for (at, v) in [(class_at + 1, 1u8), (class_at + 5, 60)] {
        let mut bad = good.clone();
        bad[at] = v;
        let (status, _) = serve(with_key(Alg::Sha256, ""), rest(), &bad, true);
        assert_eq!(status.rcode, FORMERR, "byte {at}");
    }
    let (status, _) = serve(with_key(Alg::Sha256, ""), rest(), &good, true);
    assert_eq!(status.rcode, NOERROR);
}

#[test]
fn require_refuses_unsigned_queries_of_its_types_only() {
    let a = query(A, false);
    let aaaa = query(AAAA, false);
    let (s, _) = serve(
        with_key(Alg::Sha256, "  require A\n"),
        Answers {
            records: 1,
            rcode: 0,
        },
        &a,
        true,
    );
    assert_eq!(s.rcode, REFUSED);
    let (s, r) = serve(
        with_key(Alg::Sha256, "  require A\n"),
        Answers {
            records: 1,
            rcode: 0,
        },
        &aaaa,
        true,
    );
    assert_eq!((s.rcode, Header::new(&r).ancount()), (NOERROR, 1));
    let (s, _) = serve(
        with_key(Alg::Sha256, "  require all\n"),
        Answers {
            records: 1,
            rcode: 0,
        },
        &aaaa,
        false,
    );
    assert_eq!(s.rcode, REFUSED);
    let (s, _) = serve(
        with_key(Alg::Sha256, "  require_opcode QUERY\n"),
        Answers {
            records: 1,
            rcode: 0,
        },
        &aaaa,
        true,
    );
    assert_eq!(s.rcode, REFUSED);
    let (s, _) = serve(
        with_key(Alg::Sha256, "  require all\n  require none\n"),
        Answers {
            records: 1,
            rcode: 0,
        },
        &a,
        true,
    );
    assert_eq!(s.rcode, NOERROR, "a later require replaces the earlier");
    // A signed one passes.
    let signed = sign_request(&a, Alg::Sha256, SECRET, unix_now(), 32);
    let (s, _) = serve(
        with_key(Alg::Sha256, "  require all\n"),
        Answers {
            records: 1,
            rcode: 0,
        },
        &signed,
        true,
    );
    assert_eq!(s.rcode, NOERROR);
}

#[test]
fn queries_outside_the_zones_are_not_checked() {
    let t = tsig(&format!(
        "example.net {{\n tsig {{\n  secret test.key. {SECRET_B64}\n  require all\n }}\n}}\n"
    ));
    let (s, r) = serve(
        t,
        Answers {
            records: 1,
            rcode: 0,
        },
        &query(A, false),
        true,
    );
    assert_eq!((s.rcode, Header::new(&r).ancount()), (NOERROR, 1));
}

#[test]
fn a_reply_the_tsig_would_push_past_the_client_size_is_the_question_with_tc() {
    // 30 A records (16 bytes each) fit 512 bytes, with the TSIG (~80) they do not.
    let packet = sign_request(&query(A, false), Alg::Sha256, SECRET, unix_now(), 32);
    let (_, reply) = serve(
        with_key(Alg::Sha256, ""),
        Answers {
            records: 28,
            rcode: 0,
        },
        &packet,
        true,
    );
    assert!(reply.len() <= 512, "{}", reply.len());
    let h = Header::new(&reply);
    assert!(h.tc());
    assert_eq!((h.rcode(), h.ancount(), h.arcount()), (NOERROR, 0, 1));
    assert!(reply_verifies(&reply, &packet, Alg::Sha256, SECRET));
}

#[test]
fn setup_errors_name_the_line() {
    for (text, want) in [
        (
            ". {\n tsig {\n  secret k. a2V5 hmac-md5\n }\n}\n",
            "Corefile:3 - Error during parsing: plugin/tsig: unsupported algorithm 'hmac-md5'",
        ),
        (
            ". {\n tsig {\n  secret k. %%%\n }\n}\n",
            "Corefile:3 - Error during parsing: plugin/tsig: invalid secret for key \"k.\"",
        ),
        (
            ". {\n tsig {\n  secret k.\n }\n}\n",
            "Corefile:3 - Error during parsing: plugin/tsig: Wrong argument count",
        ),
        (
            ". {\n tsig {\n  secret k. a2V5\n  secret K a2V5\n }\n}\n",
            "Corefile:4 - Error during parsing: plugin/tsig: key \"k.\" redefined",
        ),
        (
            ". {\n tsig {\n  require BOGUS\n }\n}\n",
            "Corefile:3 - Error during parsing: plugin/tsig: unknown query type 'BOGUS'",
        ),
        (
            ". {\n tsig {\n  require_opcode BOGUS\n }\n}\n",
            "Corefile:3 - Error during parsing: plugin/tsig: unknown opcode 'BOGUS'",
        ),
        (
            ". {\n tsig {\n  require\n }\n}\n",
            "Corefile:3 - Error during parsing: plugin/tsig: Wrong argument count",
        ),
        (
            ". {\n tsig {\n  color blue\n }\n}\n",
            "Corefile:3 - Error during parsing: plugin/tsig: unknown property 'color'",
        ),
        (
            ". {\n tsig {\n  secrets /nonexistent/tsig.keys\n }\n}\n",
            "Corefile:3 - Error during parsing: plugin/tsig: /nonexistent/tsig.keys: ",
        ),
        (
            ". {\n tsig\n tsig\n}\n",
            "Corefile:3 - Error during parsing: plugin/tsig: this plugin can only be used once per Server Block",
        ),
    ] {
        let err = config::<Tsig>(text)
            .err()
            .unwrap_or_else(|| panic!("{text} parses"));
        assert!(err.starts_with(want), "{text}: {err}");
    }
}

#[test]
fn a_bind_key_file_gives_names_algorithms_and_secrets() {
    let text = "key \"Transfer.Key\" {\n\talgorithm hmac-sha512;\n\tsecret \"a2V5\";\n};\n\nkey other. {\n secret \"b3RoZXI=\";\n};\n";
    let keys = setup::parse_key_file(text).unwrap();
    assert_eq!(
        keys,
        vec![
            (
                "transfer.key.".to_string(),
                Some(Alg::Sha512),
                "a2V5".to_string()
            ),
            ("other.".to_string(), None, "b3RoZXI=".to_string()),
        ]
    );
    for (bad, want) in [
        ("zone \"x\" {\n};\n", "unexpected token \"zone\""),
        ("key \"\" {\n secret \"a2V5\";\n};\n", "expected key name"),
        (
            "key k {\n algorithm hmac-sha256;\n};\n",
            "expected secret for key \"k.\"",
        ),
        ("key k {\n secret \"\";\n};\n", "expected secret key"),
        (
            "key k {\n algorithm hmac-md5;\n secret \"a2V5\";\n};\n",
            "unsupported algorithm 'hmac-md5'",
        ),
        (
            "key k {\n secret \"a2V5\";\n};\nkey K {\n secret \"a2V5\";\n};\n",
            "key \"k.\" redefined",
        ),
        ("key k {\n port 53;\n};\n", "unexpected token \"port\""),
    ] {
        let err = setup::parse_key_file(bad).unwrap_err();
        assert!(err.starts_with(want), "{bad}: {err}");
    }
}

#[test]
fn secrets_files_are_read_beside_the_corefile_root() {
    let dir = ringdns_testkit::TempDir::new("tsig-secrets");
    std::fs::write(
        dir.path().join("tsig.keys"),
        format!("key \"test.key.\" {{\n algorithm hmac-sha384;\n secret \"{SECRET_B64}\";\n}};\n"),
    )
    .unwrap();
    let path = dir.path().join("tsig.keys");
    let t = tsig(&format!(
        ". {{\n tsig {{\n  secrets {}\n }}\n}}\n",
        path.display()
    ));
    let packet = unhex(DIG[3].1);
    let mut reply = Vec::new();
    let req = udp_request(&packet, client(), &mut reply, false);
    assert!(
        matches!(t.check(&req, false), Check::Pass(..)),
        "the file's sha384 key"
    );
    let twice = format!(
        ". {{\n tsig {{\n  secret test.key. {SECRET_B64}\n  secrets {}\n }}\n}}\n",
        path.display()
    );
    let err = config::<Tsig>(&twice).err().unwrap();
    assert!(err.contains("key \"test.key.\" redefined"), "{err}");
}

/// A connection that keeps what is sent on it.
#[derive(Default)]
struct Kept(std::cell::RefCell<Vec<Vec<u8>>>);

impl ringdns_plugin::ReplyStream for Kept {
    fn send<'a>(&'a self, message: &'a [u8]) -> ringdns_plugin::SendFuture<'a> {
        self.0.borrow_mut().push(message.to_vec());
        Box::pin(async { Ok(()) })
    }
}

#[test]
fn a_transfer_stream_signs_the_first_message_in_full_and_the_later_ones_with_the_timers() {
    let packet = sign_request(&query(A, false), Alg::Sha384, SECRET, unix_now(), 48);
    let Found::Tsig(t) = rr::find(&packet, false) else {
        panic!("signed");
    };
    let key = Key {
        name: wire_name("test.key."),
        alg: None,
        secret: SECRET.to_vec(),
    };
    let kept = Kept::default();
    let stream = xfr::SigningStream::new(&kept, (&key, Alg::Sha384), t, &packet);
    let q = Query::parse(&packet).unwrap();
    let mut msgs = Vec::new();
    for i in 0..3u8 {
        let mut m = Vec::new();
        let mut w = MessageWriter::reply(&q, &mut m, NOERROR);
        w.push(Section::Answer, Owner::Question, A, IN, 60, &[10, 0, 0, i])
            .unwrap();
        w.finish();
        msgs.push(m);
    }
    use ringdns_plugin::ReplyStream;
    for m in &msgs[..2] {
        let sent = std::pin::pin!(stream.send(m))
            .poll(&mut std::task::Context::from_waker(std::task::Waker::noop()));
        assert!(matches!(sent, std::task::Poll::Ready(Ok(()))));
    }
    let mut last = msgs[2].clone();
    stream.sign(&mut last);
    assert_eq!(stream.sent(), 3);
    let mut sent = kept.0.borrow().clone();
    sent.push(last);
    let mut prior = packet[t.mac.0..t.mac.0 + t.mac.1].to_vec();
    for (i, m) in sent.iter().enumerate() {
        let (rt, covered) = reply_tsig(m);
        assert_eq!(covered, msgs[i], "message {i} as it was, its TSIG after it");
        let mac = &m[rt.mac.0..rt.mac.0 + rt.mac.1];
        let size = (prior.len() as u16).to_be_bytes();
        let mut vars = [0u8; rr::VARS_MAX];
        let vn = rr::variables(
            &mut vars,
            rt.key.as_bytes(),
            rt.alg.as_bytes(),
            rt.time,
            rt.fudge,
            0,
            0,
            i > 0,
        );
        assert_eq!(vn, if i > 0 { 8 } else { 10 + 6 + 13 + 12 }, "message {i}");
        assert!(
            Alg::Sha384.verify(SECRET, &[&size, &prior, &covered, &vars[..vn]], mac),
            "message {i}"
        );
        assert_eq!(mac.len(), 48);
        prior = mac.to_vec();
    }
}
