//! Certificates for HTTPS: a fresh CA per server and a serving certificate
//! for `127.0.0.1`, `::1` and `localhost`, generated with rcgen; rustls
//! with the ring provider, ALPN `h2` and `http/1.1`.

use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::TlsAcceptor;

use crate::Error;

/// The generated CA and the acceptor that serves with its leaf.
pub(crate) struct Tls {
    pub(crate) ca_pem: String,
    pub(crate) acceptor: TlsAcceptor,
}

fn cert_err(what: &'static str) -> impl FnOnce(rcgen::Error) -> Error {
    move |source| Error::Certificate { what, source }
}

/// Generates the CA, the serving certificate and the rustls config.
pub(crate) fn generate() -> Result<Tls, Error> {
    let ca_key = KeyPair::generate().map_err(cert_err("CA"))?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(cert_err("CA"))?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "kubeset-testserver-ca");
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca_params.self_signed(&ca_key).map_err(cert_err("CA"))?;
    let issuer = Issuer::new(ca_params, ca_key);

    let leaf_key = KeyPair::generate().map_err(cert_err("serving"))?;
    let mut leaf_params = CertificateParams::new(vec![
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
        "localhost".to_owned(),
        "kubernetes.default.svc".to_owned(),
    ])
    .map_err(cert_err("serving"))?;
    leaf_params
        .distinguished_name
        .push(DnType::CommonName, "kube-apiserver");
    leaf_params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let leaf = leaf_params
        .signed_by(&leaf_key, &issuer)
        .map_err(cert_err("serving"))?;

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|source| Error::Tls { source })?
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(leaf.der().to_vec())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der())),
        )
        .map_err(|source| Error::Tls { source })?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Tls {
        ca_pem: ca_cert.pem(),
        acceptor: TlsAcceptor::from(Arc::new(config)),
    })
}
