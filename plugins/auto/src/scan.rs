//! The directory of one `auto` line, kept in step with the zones it serves: every scan walks
//! it as CoreDNS's `Walk` does (recursively, in lexical order, directories that are links
//! not entered), makes an origin of each file name that the regexp matches, loads the zones
//! that are new, checks the known ones for a changed serial, and drops the zones whose file
//! is gone. The zones are an immutable list that each scan replaces whole.

use crate::setup::Settings;
use regex::Regex;
use ringdns_plugin::snapshot::Snapshot;
use ringdns_plugin::wire::Name;
use ringdns_zone::pick;
use ringdns_zone::registry::Registry;
use ringdns_zone::watch::{ReadError, ZoneFile};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// One `auto` line at work: its settings and the zones its directory holds now.
pub struct Source {
    settings: Settings,
    /// [`Settings::origins`] in lower-case wire form, for the query path.
    origins: Vec<Box<[u8]>>,
    /// The zones loaded, longest origin first; replaced whole by a scan.
    zones: Snapshot<Vec<Arc<ZoneFile>>>,
    /// The block's zones (where transfer finds ours).
    registry: Arc<Registry>,
}

/// What a zone lookup of one source found for a query name.
pub enum Lookup<R> {
    /// The name is outside the source's zones.
    NotAuthoritative,
    /// Inside its zones, but no file gives a zone that holds it.
    NoZone,
    /// What was made of the zone that holds it.
    Zone(R),
}

impl Source {
    /// Loads every zone of the directory. A file that does not parse is an error here (the
    /// server does not start); in later scans it is logged and skipped.
    pub fn start(settings: Settings, registry: Arc<Registry>) -> Result<Source, String> {
        let origins = settings
            .origins
            .iter()
            .filter_map(|o| ringdns_plugin::wire::name_to_wire(o).ok())
            .map(Vec::into_boxed_slice)
            .collect();
        let source = Source {
            settings,
            origins,
            zones: Snapshot::new(Vec::new()),
            registry,
        };
        source.update(true)?;
        Ok(source)
    }

    /// How often [`Source::scan`] runs; zero: never.
    pub fn reload(&self) -> Duration {
        self.settings.reload
    }

    /// A name for the scanning thread.
    pub fn thread_name(&self) -> String {
        let dir = self.settings.directory.as_deref().unwrap_or(Path::new(""));
        format!("auto-scan-{}", dir.display())
    }

    /// One scan (the scanning thread's work).
    pub fn scan(&self) {
        // Errors of a later scan are logged by `update` and never returned.
        let _ = self.update(false);
    }

    /// `answer` of the zone for `qname`/`qtype`, as CoreDNS's auto looks: first among the
    /// origins it is authoritative for, then among the zones loaded (the most specific, the
    /// parent's for the DS of an apex: [`pick`]). The zone is lent, not cloned:
    /// every core would count on the same reference otherwise.
    pub fn lookup<R>(
        &self,
        qname: &Name<'_>,
        qtype: u16,
        answer: impl FnOnce(&ZoneFile) -> R,
    ) -> Lookup<R> {
        if !self.origins.iter().any(|o| qname.is_subdomain_of(o)) {
            return Lookup::NotAuthoritative;
        }
        let zones = self.zones.load();
        match pick::zone_for(&zones, |z| &z.origin, qname, qtype) {
            Some(z) => Lookup::Zone(answer(z)),
            None => Lookup::NoZone,
        }
    }

    /// The settings, for setup's tests.
    #[cfg(test)]
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The origins loaded now, longest first.
    #[cfg(test)]
    pub fn loaded(&self) -> Vec<String> {
        self.zones.load().iter().map(|z| z.name.clone()).collect()
    }

    /// Brings the zones in step with the directory. At `startup` a zone file that does not
    /// parse is returned as the error; later it is logged.
    fn update(&self, startup: bool) -> Result<(), String> {
        let Some(dir) = &self.settings.directory else {
            return Ok(());
        };
        let found = zone_files(dir, &self.settings.re, &self.settings.template);
        let old = self.zones.load_full();
        let mut next: Vec<Arc<ZoneFile>> = Vec::with_capacity(found.len());
        let mut changed = old.len() != found.len();
        // Told once the new list serves them, so a secondary's SOA query finds them.
        let mut notify: Vec<Box<[u8]>> = Vec::new();
        for (origin, path) in found {
            match old.iter().find(|z| z.name == origin) {
                Some(z) if z.path == path => {
                    z.check("auto");
                    next.push(Arc::clone(z));
                }
                known => match self.load(&origin, path, known, startup)? {
                    Some(z) => {
                        changed = true;
                        // New, or from another file with another serial.
                        if !startup && known.is_none_or(|k| serial(k) != serial(&z)) {
                            notify.push(z.origin.clone());
                        }
                        next.push(z);
                    }
                    None => {
                        if let Some(z) = known {
                            next.push(Arc::clone(z));
                        } else {
                            changed = true;
                        }
                    }
                },
            }
        }
        for gone in old
            .iter()
            .filter(|z| !next.iter().any(|n| n.name == z.name))
        {
            self.registry.remove(&gone.data);
            ringdns_plugin::info!("plugin/auto: Deleting zone `{}'", gone.name);
        }
        if changed {
            next.sort_by_key(|z| std::cmp::Reverse(z.origin.len()));
            self.zones.store(next);
            ringdns_plugin::memory::give_back();
        }
        for origin in notify {
            self.registry.changed(&origin);
        }
        Ok(())
    }

    /// Loads `origin` from `path`, new or in place of `known` (the same origin from another
    /// file), and registers it (`known`'s entry goes once the new one is there, so
    /// transfers find the zone throughout). `None` when the file cannot be used now
    /// (logged); at `startup` a zone that does not parse is the error.
    fn load(
        &self,
        origin: &str,
        path: PathBuf,
        known: Option<&Arc<ZoneFile>>,
        startup: bool,
    ) -> Result<Option<Arc<ZoneFile>>, String> {
        // A file seen a moment ago that cannot be opened is skipped now, not awaited.
        let opened = ZoneFile::open(
            "auto",
            path.clone(),
            origin.into(),
            false,
            Duration::ZERO,
            &self.registry,
        );
        match opened {
            Ok(z) => {
                if let Some(k) = known {
                    self.registry.remove(&k.data);
                }
                Ok(Some(Arc::new(z)))
            }
            Err(ReadError::Bad(e)) if startup => Err(e),
            Err(ReadError::Bad(e)) => {
                ringdns_plugin::error!("plugin/auto: Parse zone `{origin}': {e}");
                Ok(None)
            }
            Err(ReadError::Missing(e)) => {
                ringdns_plugin::warning!("plugin/auto: Opening {} failed: {e}", path.display());
                Ok(None)
            }
        }
    }
}

/// The serial of a zone file's zone, when it is loaded.
fn serial(z: &ZoneFile) -> Option<u32> {
    z.data.load().as_ref().as_ref().map(|zone| zone.serial())
}

/// The zone files under `dir`: (origin, path) for each file whose name `re` matches, the
/// origin `template` expanded with the match, made absolute and lower-case. When two files
/// give one origin, the first in the walk's order is used, with CoreDNS's warning.
pub fn zone_files(dir: &Path, re: &Regex, template: &str) -> Vec<(String, PathBuf)> {
    // A directory given as a link (a Kubernetes ConfigMap mount) is walked where it points.
    let root = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut files = Vec::new();
    walk(&root, &mut files);
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut out = Vec::new();
    for path in files {
        let Some(origin) = origin_of(&path, re, template) else {
            continue;
        };
        if let Some(previous) = seen.get(&origin) {
            ringdns_plugin::warning!(
                "plugin/auto: Multiple zone files match origin \"{origin}\": using \"{}\" instead of \"{}\"",
                previous.display(),
                path.display()
            );
            continue;
        }
        seen.insert(origin.clone(), path.clone());
        out.push((origin, path));
    }
    out
}

/// The origin a file's name gives, `None` when `re` does not match it or the expansion is
/// not a domain name.
fn origin_of(path: &Path, re: &Regex, template: &str) -> Option<String> {
    let base = path.file_name()?.to_str()?;
    let caps = re.captures(base)?;
    let mut origin = String::new();
    caps.expand(template, &mut origin);
    let origin = ringdns_plugin::normalize::fqdn(&origin).to_lowercase();
    if let Err(e) = ringdns_plugin::wire::name_to_wire(&origin) {
        ringdns_plugin::warning!("plugin/auto: Parse zone `{origin}': {e}");
        return None;
    }
    Some(origin)
}

/// Every file below `dir` in lexical order, as Go's `filepath.Walk` visits them: entries
/// sorted by name, directories entered, links to directories not (a link is listed as a
/// file); unreadable directories are logged and skipped.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            ringdns_plugin::warning!("plugin/auto: error reading {}: {e}", dir.display());
            return;
        }
    };
    let mut entries: Vec<(PathBuf, bool)> = entries
        .filter_map(Result::ok)
        .map(|e| {
            let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(false);
            (e.path(), is_dir)
        })
        .collect();
    entries.sort();
    for (path, is_dir) in entries {
        if is_dir {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdir::Dir;

    fn origins(d: &Dir, re: &str, template: &str) -> Vec<(String, String)> {
        let root = std::fs::canonicalize(&d.0).unwrap();
        zone_files(&d.0, &Regex::new(re).unwrap(), template)
            .into_iter()
            .map(|(o, p)| (o, p.strip_prefix(&root).unwrap().display().to_string()))
            .collect()
    }

    #[test]
    fn file_names_give_origins_in_the_walk_s_order() {
        let d = Dir::new("names");
        d.touch("db.example.org");
        d.touch("db.Example.NET");
        d.touch("sub/db.example.com");
        d.touch("README");
        d.touch("a/db.example.org");
        assert_eq!(
            origins(&d, r"db\.(.*)", "${1}"),
            [
                ("example.org.".to_string(), "a/db.example.org".to_string()),
                ("example.net.".into(), "db.Example.NET".into()),
                ("example.com.".into(), "sub/db.example.com".into()),
            ],
            "a/ sorts before db.*: the second example.org is the one left out"
        );
        assert_eq!(
            origins(&d, r"^db\.(.*)\.(org|com)$", "${1}.${2}"),
            [
                ("example.org.".to_string(), "a/db.example.org".to_string()),
                ("example.com.".into(), "sub/db.example.com".into()),
            ]
        );
    }

    #[test]
    fn a_directory_that_is_a_link_is_walked_and_links_inside_are_files() {
        let d = Dir::new("links");
        d.touch("real/db.example.org");
        std::os::unix::fs::symlink(d.0.join("real"), d.0.join("mount")).unwrap();
        std::os::unix::fs::symlink(d.0.join("real"), d.0.join("real/db.looped")).unwrap();
        let o = zone_files(
            &d.0.join("mount"),
            &Regex::new(r"db\.(.*)").unwrap(),
            "${1}",
        );
        let names: Vec<&str> = o.iter().map(|(o, _)| o.as_str()).collect();
        assert_eq!(names, ["example.org.", "looped."]);
        // Inside the walk the link is not entered: one example.org only.
        let o = zone_files(&d.0, &Regex::new(r"db\.(.*)").unwrap(), "${1}");
        assert_eq!(o.len(), 2, "{o:?}");
    }

    #[test]
    fn an_origin_that_is_no_name_is_skipped() {
        let d = Dir::new("bad");
        d.touch(&format!("db.{}", "a".repeat(64)));
        assert!(origins(&d, r"db\.(.*)", "${1}").is_empty());
    }

    fn zone_text(origin: &str, serial: u32) -> String {
        format!("$ORIGIN {origin}\n@ 3600 IN SOA ns hm {serial} 2 3 4 5\n@ 3600 IN NS ns\n")
    }

    fn settings(dir: &Path) -> Settings {
        Settings {
            origins: vec![".".into()],
            directory: Some(dir.to_path_buf()),
            re: Regex::new(r"db\.(.*)").unwrap(),
            template: "${1}".into(),
            reload: Duration::ZERO,
        }
    }

    #[test]
    fn scans_add_move_and_drop_zones_and_keep_the_registry_in_step() {
        let d = Dir::new("scan");
        std::fs::write(d.0.join("db.b.test"), zone_text("b.test.", 1)).unwrap();
        std::fs::write(d.0.join("db.sub.b.test"), zone_text("sub.b.test.", 1)).unwrap();
        let registry = Arc::new(Registry::default());
        let source = Source::start(settings(&d.0), registry.clone()).unwrap();
        assert_eq!(source.loaded(), ["sub.b.test.", "b.test."], "longest first");
        // Moved below: the same origin from another file, which is loaded.
        std::fs::create_dir(d.0.join("a")).unwrap();
        std::fs::write(d.0.join("a/db.b.test"), zone_text("b.test.", 2)).unwrap();
        std::fs::remove_file(d.0.join("db.b.test")).unwrap();
        source.scan();
        let entry = registry.get(b"\x01b\x04test\x00").expect("registered once");
        assert_eq!(entry.data.load().as_ref().as_ref().unwrap().serial(), 2);
        // A new file that does not parse is left out (and logged); the others stay.
        std::fs::write(d.0.join("db.c.test"), "$ORIGIN c.test.\n@ IN SOA x\n").unwrap();
        std::fs::remove_file(d.0.join("db.sub.b.test")).unwrap();
        source.scan();
        assert_eq!(source.loaded(), ["b.test."]);
        assert_eq!(registry.all().len(), 1, "sub.b.test. unregistered");
        // At start the same file stops it.
        let e = Source::start(settings(&d.0), Arc::new(Registry::default()))
            .err()
            .expect("a bad zone file at start is an error");
        assert!(e.contains("db.c.test:2 - "), "{e}");
    }
}
