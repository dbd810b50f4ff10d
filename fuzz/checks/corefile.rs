//! `corefile`: arbitrary text as the main Corefile of a directory holding a few files it may
//! import (by name or glob), with a fixed environment for `{$X}`/`{%X%}`; parsed with the
//! compiled plugins' directive names, walked with a `Dispenser`, then loaded as the binary
//! loads it (`config::load`: every key, the global block and every plugin's setup).
//!
//! Asserted: no panic, no hang; every error (parse or setup) names a file of the parse and a
//! line inside that file; every token does too.

use ringdns::corefile::{Dispenser, Error, Limits, ParseOptions, Token, parse_with};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Files the input can import, by name (`import a.conf`) or glob (`import snip/*`).
const FILES: &[(&str, &str)] = &[
    ("a.conf", "log\nerrors\n"),
    ("b.conf", "(snip) {\n    whoami\n}\n"),
    ("block.conf", "example.org:1053 {\n    whoami\n}\n"),
    (
        "cache.conf",
        "cache 30 {\n    success 100\n    prefetch 2 10s 20%\n}\n",
    ),
    ("cycle.conf", "import cycle.conf\n"),
    ("open.conf", "{\n"),
    ("snip/one.conf", "timeouts {\n    read 2s\n}\n"),
    ("snip/two.conf", "import ../a.conf\n"),
];

/// The environment the input sees; nothing else is set.
fn env(name: &str) -> Option<String> {
    let v = match name {
        "X" => "a.conf",
        "ZONE" => "example.org",
        "PORT" => "1053",
        "UP" => "127.0.0.1:53",
        "IMPORT" => "import",
        "OPEN" => "{",
        "NEST" => "{$ZONE}",
        "EMPTY" => "",
        _ => return None,
    };
    Some(v.to_string())
}

/// The directory with [`FILES`], one per process (tests run in parallel processes).
fn dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("ringdns-fuzz-corefile-{}", std::process::id()));
        for (name, text) in FILES {
            let p = d.join(name);
            std::fs::create_dir_all(p.parent().expect("has a parent")).expect("temp dir");
            std::fs::write(p, text).expect("temp file");
        }
        d
    })
}

/// Removes this process's directory (for the regression test; a fuzzer leaves it).
pub fn cleanup() {
    let _ = std::fs::remove_dir_all(dir());
}

/// Whether `text` could name something outside the directory: an absolute path (a `/` that
/// does not follow a name character) or `..`. Such inputs are skipped: the fuzzer must not
/// read the machine's files.
fn leaves_dir(text: &str) -> bool {
    if text.contains("..") {
        return true;
    }
    let b = text.as_bytes();
    b.iter().enumerate().any(|(i, &c)| {
        c == b'/'
            && (i == 0
                || !(b[i - 1].is_ascii_alphanumeric() || matches!(b[i - 1], b'_' | b'-' | b'.')))
    })
}

/// Whether `std`'s address lookup of this HTTP listen address (health, ready, prometheus)
/// stays on the machine: an IP literal, `localhost`, or a text that fails before any lookup.
/// Anything else would ask DNS, and a fuzzer must not touch the network.
fn resolves_locally(text: &str) -> bool {
    let full = if text.starts_with(':') {
        format!("0.0.0.0{text}")
    } else {
        text.to_string()
    };
    if full.parse::<std::net::SocketAddr>().is_ok() {
        return true;
    }
    match full.rsplit_once(':') {
        None => true,
        Some((host, port)) => {
            port.parse::<u16>().is_err()
                || host == "localhost"
                || host.parse::<std::net::IpAddr>().is_ok()
        }
    }
}

/// Lines of `file` as the parse saw it: the input for the main file, else the file on disk.
fn lines_of(file: &str, main: &str, input: &str) -> usize {
    let text = if file == main {
        input.to_string()
    } else {
        std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file} is no file: {e}"))
    };
    text.matches('\n').count() + 1
}

/// A token or an error names the main file or one under the directory, and a line in it.
fn check_place(file: &str, line: usize, main: &str, input: &str) {
    assert!(
        file == main || Path::new(file).starts_with(dir()),
        "place outside the parse: {file}"
    );
    let lines = lines_of(file, main, input);
    assert!(line <= lines, "{file}:{line} past its {lines} lines");
}

fn check_error(e: &Error, main: &str, input: &str) {
    let shown = e.to_string();
    assert!(
        shown.starts_with(&format!("{}:{} - ", e.file, e.line)),
        "error without FILE:LINE: {shown}"
    );
    assert!(!e.message.is_empty());
    check_place(&e.file, e.line, main, input);
}

fn check_tokens(tokens: &[Token], main: &str, input: &str) {
    for t in tokens {
        assert!(t.line >= 1, "token at line 0: {t:?}");
        check_place(&t.file, t.line, main, input);
    }
}

/// Walks tokens with every Dispenser method; must end.
fn drain(tokens: &[Token]) {
    let mut d = Dispenser::new(tokens);
    let mut budget = tokens.len() * 4 + 16;
    while d.next() && budget > 0 {
        let _ = d.remaining_args();
        while d.next_block() && budget > 0 {
            budget -= 1;
            let _ = (d.next_arg(), d.next_line(), d.arg_err(), d.syntax_err("x"));
        }
        budget = budget.saturating_sub(1);
    }
}

/// Runs one input; panics when a promise of the Corefile reader or the loader is broken.
pub fn check(data: &[u8]) {
    let input = String::from_utf8_lossy(data);
    if leaves_dir(&input) {
        return;
    }
    let main = dir().join("Corefile").to_string_lossy().into_owned();
    // Lower caps than the binary's (10 000 snippet expansions, 100 000 imports) keep each
    // run short; the code paths are the same.
    let options = ParseOptions {
        limits: Limits {
            snippet_expansions: 200,
            file_imports: 200,
        },
        env: &env,
    };
    let cf = match parse_with(&main, &input, &ringdns::chain::known_directive, &options) {
        Ok(cf) => cf,
        Err(e) => return check_error(&e, &main, &input),
    };
    let directives = cf
        .global
        .iter()
        .chain(cf.blocks.iter().flat_map(|b| &b.directives));
    for d in directives.clone() {
        check_tokens(&d.tokens, &main, &input);
        drain(&d.tokens);
    }
    for b in &cf.blocks {
        assert!(!b.keys.is_empty(), "a block without keys");
        check_tokens(&b.keys, &main, &input);
    }
    let http = ["health", "ready", "prometheus"];
    let offline = directives
        .filter(|d| http.contains(&d.name.as_str()))
        .all(|d| d.tokens.iter().all(|t| resolves_locally(&t.text)));
    if !offline {
        return;
    }
    if let Err(e) = ringdns::config::load(&cf, 1053) {
        check_error(&e, &main, &input);
    }
}
