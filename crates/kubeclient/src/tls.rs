//! The rustls client configuration of an API server: its CA (or the system roots),
//! `insecure-skip-tls-verify`, and a client certificate.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, ring};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::sync::Arc;

/// What a configuration source gathered about TLS, as PEM bytes.
#[derive(Default)]
pub(crate) struct TlsInputs {
    /// The CA bundle; `None` means the system roots.
    pub ca_pem: Option<Vec<u8>>,
    /// kubeconfig's `insecure-skip-tls-verify`.
    pub insecure: bool,
    /// The client certificate chain and its key.
    pub client: Option<(Vec<u8>, Vec<u8>)>,
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(ring::default_provider())
}

/// Builds the client configuration.
pub(crate) fn client_config(i: &TlsInputs) -> Result<Arc<ClientConfig>, String> {
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let builder = if i.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerify(provider())))
    } else {
        let mut roots = RootCertStore::empty();
        match &i.ca_pem {
            Some(pem) => {
                let certs =
                    certs(pem).map_err(|e| format!("unable to load root certificates: {e}"))?;
                for c in certs {
                    roots
                        .add(c)
                        .map_err(|e| format!("unable to load root certificates: {e}"))?;
                }
            }
            None => {
                let found = rustls_native_certs::load_native_certs();
                for c in found.certs {
                    let _ = roots.add(c);
                }
                if roots.is_empty() {
                    return Err(format!(
                        "no system root certificates found ({} errors)",
                        found.errors.len()
                    ));
                }
            }
        }
        builder.with_root_certificates(roots)
    };
    let cfg = match &i.client {
        Some((cert, key)) => {
            let chain =
                certs(cert).map_err(|e| format!("unable to load client certificate: {e}"))?;
            let key = PrivateKeyDer::from_pem_slice(key)
                .map_err(|e| format!("unable to load client key: {e}"))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("unable to use client certificate: {e}"))?
        }
        None => builder.with_no_client_auth(),
    };
    Ok(Arc::new(cfg))
}

fn certs(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    if certs.is_empty() {
        return Err("no PEM certificate found".into());
    }
    Ok(certs)
}

/// The name the server's certificate must hold: `tls-server-name`, else the URL's host.
pub(crate) fn server_name(name: &str) -> Result<ServerName<'static>, String> {
    ServerName::try_from(name.to_string()).map_err(|e| format!("invalid server name {name:?}: {e}"))
}

/// `insecure-skip-tls-verify: true`: any certificate, signatures still checked.
#[derive(Debug)]
struct NoVerify(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
