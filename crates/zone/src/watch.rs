//! A zone kept in step with its file, for *file* and *auto*: loaded at start, and on every
//! [`ZoneFile::check`] (the plugin's reload period) the file's modification time and size
//! are looked at, a changed file is parsed, and the new zone is swapped in when its SOA
//! serial differs (or, with `reload_by_mtime`, whenever the file changed), as CoreDNS's
//! reload does. A file that no longer parses leaves the old zone serving.

use crate::registry::{Entry, Registry, SharedZone};
use crate::zone::Zone;
use ringdns_plugin::snapshot::Snapshot;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// What tells a changed file from an unchanged one without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    mtime: Option<SystemTime>,
    len: u64,
}

impl Stamp {
    /// The file's stamp now.
    fn of(path: &Path) -> std::io::Result<Stamp> {
        let m = std::fs::metadata(path)?;
        Ok(Stamp {
            mtime: m.modified().ok(),
            len: m.len(),
        })
    }
}

/// Why a zone file could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// It does not exist (or cannot be opened).
    Missing(String),
    /// It does not parse or build: `FILE:LINE - message`.
    Bad(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Missing(m) | ReadError::Bad(m) => f.write_str(m),
        }
    }
}

/// Loads the zone `origin` from `path`, with the file's stamp taken before reading.
fn read(path: &Path, origin: &[u8]) -> Result<(Zone, Stamp), ReadError> {
    let s = Stamp::of(path).map_err(|e| ReadError::Missing(format!("{}: {e}", path.display())))?;
    let z = crate::load::load_file(path, origin).map_err(ReadError::Bad)?;
    Ok((z, s))
}

/// One zone served from one file, registered in its block's [`Registry`].
pub struct ZoneFile {
    /// The origin, lower-case wire form.
    pub origin: Box<[u8]>,
    /// The origin as text (normalised), for logs.
    pub name: String,
    /// The zone file.
    pub path: PathBuf,
    /// Swap in a changed file even when its serial is the same.
    pub by_mtime: bool,
    /// The zone; `None` until its file first loads (queries get SERVFAIL meanwhile).
    /// Shared with the block's registry, where transfer finds it.
    pub data: Arc<SharedZone>,
    /// The file as last read (the reloading thread's; never touched on the query path).
    stamp: Mutex<Option<Stamp>>,
    /// The block's zones, told when this one changes.
    registry: Arc<Registry>,
}

impl ZoneFile {
    /// Loads `origin` (text, normalised) from `path` and registers it in `registry`. A file
    /// that does not exist is an error when `retry` (how often the plugin checks the file)
    /// is zero; otherwise it is a warning and the zone starts empty, to be loaded by a later
    /// check. A file that does not parse is always an error. `plugin` names the plugin in
    /// log lines.
    pub fn open(
        plugin: &str,
        path: PathBuf,
        origin: String,
        by_mtime: bool,
        retry: Duration,
        registry: &Arc<Registry>,
    ) -> Result<ZoneFile, ReadError> {
        let wire = ringdns_plugin::wire::name_to_wire(&origin)
            .map_err(|e| ReadError::Bad(e.to_string()))?
            .into_boxed_slice();
        let (zone, stamp) = match read(&path, &wire) {
            Ok((z, s)) => (Some(z), Some(s)),
            Err(ReadError::Missing(e)) if !retry.is_zero() => {
                ringdns_plugin::warning!(
                    "plugin/{plugin}: Failed to open \"{e}\": trying again in {}",
                    ringdns_plugin::duration::format(retry)
                );
                (None, None)
            }
            Err(e) => return Err(e),
        };
        if let Some(z) = &zone {
            ringdns_plugin::info!(
                "plugin/{plugin}: Loaded zone {origin} from {} with SOA serial {} ({} records)",
                path.display(),
                z.serial(),
                z.len()
            );
        }
        let data = Arc::new(Snapshot::new(zone));
        registry.add(Entry {
            origin: wire.clone(),
            name: origin.clone(),
            data: data.clone(),
        });
        Ok(ZoneFile {
            origin: wire,
            name: origin,
            path,
            by_mtime,
            data,
            stamp: Mutex::new(stamp),
            registry: registry.clone(),
        })
    }

    /// One check of the file (the reloading thread's work). `plugin` names the plugin in
    /// log lines. A file read, swapped in or not, gives what its parse freed back.
    pub fn check(&self, plugin: &str) {
        if self.check_stamp_and_read(plugin) {
            ringdns_plugin::memory::give_back();
        }
    }

    /// [`ZoneFile::check`]'s work; whether the file was read.
    fn check_stamp_and_read(&self, plugin: &str) -> bool {
        let Ok(now) = Stamp::of(&self.path) else {
            // Gone: keep serving what was loaded, as CoreDNS does.
            return false;
        };
        let mut last = self.stamp.lock().unwrap_or_else(|p| p.into_inner());
        if *last == Some(now) {
            return false;
        }
        match read(&self.path, &self.origin) {
            Ok((zone, stamp)) => {
                *last = Some(stamp);
                let current = self.data.load();
                let changed = match current.as_ref() {
                    None => true,
                    Some(old) => self.by_mtime || old.serial() != zone.serial(),
                };
                if !changed {
                    return true;
                }
                ringdns_plugin::info!(
                    "plugin/{plugin}: Successfully reloaded zone \"{}\" in \"{}\" with {} SOA serial",
                    self.name,
                    self.path.display(),
                    zone.serial()
                );
                // The step from the old version is kept for IXFR, when transfer is there
                // to send it.
                let zone = match current.as_ref() {
                    Some(old) if self.registry.has_listeners() => zone.following(old),
                    _ => zone,
                };
                drop(current);
                self.data.store(Some(zone));
                self.registry.changed(&self.origin);
            }
            Err(e) => {
                // The stamp stays old, so the next period tries again.
                ringdns_plugin::error!(
                    "plugin/{plugin}: Failed to reload zone \"{}\": {e}",
                    self.name
                );
            }
        }
        true
    }
}
