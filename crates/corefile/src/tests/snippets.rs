//! Snippets `(name) { ... }` and `import NAME`, plus import argument errors.

use super::support::{keys, known, parse_err, parse_ok, summary};
use crate::{Limits, ParseOptions, parse_with};

#[test]
fn snippet_is_stored_not_served_and_spliced_as_lines() {
    let c = parse_ok(
        "(common) {\n  errors\n  log stderr\n}\nexample.org {\n  whoami\n  import common\n  cache\n}",
    );
    assert_eq!(keys(&c), [["example.org"]]);
    assert_eq!(
        summary(&c.blocks[0].directives),
        [
            "whoami: whoami",
            "errors: errors",
            "log: log stderr",
            "cache: cache"
        ]
    );
    // Imported tokens keep their own place for error messages.
    assert_eq!(c.blocks[0].directives[1].tokens[0].line, 2);
}

#[test]
fn snippet_imported_at_top_level_splices_whole_blocks() {
    let c = parse_ok(
        "(blocks) {\n  a.org {\n    log\n  }\n  b.org {\n    errors\n  }\n}\nimport blocks\nc.org {\n}",
    );
    assert_eq!(keys(&c), [["a.org"], ["b.org"], ["c.org"]]);
    assert_eq!(summary(&c.blocks[1].directives), ["errors: errors"]);
}

#[test]
fn snippet_imported_inside_a_directive_block() {
    let c = parse_ok(
        "(opts) {\n  max_fails 3\n  expire 10s\n}\n. {\n  forward . 1.1.1.1 {\n    import opts\n    policy random\n  }\n}",
    );
    assert_eq!(
        summary(&c.blocks[0].directives),
        ["forward: forward . 1.1.1.1 { max_fails 3 expire 10s policy random }"]
    );
}

#[test]
fn snippet_with_nested_braces_and_env_in_import_name() {
    let c =
        parse_ok("(s) {\n  forward . 1.1.1.1 {\n    max_fails 1\n  }\n}\na.org {\n  import s\n}");
    assert_eq!(
        summary(&c.blocks[0].directives),
        ["forward: forward . 1.1.1.1 { max_fails 1 }"]
    );
}

#[test]
fn redeclared_snippet_is_an_error() {
    assert_eq!(
        parse_err("(s) {\n  log\n}\n(s) {\n  errors\n}"),
        "Corefile:4 - Error during parsing: redeclaration of previously declared snippet s"
    );
}

#[test]
fn snippet_importing_itself_is_rejected_with_coredns_text() {
    assert_eq!(
        parse_err("(loop) {\n  import loop\n}\nimport loop"),
        "Corefile:3 - Error during parsing: maximum snippet import depth (10000) exceeded"
    );
    assert_eq!(
        parse_err("(loop) {\n{ }\nimport loop\n}\nimport loop"),
        "Corefile:4 - Error during parsing: maximum snippet import depth (10000) exceeded"
    );
}

#[test]
fn indirect_snippet_cycle_ends_with_an_error() {
    let err = parse_err("(a) {\n  import b\n}\n(b) {\n  import a\n}\nx.org {\n  import a\n}");
    assert_eq!(
        err,
        "Corefile:5 - Error during parsing: maximum snippet import depth (10000) exceeded: \
import cycle (a) -> (b) -> (a)"
    );
}

#[test]
fn import_before_definition_is_a_file_path() {
    assert_eq!(
        parse_err("a.org {\n  import later\n}\n(later) {\n  log\n}"),
        "Corefile:2 - Error during parsing: File to import not found: later"
    );
}

#[test]
fn snippet_needs_braces() {
    assert_eq!(
        parse_err("(s)\nlog\n"),
        "Corefile:2 - Syntax error: Unexpected token 'log', expecting '{'"
    );
    assert_eq!(
        parse_err("(s) {\n  log\n"),
        "Corefile:2 - Syntax error: Unexpected token 'log', expecting '}'"
    );
}

#[test]
fn snippet_expansions_are_capped() {
    let options = ParseOptions {
        limits: Limits {
            snippet_expansions: 2,
            file_imports: 5,
        },
        ..ParseOptions::default()
    };
    let input = "(s) {\n  log\n}\na {\n  import s\n  import s\n  import s\n}";
    let err = parse_with("Corefile", input, &known, &options).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Corefile:7 - Error during parsing: maximum snippet import depth (2) exceeded"
    );
}

#[test]
fn import_argument_errors() {
    assert_eq!(
        parse_err("a.org {\n  import\n}"),
        "Corefile:2 - Error during parsing: Wrong argument count or unexpected line ending after 'import'"
    );
    assert_eq!(
        parse_err("a.org {\n  import a b\n}"),
        "Corefile:2 - Error during parsing: Import takes only one argument (glob pattern or file)"
    );
    assert_eq!(
        parse_err("import \"\""),
        "Corefile:1 - Error during parsing: Import requires a non-empty filepath"
    );
    assert_eq!(
        parse_err("import {$CERTAINLY_UNSET_VARIABLE_123}"),
        "Corefile:1 - Error during parsing: Import requires a non-empty filepath"
    );
}

#[test]
fn import_word_as_argument_is_not_an_import() {
    let c = parse_ok("a.org {\n  rewrite name import x\n}");
    assert_eq!(
        summary(&c.blocks[0].directives),
        ["rewrite: rewrite name import x"]
    );
}
