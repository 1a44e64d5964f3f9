//! Admission webhooks served by `kubeset::runtime::webhook` and called by
//! the real kube-apiserver (`clientConfig.url` on loopback, our own CA in
//! `caBundle`, `failurePolicy: Fail`): a denial reaches the client as a
//! typed error, a mutation's patch is stored, a handler's warning reaches
//! the client, and the serving certificate is replaced twice while
//! requests flow without one failing.
//!
//! Each configuration selects the test's own namespace only
//! (`namespaceSelector` on `kubernetes.io/metadata.name`), so tests
//! running beside these are not affected, and is deleted at the end.
//! kube-apiserver picks up a new configuration after a moment: each test
//! polls with probe objects until it sees the webhook act.
//!
//! The scenarios of `crates/kubeset-runtime/tests/webhook_scenarios/mod.rs`
//! (`webhook_shared_*` here) run unchanged against the embedded server
//! (`crates/kubeset-runtime/tests/webhook_embedded.rs`), which calls the
//! webhooks itself.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kubeset::Api;
use kubeset::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kubeset::api::core::v1::ConfigMap;
use kubeset::core::admission::{AdmissionRequest, Operation};
use kubeset::params::{DeleteParams, PostParams};
use kubeset::rest::RestClient;
use kubeset::rest::warning::{Warning, WarningHandler};
use kubeset::runtime::webhook::{
    CertFiles, Denied, Mutated, SelfSignedCa, Webhook, WebhookServer, set_ca_bundle,
};
use kubeset::{Client, Error};
use kubeset_tests::{Identity, TestContext, eventually, unique_name};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::common::{connect, ok, typed};

use kubeset as k;
use kubeset::runtime as rt;

#[path = "../../../crates/kubeset-runtime/tests/webhook_scenarios/mod.rs"]
mod scenarios;

#[tokio::test]
async fn webhook_shared_validating_denial_is_a_typed_403() {
    let ctx = connect!("webhook-shared-deny");
    scenarios::validating_denial_is_a_typed_403(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn webhook_shared_mutating_webhooks_run_in_name_order() {
    let ctx = connect!("webhook-shared-order");
    scenarios::mutating_webhooks_run_in_name_order(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn webhook_shared_unreachable_webhook_fails_closed_or_open() {
    let ctx = connect!("webhook-shared-unreachable");
    scenarios::unreachable_webhook_fails_closed_or_open(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn webhook_shared_selectors_filter_what_is_sent() {
    let ctx = connect!("webhook-shared-selectors");
    scenarios::selectors_filter_what_is_sent(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn webhook_shared_match_condition_selects() {
    let ctx = connect!("webhook-shared-conditions");
    scenarios::match_condition_selects(ctx.client, &ctx.ns).await;
}

#[tokio::test]
async fn webhook_shared_dry_run_and_side_effects() {
    let ctx = connect!("webhook-shared-dry");
    scenarios::dry_run_and_side_effects(ctx.client, &ctx.ns).await;
}

const PROBE_TIMEOUT: Duration = Duration::from_secs(90);

struct Certs {
    _dir: tempfile::TempDir,
    cert: PathBuf,
    key: PathBuf,
    ca: SelfSignedCa,
}

impl Certs {
    fn new() -> Certs {
        let dir = tempfile::tempdir().expect("temp dir");
        let ca = SelfSignedCa::generate("kubeset-suite-webhook-ca").expect("CA");
        let certs = Certs {
            cert: dir.path().join("tls.crt"),
            key: dir.path().join("tls.key"),
            _dir: dir,
            ca,
        };
        certs.rotate();
        certs
    }

    /// A new leaf (new key) from the same CA, written over the files.
    fn rotate(&self) {
        let leaf = self.ca.issue(&["127.0.0.1"]).expect("leaf");
        leaf.write(&self.cert, &self.key).expect("leaf written");
    }
}

struct Served {
    url: String,
    stats: kubeset::runtime::webhook::TlsStats,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Served {
    async fn start(webhook: Webhook, certs: &Certs) -> Served {
        let server: WebhookServer = webhook
            .bind("127.0.0.1:0", CertFiles::new(&certs.cert, &certs.key))
            .await
            .expect("webhook binds");
        let stop = CancellationToken::new();
        Served {
            url: format!("https://{}", server.local_addr()),
            stats: server.tls_stats(),
            task: tokio::spawn(server.run(stop.clone().cancelled_owned())),
            stop,
        }
    }

    async fn stop(self) {
        self.stop.cancel();
        self.task.await.expect("webhook server task");
    }
}

/// One webhook entry for ConfigMap CREATEs in `ns` only.
fn webhook_entry(name: &str, url: &str, ns: &str, ca_pem: Option<&str>) -> Value {
    let mut client_config = json!({"url": url});
    if let Some(ca) = ca_pem {
        client_config["caBundle"] = json!(base64_encode(ca.as_bytes()));
    }
    json!({
        "name": name,
        "clientConfig": client_config,
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
        "failurePolicy": "Fail",
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "timeoutSeconds": 10,
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}}
    })
}

/// Standard base64 (the caBundle on the wire), written here so the
/// test does not check kubeset's encoder against itself.
fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn configmap(name: &str, data: Value) -> ConfigMap {
    typed(json!({"metadata": {"name": name}, "data": data}))
}

/// Warnings the API server sent, as the client's handler received them.
#[derive(Debug, Default)]
struct Collect(Mutex<Vec<String>>);

impl WarningHandler for Collect {
    fn handle_warning(&self, warning: &Warning) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(warning.text.clone());
    }
}

fn client_with_warnings(ctx: &TestContext) -> (Client, Arc<Collect>) {
    let collect = Arc::new(Collect::default());
    let config = ctx.kube.config(None, Identity::Admin).expect("config");
    let rest = config
        .rest_config()
        .expect("rest config")
        .with_warning_handler(collect.clone());
    let client = Client::new(RestClient::new(rest).expect("rest client"), ctx.ns.clone());
    (client, collect)
}

#[tokio::test]
async fn validating_webhook_denial_is_a_typed_error() {
    let ctx = connect!("webhook-validate");
    let certs = Certs::new();
    let webhook = Webhook::new().validate_for::<ConfigMap, _>(
        "/validate",
        &[Operation::Create],
        |req: AdmissionRequest<ConfigMap>| async move {
            let data = req.object.and_then(|cm| cm.data).unwrap_or_default();
            if data.contains_key("password") {
                return Err(Denied::new(
                    "ConfigMaps must not hold a password; use a Secret",
                ));
            }
            Ok(vec![])
        },
    );
    let served = Served::start(webhook, &certs).await;

    // Registered without caBundle, then self-registered with set_ca_bundle.
    let name = unique_name("kubeset-validate");
    let configs: Api<ValidatingWebhookConfiguration> = Api::all(ctx.client.clone());
    let config: ValidatingWebhookConfiguration = typed(json!({
        "metadata": {"name": name},
        "webhooks": [webhook_entry("validate.kubeset.dev", &format!("{}/validate", served.url), &ctx.ns, None)]
    }));
    ok(
        "create configuration",
        configs.create(&PostParams::default(), &config).await,
    );
    let stored =
        set_ca_bundle::<ValidatingWebhookConfiguration>(&ctx.client, &name, certs.ca.cert_pem())
            .await
            .expect("caBundle set");
    let bundle = stored
        .webhooks
        .as_ref()
        .and_then(|w| w[0].client_config.ca_bundle.clone());
    assert_eq!(
        bundle.map(|b| b.0),
        Some(certs.ca.cert_pem().as_bytes().to_vec())
    );

    let cms: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    let probe = std::sync::atomic::AtomicU32::new(0);
    let api_error = eventually(PROBE_TIMEOUT, "the validating webhook to deny", || async {
        let n = probe.fetch_add(1, Ordering::Relaxed);
        let cm = configmap(&format!("secretive-{n}"), json!({"password": "hunter2"}));
        match cms.create(&PostParams::default(), &cm).await {
            Err(Error::Api(api)) if api.message.contains("must not hold a password") => Some(api),
            _ => None,
        }
    })
    .await;
    assert_eq!(api_error.code, 403, "{api_error:?}");
    assert!(
        api_error
            .message
            .contains("denied the request: ConfigMaps must not hold a password; use a Secret"),
        "{}",
        api_error.message
    );
    assert!(
        api_error.message.contains("validate.kubeset.dev"),
        "{}",
        api_error.message
    );

    // What the handler admits is stored.
    let fine = ok(
        "create allowed",
        cms.create(
            &PostParams::default(),
            &configmap("fine", json!({"k": "v"})),
        )
        .await,
    );
    assert_eq!(
        fine.data.unwrap_or_default().get("k").map(String::as_str),
        Some("v")
    );

    ok(
        "delete configuration",
        configs.delete(&name, &DeleteParams::default()).await,
    );
    served.stop().await;
}

#[tokio::test]
async fn mutating_webhook_patch_is_stored_and_its_warning_reaches_the_client() {
    let ctx = connect!("webhook-mutate");
    let certs = Certs::new();
    let webhook = Webhook::new().mutate_for::<ConfigMap, _>(
        "/mutate",
        &[Operation::Create],
        |req: AdmissionRequest<ConfigMap>| async move {
            let mut cm = req.object.unwrap_or_default();
            cm.metadata
                .labels
                .get_or_insert_default()
                .insert("kubeset.dev/mutated".to_owned(), "true".to_owned());
            let dry = if req.dry_run { " (dry run)" } else { "" };
            Ok(Mutated::new(cm).with_warning(format!("labelled by the kubeset webhook{dry}")))
        },
    );
    let served = Served::start(webhook, &certs).await;

    let name = unique_name("kubeset-mutate");
    let configs: Api<MutatingWebhookConfiguration> = Api::all(ctx.client.clone());
    let config: MutatingWebhookConfiguration = typed(json!({
        "metadata": {"name": name},
        "webhooks": [webhook_entry("mutate.kubeset.dev", &format!("{}/mutate", served.url), &ctx.ns, Some(certs.ca.cert_pem()))]
    }));
    ok(
        "create configuration",
        configs.create(&PostParams::default(), &config).await,
    );

    let (client, warnings) = client_with_warnings(&ctx);
    let cms: Api<ConfigMap> = Api::namespaced(client, &ctx.ns);
    let probe = std::sync::atomic::AtomicU32::new(0);
    eventually(PROBE_TIMEOUT, "the mutating webhook to label", || async {
        let n = probe.fetch_add(1, Ordering::Relaxed);
        let created = cms
            .create(
                &PostParams::default(),
                &configmap(&format!("probe-{n}"), json!({})),
            )
            .await
            .ok()?;
        created
            .metadata
            .labels?
            .contains_key("kubeset.dev/mutated")
            .then_some(())
    })
    .await;

    warnings.0.lock().unwrap().clear();
    ok(
        "create",
        cms.create(
            &PostParams::default(),
            &configmap("labelled", json!({"k": "v"})),
        )
        .await,
    );
    let stored = ok("get", cms.get("labelled").await);
    let labels = stored.metadata.labels.unwrap_or_default();
    assert_eq!(
        labels.get("kubeset.dev/mutated").map(String::as_str),
        Some("true")
    );
    assert_eq!(
        stored.data.unwrap_or_default().get("k").map(String::as_str),
        Some("v")
    );
    let seen = warnings.0.lock().unwrap().clone();
    assert!(
        seen.iter().any(|w| w == "labelled by the kubeset webhook"),
        "warnings: {seen:?}"
    );

    // A dry run reaches the handler as one (sideEffects: None allows it).
    let dry = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    warnings.0.lock().unwrap().clear();
    ok(
        "dry-run create",
        cms.create(&dry, &configmap("dry", json!({}))).await,
    );
    let seen = warnings.0.lock().unwrap().clone();
    assert!(
        seen.iter()
            .any(|w| w == "labelled by the kubeset webhook (dry run)"),
        "warnings: {seen:?}"
    );

    ok(
        "delete configuration",
        configs.delete(&name, &DeleteParams::default()).await,
    );
    served.stop().await;
}

#[tokio::test]
async fn certificate_rotation_while_requests_flow_loses_none() {
    const MAX_CREATES: usize = 5000;
    let ctx = connect!("webhook-rotate");
    let certs = Certs::new();
    let webhook = Webhook::new().validate_for::<ConfigMap, _>(
        "/validate",
        &[Operation::Create],
        |req: AdmissionRequest<ConfigMap>| async move {
            if req.name.starts_with("probe-") {
                return Err(Denied::new("probe seen"));
            }
            Ok(vec![])
        },
    );
    let served = Served::start(webhook, &certs).await;
    let name = unique_name("kubeset-rotate");
    let configs: Api<ValidatingWebhookConfiguration> = Api::all(ctx.client.clone());
    let config: ValidatingWebhookConfiguration = typed(json!({
        "metadata": {"name": name},
        "webhooks": [webhook_entry("rotate.kubeset.dev", &format!("{}/validate", served.url), &ctx.ns, Some(certs.ca.cert_pem()))]
    }));
    ok(
        "create configuration",
        configs.create(&PostParams::default(), &config).await,
    );

    let cms: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    let probe = std::sync::atomic::AtomicU32::new(0);
    eventually(PROBE_TIMEOUT, "the webhook to see a probe", || async {
        let n = probe.fetch_add(1, Ordering::Relaxed);
        match cms
            .create(
                &PostParams::default(),
                &configmap(&format!("probe-{n}"), json!({})),
            )
            .await
        {
            Err(Error::Api(api)) if api.message.contains("probe seen") => Some(()),
            _ => None,
        }
    })
    .await;

    // Creates through the webhook, one after another, until a count the
    // test sets once both rotations were served (capped).
    let done = Arc::new(AtomicUsize::new(0));
    let stop_at = Arc::new(AtomicUsize::new(MAX_CREATES));
    let creator = {
        let (cms, done, stop_at) = (cms.clone(), done.clone(), stop_at.clone());
        tokio::spawn(async move {
            let mut failures = Vec::new();
            let mut i = 0;
            while i < stop_at.load(Ordering::Relaxed) {
                if let Err(e) = cms
                    .create(
                        &PostParams::default(),
                        &configmap(&format!("flow-{i}"), json!({})),
                    )
                    .await
                {
                    failures.push(format!("flow-{i}: {}", kubeset_tests::error_chain(&e)));
                }
                i += 1;
                done.store(i, Ordering::Relaxed);
            }
            (i, failures)
        })
    };
    eventually(
        PROBE_TIMEOUT,
        "10 creates before the first rotation",
        || async { (done.load(Ordering::Relaxed) >= 10).then_some(()) },
    )
    .await;
    for generation in 1..=2 {
        certs.rotate();
        let at = done.load(Ordering::Relaxed);
        eventually(
            PROBE_TIMEOUT,
            &format!("a handshake with certificate {generation}"),
            || async {
                let served = served.stats.handshakes_per_generation();
                (served.get(generation).copied().unwrap_or(0) >= 1).then_some(())
            },
        )
        .await;
        println!(
            "rotation {generation}: files replaced after create {at}, new leaf served by create {}",
            done.load(Ordering::Relaxed)
        );
    }
    stop_at.store(done.load(Ordering::Relaxed) + 10, Ordering::Relaxed);
    let (creates, failures) = creator.await.expect("creator task");
    assert!(
        creates < MAX_CREATES,
        "the rotations were not served within {MAX_CREATES} creates"
    );
    assert!(
        failures.is_empty(),
        "requests failed during rotation: {failures:#?}"
    );

    let stats = served.stats.clone();
    let handshakes = stats.handshakes_per_generation();
    println!(
        "rotation: {creates} creates, handshakes per certificate generation {handshakes:?}, \
         failed reloads (a half-written pair kept out) {}",
        stats.failed_reloads()
    );
    assert_eq!(stats.generation(), 2, "{stats:?}");
    assert!(
        handshakes.iter().all(|&n| n >= 1),
        "every leaf was served: {handshakes:?}"
    );

    let stored = ok("list", cms.list(&Default::default()).await);
    let flowed = stored
        .items
        .iter()
        .filter(|cm| {
            cm.metadata
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with("flow-"))
        })
        .count();
    assert_eq!(flowed, creates);

    ok(
        "delete configuration",
        configs.delete(&name, &DeleteParams::default()).await,
    );
    served.stop().await;
}
