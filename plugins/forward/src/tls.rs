//! The rustls client configuration of a forward line: system roots or the `tls` CA, an
//! optional client certificate, TLS 1.2 at least (as CoreDNS).

use super::config::TlsSettings;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::sync::Arc;

/// Builds the client configuration; errors are messages for the Corefile error.
pub fn client_config(t: &TlsSettings) -> Result<Arc<rustls::ClientConfig>, String> {
    let mut roots = rustls::RootCertStore::empty();
    match &t.ca {
        Some(ca) => {
            for cert in CertificateDer::pem_file_iter(ca)
                .map_err(|e| format!("tls CA {}: {e}", ca.display()))?
            {
                let cert = cert.map_err(|e| format!("tls CA {}: {e}", ca.display()))?;
                roots
                    .add(cert)
                    .map_err(|e| format!("tls CA {}: {e}", ca.display()))?;
            }
        }
        None => {
            let native = rustls_native_certs::load_native_certs();
            for cert in native.certs {
                let _ = roots.add(cert);
            }
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots);
    let config = match (&t.cert, &t.key) {
        (Some(cert), Some(key)) => {
            let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
                .map_err(|e| format!("tls certificate {}: {e}", cert.display()))?
                .collect::<Result<_, _>>()
                .map_err(|e| format!("tls certificate {}: {e}", cert.display()))?;
            let key = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| format!("tls key {}: {e}", key.display()))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| e.to_string())?
        }
        _ => builder.with_no_client_auth(),
    };
    Ok(Arc::new(config))
}
