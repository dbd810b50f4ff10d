//! Files named on a `forward` line: resolv.conf-style upstream lists and the PEM files of the
//! `tls` option, read and checked the way CoreDNS checks them at startup (miekg/dns
//! `ClientConfigFromFile`, Go's `tls.LoadX509KeyPair` and `x509.CertPool.AppendCertsFromPEM`),
//! with Go's error texts.

use std::io::Read;
use std::path::Path;

/// The most a resolv.conf-style file may hold; more is not a resolv.conf (and reading
/// `/dev/zero` must end).
const MAX_RESOLV_CONF: u64 = 1 << 20;

/// The most a PEM file (certificate chain, key, CA bundle) may hold.
const MAX_PEM: u64 = 16 << 20;

/// Why a file could not be read, as Go words it: `open PATH: no such file or directory`.
#[derive(Debug)]
pub struct ReadError {
    /// The Go-style text (`open …: …` or `read …: …`).
    pub text: String,
    /// The file does not exist (Go's `os.ErrNotExist`).
    pub not_found: bool,
}

/// An OS error the way Go prints it: lower-case, without Rust's ` (os error N)` suffix.
fn go_os_error(e: &std::io::Error) -> String {
    let s = e.to_string();
    let s = match s.find(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    };
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => s,
    }
}

/// Reads a whole file of at most `max` bytes; Go-style errors so messages match CoreDNS's.
pub fn read_limited(path: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let shown = path.display();
    let mut f = std::fs::File::open(path).map_err(|e| ReadError {
        text: format!("open {shown}: {}", go_os_error(&e)),
        not_found: e.kind() == std::io::ErrorKind::NotFound,
    })?;
    let mut buf = Vec::new();
    f.by_ref()
        .take(max + 1)
        .read_to_end(&mut buf)
        .map_err(|e| ReadError {
            text: format!("read {shown}: {}", go_os_error(&e)),
            not_found: false,
        })?;
    if buf.len() as u64 > max {
        return Err(ReadError {
            text: format!("read {shown}: file larger than {max} bytes"),
            not_found: false,
        });
    }
    Ok(buf)
}

/// Reads a resolv.conf-style file (`forward . /etc/resolv.conf`).
pub fn read_resolv_conf(path: &Path) -> Result<Vec<String>, ReadError> {
    read_limited(path, MAX_RESOLV_CONF).map(|b| nameservers(&String::from_utf8_lossy(&b)))
}

/// The `nameserver` entries of a resolv.conf text, in order, as miekg/dns reads them: the
/// second whitespace-separated field of every line whose first field is `nameserver`
/// (other lines, comments included, are ignored; the address is not checked here).
pub fn nameservers(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.split_whitespace();
            match (f.next(), f.next()) {
                (Some("nameserver"), Some(addr)) => Some(addr.to_string()),
                _ => None,
            }
        })
        .collect()
}

/// The types of the PEM blocks in `data`, in order, as Go's `pem.Decode` finds them: a
/// `-----BEGIN TYPE-----` line and a matching `-----END TYPE-----` line; a BEGIN without its
/// END is skipped. (The base64 body is not decoded here.)
pub fn pem_block_types(data: &[u8]) -> Vec<String> {
    const BEGIN: &str = "-----BEGIN ";
    let text = String::from_utf8_lossy(data);
    let mut out = Vec::new();
    let mut rest: &str = &text;
    while let Some(i) = rest.find(BEGIN) {
        let after = &rest[i + BEGIN.len()..];
        let line_end = after.find('\n').unwrap_or(after.len());
        let line = after[..line_end].trim_end_matches('\r').trim_end();
        let Some(ty) = line.strip_suffix("-----") else {
            rest = after;
            continue;
        };
        let end = format!("-----END {ty}-----");
        match after[line_end..].find(&end) {
            Some(j) => {
                out.push(ty.to_string());
                rest = &after[line_end + j + end.len()..];
            }
            None => rest = after,
        }
    }
    out
}

/// Checks a CA bundle as CoreDNS's `loadRoots` does: readable, with at least one
/// `CERTIFICATE` PEM block.
pub fn check_ca(path: &Path) -> Result<(), String> {
    let shown = path.display();
    let data =
        read_limited(path, MAX_PEM).map_err(|e| format!("error reading {shown}: {}", e.text))?;
    if !pem_block_types(&data).iter().any(|t| t == "CERTIFICATE") {
        return Err(format!("could not read root certs from {shown}"));
    }
    Ok(())
}

/// Checks a client certificate and key as Go's `tls.LoadX509KeyPair` does before it parses
/// them: both readable, a `CERTIFICATE` block in the first, a `… PRIVATE KEY` block in the
/// second. That the key matches the certificate is checked when the TLS client is built.
pub fn check_key_pair(cert: &Path, key: &Path) -> Result<(), String> {
    let wrap = |m: String| format!("could not load TLS cert: {m}");
    let cert_data = read_limited(cert, MAX_PEM).map_err(|e| wrap(e.text))?;
    let key_data = read_limited(key, MAX_PEM).map_err(|e| wrap(e.text))?;

    let cert_types = pem_block_types(&cert_data);
    if !cert_types.iter().any(|t| t == "CERTIFICATE") {
        let msg = match cert_types.as_slice() {
            [] => "tls: failed to find any PEM data in certificate input".to_string(),
            [one] if one.ends_with("PRIVATE KEY") => "tls: failed to find certificate PEM data \
                 in certificate input, but did find a private key; PEM inputs may have been \
                 switched"
                .to_string(),
            skipped => format!(
                "tls: failed to find \"CERTIFICATE\" PEM block in certificate input after \
                 skipping PEM blocks of the following types: [{}]",
                skipped.join(" ")
            ),
        };
        return Err(wrap(msg));
    }

    let mut skipped = Vec::new();
    for t in pem_block_types(&key_data) {
        if t == "PRIVATE KEY" || t.ends_with(" PRIVATE KEY") {
            return Ok(());
        }
        skipped.push(t);
    }
    let msg = match skipped.as_slice() {
        [] => "tls: failed to find any PEM data in key input".to_string(),
        [one] if one == "CERTIFICATE" => {
            "tls: found a certificate rather than a key in the PEM for the private key".to_string()
        }
        _ => format!(
            "tls: failed to find PEM block with type ending in \"PRIVATE KEY\" in key input \
             after skipping PEM blocks of the following types: [{}]",
            skipped.join(" ")
        ),
    };
    Err(wrap(msg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nameserver_lines_only() {
        let text = "# comment\nsearch example.org\nnameserver 10.0.0.1\n\
                    nameserver\t::1%eth0  # trailing\n;nameserver 9.9.9.9\nnameserver\n\
                    options ndots:5\r\nnameserver 10.0.0.2\r\n";
        assert_eq!(nameservers(text), ["10.0.0.1", "::1%eth0", "10.0.0.2"]);
    }

    #[test]
    fn pem_blocks_are_found_in_order() {
        let pem = b"junk\n-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n\
                    -----BEGIN EC PRIVATE KEY-----\nBBBB\n-----END EC PRIVATE KEY-----\n\
                    -----BEGIN BROKEN-----\nno end\n";
        assert_eq!(pem_block_types(pem), ["CERTIFICATE", "EC PRIVATE KEY"]);
        assert!(pem_block_types(b"").is_empty());
        assert!(pem_block_types(b"-----BEGIN X-----\n-----END Y-----\n").is_empty());
    }

    #[test]
    fn os_errors_read_like_go() {
        let e = read_limited(Path::new("/nonexistent/x"), 10).unwrap_err();
        assert_eq!(e.text, "open /nonexistent/x: no such file or directory");
        assert!(e.not_found);
    }
}
