//! `{$VAR}` / `{%VAR%}` substitution.

use super::support::{keys, parse_env, summary, texts};
use crate::parse;

#[test]
fn substitutes_in_keys_names_and_args_anywhere_in_a_token() {
    let vars = [
        ("ZONE", "example.org"),
        ("PORT", "1053"),
        ("DIR", "log"),
        ("UP", "9.9.9.9"),
    ];
    let c = parse_env(
        "{$ZONE}:{%PORT%} {\n  {$DIR} x{$UP}y\n  forward . {%UP%}:53\n}",
        &vars,
    );
    assert_eq!(keys(&c), [["example.org:1053"]]);
    assert_eq!(
        summary(&c.blocks[0].directives),
        ["log: log x9.9.9.9y", "forward: forward . 9.9.9.9:53"]
    );
}

#[test]
fn unset_variable_becomes_empty_and_value_stays_one_token() {
    let c = parse_env(
        "a.org {\n  log pre{$NOPE}post \"{$SPACED}\" {$SPACED}\n}",
        &[("SPACED", "one two")],
    );
    assert_eq!(
        texts(&c.blocks[0].directives[0].tokens),
        ["log", "prepost", "one two", "one two"]
    );
}

#[test]
fn malformed_references_follow_caddy() {
    let c = parse_env(
        ":1234\nlog {%ADDR} {$} {%%} {$PORT$} {$A}{$B\n",
        &[("ADDR", "x"), ("A", "a")],
    );
    assert_eq!(
        texts(&c.blocks[0].directives[0].tokens),
        ["log", "{%ADDR}", "{$}", "{%%}", "", "a{$B"]
    );
}

#[test]
fn percent_form_is_replaced_before_dollar_form() {
    // A `{%..%}` value that contains `{$..}` is expanded by the second pass.
    let c = parse_env(
        "a.org\nlog {%OUTER%}",
        &[("OUTER", "<{$INNER}>"), ("INNER", "in")],
    );
    assert_eq!(texts(&c.blocks[0].directives[0].tokens), ["log", "<in>"]);
}

#[test]
fn self_referencing_value_does_not_hang() {
    let c = parse_env("a.org\nlog {$LOOP}", &[("LOOP", "{$LOOP}x")]);
    assert_eq!(c.blocks.len(), 1);
}

#[test]
fn reads_the_process_environment_by_default() {
    // Cargo sets CARGO_PKG_NAME for test runs; no need to modify the environment.
    let c = parse("Corefile", "{$CARGO_PKG_NAME}.org", &|_| true).unwrap();
    assert_eq!(
        keys(&c),
        [[format!("{}.org", env!("CARGO_PKG_NAME")).as_str()]]
    );
}
