//! Keeping a zone in step with its file: every `reload` period the file's modification
//! time and size are looked at, a changed file is parsed, and the new zone is swapped in
//! when its SOA serial differs (or, with `reload_by_mtime`, whenever the file changed), as
//! CoreDNS's reload does. A file that no longer parses leaves the old zone serving.

use crate::FileZone;
use ringdns_zone::Zone;
use std::path::Path;
use std::time::SystemTime;

/// What tells a changed file from an unchanged one without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    mtime: Option<SystemTime>,
    len: u64,
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

fn stamp(path: &Path) -> std::io::Result<Stamp> {
    let m = std::fs::metadata(path)?;
    Ok(Stamp {
        mtime: m.modified().ok(),
        len: m.len(),
    })
}

/// Loads the zone `origin` from `path`, with the file's stamp taken before reading.
pub fn read(path: &Path, origin: &[u8]) -> Result<(Zone, Stamp), ReadError> {
    let s = stamp(path).map_err(|e| ReadError::Missing(format!("{}: {e}", path.display())))?;
    let z = ringdns_zone::load::load_file(path, origin).map_err(ReadError::Bad)?;
    Ok((z, s))
}

/// One check of one zone (the poller's work).
pub fn check(z: &FileZone) {
    let Ok(now) = stamp(&z.path) else {
        // Gone: keep serving what was loaded, as CoreDNS does.
        return;
    };
    let mut last = z.stamp.lock().unwrap_or_else(|p| p.into_inner());
    if *last == Some(now) {
        return;
    }
    match read(&z.path, &z.origin) {
        Ok((zone, stamp)) => {
            *last = Some(stamp);
            let current = z.data.load();
            let changed = match current.as_ref() {
                None => true,
                Some(old) => z.by_mtime || old.serial() != zone.serial(),
            };
            if changed {
                ringdns_plugin::info!(
                    "plugin/file: Successfully reloaded zone \"{}\" in \"{}\" with {} SOA serial",
                    z.name,
                    z.path.display(),
                    zone.serial()
                );
                drop(current);
                z.data.store(Some(zone));
                z.registry.changed(&z.origin);
            }
        }
        Err(e) => {
            // The stamp stays old, so the next period tries again.
            ringdns_plugin::error!("plugin/file: Failed to reload zone \"{}\": {e}", z.name);
        }
    }
}
