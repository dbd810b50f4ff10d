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
