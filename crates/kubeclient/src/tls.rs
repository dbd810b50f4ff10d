//! The rustls client configuration of an API server: its CA (or the system roots),
//! `insecure-skip-tls-verify`, and a client certificate. `ringdns_plugin::tls` builds it,
//! as it builds forward's; the verifier of `insecure-skip-tls-verify` is this crate's.

use ringdns_plugin::tls::{self, ClientCert, TlsError, Verify};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use std::sync::Arc;

/// What a configuration source gathered about TLS, as PEM bytes.
#[derive(Default)]
pub(crate) struct TlsInputs {
    /// The CA bundle; `None` means the system roots.
    pub(crate) ca_pem: Option<Vec<u8>>,
    /// kubeconfig's `insecure-skip-tls-verify`.
    pub(crate) insecure: bool,
    /// The client certificate chain and its key.
    pub(crate) client: Option<(Vec<u8>, Vec<u8>)>,
}

/// Builds the client configuration (`ringdns_plugin::tls`), with client-go's messages.
pub(crate) fn client_config(i: &TlsInputs) -> Result<Arc<ClientConfig>, String> {
    let verify = if i.insecure {
        Verify::Custom(Arc::new(NoVerify(tls::provider())))
    } else {
        match &i.ca_pem {
            Some(pem) => Verify::Roots(
                tls::ca_roots(pem).map_err(|e| format!("unable to load root certificates: {e}"))?,
            ),
            None => {
                let (roots, errors) = tls::system_roots();
                if roots.is_empty() {
                    return Err(format!(
                        "no system root certificates found ({errors} errors)"
                    ));
                }
                Verify::Roots(roots)
            }
        }
    };
    let client = i
        .client
        .as_ref()
        .map(|(chain, key)| ClientCert { chain, key });
    tls::client_config(verify, client).map_err(|e| match e {
        TlsError::Chain(e) => format!("unable to load client certificate: {e}"),
        TlsError::Key(e) => format!("unable to load client key: {e}"),
        TlsError::Pair(e) => format!("unable to use client certificate: {e}"),
    })
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
