use super::*;
use ringdns_testkit::{QUERY, udp_request};

fn config(corefile: &str) -> Config {
    ringdns_testkit::config::<View>(&format!(". {{\n{corefile}\n}}"))
        .unwrap_or_else(|e| panic!("{corefile}: {e}"))
        .1
}

fn err(corefile: &str) -> String {
    ringdns_testkit::setup::<View>(&format!(". {{\n{corefile}\n}}")).unwrap_err()
}

/// Whether `source` passes for the test kit's query (example. A IN) from `client`.
fn passes(source: &str, client: &str) -> bool {
    let env = expression::environment();
    let e = Expression::compile(source, &env).unwrap_or_else(|m| panic!("{m}"));
    let mut reply = Vec::new();
    let req = udp_request(QUERY, client.parse().unwrap(), &mut reply, false);
    e.passes(&env, &QueryEnv::new(&req))
}

#[test]
fn a_view_takes_a_name_and_expressions() {
    let c = config("view v1 {\n expr type() == 'A'\n expr name() matches '^a\\\\.'\n}");
    assert_eq!(c.name, "v1");
    assert_eq!(c.expressions.len(), 2);
    let c = config("view bare");
    assert!(c.expressions.is_empty());
}

#[test]
fn setup_errors_say_where_and_what() {
    assert!(
        err("view").contains("plugin/view: Wrong argument count"),
        "{}",
        err("view")
    );
    assert!(err("view a b").contains("Wrong argument count"));
    assert!(err("view a {\n bogus x\n}").contains("plugin/view: unknown property 'bogus'"));
    assert!(err("view a {\n expr\n}").contains("Wrong argument count"));
    assert!(err("view a\nview b").contains("only be used once per Server Block"));
    let e = err("view a {\n expr type( == 'A'\n}");
    assert!(e.contains(":3 - ") && e.contains("at column 7"), "{e}");
    let e = err("view a {\n expr nosuch() == 'A'\n}");
    assert!(e.contains("at column 1: unknown function nosuch"), "{e}");
    // Built-ins and method-style calls are not unknown.
    config("view a {\n expr lower(name()) startsWith 'a' && len(type()) > 0\n}");
}

#[test]
fn expressions_read_the_query_as_coredns_functions_do() {
    let from = "127.0.0.9:4000";
    assert!(passes(
        "name() == 'example.' && type() == 'A' && class() == 'IN'",
        from
    ));
    assert!(passes("type() in ['A', 'AAAA']", from));
    assert!(!passes("type() in ['MX']", from));
    assert!(passes("incidr(client_ip(), '127.0.0.0/24')", from));
    assert!(!passes("incidr(client_ip(), '10.0.0.0/8')", from));
    assert!(passes(
        "client_ip() == '127.0.0.9' && port() == '4000'",
        from
    ));
    assert!(passes(
        "incidr(client_ip(), '2001:db8::/32')",
        "[2001:db8::1]:53"
    ));
    assert!(passes("client_ip() == '2001:db8::1'", "[2001:db8::1]:53"));
    assert!(passes(
        "proto() == 'udp' && bufsize() == 512 && !do()",
        from
    ));
    assert!(passes("name() matches '^exa.*\\\\.$'", from));
    assert!(passes("opcode() == 0 && size() > 12", from));
    // Without the metadata plugin, a label is the empty string, as CoreDNS's.
    assert!(passes("metadata('geoip/city/name') == ''", from));
}

#[test]
fn anything_but_true_is_false() {
    let from = "127.0.0.1:53";
    assert!(!passes("incidr('x', '10.0.0.0/8')", from), "a bad address");
    assert!(
        !passes("incidr(client_ip(), '10.0.0.0')", from),
        "a bad CIDR"
    );
    assert!(!passes("name()", from), "a string");
    assert!(!passes("1 + 'a' == 2", from), "a run-time error");
}
