//! Dispenser: caddy's cursor semantics and error texts.

use std::sync::Arc;

use crate::{Dispenser, Token, tokenize};

fn toks(input: &str) -> Vec<Token> {
    tokenize(input, &Arc::from("Testfile"))
}

#[test]
fn val_and_next() {
    let t = toks("host:port\n  dir1 arg1\n  dir2 arg2 arg3\n  dir3");
    let mut d = Dispenser::new(&t);
    assert_eq!((d.val(), d.line(), d.token()), ("", 0, None));
    let mut seen = Vec::new();
    while d.next() {
        seen.push(d.val().to_string());
    }
    assert_eq!(
        seen,
        ["host:port", "dir1", "arg1", "dir2", "arg2", "arg3", "dir3"]
    );
    assert!(!d.next());
    assert_eq!((d.val(), d.line(), d.file()), ("dir3", 4, "Testfile"));
}

#[test]
fn next_arg_stays_on_the_line() {
    let t = toks("dir1 arg1\n  dir2 arg2 arg3\n  dir3");
    let mut d = Dispenser::new(&t);
    assert!(d.next());
    assert!(d.next_arg());
    assert_eq!(d.val(), "arg1");
    assert!(!d.next_arg());
    assert_eq!(d.val(), "arg1");
    assert!(d.next());
    assert_eq!(d.remaining_args(), ["arg2", "arg3"]);
    assert!(d.next());
    assert!(d.remaining_args().is_empty());
    assert_eq!(d.val(), "dir3");
}

#[test]
fn next_arg_does_not_cross_files_or_quoted_newlines() {
    let mut t = toks("a b");
    t[1].file = Arc::from("/other/file");
    let mut d = Dispenser::new(&t);
    d.next();
    assert!(!d.next_arg());
    let t = toks("a \"x\ny\" b\nc");
    let mut d = Dispenser::new(&t);
    d.next();
    // `b` starts on the line where the quoted token ends, so it is still an argument.
    assert_eq!(d.remaining_args(), ["x\ny", "b"]);
    assert!(d.next_line());
    assert_eq!(d.val(), "c");
}

#[test]
fn next_arg_and_remaining_args_stop_before_open_brace() {
    let t = toks("dir3 arg6 { arg7\n dir4");
    let mut d = Dispenser::new(&t);
    d.next();
    assert_eq!(d.remaining_args(), ["arg6"]);
    assert!(!d.next_arg());
    assert_eq!(d.val(), "arg6");
    assert!(d.next());
    assert_eq!(d.val(), "{");
}

#[test]
fn next_line_moves_only_to_a_new_line() {
    let t = toks("host:port\n  dir1 arg1\n  dir2 arg2 arg3");
    let mut d = Dispenser::new(&t);
    assert!(d.next_line());
    assert_eq!(d.val(), "host:port");
    assert!(d.next_line());
    assert_eq!(d.val(), "dir1");
    assert!(!d.next_line());
    d.next();
    assert!(d.next_line());
    assert_eq!(d.val(), "dir2");
    d.next();
    d.next();
    assert!(!d.next_line());
    assert_eq!(d.val(), "arg3");
}

#[test]
fn next_block_walks_one_block_like_caddy() {
    let t = toks("foobar1 {\n  sub1 arg1\n  sub2\n}\nfoobar2 {\n}");
    let mut d = Dispenser::new(&t);
    assert!(!d.next_block());
    d.next();
    let mut inside = Vec::new();
    while d.next_block() {
        inside.push(d.val().to_string());
    }
    assert_eq!(inside, ["sub1", "arg1", "sub2"]);
    assert_eq!((d.val(), d.nesting()), ("}", 0));
    d.next();
    assert_eq!(d.val(), "foobar2");
    assert!(!d.next_block(), "an empty block is as if it did not exist");
    assert_eq!(d.val(), "}");
}

#[test]
fn next_block_is_false_without_a_block_on_the_line() {
    let t = toks("dir a\n{\n x\n}");
    let mut d = Dispenser::new(&t);
    d.next();
    d.next_arg();
    assert!(!d.next_block());
    assert_eq!(d.val(), "a");
}

#[test]
fn next_block_enters_nested_blocks_of_any_depth() {
    let t = toks(
        "top {\n  a 1\n  inner x {\n    b 2\n    deeper {\n      c\n    }\n    d\n  }\n  e\n}\nafter",
    );
    let mut d = Dispenser::new(&t);
    d.next();
    let mut seen = Vec::new();
    walk(&mut d, 0, &mut seen);
    assert_eq!(
        seen,
        [
            "0:a", "0:1", "0:inner", "0:x", "1:b", "1:2", "1:deeper", "2:c", "1:d", "0:e"
        ]
    );
    assert_eq!((d.val(), d.nesting()), ("}", 0));
    assert!(d.next());
    assert_eq!(d.val(), "after");
}

/// Records `depth:token` for every token, entering each nested `{` it meets.
fn walk(d: &mut Dispenser<'_>, depth: usize, seen: &mut Vec<String>) {
    while d.next_block() {
        if d.val() == "{" {
            walk(d, depth + 1, seen);
        } else {
            seen.push(format!("{depth}:{}", d.val()));
        }
    }
}

#[test]
fn next_block_stops_at_end_of_unclosed_block() {
    let t = toks("foobar {\n  sub1 arg1");
    let mut d = Dispenser::new(&t);
    d.next();
    let mut steps = 0;
    while d.next_block() {
        steps += 1;
        assert!(steps < 10, "next_block must make progress or stop");
    }
    assert_eq!(steps, 2);
}

#[test]
fn error_texts() {
    let t = toks("dir1 {\n}\ndir2 arg1 arg2");
    let mut d = Dispenser::new(&t);
    d.next();
    d.next();
    assert_eq!(
        d.arg_err().to_string(),
        "Testfile:1 - Error during parsing: Unexpected token '{', expecting argument"
    );
    while d.val() != "arg2" {
        d.next();
    }
    assert_eq!(
        d.arg_err().to_string(),
        "Testfile:3 - Error during parsing: Wrong argument count or unexpected line ending after 'arg2'"
    );
    assert_eq!(
        d.err("foobar").to_string(),
        "Testfile:3 - Error during parsing: foobar"
    );
    assert_eq!(
        d.syntax_err("{").to_string(),
        "Testfile:3 - Syntax error: Unexpected token 'arg2', expecting '{'"
    );
    assert_eq!(
        d.eof_err().to_string(),
        "Testfile:3 - Error during parsing: Unexpected EOF"
    );
}

#[test]
fn empty_dispenser_is_harmless() {
    let t: Vec<Token> = Vec::new();
    let mut d = Dispenser::new(&t);
    assert!(!d.next() && !d.next_arg() && !d.next_line() && !d.next_block());
    assert!(d.remaining_args().is_empty());
    assert_eq!(
        d.arg_err().to_string(),
        ":0 - Error during parsing: Wrong argument count or unexpected line ending after ''"
    );
}

#[test]
fn dispenser_over_parsed_directive_walks_every_occurrence() {
    let c = super::support::parse_ok(". {\n  acl a {\n    allow\n  }\n  acl b\n}");
    let tokens = &c.blocks[0].directives[0].tokens;
    let mut d = Dispenser::new(tokens);
    let mut occurrences = Vec::new();
    while d.next() {
        let args = d.remaining_args();
        let mut body = Vec::new();
        while d.next_block() {
            body.push(d.val().to_string());
        }
        occurrences.push((args, body));
    }
    assert_eq!(
        occurrences,
        [
            (vec!["a".to_string()], vec!["allow".to_string()]),
            (vec!["b".to_string()], vec![])
        ]
    );
}
