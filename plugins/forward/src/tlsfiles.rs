//! The PEM files of `forward`'s `tls` option, checked the way CoreDNS checks them at
//! startup (Go's `tls.LoadX509KeyPair` and `x509.CertPool.AppendCertsFromPEM`), with Go's
//! error texts. (A resolv.conf-style upstream list is read by `ringdns_plugin::resolvconf`.)

use ringdns_plugin::files::read_limited;
use std::path::Path;

/// The most a PEM file (certificate chain, key, CA bundle) may hold.
const MAX_PEM: u64 = 16 << 20;

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
    fn pem_blocks_are_found_in_order() {
        let pem = b"junk\n-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n\
                    -----BEGIN EC PRIVATE KEY-----\nBBBB\n-----END EC PRIVATE KEY-----\n\
                    -----BEGIN BROKEN-----\nno end\n";
        assert_eq!(pem_block_types(pem), ["CERTIFICATE", "EC PRIVATE KEY"]);
        assert!(pem_block_types(b"").is_empty());
        assert!(pem_block_types(b"-----BEGIN X-----\n-----END Y-----\n").is_empty());
    }
}
