//! The `weighted` policy's weight file, as CoreDNS's `plugin/loadbalance/weighted.go` reads
//! it: `#` comments and empty lines ignored, a line of one field starts a domain, a line
//! `IP WEIGHT` (1 to 255) gives one of its addresses a weight. Read at setup, then every
//! `reload` on a thread of the configuration's, replacing the table whole when the file's
//! contents changed (CoreDNS compares an MD5 of them; ringdns the contents themselves).

use ringdns_plugin::snapshot::Snapshot;
use ringdns_plugin::wire::name_to_wire;
use std::collections::HashMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// The weights of one file: per owner name (lower-case wire form), its addresses' weights.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Weights {
    domains: HashMap<Box<[u8]>, Vec<(IpAddr, u8)>>,
}

impl Weights {
    /// The weight of `ip` for the owner `name` (lower-case wire form): the file's, else 1,
    /// CoreDNS's default. Addresses compare as Go's `IP.Equal` does (an IPv4-mapped IPv6
    /// address is its IPv4 address).
    pub fn weight(&self, name: &[u8], ip: IpAddr) -> u8 {
        let ip = ip.to_canonical();
        self.domains
            .get(name)
            .and_then(|ws| ws.iter().find(|(a, _)| *a == ip))
            .map_or(1, |&(_, w)| w)
    }
}

/// Why the file could not be used; the texts are CoreDNS's.
#[derive(Debug, PartialEq, Eq)]
pub enum LoadError {
    /// The file cannot be opened (CoreDNS's `errOpen`, retried when reloading).
    Open,
    /// It was read but is not a weight file.
    Parse(String),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Open => f.write_str("weight file open error"),
            LoadError::Parse(m) => f.write_str(m),
        }
    }
}

/// Parses a weight file's text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Weights, String> {
    let mut w = Weights::default();
    let mut domain: Option<Box<[u8]>> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.as_slice() {
            [name] => {
                if name.parse::<IpAddr>().is_ok() {
                    return Err(format!(
                        "wrong domain name:\"{name}\" in weight file {file}. (Maybe a missing weight value?)"
                    ));
                }
                // CoreDNS keeps any text as a name; one that is none can match no record.
                let wire = name_to_wire(name).map(Vec::into_boxed_slice).ok();
                if let Some(k) = &wire {
                    w.domains.entry(k.clone()).or_default();
                }
                domain = Some(wire.unwrap_or_default());
            }
            [ip, weight] => {
                let Ok(ip) = ip.parse::<IpAddr>() else {
                    return Err(format!("wrong IP address:\"{ip}\" in weight file {file}"));
                };
                let value = match go_parse_u8(weight) {
                    Some(v) if v > 0 => v,
                    _ => {
                        return Err(format!(
                            "wrong weight value:\"{weight}\" in weight file {file}"
                        ));
                    }
                };
                let Some(d) = &domain else {
                    return Err(format!("missing domain name in weight file {file}"));
                };
                if !d.is_empty() {
                    w.domains
                        .entry(d.clone())
                        .or_default()
                        .push((ip.to_canonical(), value));
                }
            }
            _ => {
                return Err(format!(
                    "could not parse weight line:\"{line}\" in weight file {file}"
                ));
            }
        }
    }
    Ok(w)
}

/// Go's `strconv.ParseUint(s, 10, 8)`: decimal digits only (underscores and signs are
/// errors in base 10), at most 255.
fn go_parse_u8(s: &str) -> Option<u8> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// A weight file and what queries read of it.
pub struct WeightFile {
    /// The file, resolved against `root`.
    pub path: PathBuf,
    /// The current weights.
    pub data: Snapshot<Weights>,
}

impl WeightFile {
    /// Reads the file if its contents differ from `last` (which it updates, before parsing
    /// as CoreDNS updates its checksum, so a bad file is reported once per change).
    /// `Ok(true)`: new weights stored; `Ok(false)`: unchanged.
    pub fn update(&self, last: &mut Option<Vec<u8>>) -> Result<bool, LoadError> {
        let bytes = read(&self.path)?;
        if last.as_deref() == Some(&bytes[..]) {
            return Ok(false);
        }
        let text = String::from_utf8_lossy(&bytes).into_owned();
        *last = Some(bytes);
        let w = parse(&text, &self.path.display().to_string()).map_err(LoadError::Parse)?;
        self.data.store(w);
        Ok(true)
    }
}

fn read(path: &Path) -> Result<Vec<u8>, LoadError> {
    std::fs::read(path).map_err(|_| LoadError::Open)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire(n: &str) -> Vec<u8> {
        name_to_wire(n).unwrap()
    }

    #[test]
    fn a_file_gives_weights_per_name_and_address() {
        let w = parse(
            "# comment\n\nwww.example.com\n100.64.1.1 3\n100.64.1.2 1\n  \nWWW.Example.org.\n::1 255\n",
            "f",
        )
        .unwrap();
        let www = wire("www.example.com.");
        assert_eq!(w.weight(&www, "100.64.1.1".parse().unwrap()), 3);
        assert_eq!(w.weight(&www, "100.64.1.2".parse().unwrap()), 1);
        assert_eq!(w.weight(&www, "100.64.1.9".parse().unwrap()), 1);
        assert_eq!(w.weight(&www, "::ffff:100.64.1.1".parse().unwrap()), 3);
        assert_eq!(
            w.weight(&wire("www.example.org."), "::1".parse().unwrap()),
            255
        );
        assert_eq!(w.weight(&wire("other."), "::1".parse().unwrap()), 1);
    }

    #[test]
    fn errors_are_coredns_texts() {
        let cases = [
            (
                "1.2.3.4\n",
                "wrong domain name:\"1.2.3.4\" in weight file F. (Maybe a missing weight value?)",
            ),
            ("a.\nx 1\n", "wrong IP address:\"x\" in weight file F"),
            (
                "a.\n1.2.3.4 0\n",
                "wrong weight value:\"0\" in weight file F",
            ),
            (
                "a.\n1.2.3.4 256\n",
                "wrong weight value:\"256\" in weight file F",
            ),
            (
                "a.\n1.2.3.4 +1\n",
                "wrong weight value:\"+1\" in weight file F",
            ),
            ("1.2.3.4 1\n", "missing domain name in weight file F"),
            (
                "a.\n1.2.3.4 1 2\n",
                "could not parse weight line:\"1.2.3.4 1 2\" in weight file F",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(parse(text, "F").unwrap_err(), want, "{text:?}");
        }
    }

    #[test]
    fn update_reads_only_changed_contents() {
        let dir = std::env::temp_dir().join(format!("lb-weights-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("w");
        let f = WeightFile {
            path: path.clone(),
            data: Snapshot::new(Weights::default()),
        };
        let mut last = None;
        assert_eq!(f.update(&mut last), Err(LoadError::Open));
        std::fs::write(&path, "a.\n1.2.3.4 7\n").unwrap();
        assert_eq!(f.update(&mut last), Ok(true));
        assert_eq!(
            f.data
                .load()
                .weight(&wire("a."), "1.2.3.4".parse().unwrap()),
            7
        );
        assert_eq!(f.update(&mut last), Ok(false));
        std::fs::write(&path, "a.\n1.2.3.4 x\n").unwrap();
        assert!(matches!(f.update(&mut last), Err(LoadError::Parse(_))));
        // The bad file is not read again until it changes; the old weights stay.
        assert_eq!(f.update(&mut last), Ok(false));
        assert_eq!(
            f.data
                .load()
                .weight(&wire("a."), "1.2.3.4".parse().unwrap()),
            7
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
