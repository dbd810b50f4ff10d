//! `file DBFILE [ZONES...] { reload DURATION; reload_by_mtime; fallthrough [ZONES...];
//! upstream }`, as CoreDNS's `fileParse` reads it.

use crate::{Config, FileZone};
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::normalize::normalize_exact;
use ringdns_plugin::{BlockSetup, Fallthrough, duration};
use ringdns_zone::registry::Registry;
use ringdns_zone::watch::ZoneFile;
use std::sync::Arc;
use std::time::Duration;

/// CoreDNS's default check period.
const DEFAULT_RELOAD: Duration = Duration::from_secs(60);

/// Reads every `file` line of a block; loads the zones (a zone file that does not parse
/// is an error; one that does not exist is an error only when reload is off).
pub fn parse(d: &mut Dispenser<'_>, block: &BlockSetup) -> Result<Config, Error> {
    let mut zones = Vec::new();
    let mut fall = Fallthrough::default();
    let registry = block.block_shared::<Registry>();
    while d.next() {
        if !d.next_arg() {
            return Err(d.arg_err());
        }
        let path = block.resolve_path(d.val());
        let args = d.remaining_args();
        let origins = if args.is_empty() {
            block.zones.clone()
        } else {
            let mut v = Vec::new();
            for a in &args {
                v.extend(normalize_exact(a).map_err(|e| d.plugin_err("file", e))?);
            }
            v
        };
        let mut reload = DEFAULT_RELOAD;
        let mut by_mtime = false;
        while d.next_block() {
            match d.val() {
                "fallthrough" => {
                    let a = d.remaining_args();
                    fall = Fallthrough::parse(&a).map_err(|e| d.plugin_err("file", e))?;
                }
                "reload" => {
                    if !d.next_arg() {
                        return Err(d.plugin_err("file", "reload duration value is expected"));
                    }
                    reload = duration::parse(d.val()).map_err(|e| d.plugin_err("file", e))?;
                    if d.next_arg() {
                        return Err(d.arg_err());
                    }
                }
                "reload_by_mtime" => {
                    if d.next_arg() {
                        return Err(d.arg_err());
                    }
                    by_mtime = true;
                }
                // Accepted and ignored by CoreDNS too: lookups of targets outside the zone
                // always go through the server.
                "upstream" => {
                    d.remaining_args();
                }
                other => return Err(d.err(&format!("unknown property '{other}'"))),
            }
        }
        for origin in origins {
            let file = ZoneFile::open("file", path.clone(), origin, by_mtime, reload, &registry)
                .map_err(|e| d.plugin_err("file", e))?;
            zones.push(FileZone { file, reload });
        }
    }
    // Longest origin first, so the first match is the most specific zone.
    zones.sort_by_key(|z: &FileZone| std::cmp::Reverse(z.file.origin.len()));
    Ok(Config {
        zones: Arc::new(zones),
        fall,
    })
}

#[cfg(test)]
mod tests {
    use crate::File;
    use ringdns_testkit::config;
    use std::time::Duration;

    /// A zone file of the test's own (relative names only: any origin), removed after it.
    struct Db(std::path::PathBuf);

    impl Db {
        fn new(tag: &str) -> Db {
            let p = std::env::temp_dir()
                .join(format!("ringdns-file-setup-{tag}-{}", std::process::id()));
            std::fs::write(
                &p,
                "@ 3600 IN SOA ns hm 1 7200 3600 1209600 300\n@ 3600 IN NS ns\n\
                 ns 3600 IN A 192.0.2.53\n",
            )
            .unwrap();
            Db(p)
        }
    }

    impl Drop for Db {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    /// `(reload, reload_by_mtime)` of each zone `text` sets up, longest origin first.
    fn settings(text: &str) -> Result<Vec<(Duration, bool)>, String> {
        let (_, c) = config::<File>(text)?;
        Ok(c.zones
            .iter()
            .map(|z| (z.reload, z.file.by_mtime))
            .collect())
    }

    #[test]
    fn options_and_defaults_are_coredns_s() {
        let db = Db::new("options");
        let path = db.0.display();
        let s = settings(&format!("example.org {{\n file {path} example.org\n}}\n")).unwrap();
        assert_eq!(
            s,
            [(Duration::from_secs(60), false)],
            "reload 1m by default"
        );
        let s = settings(&format!(
            ". {{\n file {path} example.org sub.example.org {{\n reload 0\n reload_by_mtime\n \
             fallthrough\n upstream 127.0.0.1\n }}\n}}\n"
        ))
        .unwrap();
        assert_eq!(s, [(Duration::ZERO, true), (Duration::ZERO, true)]);
    }

    #[test]
    fn errors_are_coredns_s() {
        for (body, want) in [
            ("file", "Wrong argument count"),
            (
                "file db.x {\n reload\n }",
                "reload duration value is expected",
            ),
            (
                "file db.x {\n reload 1x\n }",
                "plugin/file: time: unknown unit",
            ),
            (
                "file db.x {\n reload -1s\n }",
                "plugin/file: time: invalid duration",
            ),
            ("file db.x {\n reload 10s 20s\n }", "Wrong argument count"),
            (
                "file db.x {\n reload_by_mtime yes\n }",
                "Wrong argument count",
            ),
            (
                "file db.x {\n no_reload\n }",
                "unknown property 'no_reload'",
            ),
            (
                "file db.x {\n transfer from 127.0.0.1\n }",
                "unknown property 'transfer'",
            ),
            (
                "file /nonexistent/db.x example.org {\n reload 0\n }",
                "plugin/file: /nonexistent/db.x: No such file",
            ),
        ] {
            let e = settings(&format!(". {{\n {body}\n}}\n")).expect_err(body);
            assert!(e.contains(want), "{body}: want {want:?} in {e}");
            assert!(e.starts_with("Corefile:"), "FILE:LINE: {e}");
        }
    }
}
