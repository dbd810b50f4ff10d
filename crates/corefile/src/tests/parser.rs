//! Parser: keys, blocks, directives, braces, global block, errors.

use super::support::{keys, parse_err, parse_ok, summary};

#[test]
fn block_with_keys_and_directives() {
    let c = parse_ok(".:53 {\n  forward . 8.8.8.8 9.9.9.9\n  cache 30\n  log\n}\n");
    assert_eq!(keys(&c), [[".:53"]]);
    assert_eq!(
        summary(&c.blocks[0].directives),
        [
            "forward: forward . 8.8.8.8 9.9.9.9",
            "cache: cache 30",
            "log: log"
        ]
    );
    let fwd = &c.blocks[0].directives[0].tokens;
    assert_eq!((fwd[0].line, fwd[3].line), (2, 2));
    assert!(c.global.is_empty());
}

#[test]
fn keys_separated_by_commas_or_spaces() {
    let c = parse_ok("a.org, b.org c.org {\n}\nd.org,e.org\n");
    assert_eq!(
        keys(&c),
        [vec!["a.org", "b.org", "c.org"], vec!["d.org,e.org"]]
    );
}

#[test]
fn trailing_comma_continues_key_list_on_next_line() {
    let c = parse_ok("a.org,\n  b.org,\n  c.org {\n  log\n}");
    assert_eq!(keys(&c), [["a.org", "b.org", "c.org"]]);
    let lines: Vec<usize> = c.blocks[0].keys.iter().map(|k| k.line).collect();
    assert_eq!(lines, [1, 2, 3]);
}

#[test]
fn open_brace_may_be_on_the_next_line() {
    let c = parse_ok("a.org\n{\n  log\n}\nb.org\n{\n}");
    assert_eq!(keys(&c), [["a.org"], ["b.org"]]);
    assert_eq!(summary(&c.blocks[0].directives), ["log: log"]);
}

#[test]
fn braceless_single_block_takes_the_rest_of_the_file() {
    let c = parse_ok("example.org:1053\nwhoami\nlog stdout\n");
    assert_eq!(keys(&c), [["example.org:1053"]]);
    assert_eq!(
        summary(&c.blocks[0].directives),
        ["whoami: whoami", "log: log stdout"]
    );
}

#[test]
fn keys_alone_make_a_block_without_directives() {
    let c = parse_ok("localhost");
    assert_eq!(keys(&c), [["localhost"]]);
    assert!(c.blocks[0].directives.is_empty());
}

#[test]
fn several_blocks_in_order() {
    let c = parse_ok("a.org {\n log\n}\nb.org:54 {\n errors\n}\n. {\n whoami\n}");
    assert_eq!(keys(&c), [["a.org"], ["b.org:54"], ["."]]);
}

#[test]
fn nested_blocks_of_any_depth_belong_to_the_directive() {
    let c = parse_ok(
        "localhost\n  dir1 {\n    nested {\n      deeper {\n        foo\n      }\n    }\n  }\n  dir2 foo bar",
    );
    assert_eq!(
        summary(&c.blocks[0].directives),
        [
            "dir1: dir1 { nested { deeper { foo } } }",
            "dir2: dir2 foo bar"
        ]
    );
}

#[test]
fn open_brace_first_on_the_next_line_opens_the_directive_block() {
    let c = parse_ok("a.org {\n  forward . 1.1.1.1\n  {\n    max_fails 3\n  }\n  log\n}");
    assert_eq!(
        summary(&c.blocks[0].directives),
        ["forward: forward . 1.1.1.1 { max_fails 3 }", "log: log"]
    );
}

#[test]
fn repeated_directives_are_merged_in_order_of_first_appearance() {
    let c = parse_ok("a.org {\n  acl a\n  log\n  acl b {\n    x\n  }\n  log y\n}");
    assert_eq!(
        summary(&c.blocks[0].directives),
        ["acl: acl a acl b { x }", "log: log log y"]
    );
}

#[test]
fn unmatched_close_brace_is_an_error() {
    assert_eq!(
        parse_err("localhost\n  dir1 {\n  } }"),
        "Corefile:3 - Error during parsing: Unexpected '}' because no matching opening brace"
    );
    assert_eq!(
        parse_err("a.org {\n  log }\n}"),
        "Corefile:2 - Error during parsing: Unexpected '}' because no matching opening brace"
    );
}

#[test]
fn unterminated_directive_block_is_unexpected_eof() {
    assert_eq!(
        parse_err("localhost\n  dir1 {\n    foo"),
        "Corefile:3 - Error during parsing: Unexpected EOF"
    );
}

#[test]
fn unterminated_server_block_expects_a_close_brace() {
    assert_eq!(
        parse_err("a.org {\n  log\n"),
        "Corefile:2 - Syntax error: Unexpected token 'log', expecting '}'"
    );
}

#[test]
fn unknown_directive_names_file_and_line() {
    let input = ".:53 {\n  log\n\n  read\n}";
    assert_eq!(
        parse_err(input),
        "Corefile:4 - Error during parsing: Unknown directive 'read'"
    );
}

#[test]
fn comma_problems_in_keys() {
    assert_eq!(
        parse_err("a.org, {\n}"),
        "Corefile:1 - Error during parsing: Expected another address but had '{' - check for extra comma"
    );
    assert_eq!(
        parse_err("a.org, b.org,"),
        "Corefile:1 - Error during parsing: Unexpected EOF"
    );
}

#[test]
fn empty_or_comment_only_files_have_no_blocks() {
    for input in ["", "\n\n", "# nothing\n   # here", "\"\""] {
        let c = parse_ok(input);
        assert!(c.blocks.is_empty() && c.global.is_empty(), "{input:?}");
    }
}

#[test]
fn global_block_first_in_file_is_not_checked_against_plugins() {
    let c = parse_ok("# options\n{\n  workers 4\n  tuning {\n    x 1\n  }\n}\n. {\n  log\n}");
    assert_eq!(
        summary(&c.global),
        ["workers: workers 4", "tuning: tuning { x 1 }"]
    );
    assert_eq!(keys(&c), [["."]]);
}

#[test]
fn keyless_block_later_in_the_file_is_an_error() {
    let msg = "Error during parsing: Block without keys: a '{ }' block without server addresses \
(the global options block) is only allowed as the very first thing in the file";
    assert_eq!(
        parse_err("{\n}\n. {\n}\n{\n  log\n}"),
        format!("Corefile:5 - {msg}")
    );
    assert_eq!(parse_err(". {\n}\n{\n}"), format!("Corefile:3 - {msg}"));
    assert_eq!(
        parse_err("(snip) {\n  log\n}\n{\n}"),
        format!("Corefile:4 - {msg}")
    );
}

#[test]
fn unterminated_global_block() {
    assert_eq!(
        parse_err("{\n  workers 4\n"),
        "Corefile:2 - Syntax error: Unexpected token '4', expecting '}'"
    );
}

#[test]
fn error_display_is_file_line_message() {
    let err = crate::parse("/etc/coredns/Corefile", "a {\n x\n}", &|_| false).unwrap_err();
    assert_eq!(&*err.file, "/etc/coredns/Corefile");
    assert_eq!(err.line, 2);
    assert_eq!(err.message, "Error during parsing: Unknown directive 'x'");
    assert_eq!(
        err.to_string(),
        "/etc/coredns/Corefile:2 - Error during parsing: Unknown directive 'x'"
    );
}

#[test]
fn parse_file_reads_from_disk() {
    let dir = super::support::TempDir::new("parsefile");
    let path = dir.write("Corefile", ". {\n  whoami\n}\n");
    let c = crate::parse_file(std::path::Path::new(&path), &super::support::known).unwrap();
    assert_eq!(keys(&c), [["."]]);
    let missing = dir.join("nope");
    let err = crate::parse_file(std::path::Path::new(&missing), &|_| true).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{missing}:0 - Error during parsing: Could not read file {missing}: no such file or directory"
        )
    );
}

#[test]
fn unclosed_block_ending_in_a_nested_close_brace_is_accepted_like_caddy() {
    // caddy only checks that the last token read is `}`; CoreDNS accepts this too.
    let c = parse_ok("a.org {\n  log {\n  }\n");
    assert_eq!(summary(&c.blocks[0].directives), ["log: log { }"]);
}

#[test]
fn stray_close_brace_at_top_level_becomes_a_key_like_caddy() {
    let c = parse_ok("a.org {\n}\n}");
    assert_eq!(keys(&c), [["a.org"], ["}"]]);
}
