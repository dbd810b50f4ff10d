//! The fingerprint of a parsed Corefile: SHA-512 over its meaning, not its bytes, so that
//! the `reload` plugin and SIGUSR1 can tell a real change from an edit of comments, blank
//! lines or indentation (CoreDNS hashes the JSON of its parsed server blocks for the same
//! reason; that JSON also holds each token's line number, so there moving a line is a
//! change, here it is not).
//!
//! What counts: the global block, every server block's keys, every directive's name and
//! token texts in order (imports and snippets expanded, `{$ENV}` substituted), and for each
//! token whether it continues the line of the one before, since the Corefile grammar ends a
//! directive's arguments at the end of a line. What does not: file names, line numbers,
//! comments, whitespace.

use crate::corefile::{Corefile, Directive, Token};

/// A SHA-512 digest.
pub type Digest = [u8; 64];

/// Bumped whenever the encoding below changes.
const DOMAIN: &[u8] = b"ringdns corefile v1\0";

/// The digest of `cf`'s meaning.
pub fn digest(cf: &Corefile) -> Digest {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA512);
    ctx.update(DOMAIN);
    directives(&mut ctx, b'G', &cf.global);
    for block in &cf.blocks {
        ctx.update(b"B");
        tokens(&mut ctx, b'K', &block.keys);
        directives(&mut ctx, b'D', &block.directives);
    }
    let mut out = [0u8; 64];
    out.copy_from_slice(ctx.finish().as_ref());
    out
}

/// Lower-case hexadecimal, as CoreDNS logs it (`%x`).
pub fn hex(d: &Digest) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

fn directives(ctx: &mut ring::digest::Context, tag: u8, list: &[Directive]) {
    ctx.update(&[tag]);
    ctx.update(&(list.len() as u64).to_le_bytes());
    for d in list {
        text(ctx, &d.name);
        tokens(ctx, b'T', &d.tokens);
    }
}

fn tokens(ctx: &mut ring::digest::Context, tag: u8, list: &[Token]) {
    ctx.update(&[tag]);
    ctx.update(&(list.len() as u64).to_le_bytes());
    let mut prev: Option<&Token> = None;
    for t in list {
        // The Dispenser's rule for "the same line" (caddy's NextArg).
        let same_line =
            prev.is_some_and(|p| p.file == t.file && p.line + p.line_breaks() == t.line);
        ctx.update(&[u8::from(same_line)]);
        text(ctx, &t.text);
        prev = Some(t);
    }
}

fn text(ctx: &mut ring::digest::Context, s: &str) {
    ctx.update(&(s.len() as u64).to_le_bytes());
    ctx.update(s.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(text: &str) -> String {
        let cf = crate::corefile::parse("Corefile", text, &|_| true).unwrap();
        hex(&digest(&cf))
    }

    #[test]
    fn comments_blank_lines_and_indentation_are_not_a_change() {
        let a = of(".:1053 {\n    whoami\n    log\n}\n");
        assert_eq!(a.len(), 128);
        assert_eq!(
            a,
            of("# a comment\n\n.:1053   {\n whoami   # inline\n\n\n\tlog\n}\n# end\n")
        );
        assert_eq!(a, of(".:1053 {\r\n  whoami\r\n  log\r\n}"));
    }

    #[test]
    fn tokens_keys_order_and_line_structure_are() {
        let a = of(".:1053 {\n whoami\n log\n}\n");
        assert_ne!(a, of(".:1054 {\n whoami\n log\n}\n"), "key");
        assert_ne!(a, of(".:1053 {\n whoami\n}\n"), "directive");
        assert_ne!(a, of(".:1053 {\n whoami\n log {\n  class error\n }\n}\n"));
        // `max_fails 3` and `expire 10s` on one line are one option with three arguments.
        let two_lines = of(". {\n forward . 127.0.0.1 {\n  max_fails 3\n  expire 10s\n }\n}\n");
        let one_line = of(". {\n forward . 127.0.0.1 {\n  max_fails 3 expire 10s\n }\n}\n");
        assert_ne!(two_lines, one_line);
        assert_ne!(
            of("{\n workers 1\n}\n. {\n whoami\n}\n"),
            of(". {\n whoami\n}\n"),
            "global block"
        );
        assert_ne!(
            of("a. {\n whoami\n}\nb. {\n whoami\n}\n"),
            of("b. {\n whoami\n}\na. {\n whoami\n}\n"),
            "block order"
        );
    }
}
