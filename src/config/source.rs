//! Where the Corefile comes from (`-conf FILE`, `-conf stdin`, `./Corefile`, the built-in
//! default), kept for the life of the process so that a reload reads it the way the start
//! did, and the steps from its text to a [`Config`]: parse, fingerprint, load.

use super::hash::{self, Digest};
use super::{Config, default_corefile, load};
use crate::chain;
use crate::corefile::{self, Corefile};
use std::io::Read;

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
                let mut s = String::new();
                std::io::stdin()
                    .read_to_string(&mut s)
                    .map_err(|e| format!("failed to read Corefile from stdin: {e}"))?;
                Kind::Stdin(s)
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
            Kind::File(path) => std::fs::read_to_string(path)
                .map(|s| (path.clone(), s))
                .map_err(|e| format!("failed to read Corefile {path}: {e}")),
            Kind::Lookup => match std::fs::read_to_string("Corefile") {
                Ok(s) => Ok(("Corefile".into(), s)),
                Err(_) => Ok(("default".into(), default_corefile(self.dns_port))),
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
