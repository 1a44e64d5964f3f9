//! A self-signed CA and the leaf certificates it issues (rcgen).

use std::path::Path;
use std::time::{Duration, SystemTime};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

use super::WebhookError;

/// A CA of your own for a webhook: its certificate goes into the
/// configuration's `caBundle` ([`set_ca_bundle`](super::set_ca_bundle)),
/// and it issues the serving certificates ([`issue`](Self::issue)). A
/// rotation issues a new leaf (new key) from the same CA, so the
/// `caBundle` stays valid.
///
/// ```
/// use kubeset_runtime::webhook::SelfSignedCa;
/// let ca = SelfSignedCa::generate("my-webhook-ca").unwrap();
/// let leaf = ca.issue(&["my-webhook.my-ns.svc", "127.0.0.1"]).unwrap();
/// assert!(ca.cert_pem().starts_with("-----BEGIN CERTIFICATE-----"));
/// assert!(leaf.key_pem.contains("PRIVATE KEY"));
/// ```
pub struct SelfSignedCa {
    cert_pem: String,
    issuer: Issuer<'static, KeyPair>,
    not_after: SystemTime,
}

impl std::fmt::Debug for SelfSignedCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SelfSignedCa").finish_non_exhaustive()
    }
}

/// How far back a certificate's `notBefore` is set, so that a client whose
/// clock is behind still accepts it (cert-controller uses an hour too).
const BACKDATE: Duration = Duration::from_secs(3600);

/// `t` without its fraction of a second, as X.509 writes it.
pub(crate) fn whole_seconds(t: SystemTime) -> SystemTime {
    match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => SystemTime::UNIX_EPOCH + Duration::from_secs(d.as_secs()),
        Err(_) => t,
    }
}

/// A leaf certificate and its key, PEM.
#[derive(Clone, PartialEq, Eq)]
pub struct LeafCert {
    /// The certificate.
    pub cert_pem: String,
    /// The PKCS#8 private key.
    pub key_pem: String,
}

impl std::fmt::Debug for LeafCert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key stays out of logs.
        f.debug_struct("LeafCert")
            .field("cert_pem", &self.cert_pem)
            .finish_non_exhaustive()
    }
}

fn generate_err(what: &'static str) -> impl FnOnce(rcgen::Error) -> WebhookError {
    move |source| WebhookError::Generate {
        what,
        source: Box::new(source),
    }
}

impl SelfSignedCa {
    /// A new CA key and self-signed certificate named `common_name`
    /// (ECDSA P-256, valid until rcgen's default far future).
    ///
    /// # Errors
    ///
    /// [`WebhookError::Generate`] when rcgen fails.
    pub fn generate(common_name: &str) -> Result<Self, WebhookError> {
        Self::build(common_name, None)
    }

    /// [`generate`](Self::generate) with a CA valid from an hour ago (for
    /// clocks behind) until `lifetime` from now.
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// use kubeset_runtime::webhook::SelfSignedCa;
    /// let ca = SelfSignedCa::generate_for("my-webhook-ca", Duration::from_secs(3600)).unwrap();
    /// assert!(ca.not_after() <= SystemTime::now() + Duration::from_secs(3600));
    /// ```
    ///
    /// # Errors
    ///
    /// [`WebhookError::Generate`] when rcgen fails.
    pub fn generate_for(common_name: &str, lifetime: Duration) -> Result<Self, WebhookError> {
        let now = SystemTime::now();
        Self::build(common_name, Some((now - BACKDATE, now + lifetime)))
    }

    fn build(
        common_name: &str,
        validity: Option<(SystemTime, SystemTime)>,
    ) -> Result<Self, WebhookError> {
        let key = KeyPair::generate().map_err(generate_err("CA"))?;
        let mut params =
            CertificateParams::new(Vec::<String>::new()).map_err(generate_err("CA"))?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        if let Some((not_before, not_after)) = validity {
            params.not_before = not_before.into();
            params.not_after = not_after.into();
        }
        let cert = params.self_signed(&key).map_err(generate_err("CA"))?;
        Ok(SelfSignedCa {
            cert_pem: cert.pem(),
            not_after: whole_seconds(params.not_after.into()),
            issuer: Issuer::new(params, key),
        })
    }

    /// When the CA certificate expires (second precision, as X.509 has it).
    pub fn not_after(&self) -> SystemTime {
        self.not_after
    }

    /// The CA certificate (PEM), for `caBundle`.
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// A serving certificate with a new key for `names`: each is an IP
    /// SAN if it parses as an address, else a DNS SAN; the first is also
    /// the common name.
    ///
    /// # Errors
    ///
    /// [`WebhookError::Generate`] for a name rcgen refuses or a failed signature.
    pub fn issue(&self, names: &[&str]) -> Result<LeafCert, WebhookError> {
        self.issue_until(names, None)
    }

    /// [`issue`](Self::issue) with a leaf valid from an hour ago until
    /// `lifetime` from now, or until the CA expires if that is sooner (a
    /// leaf never outlives its CA).
    ///
    /// ```
    /// use std::time::Duration;
    /// use kubeset_runtime::webhook::SelfSignedCa;
    /// let ca = SelfSignedCa::generate_for("ca", Duration::from_secs(600)).unwrap();
    /// let leaf = ca.issue_for(&["127.0.0.1"], Duration::from_secs(60)).unwrap();
    /// assert!(leaf.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
    /// ```
    ///
    /// # Errors
    ///
    /// [`WebhookError::Generate`] for a name rcgen refuses or a failed signature.
    pub fn issue_for(&self, names: &[&str], lifetime: Duration) -> Result<LeafCert, WebhookError> {
        let not_after = (SystemTime::now() + lifetime).min(self.not_after);
        self.issue_until(names, Some(not_after))
    }

    fn issue_until(
        &self,
        names: &[&str],
        not_after: Option<SystemTime>,
    ) -> Result<LeafCert, WebhookError> {
        let key = KeyPair::generate().map_err(generate_err("leaf"))?;
        let sans: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut params = CertificateParams::new(sans).map_err(generate_err("leaf"))?;
        if let Some(first) = names.first() {
            params.distinguished_name.push(DnType::CommonName, *first);
        }
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        if let Some(not_after) = not_after {
            params.not_before = (SystemTime::now() - BACKDATE).into();
            params.not_after = not_after.into();
        }
        let cert = params
            .signed_by(&key, &self.issuer)
            .map_err(generate_err("leaf"))?;
        Ok(LeafCert {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }
}

impl LeafCert {
    /// Writes the pair, each file replaced at once (written beside it,
    /// then renamed over it), the key first and readable by its owner only
    /// (on Unix). A server watching the files may see the new key with
    /// the old certificate for a moment; it keeps serving the old pair
    /// until both match.
    ///
    /// # Errors
    ///
    /// [`WebhookError::WriteFile`] naming the file.
    pub fn write(&self, cert: &Path, key: &Path) -> Result<(), WebhookError> {
        write_replacing(key, self.key_pem.as_bytes(), true)?;
        write_replacing(cert, self.cert_pem.as_bytes(), false)
    }
}

fn write_replacing(path: &Path, bytes: &[u8], private: bool) -> Result<(), WebhookError> {
    use std::io::Write as _;
    let err = |source| WebhookError::WriteFile {
        path: path.to_owned(),
        source,
    };
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(".tmp");
    let tmp = Path::new(&tmp_name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if private {
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    }
    #[cfg(not(unix))]
    let _ = private;
    let mut file = options.open(tmp).map_err(err)?;
    file.write_all(bytes).map_err(err)?;
    file.sync_all().map_err(err)?;
    drop(file);
    std::fs::rename(tmp, path).map_err(err)
}
