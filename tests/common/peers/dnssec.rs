//! Signing a zone file for DNSSEC tests, with ldns (Debian's `ldnsutils`): a KSK and a ZSK
//! made with `ldns-keygen` at test time (ECDSAP256SHA256, algorithm 13: small signatures,
//! so denials fit in 1232 bytes) into a directory of the test's own, and the zone signed
//! with `ldns-signzone`, with NSEC or NSEC3 (RFC 9276 settings: SHA-1, 0 extra iterations,
//! no salt, no opt-out). Signatures are valid from an hour ago to 30 days from now.
//!
//! What [`sign_zone`] returns is meant to be reused by a validating test (unbound with the
//! KSK's DS or DNSKEY as trust anchor): [`Signed::ds`] and [`Signed::dnskey`] are the anchor
//! lines in presentation format.

use super::tool;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

/// How the signed zone denies existence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Denial {
    Nsec,
    /// NSEC3 with hash 1, 0 extra iterations, an empty salt.
    Nsec3,
}

/// A signed copy of a zone.
#[derive(Clone, Debug)]
pub struct Signed {
    pub origin: String,
    /// The signed zone file.
    pub file: PathBuf,
    /// Key base names (`K<origin>+013+<tag>`, files `.key` and `.private` beside them).
    pub ksk: PathBuf,
    pub zsk: PathBuf,
    /// The KSK's DS record (`origin IN DS tag 13 2 digest`), as ldns-keygen wrote it.
    pub ds: String,
    /// The KSK's DNSKEY record, as ldns-keygen wrote it.
    pub dnskey: String,
}

/// Signs `src` (a zone file for `origin`; relative owner names are taken relative to it)
/// into `dir` (which must exist), with fresh keys. `None` when ldns's tools are missing
/// outside CI (see [`tool`]); panics when a tool fails.
pub fn sign_zone(
    src: &Path,
    origin: &str,
    dir: &Path,
    denial: Denial,
    test: &str,
) -> Option<Signed> {
    let keygen = tool("ldns-keygen", "ldnsutils", test)?;
    let signzone = tool("ldns-signzone", "ldnsutils", test)?;
    let base = |ksk: bool| -> PathBuf {
        let mut cmd = Command::new(&keygen);
        cmd.args(["-a", "ECDSAP256SHA256", "-r", "/dev/urandom"]);
        if ksk {
            cmd.arg("-k");
        }
        let out = cmd
            .arg(origin)
            .current_dir(dir)
            .output()
            .expect("run ldns-keygen");
        assert!(
            out.status.success(),
            "ldns-keygen failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir.join(String::from_utf8_lossy(&out.stdout).trim())
    };
    let ksk = base(true);
    let zsk = base(false);
    let stem = origin.trim_end_matches('.');
    let suffix = match denial {
        Denial::Nsec => "nsec",
        Denial::Nsec3 => "nsec3",
    };
    let file = dir.join(format!("db.{stem}.{suffix}.signed"));
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut cmd = Command::new(&signzone);
    if denial == Denial::Nsec3 {
        // -a 1: SHA-1; -t 0: no extra iterations; no -s: empty salt; no -p: no opt-out.
        cmd.args(["-n", "-a", "1", "-t", "0"]);
    }
    let out = cmd
        .arg("-i")
        .arg((now - 3600).to_string())
        .arg("-e")
        .arg((now + 30 * 86400).to_string())
        .arg("-o")
        .arg(origin)
        .arg("-f")
        .arg(&file)
        .arg(src)
        .arg(&zsk)
        .arg(&ksk)
        .current_dir(dir)
        .output()
        .expect("run ldns-signzone");
    assert!(
        out.status.success(),
        "ldns-signzone failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |ext: &str| {
        let p = PathBuf::from(format!("{}.{ext}", ksk.display()));
        std::fs::read_to_string(&p)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            .trim()
            .to_string()
    };
    Some(Signed {
        origin: origin.to_string(),
        file,
        ds: read("ds"),
        dnskey: read("key"),
        ksk,
        zsk,
    })
}
