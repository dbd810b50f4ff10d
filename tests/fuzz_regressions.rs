//! Every seed of the fuzz corpora (`fuzz/corpus/TARGET/`) and every input a fuzzer ever
//! crashed on (`fuzz/regressions/TARGET/`) through the same check the fuzz target runs
//! (`fuzz/checks/`), under plain `cargo test`: a fixed crash stays fixed, and the checks
//! stay exercised without a nightly toolchain.

#[path = "../fuzz/checks/mod.rs"]
mod checks;

use std::path::Path;

/// Runs `check` on every file of `fuzz/{corpus,regressions}/TARGET`; returns how many ran.
fn run(target: &str, check: checks::Check) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut failed = Vec::new();
    let mut ran = 0;
    for kind in ["corpus", "regressions"] {
        let Ok(dir) = std::fs::read_dir(root.join(kind).join(target)) else {
            continue;
        };
        let mut files: Vec<_> = dir.flatten().map(|e| e.path()).collect();
        files.sort();
        for f in files {
            let data = std::fs::read(&f).expect("readable input");
            ran += 1;
            if std::panic::catch_unwind(|| check(&data)).is_err() {
                failed.push(f.display().to_string());
            }
        }
    }
    assert!(failed.is_empty(), "{target}: failing inputs: {failed:#?}");
    ran
}

fn target(name: &str) -> checks::Check {
    checks::TARGETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
        .expect("a target of that name")
}

#[test]
fn query_seeds_and_regressions() {
    assert!(run("query", target("query")) > 0, "no query seeds");
}

#[test]
fn corefile_seeds_and_regressions() {
    let ran = run("corefile", target("corefile"));
    checks::corefile::cleanup();
    assert!(ran > 0, "no corefile seeds");
}

#[test]
fn cache_reply_seeds_and_regressions() {
    assert!(
        run("cache_reply", target("cache_reply")) > 0,
        "no cache_reply seeds"
    );
}
