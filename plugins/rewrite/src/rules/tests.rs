use super::*;
use crate::Rewrite;
use ringdns_testkit::config;

/// The rules of a block with these `rewrite` lines.
fn rules(lines: &str) -> Result<Vec<Rule>, String> {
    config::<Rewrite>(&format!(". {{\n{lines}\n}}\n")).map(|(_, c)| c.rules)
}

/// The error of a block whose second line is `line`.
fn err(line: &str) -> String {
    let e = rules(line).expect_err(line);
    let prefix = "Corefile:2 - Error during parsing: plugin/rewrite: ";
    e.strip_prefix(prefix)
        .unwrap_or_else(|| panic!("{e} lacks {prefix}"))
        .to_string()
}

fn args(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

#[test]
fn name_rules_normalise_and_exact_ones_always_map_back() {
    let r = parse(&args("name Example.NET example.org")).unwrap();
    assert_eq!(r.mode, Mode::Stop);
    let Kind::Name {
        pattern: Pattern::Exact(from),
        to,
        auto: true,
        answers,
    } = r.kind
    else {
        panic!("{:?}", r.kind)
    };
    assert_eq!(
        (from.as_str(), to.as_str()),
        ("example.net.", "example.org.")
    );
    assert!(answers.is_empty());
    let r = parse(&args("continue name suffix .a. .b. answer auto")).unwrap();
    assert_eq!(r.mode, Mode::Continue);
    let Kind::Name {
        pattern: Pattern::Suffix(_),
        auto: false,
        answers,
        ..
    } = r.kind
    else {
        panic!()
    };
    assert!(matches!(&answers[..], [Answer::Suffix(f, t)] if f == ".b." && t == ".a."));
    let r = parse(&args(
        r"name regex (.*)-(us-west-1)\.example\.org {1}.service.{2}.consul answer name (.*)\.service\.(us-west-1)\.consul {1}-{2}.example.org value (.*)\.consul {1}.org",
    ))
    .unwrap();
    let Kind::Name { answers, auto, .. } = r.kind else {
        panic!()
    };
    assert!(!auto);
    assert!(matches!(
        &answers[..],
        [Answer::Name(..), Answer::Value(..)]
    ));
}

#[test]
fn a_block_is_one_rule_of_its_tokens() {
    let r = rules(
        " rewrite stop {\n  name regex (.*)\\.a\\. {1}.b.\n  answer name (.*)\\.b\\. {1}.a.\n }",
    )
    .unwrap();
    assert_eq!(r.len(), 1);
    assert!(matches!(&r[0].kind, Kind::Name { answers, .. } if answers.len() == 1));
    assert_eq!(
        rules(" rewrite name a b\n rewrite type A AAAA")
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn each_field_parses_as_coredns() {
    assert!(matches!(
        parse(&args("type any hinfo")).unwrap().kind,
        Kind::Type { from: 255, to: 13 }
    ));
    assert!(matches!(
        parse(&args("class CH IN")).unwrap().kind,
        Kind::Class { from: 3, to: 1 }
    ));
    for (ttl, min, max) in [
        ("15", 15, 15),
        ("30-300", 30, 300),
        ("-30", 0, 30),
        ("30-", 30, 2_147_483_647),
    ] {
        let Kind::Ttl { min: a, max: b, .. } = parse(&args(&format!("ttl example.com. {ttl}")))
            .unwrap()
            .kind
        else {
            panic!()
        };
        assert_eq!((a, b), (min, max), "{ttl}");
    }
    assert!(matches!(
        parse(&args(r"ttl regex (.*)\.coredns\.rocks 15"))
            .unwrap()
            .kind,
        Kind::Ttl {
            pattern: Pattern::Regex(_),
            ..
        }
    ));
    assert!(matches!(
        parse(&args("rcode regex (.*)\\.rocks SERVFAIL noerror"))
            .unwrap()
            .kind,
        Kind::Rcode { old: 2, new: 0, .. }
    ));
    assert!(matches!(
        parse(&args("rcode a.rocks 2 23")).unwrap().kind,
        Kind::Rcode {
            old: 2,
            new: 23,
            ..
        }
    ));
    assert!(matches!(
        parse(&args(
            "cname regex (.*).cdn.example.net. {1}.other.cdn.com."
        ))
        .unwrap()
        .kind,
        Kind::Cname {
            pattern: Pattern::Regex(_),
            ..
        }
    ));
    let Kind::Cname {
        pattern: Pattern::Exact(f),
        to,
    } = parse(&args("cname A.example B.example")).unwrap().kind
    else {
        panic!()
    };
    assert_eq!((f.as_str(), to.as_str()), ("a.example.", "b.example."));
}

#[test]
fn edns0_rules_parse_data_variables_and_revert() {
    let e = |s: &str| match parse(&args(s)).unwrap().kind {
        Kind::Edns0(e) => e,
        k => panic!("{k:?}"),
    };
    let r = e("edns0 local set 0xffee 0x61626364");
    assert!(matches!(r.option, Option0::Local { code: 0xffee, ref data } if data == b"abcd"));
    assert!(!r.revert);
    let r = e("edns0 local append 65518 abcd revert");
    assert_eq!(r.action, Action::Append);
    assert!(r.revert);
    assert!(matches!(r.option, Option0::Local { code: 65518, ref data } if data == b"abcd"));
    assert!(matches!(
        e("edns0 local set 0xffee {client_ip}").option,
        Option0::Variable {
            var: Variable::ClientIp,
            ..
        }
    ));
    assert!(matches!(
        e("edns0 local set 0xffee {forward/upstream}").option,
        Option0::Variable { var: Variable::Label(ref l), .. } if l == "forward/upstream"
    ));
    assert!(matches!(e("edns0 nsid set").option, Option0::Nsid));
    assert!(matches!(
        e("edns0 subnet replace 24 56").option,
        Option0::Subnet { v4: 24, v6: 56 }
    ));
    assert_eq!(e("edns0 subnet unset").action, Action::Unset);
    assert_eq!(e("edns0 local unset 0xffee").action, Action::Unset);
}

#[test]
fn bad_rules_are_coredns_errors_with_their_line() {
    for (line, why) in [
        ("rewrite", "no rule type specified for rewrite"),
        (
            "rewrite continue",
            "continue rule must begin with a rule type",
        ),
        ("rewrite bogus a b", "invalid rule type \"bogus\""),
        (
            "rewrite answer name a b",
            "response rewrites must begin with a name rule",
        ),
        ("rewrite name a", "too few arguments for a name rule"),
        (
            "rewrite name glob a b",
            "name rule supports only exact, prefix, suffix, substring, and regex name matching, received: glob",
        ),
        (
            "rewrite name regex ( b",
            "invalid regex matching pattern: (",
        ),
        (
            "rewrite name regex (a) {1}{2}",
            "the rewrite regex pattern ({1}{2}) uses more subexpressions than its corresponding matching regex pattern ((a))",
        ),
        (
            "rewrite name exact a b c",
            "invalid arguments for exact rule",
        ),
        (
            "rewrite name exact a b c d",
            "exceeded the number of arguments for a non-answer rule argument for exact rule",
        ),
        (
            "rewrite name regex a b answer bogus x y",
            "invalid type \"bogus\" for answer rule for regex rule",
        ),
        (
            "rewrite name regex a b answer name x",
            "name answer rule for regex rule: 2 arguments required",
        ),
        (
            "rewrite name regex a b answer auto answer name x y",
            "auto name answer rule cannot be combined with explicit name anwer rules",
        ),
        (
            "rewrite type A",
            "type rules must have exactly two arguments",
        ),
        ("rewrite type A BOGUS", "invalid type \"BOGUS\""),
        ("rewrite class XX IN", "invalid class \"XX\""),
        ("rewrite ttl a", "too few (1) arguments for a ttl rule"),
        ("rewrite ttl a 5-1", "invalid TTL '5-1' for a ttl rule"),
        ("rewrite ttl a -", "invalid TTL '-' for a ttl rule"),
        (
            "rewrite ttl regex ( 5",
            "invalid regex pattern in a ttl rule: (",
        ),
        (
            "rewrite ttl glob a 5",
            "ttl rule supports only exact, prefix, suffix, substring, and regex name matching",
        ),
        (
            "rewrite rcode a 2",
            "too few (2) arguments for a rcode rule",
        ),
        (
            "rewrite rcode a 99 0",
            "invalid matching RCODE '99' for a rcode rule",
        ),
        (
            "rewrite rcode a 2 NOPE",
            "invalid replacement RCODE 'NOPE' for a rcode rule",
        ),
        ("rewrite cname a", "too few (1) arguments for a cname rule"),
        ("rewrite cname glob a b", "unknown cname rewrite type: glob"),
        ("rewrite edns0 local", "too few arguments for an EDNS0 rule"),
        (
            "rewrite edns0 local toggle 1 a",
            "invalid action: \"toggle\"",
        ),
        (
            "rewrite edns0 local set 1",
            "EDNS0 local rules require three or four args",
        ),
        (
            "rewrite edns0 local set 1 0xzz",
            "encoding/hex: invalid byte: \"z\"",
        ),
        (
            "rewrite edns0 local set 1 {bogus}",
            "unsupported variable name \"{bogus}\"",
        ),
        (
            "rewrite edns0 nsid set x",
            "EDNS0 NSID rules can accept no more than one arg",
        ),
        (
            "rewrite edns0 subnet set 33 56",
            "invalid IPv4 bit mask length 33",
        ),
        (
            "rewrite edns0 subnet set 24 129",
            "invalid IPv6 bit mask length 129",
        ),
        (
            "rewrite edns0 subnet unset 24",
            "subnet unset action requires exactly one argument",
        ),
        ("rewrite edns0 other set 1", "invalid rule type \"other\""),
    ] {
        assert_eq!(err(&format!(" {line}")), why, "{line}");
    }
}
