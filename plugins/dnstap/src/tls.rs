//! The rustls client configuration of a `tls://` reader: the system roots as Go's
//! crypto/tls takes them (CoreDNS sets no CA), or with `skipverify` any certificate
//! (signatures still checked), as CoreDNS's `InsecureSkipVerify`. And the server
//! configuration of a `listen tls://` line: its certificate, and client certificates
//! checked against its CA as CoreDNS's listener (`RequireAndVerifyClientCert`; with
//! `skipverify`, `VerifyClientCertIfGiven`; no CA, none asked for).

use ringdns_plugin::files::read_limited;
use ringdns_plugin::tls::{self, Verify};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use std::path::Path;
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

/// The most a PEM file (certificate chain, key, CA bundle) may hold.
const MAX_PEM: u64 = 16 << 20;

fn read_pem(path: &str) -> Result<Vec<u8>, String> {
    read_limited(Path::new(path), MAX_PEM).map_err(|e| e.text)
}

/// The files of `tls CERT KEY [CA]`, read and parsed (at their line of the Corefile).
pub struct ServerFiles {
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    ca: Option<rustls::RootCertStore>,
}

/// Reads `tls CERT KEY [CA]` (`files`, two or three paths).
pub fn server_files(files: &[String]) -> Result<ServerFiles, String> {
    let chain =
        tls::certificates(&read_pem(&files[0])?).map_err(|e| format!("{}: {e}", files[0]))?;
    let key = PrivateKeyDer::from_pem_slice(&read_pem(&files[1])?)
        .map_err(|e| format!("{}: {e}", files[1]))?;
    let ca = match files.get(2) {
        Some(ca) => Some(tls::ca_roots(&read_pem(ca)?).map_err(|e| format!("{ca}: {e}"))?),
        None => None,
    };
    Ok(ServerFiles { chain, key, ca })
}

/// The server configuration of a `listen tls://` line: its certificate; client
/// certificates required and checked against the CA when there is one (with
/// `skip_verify`, checked only when a client offers one).
pub fn server_config(
    files: ServerFiles,
    skip_verify: bool,
) -> Result<Arc<rustls::ServerConfig>, String> {
    let provider = tls::provider();
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let builder = match files.ca {
        Some(roots) => {
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            let verifier = if skip_verify {
                verifier.allow_unauthenticated()
            } else {
                verifier
            };
            builder.with_client_cert_verifier(verifier.build().map_err(|e| e.to_string())?)
        }
        None => builder.with_no_client_auth(),
    };
    let config = builder
        .with_single_cert(files.chain, files.key)
        .map_err(|e| format!("could not load TLS cert: {e}"))?;
    Ok(Arc::new(config))
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
