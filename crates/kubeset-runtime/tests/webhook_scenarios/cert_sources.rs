//! The serving certificate from a Secret and from a self-managed CA
//! (`rt::webhook::{SecretCert, CertRotator}`), run on both API servers
//! like the other scenarios. What a TLS client is served is checked from
//! the certificates themselves: a handshake records the leaf, its serial
//! and validity are read from the DER here (not by kubeset), and rustls's
//! WebPKI verifier checks it against the CA bundle the API server was
//! given, at the time it was served.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{
    PROBE_TIMEOUT, api_error, base64_encode, chain, configmap, delete_validating, entry,
    eventually, k, ok, rt, typed, unique,
};
use k::admission::{AdmissionRequest, Operation};
use k::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k::api::core::v1::{ConfigMap, Secret};
use k::params::{DeleteParams, PostParams};
use k::{Api, Client};
use rt::webhook::{CertRotator, Denied, SecretCert, SelfSignedCa, Webhook, WebhookServer};

// ---- reading a certificate (DER), written here, not taken from kubeset ----

/// One DER element at the start of `der`: (tag, contents, rest).
fn der_next(der: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = der.split_first()?;
    let (&first, mut rest) = rest.split_first()?;
    let len = if first < 0x80 {
        usize::from(first)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let (bytes, after) = rest.split_at(n);
        rest = after;
        bytes
            .iter()
            .fold(0usize, |acc, b| (acc << 8) | usize::from(*b))
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

/// Seconds since the epoch of a UTCTime (`YYMMDDHHMMSSZ`) or
/// GeneralizedTime (`YYYYMMDDHHMMSSZ`).
fn der_time(tag: u8, text: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(text).ok()?.strip_suffix('Z')?;
    let (year, rest) = match tag {
        0x17 => {
            let yy: i64 = text.get(..2)?.parse().ok()?;
            (if yy < 50 { 2000 + yy } else { 1900 + yy }, text.get(2..)?)
        }
        0x18 => (text.get(..4)?.parse().ok()?, text.get(4..)?),
        _ => return None,
    };
    let field = |i: usize| -> Option<i64> { rest.get(i..i + 2)?.parse().ok() };
    let (month, day) = (field(0)?, field(2)?);
    let (h, m, s) = (field(4)?, field(6)?, field(8)?);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + h * 3600 + m * 60 + s).ok()
}

/// A served certificate: its serial (hex) and validity.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Leaf {
    serial: String,
    not_before: u64,
    not_after: u64,
}

fn read_leaf(der: &[u8]) -> Option<Leaf> {
    let (_, cert, _) = der_next(der)?;
    let (_, tbs, _) = der_next(cert)?;
    let (tag, first, mut rest) = der_next(tbs)?;
    let serial = if tag == 0xa0 {
        let (_, serial, after) = der_next(rest)?;
        rest = after;
        serial
    } else {
        first
    };
    let (_, _signature, rest) = der_next(rest)?;
    let (_, _issuer, rest) = der_next(rest)?;
    let (_, validity, _) = der_next(rest)?;
    let (t1, nb, after) = der_next(validity)?;
    let (t2, na, _) = der_next(after)?;
    Some(Leaf {
        serial: serial.iter().map(|b| format!("{b:02x}")).collect(),
        not_before: der_time(t1, nb)?,
        not_after: der_time(t2, na)?,
    })
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

// ---- a TLS client that records what it is served ----

/// Accepts any certificate and records the leaf: the checks come after.
#[derive(Debug)]
struct Record {
    provider: Arc<rustls::crypto::CryptoProvider>,
    seen: Mutex<Option<Vec<u8>>>,
}

impl ServerCertVerifier for Record {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        *self.seen.lock().unwrap_or_else(|p| p.into_inner()) = Some(end_entity.to_vec());
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The leaf (DER) a new TLS connection to `addr` is served, and when.
async fn served_leaf(addr: SocketAddr) -> Option<(u64, Vec<u8>)> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let record = Arc::new(Record {
        provider: provider.clone(),
        seen: Mutex::new(None),
    });
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .ok()?
        .dangerous()
        .with_custom_certificate_verifier(record.clone())
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(addr).await.ok()?;
    let at = unix_now();
    let name = ServerName::IpAddress(addr.ip().into());
    let handshake = connector.connect(name, tcp);
    tokio::time::timeout(Duration::from_secs(30), handshake)
        .await
        .ok()?
        .ok()?;
    let leaf = record
        .seen
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()?;
    Some((at, leaf))
}

/// Verifies `leaf` as a TLS client would, trusting `cas` (PEM) only, at `at`.
fn verify(leaf: &[u8], cas: &[Vec<u8>], at: u64) -> Result<(), rustls::Error> {
    let mut roots = RootCertStore::empty();
    for ca in cas {
        roots
            .add(CertificateDer::from(ca.clone()))
            .map_err(|e| rustls::Error::General(format!("root: {e}")))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier =
        rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .map_err(|e| rustls::Error::General(format!("verifier: {e}")))?;
    let name = ServerName::IpAddress(std::net::Ipv4Addr::LOCALHOST.into());
    let time = UnixTime::since_unix_epoch(Duration::from_secs(at));
    verifier
        .verify_server_cert(&CertificateDer::from(leaf.to_vec()), &[], &name, &[], time)
        .map(|_| ())
}

fn pem_to_der(pem: &str) -> Vec<Vec<u8>> {
    CertificateDer::pem_slice_iter(pem.as_bytes())
        .map(|c| c.expect("PEM certificate").to_vec())
        .collect()
}

// ---- served from a Secret ----

fn tls_secret(name: &str, cert: &str, key: &str, ca: &str) -> Secret {
    typed(json!({
        "metadata": {"name": name},
        "type": "kubernetes.io/tls",
        "data": {
            "tls.crt": base64_encode(cert.as_bytes()),
            "tls.key": base64_encode(key.as_bytes()),
            "ca.crt": base64_encode(ca.as_bytes()),
        }
    }))
}

/// Waits until a new connection is served the certificate `want` (PEM).
async fn until_served(addr: SocketAddr, want: &str, what: &str) {
    let want = pem_to_der(want).remove(0);
    eventually(PROBE_TIMEOUT, what, || {
        let want = want.clone();
        async move {
            let (_, leaf) = served_leaf(addr).await?;
            (leaf == want).then_some(())
        }
    })
    .await;
}

/// A webhook served from a `kubernetes.io/tls` Secret: a replaced Secret
/// is served to new connections; a Secret with a key that does not fit,
/// one with a `tls.crt` that is not PEM, and a deleted one each keep the
/// last good certificate served and report the error naming the Secret.
pub async fn certificate_served_from_a_secret(client: Client, ns: &str) {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), ns);
    let name = unique("webhook-tls");
    let missing = Webhook::new()
        .bind("127.0.0.1:0", SecretCert::new(&client, ns, &name))
        .await
        .expect_err("no Secret yet");
    assert!(
        missing.to_string().contains(&format!("Secret {ns}/{name}")),
        "{missing}"
    );

    let ca = SelfSignedCa::generate("kubeset-secret-source-ca").expect("CA");
    let first = ca.issue(&["127.0.0.1"]).expect("leaf");
    let secret = tls_secret(&name, &first.cert_pem, &first.key_pem, ca.cert_pem());
    ok(
        "create Secret",
        secrets.create(&PostParams::default(), &secret).await,
    );
    let server: WebhookServer = Webhook::new()
        .bind("127.0.0.1:0", SecretCert::new(&client, ns, &name))
        .await
        .expect("bind from the Secret");
    let (addr, stats) = (server.local_addr(), server.tls_stats());
    assert_eq!(stats.ca_bundle().as_deref(), Some(ca.cert_pem()));
    let stop = CancellationToken::new();
    let task = tokio::spawn(server.run(stop.clone().cancelled_owned()));
    until_served(addr, &first.cert_pem, "the first certificate").await;

    let second = ca.issue(&["127.0.0.1"]).expect("leaf");
    let replace = |s: Secret| {
        let secrets = secrets.clone();
        let name = name.clone();
        async move {
            ok(
                "replace Secret",
                secrets.replace(&name, &PostParams::default(), &s).await,
            )
        }
    };
    replace(tls_secret(
        &name,
        &second.cert_pem,
        &second.key_pem,
        ca.cert_pem(),
    ))
    .await;
    until_served(addr, &second.cert_pem, "the replaced certificate").await;
    assert_eq!(stats.generation(), 1, "{stats:?}");

    let other = ca.issue(&["127.0.0.1"]).expect("leaf");
    let bad_pairs = [
        (
            second.cert_pem.clone(),
            other.key_pem.clone(),
            "tls.key does not fit tls.crt",
        ),
        (
            "not a certificate".to_owned(),
            second.key_pem.clone(),
            "tls.crt",
        ),
    ];
    for (i, (cert, key, says)) in bad_pairs.into_iter().enumerate() {
        replace(tls_secret(&name, &cert, &key, ca.cert_pem())).await;
        let failed = i as u64 + 1;
        eventually(
            PROBE_TIMEOUT,
            &format!("bad Secret {failed} reported"),
            || async { (stats.failed_reloads() >= failed).then_some(()) },
        )
        .await;
        let error = stats.last_error().unwrap_or_default();
        assert!(
            error.contains(&format!("Secret {ns}/{name}")) && error.contains(says),
            "{error}"
        );
        until_served(addr, &second.cert_pem, "the last good certificate kept").await;
    }
    ok(
        "delete Secret",
        secrets.delete(&name, &DeleteParams::default()).await,
    );
    eventually(PROBE_TIMEOUT, "the deletion reported", || async {
        stats.last_error().filter(|e| e.contains("was deleted"))
    })
    .await;
    until_served(
        addr,
        &second.cert_pem,
        "the last good certificate after deletion",
    )
    .await;
    assert_eq!(stats.generation(), 1, "{stats:?}");
    println!("secret source: {stats:?}");
    stop.cancel();
    task.await.expect("webhook server task");
}

// ---- self-managed across expiry ----

/// What the watchers saw: served leaves (when, DER) and registered bundles.
#[derive(Default)]
struct Seen {
    leaves: Mutex<Vec<(u64, Vec<u8>)>>,
    bundles: Mutex<Vec<Vec<Vec<u8>>>>,
}

impl Seen {
    fn leaf(&self, at: u64, der: Vec<u8>) {
        self.leaves
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((at, der));
    }

    fn bundle(&self, cas: Vec<Vec<u8>>) {
        let mut bundles = self.bundles.lock().unwrap_or_else(|p| p.into_inner());
        if bundles.last() != Some(&cas) {
            bundles.push(cas);
        }
    }
}

/// The registered bundle of the configuration's first webhook, as DERs.
async fn registered_bundle(
    api: &Api<ValidatingWebhookConfiguration>,
    name: &str,
) -> Option<Vec<Vec<u8>>> {
    let config = api.get(name).await.ok()?;
    let bundle = config.webhooks?.first()?.client_config.ca_bundle.clone()?;
    Some(pem_to_der(std::str::from_utf8(&bundle.0).ok()?))
}

/// Polls the served leaf and the registered bundle until `stop`.
fn watch_certs(
    addr: SocketAddr,
    api: Api<ValidatingWebhookConfiguration>,
    config: String,
    seen: Arc<Seen>,
    stop: Arc<AtomicBool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        while !stop.load(Ordering::Relaxed) {
            if let Some((at, leaf)) = served_leaf(addr).await {
                seen.leaf(at, leaf);
            }
            if let Some(bundle) = registered_bundle(&api, &config).await {
                seen.bundle(bundle);
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    })
}

/// A free loopback port, for a configuration that must name the webhook's
/// URL before the webhook binds (the rotator registers into it at bind).
fn free_port() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address")
}

/// Creates ConfigMaps one after another (paced) until `stop`; answers how many
/// succeeded after `after` (unix seconds, set later) and the failures.
fn flow(
    cms: Api<ConfigMap>,
    stop: Arc<AtomicBool>,
    after: Arc<AtomicUsize>,
) -> tokio::task::JoinHandle<(usize, usize, Vec<String>)> {
    tokio::spawn(async move {
        let (mut done, mut late, mut failures) = (0, 0, Vec::new());
        // At most 50 a second: enough to cross every change, without
        // filling the server (a real one takes hundreds a second).
        let mut pace = tokio::time::interval(Duration::from_millis(20));
        pace.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        while !stop.load(Ordering::Relaxed) {
            pace.tick().await;
            let cm = configmap(&format!("flow-{done}"), json!({}), json!({}));
            match cms.create(&PostParams::default(), &cm).await {
                Ok(_) if unix_now() > after.load(Ordering::Relaxed) as u64 => late += 1,
                Ok(_) => {}
                Err(e) => failures.push(format!("flow-{done} at {}: {}", unix_now(), chain(&e))),
            }
            done += 1;
        }
        (done, late, failures)
    })
}

/// A validating webhook (`failurePolicy: Fail`) served by a
/// [`CertRotator`] with a 20 s leaf and a 60 s CA: creates flow while
/// leaves pass their `notAfter` and the CA is replaced (overlap, then the
/// old CA dropped) and expires; none fails, no served certificate was
/// expired when served (nor failed to verify against the bundles
/// registered), and the last one verifies against the new CA alone.
pub async fn self_managed_rotation_across_expiry_loses_none(client: Client, ns: &str) {
    let (addr, configs, config) = (
        free_port(),
        Api::all(client.clone()),
        unique("kubeset-scenario-expiry"),
    );
    let hook = entry(
        "expiry.kubeset.dev",
        json!({"url": format!("https://{addr}/validate")}),
        ns,
    );
    let vwc: ValidatingWebhookConfiguration =
        typed(json!({"metadata": {"name": config}, "webhooks": [hook]}));
    ok(
        "create configuration",
        configs.create(&PostParams::default(), &vwc).await,
    );
    let rotator = CertRotator::new(&["127.0.0.1"])
        .leaf_lifetime(Duration::from_secs(20))
        .leaf_renew_before(Duration::from_secs(8))
        .ca_lifetime(Duration::from_secs(60))
        .ca_renew_before(Duration::from_secs(25))
        .bundle_settle(Duration::from_secs(5))
        .validating(&client, &config);
    let server = probe_denier()
        .bind(addr, rotator)
        .await
        .expect("bind with the rotator");
    let stats = server.tls_stats();
    let stop_server = CancellationToken::new();
    let task = tokio::spawn(server.run(stop_server.clone().cancelled_owned()));
    let first_ca = registered_bundle(&configs, &config)
        .await
        .expect("bundle registered at bind");
    assert_eq!(first_ca.len(), 1, "one CA at start");
    let first_ca_expiry = read_leaf(&first_ca[0]).expect("CA validity").not_after;

    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let n = AtomicUsize::new(0);
    eventually(PROBE_TIMEOUT, "the webhook to see a probe", || async {
        let cm = configmap(
            &format!("probe-{}", n.fetch_add(1, Ordering::Relaxed)),
            json!({}),
            json!({}),
        );
        api_error(cms.create(&PostParams::default(), &cm).await)
            .filter(|s| s.message.contains("probe seen"))
    })
    .await;
    let (seen, stop) = (Arc::new(Seen::default()), Arc::new(AtomicBool::new(false)));
    let watcher = watch_certs(
        addr,
        configs.clone(),
        config.clone(),
        seen.clone(),
        stop.clone(),
    );
    let after = Arc::new(AtomicUsize::new(
        usize::try_from(first_ca_expiry).unwrap_or(usize::MAX),
    ));
    let creator = flow(cms.clone(), stop.clone(), after);
    // The first CA expires 60 s after bind; the leaves every 20 s. Wait
    // for creates to pass through a webhook served well after that expiry.
    let deadline = Duration::from_secs(first_ca_expiry.saturating_sub(unix_now()) + 120);
    eventually(
        deadline,
        "the first CA to expire while creates flow",
        || async {
            let last = seen
                .leaves
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .last()
                .map(|(at, _)| *at);
            (last.is_some_and(|at| at > first_ca_expiry + 5)).then_some(())
        },
    )
    .await;
    stop.store(true, Ordering::Relaxed);
    let (creates, late, failures) = creator.await.expect("creator task");
    watcher.await.expect("watcher task");
    println!(
        "self-managed rotation: {creates} creates ({late} after the first CA expired), {stats:?}"
    );
    assert!(
        failures.is_empty(),
        "requests failed across the rotations: {failures:#?}"
    );
    assert!(late >= 1, "no create passed after the first CA expired");
    check_served(&seen, &first_ca, first_ca_expiry);
    delete_validating(&client, &config).await;
    stop_server.cancel();
    task.await.expect("webhook server task");
}

/// A validating webhook for ConfigMap creates that refuses `probe-*` only.
fn probe_denier() -> Webhook {
    Webhook::new().validate_for::<ConfigMap, _>(
        "/validate",
        &[Operation::Create],
        |req: AdmissionRequest<ConfigMap>| async move {
            if req.name.starts_with("probe-") {
                return Err(Denied::new("probe seen"));
            }
            Ok(vec![])
        },
    )
}

/// Every served leaf was valid when served and verified against a
/// registered CA; leaves changed past the first one's expiry; a bundle of
/// two CAs was registered, then one of the new CA alone, which verifies
/// the last leaf served.
fn check_served(seen: &Seen, first_ca: &[Vec<u8>], first_ca_expiry: u64) {
    let leaves = seen
        .leaves
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let bundles = seen
        .bundles
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let all_cas: Vec<Vec<u8>> = bundles.iter().flatten().cloned().collect();
    let mut serials: Vec<(String, u64)> = Vec::new();
    for (at, der) in &leaves {
        let leaf = read_leaf(der).expect("served leaf parses");
        assert!(
            leaf.not_before <= *at && *at < leaf.not_after,
            "served outside its validity at {at}: {leaf:?}"
        );
        if let Err(e) = verify(der, &all_cas, *at) {
            panic!(
                "leaf {} served at {at} does not verify against the registered CAs: {e}",
                leaf.serial
            );
        }
        if serials.last().map(|(s, _)| s) != Some(&leaf.serial) {
            serials.push((leaf.serial, leaf.not_after));
        }
    }
    println!(
        "served leaves (serial, notAfter): {serials:?}; bundles registered: {:?}",
        bundles.iter().map(Vec::len).collect::<Vec<_>>()
    );
    let first_expiry = serials.first().map(|(_, na)| *na).expect("a leaf served");
    let last_seen = leaves.last().map(|(at, _)| *at).unwrap_or_default();
    assert!(
        serials.len() >= 3,
        "at least two leaf rotations: {serials:?}"
    );
    assert!(
        last_seen > first_expiry && last_seen > first_ca_expiry,
        "served past both expiries"
    );
    assert!(
        bundles.iter().any(|b| b.len() == 2 && b[0] == first_ca[0]),
        "an overlap bundle (old, new): {}",
        bundles.len()
    );
    let last_bundle = bundles.last().expect("a bundle");
    assert!(
        last_bundle.len() == 1 && last_bundle[0] != first_ca[0],
        "the old CA left the bundle"
    );
    let (at, last_leaf) = leaves.last().expect("a leaf");
    verify(last_leaf, last_bundle, *at).expect("the last leaf verifies against the new CA alone");
    assert!(
        verify(last_leaf, first_ca, *at).is_err(),
        "the last leaf is not the old CA's"
    );
}

/// A [`CertRotator`] whose settings do not fit, or whose configuration
/// does not exist, fails at bind naming them; one whose configuration is
/// deleted while it runs reports the failed registration of its new CA
/// (naming the configuration) and keeps renewing its leaf from the CA
/// still registered.
pub async fn self_managed_failures_are_reported(client: Client, ns: &str) {
    let bad = CertRotator::new(&["127.0.0.1"])
        .leaf_lifetime(Duration::from_secs(20))
        .leaf_renew_before(Duration::from_secs(15));
    let e = probe_denier()
        .bind("127.0.0.1:0", bad)
        .await
        .expect_err("15 s of 20");
    let e = e.to_string();
    assert!(
        e.contains("leaf_renew_before (15s)") && e.contains("leaf_lifetime (20s)"),
        "{e}"
    );
    let nameless = probe_denier()
        .bind("127.0.0.1:0", CertRotator::new(&[]))
        .await;
    let e = nameless.expect_err("no names").to_string();
    assert!(e.contains("at least one DNS name or IP"), "{e}");
    let missing = CertRotator::new(&["127.0.0.1"]).validating(&client, "kubeset-no-such-config");
    let e = probe_denier()
        .bind("127.0.0.1:0", missing)
        .await
        .expect_err("no configuration");
    assert!(e.to_string().contains("kubeset-no-such-config"), "{e}");

    let (configs, config) = (
        Api::all(client.clone()),
        unique("kubeset-scenario-unregistered"),
    );
    let hook = entry(
        "unregistered.kubeset.dev",
        json!({"url": "https://127.0.0.1:1/none"}),
        ns,
    );
    let vwc: ValidatingWebhookConfiguration =
        typed(json!({"metadata": {"name": config}, "webhooks": [hook]}));
    ok(
        "create configuration",
        configs.create(&PostParams::default(), &vwc).await,
    );
    let rotator = CertRotator::new(&["127.0.0.1"])
        .leaf_lifetime(Duration::from_secs(6))
        .leaf_renew_before(Duration::from_secs(3))
        .ca_lifetime(Duration::from_secs(40))
        .ca_renew_before(Duration::from_secs(20))
        .bundle_settle(Duration::from_secs(5))
        .validating(&client, &config);
    let server = probe_denier()
        .bind("127.0.0.1:0", rotator)
        .await
        .expect("bind");
    let (addr, stats) = (server.local_addr(), server.tls_stats());
    let stop = CancellationToken::new();
    let task = tokio::spawn(server.run(stop.clone().cancelled_owned()));
    let first_ca = registered_bundle(&configs, &config)
        .await
        .expect("bundle registered at bind");
    delete_validating(&client, &config).await;
    // The CA is renewed 20 s after bind; its registration fails.
    let error = eventually(
        PROBE_TIMEOUT,
        "the failed registration reported",
        || async { stats.last_error().filter(|e| e.contains(&config)) },
    )
    .await;
    let (_, before) = served_leaf(addr).await.expect("a handshake");
    let (at, renewed) = eventually(PROBE_TIMEOUT, "a leaf renewed meanwhile", || {
        let before = before.clone();
        async move { served_leaf(addr).await.filter(|(_, leaf)| *leaf != before) }
    })
    .await;
    verify(&renewed, &first_ca, at).expect("the renewed leaf is the registered CA's");
    println!("registration failure: {error}; {stats:?}");
    assert!(stats.failed_reloads() >= 1, "{stats:?}");
    stop.cancel();
    task.await.expect("webhook server task");
}
