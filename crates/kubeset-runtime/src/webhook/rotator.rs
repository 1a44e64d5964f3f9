//! A self-managed CA and serving certificate, renewed before they expire,
//! with the CA bundle re-registered on each CA change.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use kubeset_client::Client;
use kubeset_client::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use rustls::crypto::CryptoProvider;
use rustls::sign::CertifiedKey;

use super::certs::{BadPair, Reloading, parse_pair};
use super::rotation::{Cert, Facts, Lifetimes, Step, next_step};
use super::selfsigned::whole_seconds;
use super::{SelfSignedCa, WebhookError, set_ca_bundle, set_conversion_ca_bundle};

/// The longest the rotator sleeps before looking at the clock again (a
/// clock that jumped, a machine that was suspended).
const MAX_NAP: Duration = Duration::from_secs(600);
/// The first and the longest wait after a failed step.
const RETRY_FIRST: Duration = Duration::from_secs(1);
const RETRY_MAX: Duration = Duration::from_secs(30);

/// A configuration whose `caBundle` the rotator keeps current.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Validating(String),
    Mutating(String),
    Conversion(String),
}

/// A CA of its own and the serving certificate it issues, both renewed
/// before they expire, held in memory: for a webhook served by one
/// replica (each replica of several would have its own CA and overwrite
/// the others' bundles; serve those from a Secret, [`SecretCert`](super::SecretCert)).
/// Pass it to [`Webhook::bind`](super::Webhook::bind).
///
/// - The leaf is renewed `leaf_renew_before` its `notAfter` (but not
///   before half its life); a leaf never outlives its CA.
/// - The CA is renewed `ca_renew_before` its `notAfter`: the new CA joins
///   the bundle beside the old one and the bundle is registered in every
///   target; `bundle_settle` later (time for the API servers to load it)
///   a leaf of the new CA is served, and then the old CA leaves the bundle
///   (registered again). No moment has a served leaf the registered
///   bundle does not verify.
/// - Defaults are cert-controller's: CA 10 years, leaf 1 year, both
///   renewed 90 days ahead; `bundle_settle` 1 minute.
/// - A failed step (registration refused, API down) is retried (1 s
///   doubling to 30 s) and reported ([`TlsStats`](super::TlsStats));
///   the served certificate stays until a new one is ready.
///
/// ```no_run
/// use std::time::Duration;
/// use kubeset_runtime::webhook::{CertRotator, Webhook};
/// # async fn f(client: kubeset_client::Client) -> Result<(), kubeset_runtime::webhook::WebhookError> {
/// let certs = CertRotator::new(&["my-webhook.my-ns.svc"])
///     .leaf_lifetime(Duration::from_secs(7 * 24 * 3600))
///     .leaf_renew_before(Duration::from_secs(2 * 24 * 3600))
///     .validating(&client, "my-webhook");
/// let server = Webhook::new().bind("0.0.0.0:8443", certs).await?;
/// # let _ = server;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct CertRotator {
    names: Vec<String>,
    ca_name: String,
    lifetimes: Lifetimes,
    client: Option<Client>,
    targets: Vec<Target>,
}

impl CertRotator {
    /// A rotator whose leaves are for `names` (DNS names, or IPs; at
    /// least one, else [`Webhook::bind`](super::Webhook::bind) fails).
    ///
    /// ```
    /// let r = kubeset_runtime::webhook::CertRotator::new(&["127.0.0.1"]);
    /// # let _ = r;
    /// ```
    pub fn new(names: &[&str]) -> Self {
        CertRotator {
            names: names.iter().map(|n| (*n).to_owned()).collect(),
            ca_name: "kubeset-webhook-ca".to_owned(),
            lifetimes: Lifetimes::default(),
            client: None,
            targets: Vec::new(),
        }
    }

    /// The CA's common name (`kubeset-webhook-ca`).
    pub fn ca_name(mut self, name: &str) -> Self {
        name.clone_into(&mut self.ca_name);
        self
    }

    /// How long a CA is valid (10 years).
    pub fn ca_lifetime(mut self, lifetime: Duration) -> Self {
        self.lifetimes.ca = lifetime;
        self
    }

    /// How long before its expiry a CA is replaced (90 days; at most half
    /// its lifetime, longer than `bundle_settle`).
    pub fn ca_renew_before(mut self, lead: Duration) -> Self {
        self.lifetimes.ca_renew_before = lead;
        self
    }

    /// How long a serving certificate is valid (1 year).
    pub fn leaf_lifetime(mut self, lifetime: Duration) -> Self {
        self.lifetimes.leaf = lifetime;
        self
    }

    /// How long before its expiry a serving certificate is replaced (90
    /// days; at most half its lifetime).
    pub fn leaf_renew_before(mut self, lead: Duration) -> Self {
        self.lifetimes.leaf_renew_before = lead;
        self
    }

    /// How long a new CA is in the registered bundle before a leaf it
    /// issued is served (1 minute): the API servers' time to load it.
    pub fn bundle_settle(mut self, settle: Duration) -> Self {
        self.lifetimes.bundle_settle = settle;
        self
    }

    /// Keeps the `caBundle` of every webhook of this
    /// `ValidatingWebhookConfiguration` current ([`set_ca_bundle`]).
    pub fn validating(self, client: &Client, name: &str) -> Self {
        self.target(client, Target::Validating(name.to_owned()))
    }

    /// The same for a `MutatingWebhookConfiguration`.
    pub fn mutating(self, client: &Client, name: &str) -> Self {
        self.target(client, Target::Mutating(name.to_owned()))
    }

    /// The same for a CRD's conversion webhook ([`set_conversion_ca_bundle`]).
    pub fn conversion(self, client: &Client, crd: &str) -> Self {
        self.target(client, Target::Conversion(crd.to_owned()))
    }

    fn target(mut self, client: &Client, target: Target) -> Self {
        self.client = Some(client.clone());
        self.targets.push(target);
        self
    }
}

/// The background task of a certificate source.
pub(crate) type Background = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The rotator at work: the CAs of the bundle (oldest first), the leaf,
/// whether the bundle is registered.
struct Rotating {
    config: CertRotator,
    cas: Vec<(SelfSignedCa, Cert)>,
    leaf: Cert,
    registered: Option<SystemTime>,
    next_ca: u64,
}

impl CertRotator {
    /// Checks the settings, makes the first CA and leaf, registers the
    /// bundle, and answers the resolver and the task that renews them.
    pub(crate) async fn start(
        self,
        provider: Arc<CryptoProvider>,
    ) -> Result<(Arc<Reloading>, Background), WebhookError> {
        self.lifetimes.check()?;
        if self.names.is_empty() {
            let reason = "a CertRotator needs at least one DNS name or IP for its leaf";
            return Err(WebhookError::Generate {
                what: "leaf",
                source: reason.into(),
            });
        }
        let ca = SelfSignedCa::generate_for(&self.ca_name, self.lifetimes.ca)?;
        let meta = Cert {
            ca: 0,
            issued: SystemTime::now(),
            not_after: ca.not_after(),
        };
        let mut rotating = Rotating {
            config: self,
            cas: vec![(ca, meta)],
            leaf: meta,
            registered: None,
            next_ca: 1,
        };
        let key = rotating.issue(0, &provider)?;
        rotating.register().await?;
        let what = format!("the self-managed CA {}", rotating.config.ca_name);
        let reloading = Arc::new(Reloading::pushed(
            what,
            key,
            Some(rotating.bundle()),
            provider,
        ));
        let task = Box::pin(rotating.run(reloading.clone()));
        Ok((reloading, task))
    }
}

impl Rotating {
    fn bundle(&self) -> String {
        self.cas.iter().map(|(ca, _)| ca.cert_pem()).collect()
    }

    fn facts(&self) -> Facts {
        Facts {
            cas: self.cas.iter().map(|(_, meta)| *meta).collect(),
            leaf: self.leaf,
            registered: self.registered,
        }
    }

    /// A new leaf from CA number `ca`; it becomes `self.leaf`.
    fn issue(&mut self, ca: u64, provider: &CryptoProvider) -> Result<CertifiedKey, WebhookError> {
        let Some((issuer, _)) = self.cas.iter().find(|(_, meta)| meta.ca == ca) else {
            return Err(no_such_ca(ca));
        };
        let issued = SystemTime::now();
        let names: Vec<&str> = self.config.names.iter().map(String::as_str).collect();
        let leaf = issuer.issue_for(&names, self.config.lifetimes.leaf)?;
        // As the certificate has it: whole seconds, never past its CA.
        let not_after = whole_seconds(issued + self.config.lifetimes.leaf).min(issuer.not_after());
        let key = parse_pair(leaf.cert_pem.as_bytes(), leaf.key_pem.as_bytes(), provider).map_err(
            |bad| WebhookError::Generate {
                what: "leaf",
                source: match bad {
                    BadPair::Mismatch(e) => Box::new(e),
                    BadPair::Cert(m) | BadPair::Key(m) => m.into(),
                },
            },
        )?;
        self.leaf = Cert {
            ca,
            issued,
            not_after,
        };
        Ok(key)
    }

    /// Patches the bundle into every target.
    async fn register(&mut self) -> Result<(), WebhookError> {
        let bundle = self.bundle();
        if let Some(client) = &self.config.client {
            for target in &self.config.targets {
                match target {
                    Target::Validating(name) => {
                        set_ca_bundle::<ValidatingWebhookConfiguration>(client, name, &bundle)
                            .await?;
                    }
                    Target::Mutating(name) => {
                        set_ca_bundle::<MutatingWebhookConfiguration>(client, name, &bundle)
                            .await?;
                    }
                    Target::Conversion(name) => {
                        set_conversion_ca_bundle(client, name, &bundle).await?;
                    }
                }
            }
        }
        self.registered = Some(SystemTime::now());
        tracing::info!(cas = self.cas.len(), "webhook: CA bundle registered");
        Ok(())
    }

    fn new_ca(&mut self) -> Result<(), WebhookError> {
        let ca = SelfSignedCa::generate_for(&self.config.ca_name, self.config.lifetimes.ca)?;
        let meta = Cert {
            ca: self.next_ca,
            issued: SystemTime::now(),
            not_after: ca.not_after(),
        };
        self.next_ca += 1;
        self.cas.push((ca, meta));
        self.registered = None;
        tracing::info!(
            ca = meta.ca,
            "webhook: new CA, in the bundle beside the old one"
        );
        Ok(())
    }

    /// One step; answers how long to wait before the next.
    async fn step(&mut self, reloading: &Reloading) -> Result<Duration, WebhookError> {
        let now = SystemTime::now();
        match next_step(&self.facts(), &self.config.lifetimes, now) {
            Step::Register => self.register().await?,
            Step::NewCa => self.new_ca()?,
            Step::IssueLeaf { ca } => {
                let key = self.issue(ca, reloading.provider())?;
                reloading.install(key, Some(self.bundle()));
            }
            Step::DropOldCas => {
                let newest = self.cas.len() - 1;
                self.cas.drain(..newest);
                self.registered = None;
            }
            Step::Wait(until) => {
                let nap = until.duration_since(now).unwrap_or_default();
                return Ok(nap.clamp(Duration::from_millis(10), MAX_NAP));
            }
        }
        Ok(Duration::ZERO)
    }

    async fn run(mut self, reloading: Arc<Reloading>) {
        let mut retry = RETRY_FIRST;
        loop {
            let nap = match self.step(&reloading).await {
                Ok(nap) => {
                    retry = RETRY_FIRST;
                    nap
                }
                Err(e) => {
                    reloading.reject(&e);
                    let leaf_due = self
                        .leaf
                        .refresh_at(self.config.lifetimes.leaf_renew_before);
                    let until_due = leaf_due
                        .duration_since(SystemTime::now())
                        .unwrap_or_default();
                    let nap = retry.min(until_due).max(Duration::from_millis(100));
                    retry = (retry * 2).min(RETRY_MAX);
                    nap
                }
            };
            if !nap.is_zero() {
                tokio::time::sleep(nap).await;
            }
        }
    }
}

/// The rules only name CAs of the bundle; a number that is not there is
/// a bug in them, reported rather than panicking.
fn no_such_ca(ca: u64) -> WebhookError {
    WebhookError::Generate {
        what: "leaf",
        source: format!("no CA number {ca} in the bundle").into(),
    }
}
