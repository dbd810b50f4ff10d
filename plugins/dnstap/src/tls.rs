//! The rustls client configuration of a `tls://` reader: the system roots as Go's
//! crypto/tls takes them (CoreDNS sets no CA), or with `skipverify` any certificate
//! (signatures still checked), as CoreDNS's `InsecureSkipVerify`.

use ringdns_plugin::tls::{self, Verify};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use std::sync::Arc;

/// The configuration for one `tls://` line.
pub fn client_config(skip_verify: bool) -> Result<Arc<ClientConfig>, String> {
    let verify = if skip_verify {
        Verify::Custom(Arc::new(NoVerify(tls::provider())))
    } else {
        // None found: as Go's, every handshake then fails (and is logged), not the setup.
        let (roots, _) = tls::system_roots();
        Verify::Roots(roots)
    };
    tls::client_config(verify, None).map_err(|e| format!("{e:?}"))
}

/// The name the reader's certificate must hold: the endpoint's host.
pub fn server_name(name: &str) -> Result<ServerName<'static>, String> {
    ServerName::try_from(name.to_string()).map_err(|e| format!("invalid server name {name:?}: {e}"))
}

/// `skipverify`: any certificate, signatures still checked.
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
