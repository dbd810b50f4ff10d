//! The template language end to end: parse, check, execute over CoreDNS's data, with
//! CoreDNS's own templates and error texts (template_test.go, setup_test.go).

use super::*;

const MATCHES: [&str; 5] = ["ip-10-95-12-8.example.", "10", "95", "12", "8"];
const NAMES: [Option<&str>; 5] = [None, Some("a"), Some("b"), Some("c"), Some("d")];

fn data() -> Data<'static> {
    Data {
        zone: "example.",
        name: "ip-10-95-12-8.example.",
        regex: "^ip-(?P<a>[0-9]*)-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]$",
        matches: &MATCHES,
        group_names: &NAMES,
        class: "IN",
        rtype: "A",
        remote: "10.240.0.1",
        msg: Msg {
            id: 0x1234,
            flags: 0x0100,
            qname: "IP-10-95-12-8.example.",
            qtype: 1,
            qclass: 1,
        },
        meta: None,
    }
}

fn run(src: &str) -> Result<String, String> {
    let t = Template::parse("answer", src)?;
    let mut out = String::new();
    t.execute(&data(), &mut out)?;
    Ok(out)
}

fn ok(src: &str) -> String {
    run(src).unwrap_or_else(|e| panic!("{src}: {e}"))
}

#[test]
fn coredns_readme_templates() {
    assert_eq!(
        ok("{{ .Name }} 60 IN A {{ .Group.a }}.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}"),
        "ip-10-95-12-8.example. 60 IN A 10.95.12.8"
    );
    assert_eq!(
        ok("{{ index .Match 1 }} 60 IN SOA ns.{{ index .Match 1 }} hostmaster (1 60 60 60 60)"),
        "10 60 IN SOA ns.10 hostmaster (1 60 60 60 60)"
    );
    assert_eq!(
        ok("invalid. 60 {{ .Class }} SOA ns.invalid. hostmaster.invalid. (1 60 60 60 60)"),
        "invalid. 60 IN SOA ns.invalid. hostmaster.invalid. (1 60 60 60 60)"
    );
    assert_eq!(
        ok("{{ .Name }} 60 IN A 10.{{ parseInt \"5f\" 16 8 }}.{{ parseInt .Group.d 10 8 }}"),
        "ip-10-95-12-8.example. 60 IN A 10.95.8"
    );
    assert_eq!(
        ok("{{ .Name }} 60 IN A {{ .Remote }}"),
        "ip-10-95-12-8.example. 60 IN A 10.240.0.1"
    );
    assert_eq!(
        ok(r#"{{ .Meta "foo" }}{{ .Name }}"#),
        "ip-10-95-12-8.example."
    );
}

#[test]
fn meta_reads_the_requests_metadata() {
    let t = Template::parse(
        "answer",
        r#"{{ .Meta "forward/upstream" }}|{{ .Meta "x/y" }}"#,
    )
    .unwrap();
    let m = ringdns_plugin::metadata::Metadata::default();
    m.set("forward/upstream", "127.0.0.1:53");
    let d = Data {
        meta: Some(&m),
        ..data()
    };
    let mut out = String::new();
    t.execute(&d, &mut out).unwrap();
    assert_eq!(out, "127.0.0.1:53|");
}

#[test]
fn the_data_as_go_shows_it() {
    assert_eq!(
        ok("{{ .Zone }} {{ .Type }} {{ .Regex | len }}"),
        "example. A 73"
    );
    assert_eq!(
        ok("{{ .Question.Name }} {{ .Question.Qtype }} {{ .Question.Qclass }}"),
        "IP-10-95-12-8.example. 1 1"
    );
    assert_eq!(ok("{{ .Question }}"), ";IP-10-95-12-8.example.\tIN\t A");
    assert_eq!(
        ok("{{ index .Message.Question 0 }}"),
        "{IP-10-95-12-8.example. 1 1}"
    );
    assert_eq!(
        ok("{{ (index .Message.Question 0).Name }}"),
        "IP-10-95-12-8.example."
    );
    assert_eq!(
        ok(
            "{{ .Message.Id }} {{ .Message.RecursionDesired }} {{ .Message.Response }} {{ .Message.Opcode }}"
        ),
        "4660 true false 0"
    );
    assert_eq!(ok("{{ .Match }}"), "[ip-10-95-12-8.example. 10 95 12 8]");
    assert_eq!(
        ok("{{ .Group }}"),
        "map[0:ip-10-95-12-8.example. 1:10 2:95 3:12 4:8 a:10 b:95 c:12 d:8]"
    );
    assert_eq!(
        ok("{{ .Group.zz }}|{{ index .Group \"zz\" }}|{{ index .Group \"2\" }}"),
        "<no value>||95"
    );
    assert_eq!(ok("{{ .Var.x }}|{{ .Var }}"), "<no value>|map[]");
    assert_eq!(ok("{{ .Group.zz.y }}"), "<no value>");
}

#[test]
fn pipelines_control_and_variables() {
    assert_eq!(
        ok(r#"{{ .Group.a | printf "%s-%03d" .Name }}"#),
        "ip-10-95-12-8.example.-%!d(string=10)"
    );
    assert_eq!(ok(r#"{{ printf "%s-%03d" .Group.a 7 }}"#), "10-007");
    assert_eq!(
        ok(
            r#"{{ if eq .Type "A" "AAAA" }}addr{{ else if eq .Type "MX" }}mx{{ else }}other{{ end }}"#
        ),
        "addr"
    );
    assert_eq!(
        ok(r#"{{ if not (eq .Class "IN") }}x{{ else }}in{{ end }}"#),
        "in"
    );
    assert_eq!(
        ok(
            "{{ with .Group.a }}[{{ . }}]{{ else }}none{{ end }}{{ with .Group.zz }}x{{ else }}none{{ end }}"
        ),
        "[10]none"
    );
    assert_eq!(
        ok("{{ range $i, $m := .Match }}{{ if $i }},{{ end }}{{ $m }}{{ end }}"),
        "ip-10-95-12-8.example.,10,95,12,8"
    );
    assert_eq!(ok("{{ range .Var }}x{{ else }}empty{{ end }}"), "empty");
    assert_eq!(
        ok("{{ $x := .Group.a }}{{ $x = printf \"%s!\" $x }}{{ $x }}"),
        "10!"
    );
    assert_eq!(ok("{{ range 3 }}{{ . }}{{ end }}"), "012");
    assert_eq!(
        ok("{{ and .Group.a 0 }}|{{ or .Group.zz \"d\" }}|{{ and 1 2 }}"),
        "0|d|2"
    );
    assert_eq!(
        ok("{{ len .Match }} {{ lt (len .Name) 30 }} {{ ge .Question.Qtype 1 }}"),
        "5 true true"
    );
    assert_eq!(
        ok("{{ slice .Name 0 2 }}{{ print 1 2 \"x\" }}{{ println }}"),
        "ip1 2x\n"
    );
    assert_eq!(ok("a {{- /* gone */ -}} b {{- \" c\" }}"), "ab c");
    assert_eq!(
        ok("{{ range .Message.Question }}{{ .Name }} {{ $.Zone }}{{ end }}"),
        "IP-10-95-12-8.example. example."
    );
}

#[test]
fn execution_errors_read_as_go_s() {
    // template_test.go's BrokenTemplate and BrokenParseIntTemplate, word for word.
    assert_eq!(
        run(r#"{{ .Name }} 60 IN TXT "{{ index .Match 5 }}""#).unwrap_err(),
        r#"template: answer:1:26: executing "answer" at <index .Match 5>: error calling index: index out of range: 5"#
    );
    assert_eq!(
        run(r#"{{ .Name }} 60 IN TXT "{{ parseInt "gg" 16 8 }}""#).unwrap_err(),
        r#"template: answer:1:26: executing "answer" at <parseInt "gg" 16 8>: error calling parseInt: strconv.ParseUint: parsing "gg": invalid syntax"#
    );
    let err = |s: &str| run(s).unwrap_err();
    // Accepted at setup as by CoreDNS (setup_test.go), refused when executed.
    assert_eq!(
        err("{{ parseInt }}"),
        r#"template: answer:1:3: executing "answer" at <parseInt>: wrong number of args for parseInt: want 3 got 0"#
    );
    assert_eq!(
        err("{{ .Grup.d }}"),
        r#"template: answer:1:3: executing "answer" at <.Grup.d>: can't evaluate field Grup in type *template.templateData"#
    );
    assert_eq!(
        err("{{ parseInt .Name \"16\" 8 }}"),
        r#"template: answer:1:3: executing "answer" at <parseInt>: wrong type for value; expected int; got string"#
    );
    assert_eq!(
        err("{{ .Name.x }}"),
        r#"template: answer:1:3: executing "answer" at <.Name.x>: can't evaluate field x in type string"#
    );
    assert_eq!(
        err("{{ .Name 1 }}"),
        r#"template: answer:1:3: executing "answer" at <.Name>: can't give argument to non-function .Name"#
    );
    assert_eq!(
        err("{{ eq .Name 1 }}"),
        r#"template: answer:1:3: executing "answer" at <eq .Name 1>: error calling eq: incompatible types for comparison"#
    );
    assert_eq!(
        err("x\n{{ len 3 }}"),
        r#"template: answer:2:3: executing "answer" at <len 3>: error calling len: len of type int"#
    );
}

#[test]
fn setup_errors_have_a_position() {
    let err = |s: &str| Template::parse("answer", s).unwrap_err();
    // setup_test.go's: `{{` and an undefined function.
    assert_eq!(err("{{"), "template: answer:1:2: unclosed action");
    assert_eq!(
        err("{{ notAFunction }}"),
        "template: answer:1:3: function \"notAFunction\" not defined"
    );
    assert_eq!(
        err("a\nb {{ .Message.Answer }}"),
        "template: answer:2:5: .Message.Answer is not supported by ringdns"
    );
    assert_eq!(
        err("{{ .Message }}"),
        "template: answer:1:3: printing .Message (a *dns.Msg) is not supported by ringdns"
    );
    assert_eq!(
        err("{{ . }}"),
        "template: answer:1:3: printing . (the template's data) is not supported by ringdns"
    );
    assert_eq!(
        err("{{ printf \"%v\" $ }}"),
        "template: answer:1:15: printing $ (the template's data) is not supported by ringdns"
    );
    assert_eq!(
        err("{{ with .Message }}{{ .String }}{{ end }}"),
        "template: answer:1:22: .Message.String is not supported by ringdns"
    );
    assert_eq!(
        err("{{ block \"x\" . }}{{ end }}"),
        "template: answer:1:3: {{block}} is not supported by ringdns"
    );
    assert_eq!(
        err("{{ printf \"%[1]s\" .Name }}"),
        "template: answer:1:10: printf argument indexes (%[n]) are not supported by ringdns"
    );
    assert_eq!(
        err("{{ js .Name }}"),
        "template: answer:1:3: function \"js\" is not supported by ringdns"
    );
    // Accepted, as CoreDNS accepts them at setup.
    for ok in [
        "{{ parseInt }}",
        "{{ .Grup.d }}",
        "{{ .Message.Question }}",
        "{{ $m := .Message }}{{ $m.Id }}",
    ] {
        assert!(Template::parse("answer", ok).is_ok(), "{ok}");
    }
}

#[test]
fn labels_are_go_s_tree_strings() {
    let t = Template::parse(
        "answer",
        "{{ .Name }} 60 IN A {{- \" \" -}} {{ index .Match 1 }}",
    )
    .unwrap();
    assert_eq!(t.label(), "{{.Name}} 60 IN A{{\" \"}}{{index .Match 1}}");
}

#[test]
fn templates_that_would_run_away_are_stopped() {
    // Nesting past the limit is a parse error, not a stack overflow.
    let deep = format!("{{{{ {}1{} }}}}", "(".repeat(200), ")".repeat(200));
    let e = Template::parse("answer", &deep).unwrap_err();
    assert!(e.contains("max expression depth exceeded"), "{e}");
    let deep_if = format!("{}x{}", "{{if 1}}".repeat(150), "{{end}}".repeat(150));
    let e = Template::parse("answer", &deep_if).unwrap_err();
    assert!(e.contains("max expression depth exceeded"), "{e}");
    assert_eq!(
        ok(&format!("{{{{ {}1{} }}}}", "(".repeat(50), ")".repeat(50))),
        "1"
    );
    // A width or precision past a million is no number, as Go's `tooLarge`.
    assert_eq!(ok("{{ printf \"%99999999999s\" \"x\" }}"), "%!(BADWIDTH)x");
    assert_eq!(ok("{{ printf \"%.3d\" 7 }}"), "007");
    // Nested ranges and long output end in an error.
    let e = run("{{ range 100000 }}{{ range 100000 }}{{ end }}{{ end }}").unwrap_err();
    assert!(e.contains("ran more than 1000000 steps"), "{e}");
    let e = run("{{ range 100000 }}xxxxxxxxxx{{ end }}").unwrap_err();
    assert!(e.contains("wrote more than 65535 bytes"), "{e}");
    let e = run("{{ printf \"%1000000s\" \"x\" }}").unwrap_err();
    assert!(e.contains("wrote more than 65535 bytes"), "{e}");
}
