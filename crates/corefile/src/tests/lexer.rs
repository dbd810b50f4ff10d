//! Lexer: whitespace, comments, quotes, BOM, `\r`, line numbers.

use std::sync::Arc;

use crate::{Token, tokenize};

fn lex(input: &str) -> Vec<Token> {
    tokenize(input, &Arc::from("Corefile"))
}

fn words(input: &str) -> Vec<String> {
    lex(input).into_iter().map(|t| t.text).collect()
}

fn lines(input: &str) -> Vec<usize> {
    lex(input).into_iter().map(|t| t.line).collect()
}

#[test]
fn whitespace_separates_tokens_and_counts_lines() {
    let input = "a b\n\tc\u{a0}d\n\n  e";
    assert_eq!(words(input), ["a", "b", "c", "d", "e"]);
    assert_eq!(lines(input), [1, 1, 2, 2, 4]);
    assert!(lex(input).iter().all(|t| &*t.file == "Corefile"));
}

#[test]
fn empty_and_blank_inputs_have_no_tokens() {
    for input in ["", "\n", " ", "\t\n", "# only a comment\n# another"] {
        assert!(lex(input).is_empty(), "{input:?}");
    }
}

#[test]
fn comments_run_to_end_of_line_and_cut_tokens() {
    assert_eq!(words("log # comment here\nerrors"), ["log", "errors"]);
    assert_eq!(words("abc#def"), ["abc"]);
    assert_eq!(words("#x\nabc#def\nnext"), ["abc", "next"]);
    assert_eq!(lines("#x\nabc#def\nnext"), [2, 3]);
}

#[test]
fn mid_token_comment_ends_at_the_next_space_like_caddy() {
    // caddy resets its comment flag per token: after `abc#def` the space ends `abc`
    // and the rest of the line is lexed again.
    assert_eq!(words("abc#def ghi\njkl"), ["abc", "ghi", "jkl"]);
}

#[test]
fn quoted_tokens_keep_spaces_and_only_unescape_quotes() {
    assert_eq!(words(r#"a "b c" d"#), ["a", "b c", "d"]);
    assert_eq!(words(r#""say \"hi\"""#), [r#"say "hi""#]);
    assert_eq!(words(r#""a\nb""#), [r"a\nb"]);
    assert_eq!(words(r#""a\\b""#), [r"a\\b"]);
    assert_eq!(words(r##""# not a comment""##), ["# not a comment"]);
}

#[test]
fn empty_quotes_make_an_empty_token() {
    assert_eq!(words(r#"a "" b"#), ["a", "", "b"]);
}

#[test]
fn quote_inside_a_token_is_ordinary() {
    assert_eq!(words(r#"ab"c d""#), [r#"ab"c"#, r#"d""#]);
}

#[test]
fn unterminated_quote_yields_what_was_read() {
    assert_eq!(words(r#"a "bc"#), ["a", "bc"]);
    assert_eq!(words(r#"a ""#), ["a"]);
}

#[test]
fn braces_are_only_special_as_whole_tokens() {
    assert_eq!(words("foo{ { }bar }"), ["foo{", "{", "}bar", "}"]);
}

#[test]
fn quoted_token_spanning_lines_keeps_its_first_line() {
    let input = "a \"x\ny\nz\" b\nc";
    assert_eq!(words(input), ["a", "x\ny\nz", "b", "c"]);
    assert_eq!(lines(input), [1, 1, 3, 4]);
    assert_eq!(lex(input)[1].line_breaks(), 2);
}

#[test]
fn leading_bom_is_dropped_but_not_later_ones() {
    assert_eq!(words("\u{feff}a b"), ["a", "b"]);
    assert_eq!(words("a \u{feff}b"), ["a", "\u{feff}b"]);
}

#[test]
fn carriage_returns_are_skipped_everywhere_outside_quotes() {
    let input = "a\r\nb\r\n\r\nc\rd \"e\rf\"";
    assert_eq!(words(input), ["a", "b", "cd", "e\rf"]);
    assert_eq!(lines(input), [1, 2, 4, 4]);
}

#[test]
fn bytes_that_are_not_utf8_become_one_replacement_character_each_as_in_go() {
    use crate::decode;
    assert_eq!(decode(b"caf\xe9"), "caf\u{FFFD}");
    // A cut 4-byte sequence: Go's ReadRune gives U+FFFD per byte (Rust's lossy gives one).
    assert_eq!(decode(b"a\xf0\x9f\x98b"), "a\u{FFFD}\u{FFFD}\u{FFFD}b");
    assert_eq!(decode("é😀".as_bytes()), "é😀");
    assert_eq!(decode(b"\xff\xfe"), "\u{FFFD}\u{FFFD}");
    let text = decode(b"# caf\xe9\n. {\n log . \"{name} caf\xe9\"\n}\n");
    assert_eq!(
        words(&text),
        [".", "{", "log", ".", "{name} caf\u{FFFD}", "}"]
    );
    assert_eq!(lines(&text), [2, 2, 3, 3, 3, 4]);
}
