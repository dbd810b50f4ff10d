//! Shared test helpers: a directive list, parse shorthands, temp dirs.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::{Corefile, Directive, ParseOptions, Token, parse, parse_with};

/// Directive names the tests treat as present in plugin.cfg.
pub fn known(name: &str) -> bool {
    matches!(
        name,
        "log"
            | "errors"
            | "forward"
            | "cache"
            | "whoami"
            | "hosts"
            | "dir1"
            | "dir2"
            | "dir3"
            | "health"
            | "bind"
            | "template"
            | "acl"
            | "rewrite"
            | "reload"
            | "file"
    )
}

/// Parses `input` as file "Corefile", expecting success.
pub fn parse_ok(input: &str) -> Corefile {
    match parse("Corefile", input, &known) {
        Ok(c) => c,
        Err(e) => panic!("unexpected error: {e}"),
    }
}

/// Parses `input` as file "Corefile", expecting an error; returns its Display text.
pub fn parse_err(input: &str) -> String {
    match parse("Corefile", input, &known) {
        Ok(c) => panic!("expected an error, got {c:?}"),
        Err(e) => e.to_string(),
    }
}

/// Parses with a fake environment.
pub fn parse_env(input: &str, vars: &[(&str, &str)]) -> Corefile {
    let lookup = |name: &str| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    };
    let options = ParseOptions {
        env: &lookup,
        ..ParseOptions::default()
    };
    match parse_with("Corefile", input, &known, &options) {
        Ok(c) => c,
        Err(e) => panic!("unexpected error: {e}"),
    }
}

/// Token texts.
pub fn texts(tokens: &[Token]) -> Vec<&str> {
    tokens.iter().map(|t| t.text.as_str()).collect()
}

/// Key texts of every block.
pub fn keys(c: &Corefile) -> Vec<Vec<&str>> {
    c.blocks.iter().map(|b| texts(&b.keys)).collect()
}

/// `name: tok tok ...` for each directive, to compare whole blocks at once.
pub fn summary(dirs: &[Directive]) -> Vec<String> {
    dirs.iter()
        .map(|d| format!("{}: {}", d.name, texts(&d.tokens).join(" ")))
        .collect()
}

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    /// Creates `corefile-test-TAG-PID-N`.
    pub fn new(tag: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let dir =
            std::env::temp_dir().join(format!("corefile-test-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Writes `rel` (parents created) and returns its path as a string.
    pub fn write(&self, rel: &str, content: &str) -> String {
        let path = self.0.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parent");
        }
        std::fs::write(&path, content).expect("write file");
        path.to_string_lossy().into_owned()
    }

    /// `rel` inside the directory, as a string.
    pub fn join(&self, rel: &str) -> String {
        self.0.join(rel).to_string_lossy().into_owned()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
