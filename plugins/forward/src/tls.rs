//! The rustls client configuration of a forward line: system roots or the `tls` CA, an
//! optional client certificate, TLS 1.2 at least (as CoreDNS), built by
//! `ringdns_plugin::tls` from the files the line names.

use super::config::TlsSettings;
use ringdns_plugin::tls::{self, ClientCert, TlsError, Verify};
use std::fmt::Display;
use std::path::Path;
use std::sync::Arc;

/// Builds the client configuration; errors are messages for the Corefile error.
pub fn client_config(t: &TlsSettings) -> Result<Arc<rustls::ClientConfig>, String> {
    let roots = match &t.ca {
        Some(ca) => tls::ca_roots(&read("tls CA", ca)?).map_err(|e| named("tls CA", ca, e))?,
        None => tls::system_roots().0,
    };
    let pems = match (&t.cert, &t.key) {
        (Some(cert), Some(key)) => Some((read("tls certificate", cert)?, read("tls key", key)?)),
        _ => None,
    };
    let client = pems.as_ref().map(|(chain, key)| ClientCert { chain, key });
    tls::client_config(Verify::Roots(roots), client).map_err(|e| match (e, &t.cert, &t.key) {
        (TlsError::Chain(e), Some(cert), _) => named("tls certificate", cert, e),
        (TlsError::Key(e), _, Some(key)) => named("tls key", key, e),
        (TlsError::Chain(e) | TlsError::Key(e) | TlsError::Pair(e), _, _) => e,
    })
}

/// `WHAT PATH: error`, as the line's errors name a file.
fn named(what: &str, path: &Path, e: impl Display) -> String {
    format!("{what} {}: {e}", path.display())
}

fn read(what: &str, path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| named(what, path, e))
}
