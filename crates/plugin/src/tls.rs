//! rustls client configurations for what speaks TLS to a server (forward's DNS over TLS,
//! the Kubernetes API client), built once per configuration, off the query path: ring as
//! the provider, TLS 1.2 and 1.3, the server checked against roots or a verifier of the
//! caller's, an optional client certificate. The inputs are PEM texts, so a caller reads
//! its files (or decodes kubeconfig's `-data` fields) and words the errors its own way.
//!
//! Behind the `tls` feature: only the crates that speak TLS build rustls through here.

use rustls::client::danger::ServerCertVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ClientConfig, RootCertStore};
use std::sync::Arc;

/// ring's provider: one crypto backend for every TLS client of the server.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The certificates of a PEM text, in order; an error when it holds none.
pub fn certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    if certs.is_empty() {
        return Err("no PEM certificate found".into());
    }
    Ok(certs)
}

/// The roots of a CA bundle (PEM): every certificate in it, at least one.
pub fn ca_roots(pem: &[u8]) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    for c in certificates(pem)? {
        roots.add(c).map_err(|e| e.to_string())?;
    }
    Ok(roots)
}

/// The system's roots (rustls-native-certs), which Go's crypto/tls takes when no CA is
/// given, and how many of its certificates or stores could not be read. Empty when none
/// is found: the caller says whether that is an error.
pub fn system_roots() -> (RootCertStore, usize) {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    // As Go's x509.SystemCertPool: a certificate the store cannot take is passed over.
    roots.add_parsable_certificates(found.certs);
    (roots, found.errors.len())
}

/// How the server's certificate is checked.
pub enum Verify {
    /// Against these roots, for the name the connection gives.
    Roots(RootCertStore),
    /// By this verifier (kubeconfig's `insecure-skip-tls-verify`).
    Custom(Arc<dyn ServerCertVerifier>),
}

/// A client certificate for mutual TLS: its chain and its private key, PEM.
pub struct ClientCert<'a> {
    /// The certificate chain, leaf first.
    pub chain: &'a [u8],
    /// The private key of the leaf.
    pub key: &'a [u8],
}

/// Which part of a client configuration failed, so that each caller names its own input.
#[derive(Debug, PartialEq, Eq)]
pub enum TlsError {
    /// The client certificate chain is not PEM or holds no certificate.
    Chain(String),
    /// The client key is not PEM or holds no private key.
    Key(String),
    /// rustls refused the pair: a key that is not the certificate's, an unsupported one.
    Pair(String),
}

/// Builds a client configuration: ring, TLS 1.2 and 1.3, the server checked by `verify`,
/// `client`'s certificate offered when the server asks for one.
pub fn client_config(
    verify: Verify,
    client: Option<ClientCert<'_>>,
) -> Result<Arc<ClientConfig>, TlsError> {
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("ring's provider has suites for TLS 1.2 and 1.3");
    let builder = match verify {
        Verify::Roots(roots) => builder.with_root_certificates(roots),
        Verify::Custom(v) => builder.dangerous().with_custom_certificate_verifier(v),
    };
    let config = match client {
        Some(c) => {
            let chain = certificates(c.chain).map_err(TlsError::Chain)?;
            let key =
                PrivateKeyDer::from_pem_slice(c.key).map_err(|e| TlsError::Key(e.to_string()))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| TlsError::Pair(e.to_string()))?
        }
        None => builder.with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A self-signed certificate and its key, PEM.
    fn pair() -> (String, String) {
        let c = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
        (c.cert.pem(), c.signing_key.serialize_pem())
    }

    #[test]
    fn roots_of_a_bundle() {
        let (a, _) = pair();
        let (b, _) = pair();
        assert_eq!(ca_roots(format!("{a}{b}").as_bytes()).unwrap().len(), 2);
        assert_eq!(
            ca_roots(b"not pem").unwrap_err(),
            "no PEM certificate found"
        );
        assert!(
            ca_roots(b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n").is_err()
        );
    }

    #[test]
    fn client_certificates_and_what_is_wrong_with_them() {
        let (cert, key) = pair();
        let (_, other_key) = pair();
        let roots = || Verify::Roots(ca_roots(cert.as_bytes()).unwrap());
        let with = |chain: &str, key: &str| {
            client_config(
                roots(),
                Some(ClientCert {
                    chain: chain.as_bytes(),
                    key: key.as_bytes(),
                }),
            )
        };
        assert!(client_config(roots(), None).is_ok());
        assert!(with(&cert, &key).is_ok());
        assert!(matches!(with(&key, &key), Err(TlsError::Chain(_))));
        assert!(matches!(with(&cert, &cert), Err(TlsError::Key(_))));
        assert!(matches!(with(&cert, &other_key), Err(TlsError::Pair(_))));
    }
}
