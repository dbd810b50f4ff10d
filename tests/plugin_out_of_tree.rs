//! A plugin from outside the tree, added as a third party adds one: `cargo add` of its crate
//! and one plugin.cfg line. The test copies the repository, does exactly that with
//! examples/plugin-hello, builds the server and queries it; then it checks the build errors
//! for a plugin.cfg line that names the wrong directive, no crate at all, or an in-tree
//! folder whose package is not a dependency.
//!
//! The copy builds into a target directory of its own under cargo's test tmpdir, which
//! stays between runs: the first run builds the dependencies once, later ones only the
//! workspace's crates.

mod common;

use common::{Server, query, udp_exchange};
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::{RData, RecordType};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Copies the repository at `from` to `to`, without build outputs and git's store.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" || name == ".git" {
            continue;
        }
        let kind = entry.file_type().unwrap();
        let dest = to.join(&name);
        if kind.is_dir() {
            copy_tree(&entry.path(), &dest);
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

/// The copy of the repository and the target directory its builds use.
struct Copy {
    repo: PathBuf,
    target: PathBuf,
}

impl Copy {
    fn new() -> Copy {
        let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("out-of-tree-plugin");
        let repo = base.join("repo");
        let _ = std::fs::remove_dir_all(&repo);
        copy_tree(Path::new(env!("CARGO_MANIFEST_DIR")), &repo);
        Copy {
            repo,
            target: base.join("target"),
        }
    }

    /// Runs cargo in the copy; (success, stderr).
    fn cargo(&self, args: &[&str]) -> (bool, String) {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let out = Command::new(cargo)
            .args(args)
            .current_dir(&self.repo)
            .env("CARGO_TARGET_DIR", &self.target)
            // The copy is no checkout of its own: no git revision to look for.
            .env("RINGDNS_REVISION", "out-of-tree-test")
            .output()
            .expect("run cargo");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn build(&self) -> (bool, String) {
        self.cargo(&["build", "--offline", "--bin", "ringdns"])
    }

    /// Puts `line` into the copy's plugin.cfg just before `whoami:whoami`.
    fn plugin_cfg_line(&self, line: &str) {
        let path = self.repo.join("plugin.cfg");
        let text = std::fs::read_to_string(&path).unwrap();
        let mut out = String::new();
        for l in text.lines() {
            if l == "whoami:whoami" {
                out.push_str(line);
                out.push('\n');
            }
            if !l.starts_with("hello:") && !l.starts_with("hi:") && !l.starts_with("geo:") {
                out.push_str(l);
                out.push('\n');
            }
        }
        std::fs::write(&path, out).unwrap();
    }

    fn binary(&self) -> PathBuf {
        self.target.join("debug").join("ringdns")
    }
}

/// The `~~~ corefile` blocks of a README.
fn readme_corefiles(readme: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in readme.lines() {
        match current.as_mut() {
            None if line.trim() == "~~~ corefile" => current = Some(String::new()),
            None => {}
            Some(_) if line.trim() == "~~~" => out.extend(current.take()),
            Some(text) => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    out
}

fn txt_strings(reply: &Message) -> Vec<String> {
    reply
        .answers
        .iter()
        .filter_map(|r| match &r.data {
            RData::TXT(t) => Some(
                t.txt_data
                    .iter()
                    .map(|s| String::from_utf8_lossy(s).into_owned())
                    .collect::<Vec<_>>()
                    .join("|"),
            ),
            _ => None,
        })
        .collect()
}

#[test]
fn a_third_party_plugin_is_one_cargo_add_and_one_plugin_cfg_line() {
    let copy = Copy::new();
    let (ok, err) = copy.cargo(&[
        "add",
        "--offline",
        "--package",
        "ringdns",
        "--path",
        "examples/plugin-hello",
    ]);
    assert!(ok, "cargo add: {err}");
    copy.plugin_cfg_line("hello:hello-ringdns");
    let (ok, err) = copy.build();
    assert!(ok, "the server with hello builds: {err}");

    let plugins = Command::new(copy.binary())
        .arg("-plugins")
        .output()
        .unwrap();
    let plugins = String::from_utf8_lossy(&plugins.stdout);
    assert!(plugins.contains("  dns.hello\n"), "{plugins}");

    let server = Server::start_program(&copy.binary(), |port| {
        format!(
            ".:{port} {{\n    hello \"hi from outside\" tree {{\n        ttl 42\n    }}\n    whoami\n}}\n"
        )
    });
    // TXT: hello answers, with its texts and TTL, owned by the query name.
    let q = query(7, "Greet.Example.", u16::from(RecordType::TXT));
    let reply = udp_exchange(server.port, &q, Duration::from_secs(2)).expect("a TXT reply");
    let reply = Message::from_vec(&reply).unwrap();
    assert_eq!(reply.metadata.response_code, ResponseCode::NoError);
    assert!(reply.metadata.authoritative);
    assert_eq!(txt_strings(&reply), ["hi from outside|tree"]);
    assert_eq!(reply.answers[0].ttl, 42);
    assert_eq!(reply.answers[0].name.to_string(), "Greet.Example.");
    // Anything else: handed on to whoami, after it in plugin.cfg.
    let q = query(8, "greet.example.", u16::from(RecordType::A));
    let reply = udp_exchange(server.port, &q, Duration::from_secs(2)).expect("an A reply");
    let reply = Message::from_vec(&reply).unwrap();
    assert!(reply.answers.is_empty(), "{reply:?}");
    assert!(
        reply
            .additionals
            .iter()
            .any(|r| r.record_type() == RecordType::A),
        "whoami's address: {reply:?}"
    );
    drop(server);

    // The Corefiles of the example's README (as tests/plugins_readme.rs does for plugins/):
    // each starts with hello in the build, and greets a TXT query.
    let readme =
        std::fs::read_to_string(copy.repo.join("examples/plugin-hello/README.md")).unwrap();
    let examples = readme_corefiles(&readme);
    assert!(
        !examples.is_empty(),
        "the README has a `~~~ corefile` example"
    );
    for example in examples {
        let server = Server::start_program(&copy.binary(), |port| {
            example.replace(":1053", &format!(":{port}"))
        });
        let q = query(9, "example.org.", u16::from(RecordType::TXT));
        let reply = udp_exchange(server.port, &q, Duration::from_secs(2)).expect("a reply");
        let reply = Message::from_vec(&reply).unwrap();
        assert_eq!(txt_strings(&reply).len(), 1, "{example}: {reply:?}");
    }

    // A line whose directive is not the plugin's own name does not compile.
    copy.plugin_cfg_line("hi:hello-ringdns");
    let (ok, err) = copy.build();
    assert!(!ok, "a wrong directive name must not build");
    assert!(
        err.contains("plugin.cfg: the crate of 'hi:…' declares another NAME"),
        "{err}"
    );

    // A line naming a crate that is not a dependency says so, and how to add it.
    copy.plugin_cfg_line("geo:acme-geo");
    let (ok, err) = copy.build();
    assert!(!ok, "a line naming no dependency must not build");
    // The new line takes the place (and the number) of whoami's.
    let cfg = std::fs::read_to_string(copy.repo.join("plugin.cfg")).unwrap();
    let number = 1 + cfg.lines().position(|l| l == "geo:acme-geo").unwrap();
    let expected = format!(
        "plugin.cfg:{number}: 'geo:acme-geo' names no folder plugins/acme-geo/ and no \
         dependency of ringdns: add the plugin's crate with `cargo add acme-geo`"
    );
    assert!(err.contains(&expected), "{err}");

    // An in-tree folder whose package is not a dependency says which line to add.
    let folder = copy.repo.join("plugins/hello");
    copy_tree(&copy.repo.join("examples/plugin-hello"), &folder);
    let manifest = std::fs::read_to_string(folder.join("Cargo.toml")).unwrap();
    let manifest = manifest.replace(
        "name = \"hello-ringdns\"",
        "name = \"ringdns-plugin-hello\"",
    );
    std::fs::write(folder.join("Cargo.toml"), manifest).unwrap();
    copy.plugin_cfg_line("hello:hello");
    let (ok, err) = copy.build();
    assert!(
        !ok,
        "an in-tree plugin that is no dependency must not build"
    );
    assert!(
        err.contains(
            "'hello:hello' is the in-tree plugin plugins/hello/, but its package \
             ringdns-plugin-hello is not a dependency of ringdns: add \
             `ringdns-plugin-hello = { path = \"plugins/hello\" }`"
        ),
        "{err}"
    );
}
