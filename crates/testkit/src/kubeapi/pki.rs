//! A CA made for one fake API server, its server certificate (IP SANs 127.0.0.1 and ::1,
//! DNS localhost and kubernetes.default.svc) and a client certificate it accepts.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

/// PEM texts of the CA and the two leaves.
pub struct Pki {
    /// The CA certificate: what clients trust (`ca.crt`).
    pub ca_pem: String,
    /// The server's certificate.
    pub server_cert_pem: String,
    /// The server's key.
    pub server_key_pem: String,
    /// A client certificate signed by the CA (CN `ringdns`, group `system:masters`).
    pub client_cert_pem: String,
    /// Its key.
    pub client_key_pem: String,
}

impl Pki {
    /// New keys and certificates.
    pub fn generate() -> Pki {
        let mut ca = CertificateParams::new(Vec::<String>::new()).expect("ca params");
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(DnType::CommonName, "ringdns-fake-kube-ca");
        ca.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_key = KeyPair::generate().expect("ca key");
        let ca_cert = ca.self_signed(&ca_key).expect("ca cert");
        let issuer = Issuer::new(ca, ca_key);

        let names = ["127.0.0.1", "::1", "localhost", "kubernetes.default.svc"].map(String::from);
        let mut server = CertificateParams::new(names.to_vec()).expect("server params");
        server
            .distinguished_name
            .push(DnType::CommonName, "kube-apiserver");
        server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let server_key = KeyPair::generate().expect("server key");
        let server_cert = server.signed_by(&server_key, &issuer).expect("server cert");

        let mut client = CertificateParams::new(Vec::<String>::new()).expect("client params");
        client
            .distinguished_name
            .push(DnType::CommonName, "ringdns");
        client
            .distinguished_name
            .push(DnType::OrganizationName, "system:masters");
        client.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let client_key = KeyPair::generate().expect("client key");
        let client_cert = client.signed_by(&client_key, &issuer).expect("client cert");

        Pki {
            ca_pem: ca_cert.pem(),
            server_cert_pem: server_cert.pem(),
            server_key_pem: server_key.serialize_pem(),
            client_cert_pem: client_cert.pem(),
            client_key_pem: client_key.serialize_pem(),
        }
    }
}
