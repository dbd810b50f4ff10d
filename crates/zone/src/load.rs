//! A zone from a zone file: parsing and building with every error as `FILE:LINE - message`,
//! what `file` and `auto` load at start and on every change.

use crate::parse::{self, Parsed};
use crate::zone::Zone;
use std::path::Path;

/// Loads the zone `origin` (wire form) from the file at `path`.
pub fn load_file(path: &Path, origin: &[u8]) -> Result<Zone, String> {
    let parsed = parse::parse_file(path, origin).map_err(|e| e.to_string())?;
    from_parsed(parsed, origin, path)
}

/// Builds a zone from parsed records, naming the record an error is about by its place.
pub fn from_parsed(parsed: Parsed, origin: &[u8], path: &Path) -> Result<Zone, String> {
    let Parsed {
        records,
        pos,
        files,
    } = parsed;
    Zone::build(origin, records).map_err(|e| match e.record {
        Some(i) => {
            let p = &pos[i];
            let file = files
                .get(p.file as usize)
                .map(|f| f.as_path())
                .unwrap_or(path);
            format!("{}:{} - {}", file.display(), p.line, e.message)
        }
        None => format!("{}: {}", path.display(), e.message),
    })
}
