//! `import FILE|GLOB`: resolution, globs, errors, caps, cycles.

use std::time::{Duration, Instant};

use super::support::{TempDir, keys, known, summary};
use crate::{Corefile, Error, Limits, ParseOptions, parse, parse_with};

fn parse_at(main: &str, input: &str) -> Result<Corefile, Error> {
    parse(main, input, &known)
}

#[test]
fn relative_import_resolves_against_the_importing_file() {
    let dir = TempDir::new("rel");
    dir.write("conf/extra.conf", "errors\nimport ../more/more.conf\n");
    dir.write("more/more.conf", "cache 30\n");
    let main = dir.join("Corefile");
    let c = parse_at(&main, "a.org {\n  log\n  import conf/extra.conf\n}").unwrap();
    assert_eq!(
        summary(&c.blocks[0].directives),
        ["log: log", "errors: errors", "cache: cache 30"]
    );
    let cache = &c.blocks[0].directives[2].tokens[0];
    assert_eq!(&*cache.file, dir.join("more/more.conf"));
    assert_eq!(cache.line, 1);
    assert_eq!(&*c.blocks[0].directives[0].tokens[0].file, main);
}

#[test]
fn imported_file_errors_name_its_absolute_path() {
    let dir = TempDir::new("errpath");
    dir.write("bad.conf", "log\n\nbogus\n");
    let err = parse_at(&dir.join("Corefile"), "a.org {\n  import bad.conf\n}").unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}:3 - Error during parsing: Unknown directive 'bogus'",
            dir.join("bad.conf")
        )
    );
}

#[test]
fn top_level_import_splices_blocks() {
    let dir = TempDir::new("top");
    dir.write("zones/a.conf", "a.org {\n  log\n}\n");
    dir.write("zones/b.conf", "b.org {\n  errors\n}\n");
    dir.write("zones/skip.txt", "not.this {\n}\n");
    let c = parse_at(&dir.join("Corefile"), "import zones/*.conf\nc.org {\n}").unwrap();
    assert_eq!(keys(&c), [["a.org"], ["b.org"], ["c.org"]]);
}

#[test]
fn import_at_the_start_of_a_nested_block_line() {
    let dir = TempDir::new("nested");
    dir.write("opts", "max_fails 3\nexpire 10s\n");
    let c = parse_at(
        &dir.join("Corefile"),
        ". {\n  forward . 1.1.1.1 {\n    import opts\n    policy random\n  }\n}",
    )
    .unwrap();
    assert_eq!(
        summary(&c.blocks[0].directives),
        ["forward: forward . 1.1.1.1 { max_fails 3 expire 10s policy random }"]
    );
}

#[test]
fn glob_without_matches_is_only_a_warning() {
    let dir = TempDir::new("nomatch");
    let c = parse_at(&dir.join("Corefile"), "import nothing/*.conf\na.org {\n}").unwrap();
    assert_eq!(keys(&c), [["a.org"]]);
}

#[test]
fn missing_literal_file_is_an_error() {
    let dir = TempDir::new("missing");
    let err = parse_at(&dir.join("Corefile"), "a.org {\n  import missing.conf\n}").unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}:2 - Error during parsing: File to import not found: missing.conf",
            dir.join("Corefile")
        )
    );
}

#[test]
fn directory_import_is_an_error() {
    let dir = TempDir::new("isdir");
    std::fs::create_dir_all(dir.path().join("sub")).unwrap();
    let err = parse_at(&dir.join("Corefile"), "import sub").unwrap_err();
    assert_eq!(
        err.message,
        format!(
            "Error during parsing: Could not import {}: is a directory",
            dir.join("sub")
        )
    );
}

#[test]
fn globs_are_limited_like_caddy() {
    let dir = TempDir::new("globlimit");
    let main = dir.join("Corefile");
    for (pattern, joined) in [
        ("*/*.conf", "*/*.conf"),
        ("a??", "a??"),
        ("[ab].conf", "[ab].conf"),
    ] {
        let err = parse_at(&main, &format!("import {pattern}")).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{main}:1 - Error during parsing: Glob pattern may only contain one wildcard (*), but has others: {}",
                dir.join(joined)
            )
        );
    }
    let err = parse_at(&main, "import a[b").unwrap_err();
    assert_eq!(
        err.message,
        "Error during parsing: Failed to use import pattern a[b: syntax error in pattern"
    );
}

#[test]
fn glob_import_counts_once_against_the_file_cap() {
    let dir = TempDir::new("globcap");
    for i in 0..5 {
        dir.write(&format!("z/{i}.conf"), &format!("z{i}.org {{\n}}\n"));
    }
    let options = ParseOptions {
        limits: Limits {
            snippet_expansions: 1,
            file_imports: 1,
        },
        ..ParseOptions::default()
    };
    let c = parse_with(&dir.join("Corefile"), "import z/*", &known, &options).unwrap();
    assert_eq!(c.blocks.len(), 5);
    let err = parse_with(
        &dir.join("Corefile"),
        "import z/0.conf\nimport z/1.conf",
        &known,
        &options,
    )
    .unwrap_err();
    assert_eq!(
        err.message,
        "Error during parsing: maximum file import depth (1) exceeded"
    );
}

#[test]
fn file_import_cycle_ends_quickly_with_an_error() {
    let dir = TempDir::new("cycle");
    dir.write("a.conf", "import b.conf\n");
    dir.write("b.conf", "import a.conf\n");
    let started = Instant::now();
    let err = parse_at(&dir.join("Corefile"), "import a.conf").unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        err.to_string(),
        format!(
            "{b}:1 - Error during parsing: maximum file import depth (100000) exceeded: import cycle {a} -> {b} -> {a}",
            a = dir.join("a.conf"),
            b = dir.join("b.conf")
        )
    );
}

#[test]
fn main_file_importing_itself_is_a_cycle() {
    let dir = TempDir::new("selfmain");
    let main = dir.write("Corefile", "import Corefile\n");
    let err = parse_at(&main, "import Corefile\n").unwrap_err();
    assert!(
        err.message.starts_with(
            "Error during parsing: maximum file import depth (100000) exceeded: import cycle"
        ),
        "{err}"
    );
}

#[test]
fn mixed_snippet_and_file_cycle() {
    let dir = TempDir::new("mixed");
    dir.write("s.conf", "import s\n");
    let err = parse_at(
        &dir.join("Corefile"),
        "(s) {\n  import s.conf\n}\na.org {\n  import s\n}",
    )
    .unwrap_err();
    assert_eq!(
        err.message,
        format!(
            "Error during parsing: maximum snippet import depth (10000) exceeded: import cycle (s) -> {} -> (s)",
            dir.join("s.conf")
        )
    );
}

#[test]
fn repeated_non_cyclic_imports_are_fine() {
    let dir = TempDir::new("repeat");
    dir.write("log.conf", "log\n");
    let c = parse_at(
        &dir.join("Corefile"),
        "a.org {\n  import log.conf\n}\nb.org {\n  import log.conf\n}",
    )
    .unwrap();
    assert_eq!(c.blocks.len(), 2);
}

#[test]
fn absolute_import_path() {
    let dir = TempDir::new("abs");
    let file = dir.write("x.conf", "whoami\n");
    let c = parse(
        "Corefile",
        &format!("a.org {{\n  import {file}\n}}"),
        &known,
    )
    .unwrap();
    assert_eq!(summary(&c.blocks[0].directives), ["whoami: whoami"]);
}

#[test]
fn stdin_resolves_relative_imports_against_the_current_directory() {
    // Climb from the current directory to `/` with `..`, then down into a temp dir:
    // this only resolves if "stdin" imports are relative to the current directory.
    let dir = TempDir::new("stdin");
    let target = dir.write("x.conf", "log\n");
    let depth = std::env::current_dir().unwrap().components().count();
    let relative = format!("{}{}", "../".repeat(depth), target.trim_start_matches('/'));
    let c = parse(
        "stdin",
        &format!("a.org {{\n  import {relative}\n}}"),
        &known,
    )
    .unwrap();
    assert_eq!(&*c.blocks[0].directives[0].tokens[0].file, target);
    let err = parse("stdin", "a.org {\n  import nope.conf\n}", &known).unwrap_err();
    assert_eq!(
        err.to_string(),
        "stdin:2 - Error during parsing: File to import not found: nope.conf"
    );
}

#[test]
fn empty_imported_file_is_fine_anywhere() {
    let dir = TempDir::new("empty");
    dir.write("empty.conf", "");
    let c = parse_at(
        &dir.join("Corefile"),
        "import empty.conf\na.org {\n  import empty.conf\n  log\n}\nimport empty.conf",
    )
    .unwrap();
    assert_eq!(keys(&c), [["a.org"]]);
    assert_eq!(summary(&c.blocks[0].directives), ["log: log"]);
}

#[test]
fn very_long_import_chains_drop_without_overflowing_the_stack() {
    use crate::origin::{OriginKind, child};
    let mut chain = None;
    for i in 0..300_000 {
        chain = child(&chain, OriginKind::Snippet(i.to_string()));
    }
    drop(chain);
}
