//! rustls client configuration: CA bundles, client certificates, server
//! name override, and `insecure-skip-tls-verify`.

use std::{fmt, sync::Arc};

use rustls::{
    DigitallySignedStruct, SignatureScheme,
    client::{
        ResolvesClientCert, WebPkiServerVerifier,
        danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
    },
    crypto::{CryptoProvider, WebPkiSupportedAlgorithms},
    pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime, pem::PemObject},
    sign::CertifiedKey,
};

use super::{ConfigError, exec::ExecAuthenticator};

/// TLS settings of a [`Config`](super::Config).
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct TlsSettings {
    /// Trusted CA certificates. Empty: the platform's trust store.
    pub root_certs: Vec<CertificateDer<'static>>,
    /// The client certificate, if any.
    pub client_identity: Option<ClientIdentity>,
    /// Accept any server certificate. Logged as a warning when used.
    pub insecure_skip_verify: bool,
    /// Check the server certificate against this name instead of the URL host.
    pub server_name: Option<String>,
}

impl fmt::Debug for TlsSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsSettings")
            .field("root_certs", &self.root_certs.len())
            .field("client_identity", &self.client_identity)
            .field("insecure_skip_verify", &self.insecure_skip_verify)
            .field("server_name", &self.server_name)
            .finish()
    }
}

/// Where the client certificate comes from.
#[derive(Clone)]
#[non_exhaustive]
pub enum ClientIdentity {
    /// A certificate chain and key loaded from the kubeconfig.
    Static(Arc<CertifiedKey>),
    /// The latest certificate returned by an exec plugin.
    Exec(Arc<ExecAuthenticator>),
}

impl fmt::Debug for ClientIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Static(k) => write!(f, "Static({} certificate(s), key <redacted>)", k.cert.len()),
            Self::Exec(_) => f.write_str("Exec(<redacted>)"),
        }
    }
}

/// The crypto provider used everywhere: ring.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Parses every certificate of a PEM bundle. `what` describes the source
/// for the error (`reason`).
pub(crate) fn parse_certs(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("not a PEM certificate bundle ({e})"))?;
    if certs.is_empty() {
        return Err("no PEM certificate found".to_owned());
    }
    Ok(certs)
}

/// Builds a [`CertifiedKey`] from PEM certificate chain and PEM private key
/// (PKCS#1, PKCS#8 or SEC1; RSA, ECDSA or Ed25519). The error text never
/// contains key material.
pub(crate) fn certified_key(cert_pem: &[u8], key_pem: &[u8]) -> Result<CertifiedKey, String> {
    let certs = parse_certs(cert_pem)?;
    let key = PrivateKeyDer::from_pem_slice(key_pem)
        .map_err(|_| "no PEM private key (PKCS#1, PKCS#8 or SEC1) found".to_owned())?;
    let signing = rustls::crypto::ring::sign::any_supported_type(&key)
        .map_err(|e| format!("unsupported private key ({e})"))?;
    let ck = CertifiedKey::new(certs, signing);
    match ck.keys_match() {
        Ok(()) => Ok(ck),
        // Not every key type can be checked; only a definite mismatch fails.
        Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch)) => {
            Err("the private key does not match the certificate".to_owned())
        }
        Err(_) => Ok(ck),
    }
}

impl TlsSettings {
    /// Builds the rustls client configuration (ring provider, ALPN `h2`
    /// and `http/1.1`).
    pub fn client_config(&self) -> Result<rustls::ClientConfig, ConfigError> {
        let provider = provider();
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|source| ConfigError::Tls {
                what: "protocol versions".to_owned(),
                source,
            })?;
        let verifier: Arc<dyn ServerCertVerifier> = if self.insecure_skip_verify {
            tracing::warn!(
                "insecure-skip-tls-verify is set: the API server's certificate is not verified"
            );
            Arc::new(CustomVerifier::AcceptAny {
                algorithms: provider.signature_verification_algorithms,
            })
        } else {
            let inner: Arc<dyn ServerCertVerifier> = if self.root_certs.is_empty() {
                Arc::new(
                    rustls_platform_verifier::Verifier::new(provider.clone()).map_err(
                        |source| ConfigError::Tls {
                            what: "platform certificate verifier".to_owned(),
                            source,
                        },
                    )?,
                )
            } else {
                let mut roots = rustls::RootCertStore::empty();
                for cert in &self.root_certs {
                    roots.add(cert.clone()).map_err(|source| ConfigError::Tls {
                        what: "CA certificate".to_owned(),
                        source,
                    })?;
                }
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                    .build()
                    .map_err(|e| ConfigError::Tls {
                        what: "certificate verifier".to_owned(),
                        source: rustls::Error::General(e.to_string()),
                    })?
            };
            match &self.server_name {
                Some(name) => {
                    let name =
                        ServerName::try_from(name.clone()).map_err(|_| ConfigError::Tls {
                            what: "tls-server-name".to_owned(),
                            source: rustls::Error::General(format!("invalid server name {name:?}")),
                        })?;
                    Arc::new(CustomVerifier::FixedName { inner, name })
                }
                None => inner,
            }
        };
        let builder = builder
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let mut config = match &self.client_identity {
            None => builder.with_no_client_auth(),
            Some(identity) => builder.with_client_cert_resolver(Arc::new(identity.clone())),
        };
        if matches!(self.client_identity, Some(ClientIdentity::Exec(_))) {
            // A resumed session would present the previous certificate to
            // the server; every handshake must offer the latest one.
            config.resumption = rustls::client::Resumption::disabled();
        }
        config.alpn_protocols = crate::client::build::alpn_protocols();
        Ok(config)
    }
}

/// The server certificate checks a kubeconfig asks for besides the
/// default one.
#[derive(Debug)]
enum CustomVerifier {
    /// `tls-server-name`: the certificate is verified against a fixed name
    /// instead of the host the client connected to.
    FixedName {
        inner: Arc<dyn ServerCertVerifier>,
        name: ServerName<'static>,
    },
    /// `insecure-skip-tls-verify`: any certificate is accepted; handshake
    /// signatures are still checked against the presented certificate.
    AcceptAny {
        algorithms: WebPkiSupportedAlgorithms,
    },
}

impl ServerCertVerifier for CustomVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self {
            Self::FixedName { inner, name } => {
                inner.verify_server_cert(end_entity, intermediates, name, ocsp_response, now)
            }
            Self::AcceptAny { .. } => Ok(ServerCertVerified::assertion()),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        match self {
            Self::FixedName { inner, .. } => inner.verify_tls12_signature(message, cert, dss),
            Self::AcceptAny { algorithms } => {
                rustls::crypto::verify_tls12_signature(message, cert, dss, algorithms)
            }
        }
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        match self {
            Self::FixedName { inner, .. } => inner.verify_tls13_signature(message, cert, dss),
            Self::AcceptAny { algorithms } => {
                rustls::crypto::verify_tls13_signature(message, cert, dss, algorithms)
            }
        }
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        match self {
            Self::FixedName { inner, .. } => inner.supported_verify_schemes(),
            Self::AcceptAny { algorithms } => algorithms.supported_schemes(),
        }
    }
}

/// The client certificate of this identity: the static one, or the latest
/// one an exec plugin returned (a refreshed certificate is then used by
/// new connections without rebuilding the client).
impl ResolvesClientCert for ClientIdentity {
    fn resolve(
        &self,
        _root_hint_subjects: &[&[u8]],
        _sigschemes: &[SignatureScheme],
    ) -> Option<Arc<CertifiedKey>> {
        match self {
            Self::Static(key) => Some(key.clone()),
            Self::Exec(exec) => exec.current_certificate(),
        }
    }

    fn has_certs(&self) -> bool {
        true
    }
}
