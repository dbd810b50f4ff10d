//! Where the Corefile comes from (`-conf FILE`, `-conf stdin`, `./Corefile`, the built-in
//! default), kept for the life of the process so that a reload reads it the way the start
//! did, and the steps from its text to a [`Config`]: parse, fingerprint, load.

use super::hash::{self, Digest};
use super::{Config, default_corefile, load};
use crate::chain;
use crate::corefile::{self, Corefile};

/// Where the Corefile is read from, and the `-dns.port` its keys default to.
#[derive(Debug, Clone)]
pub struct Source {
    kind: Kind,
    dns_port: u16,
}

#[derive(Debug, Clone)]
enum Kind {
    /// `-conf stdin`: read once at start; a reload sees the same text again.
    Stdin(String),
    /// `-conf FILE`.
    File(String),
    /// No `-conf`: `./Corefile` when it exists, else CoreDNS's built-in default.
    Lookup,
}

/// A parsed Corefile and its fingerprint.
pub struct Parsed {
    /// The server blocks (the default block when the file had none).
    pub corefile: Corefile,
    /// SHA-512 of its meaning (see [`hash`]).
    pub digest: Digest,
}

impl Source {
    /// The source the `-conf` flag names; `stdin` is read here, once.
    pub fn from_flag(conf: Option<&str>, dns_port: u16) -> Result<Source, String> {
        let kind = match conf {
            Some("stdin") => {
                let bytes = corefile::read_capped(std::io::stdin().lock())
                    .map_err(|e| format!("failed to read Corefile from stdin: {e}"))?;
                Kind::Stdin(text(bytes))
            }
            Some(path) => Kind::File(path.to_string()),
            None => Kind::Lookup,
        };
        Ok(Source { kind, dns_port })
    }

    /// Whether a reload can see a different Corefile (not for one read from stdin).
    pub fn rereadable(&self) -> bool {
        !matches!(self.kind, Kind::Stdin(_))
    }

    /// The Corefile's text and the name its errors use.
    fn read(&self) -> Result<(String, String), String> {
        match &self.kind {
            Kind::Stdin(s) => Ok(("stdin".into(), s.clone())),
            Kind::File(path) => Ok((path.clone(), read_file(path)?)),
            // As CoreDNS's default loader: only a missing ./Corefile means the default.
            Kind::Lookup => match std::fs::metadata("Corefile") {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    Ok(("default".into(), default_corefile(self.dns_port)))
                }
                _ => Ok(("Corefile".into(), read_file("Corefile")?)),
            },
        }
    }

    /// Reads and parses the Corefile (a file without server blocks serves the default
    /// block, keeping its global block), and fingerprints it.
    pub fn parse(&self) -> Result<Parsed, String> {
        let (name, text) = self.read()?;
        let mut cf =
            corefile::parse(&name, &text, &chain::known_directive).map_err(|e| e.to_string())?;
        if cf.blocks.is_empty() {
            let global = std::mem::take(&mut cf.global);
            cf = corefile::parse(
                "default",
                &default_corefile(self.dns_port),
                &chain::known_directive,
            )
            .map_err(|e| e.to_string())?;
            cf.global = global;
        }
        let digest = hash::digest(&cf);
        Ok(Parsed {
            corefile: cf,
            digest,
        })
    }

    /// Sets up every block of a parsed Corefile: the configuration to serve.
    pub fn load(&self, parsed: &Parsed) -> Result<Config, String> {
        load(&parsed.corefile, self.dns_port).map_err(|e| e.to_string())
    }
}

/// Reads the Corefile at `path`, at most [`corefile::MAX_FILE_BYTES`] of it.
fn read_file(path: &str) -> Result<String, String> {
    let fail = |e: std::io::Error| format!("failed to read Corefile {path}: {e}");
    let file = std::fs::File::open(path).map_err(fail)?;
    let bytes = corefile::read_capped(file).map_err(fail)?;
    Ok(text(bytes))
}

/// The Corefile's bytes as text: bytes that are not UTF-8 read as CoreDNS reads them
/// ([`corefile::decode`]), so a Latin-1 comment does not make the file unreadable.
fn text(bytes: Vec<u8>) -> String {
    corefile::decode(&bytes)
}
