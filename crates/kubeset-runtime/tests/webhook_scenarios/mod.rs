//! Admission webhook scenarios written once and run against both servers:
//! the embedded one (kubeset-testserver calling the webhooks) by
//! `crates/kubeset-runtime/tests/webhook_embedded.rs`, a real
//! kube-apiserver by `tests/tests/suite/webhook.rs`. The includer names
//! the client crate `k` (`kubeset_client` or the `kubeset` facade) and the
//! runtime `rt` (`kubeset_runtime` or `kubeset::runtime`), and hands each
//! scenario a client and a namespace.
//!
//! Every webhook serves over TLS from `rt::webhook` with the scenario's own
//! CA in `caBundle`, and every configuration selects the scenario's
//! namespace only (`namespaceSelector` on `kubernetes.io/metadata.name`)
//! and is deleted at the end. A configuration takes a moment to reach
//! kube-apiserver's webhook informer, so each scenario polls with probe
//! objects until it sees its webhooks act before checking the rest.

use std::future::Future;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{k, rt};
use k::admission::{AdmissionRequest, Operation};
use k::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k::api::core::v1::ConfigMap;
use k::params::{DeleteParams, PostParams};
use k::{Api, Client, Error};
use rt::webhook::{Denied, Mutated, Webhook, WebhookServer};

mod certs;
use certs::TestCerts;

pub mod cert_sources;

const PROBE_TIMEOUT: Duration = Duration::from_secs(90);

fn ok<T, E: std::fmt::Display>(what: &str, r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// Polls `check` until it answers `Some`, failing after `within`.
async fn eventually<T, F, Fut>(within: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {within:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A webhook server running for one scenario.
struct Served {
    url: String,
    ca_bundle: String,
    stats: rt::webhook::TlsStats,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
    certs: TestCerts,
}

impl Served {
    async fn start(webhook: Webhook) -> Served {
        let certs = TestCerts::new("kubeset-webhook-scenarios-ca", &["127.0.0.1"]);
        let server: WebhookServer = webhook
            .bind("127.0.0.1:0", certs.files())
            .await
            .expect("webhook binds");
        let stop = CancellationToken::new();
        Served {
            url: format!("https://{}", server.local_addr()),
            ca_bundle: base64_encode(certs.ca.cert_pem().as_bytes()),
            stats: server.tls_stats(),
            task: tokio::spawn(server.run(stop.clone().cancelled_owned())),
            stop,
            certs,
        }
    }

    /// One webhook entry for ConfigMap CREATEs in `ns`, at `path`.
    fn entry(&self, name: &str, path: &str, ns: &str) -> Value {
        entry(
            name,
            json!({"url": format!("{}{path}", self.url), "caBundle": self.ca_bundle}),
            ns,
        )
    }

    async fn stop(self) {
        self.stop.cancel();
        self.task.await.expect("webhook server task");
    }
}

/// The error with its causes, for a failure message.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        out.push_str(": ");
        out.push_str(&c.to_string());
        cur = c.source();
    }
    out
}

/// Warnings the API server sent, as a client's handler received them
/// (the includer builds the client with it).
#[derive(Debug, Default)]
pub struct Collect(Mutex<Vec<String>>);

impl Collect {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl k::rest::warning::WarningHandler for Collect {
    fn handle_warning(&self, warning: &k::rest::warning::Warning) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(warning.text.clone());
    }
}

fn entry(name: &str, client_config: Value, ns: &str) -> Value {
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

/// Standard base64 (the caBundle on the wire), written here so the test
/// does not check kubeset's encoder against itself.
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

fn typed<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("typed object")
}

fn configmap(name: &str, labels: Value, data: Value) -> ConfigMap {
    typed(json!({"metadata": {"name": name, "labels": labels}, "data": data}))
}

fn unique(prefix: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    format!("{prefix}-{}-{nanos:x}", N.fetch_add(1, Ordering::Relaxed))
}

/// A validating configuration of `webhooks`, created; its name.
async fn validating(client: &Client, webhooks: Vec<Value>) -> String {
    let name = unique("kubeset-scenario-v");
    let api: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let config = typed(json!({"metadata": {"name": name}, "webhooks": webhooks}));
    ok(
        "create validating configuration",
        api.create(&PostParams::default(), &config).await,
    );
    name
}

async fn mutating(client: &Client, name: &str, webhooks: Vec<Value>) {
    let api: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let config = typed(json!({"metadata": {"name": name}, "webhooks": webhooks}));
    ok(
        "create mutating configuration",
        api.create(&PostParams::default(), &config).await,
    );
}

async fn delete_validating(client: &Client, name: &str) {
    let api: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    ok(
        "delete configuration",
        api.delete(name, &DeleteParams::default()).await,
    );
}

async fn delete_mutating(client: &Client, name: &str) {
    let api: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    ok(
        "delete configuration",
        api.delete(name, &DeleteParams::default()).await,
    );
}

/// The API error of `r`, or `None` when it is another outcome.
fn api_error<T>(r: Result<T, Error>) -> Option<k::ApiError> {
    r.err().and_then(|e| e.api_error().cloned())
}

/// A validating webhook that refuses everything it is sent, saying so.
fn refuse_all(path: &str, message: &'static str) -> Webhook {
    Webhook::new().validate_for::<ConfigMap, _>(
        path,
        &[Operation::Create],
        move |_req: AdmissionRequest<ConfigMap>| async move {
            Err::<Vec<String>, _>(Denied::new(message))
        },
    )
}

/// A validating webhook's denial reaches the client as a typed 403 whose
/// message names the webhook and carries its text; an allowed object is
/// stored.
pub async fn validating_denial_is_a_typed_403(client: Client, ns: &str) {
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
    let served = Served::start(webhook).await;
    let config = validating(
        &client,
        vec![served.entry("validate.kubeset.dev", "/validate", ns)],
    )
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let n = AtomicU32::new(0);
    let denied = eventually(PROBE_TIMEOUT, "the validating webhook to deny", || async {
        let i = n.fetch_add(1, Ordering::Relaxed);
        let cm = configmap(
            &format!("secretive-{i}"),
            json!({}),
            json!({"password": "x"}),
        );
        api_error(cms.create(&PostParams::default(), &cm).await)
            .filter(|s| s.message.contains("must not hold a password"))
    })
    .await;
    assert_eq!(denied.code, 403, "{denied:?}");
    assert_eq!(
        denied.message,
        "admission webhook \"validate.kubeset.dev\" denied the request: ConfigMaps must not hold a password; use a Secret"
    );
    let fine = configmap("fine", json!({}), json!({"k": "v"}));
    ok(
        "allowed create",
        cms.create(&PostParams::default(), &fine).await,
    );
    ok("allowed object stored", cms.get("fine").await);
    delete_validating(&client, &config).await;
    served.stop().await;
}

/// Two mutating webhooks in two configurations are called in the order
/// of the configurations' names, each sent the previous one's result; the
/// patches are stored.
pub async fn mutating_webhooks_run_in_name_order(client: Client, ns: &str) {
    let append = |who: &'static str| {
        move |req: AdmissionRequest<ConfigMap>| async move {
            let mut cm = req.object.unwrap_or_default();
            let data = cm.data.get_or_insert_default();
            let order = data.get("order").cloned().unwrap_or_default();
            let order = if order.is_empty() {
                who.to_owned()
            } else {
                format!("{order},{who}")
            };
            data.insert("order".to_owned(), order);
            Ok(Mutated::new(cm))
        }
    };
    let webhook = Webhook::new()
        .mutate_for::<ConfigMap, _>("/first", &[Operation::Create], append("first"))
        .mutate_for::<ConfigMap, _>("/second", &[Operation::Create], append("second"));
    let served = Served::start(webhook).await;
    let base = unique("kubeset-scenario-m");
    // Created second-first, so that the order is the names', not the
    // creations'.
    let (a, b) = (format!("{base}-a"), format!("{base}-b"));
    mutating(
        &client,
        &b,
        vec![served.entry("second.kubeset.dev", "/second", ns)],
    )
    .await;
    mutating(
        &client,
        &a,
        vec![served.entry("first.kubeset.dev", "/first", ns)],
    )
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let n = AtomicU32::new(0);
    let created = eventually(PROBE_TIMEOUT, "both mutating webhooks to act", || async {
        let i = n.fetch_add(1, Ordering::Relaxed);
        let cm = configmap(&format!("ordered-{i}"), json!({}), json!({}));
        let created = cms.create(&PostParams::default(), &cm).await.ok()?;
        let order = created.data.as_ref()?.get("order")?.clone();
        (order.split(',').count() == 2).then_some(created)
    })
    .await;
    assert_eq!(
        created
            .data
            .unwrap_or_default()
            .get("order")
            .map(String::as_str),
        Some("first,second")
    );
    let name = created.metadata.name.expect("a name");
    let stored = ok("get", cms.get(&name).await);
    assert_eq!(
        stored
            .data
            .unwrap_or_default()
            .get("order")
            .map(String::as_str),
        Some("first,second")
    );
    delete_mutating(&client, &a).await;
    delete_mutating(&client, &b).await;
    served.stop().await;
}

/// An unreachable webhook refuses the write under `failurePolicy: Fail`
/// (500, `failed calling webhook "<name>"`) and is skipped under `Ignore`.
pub async fn unreachable_webhook_fails_closed_or_open(client: Client, ns: &str) {
    // Port 1 on loopback: nothing listens there.
    let unreachable = json!({"url": "https://127.0.0.1:1/nowhere"});
    let mut fail = entry("fail.kubeset.dev", unreachable.clone(), ns);
    fail["objectSelector"] = json!({"matchLabels": {"policy": "fail"}});
    let mut ignore = entry("ignore.kubeset.dev", unreachable, ns);
    ignore["objectSelector"] = json!({"matchLabels": {"policy": "ignore"}});
    ignore["failurePolicy"] = json!("Ignore");
    let config = validating(&client, vec![fail, ignore]).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let n = AtomicU32::new(0);
    let refused = eventually(PROBE_TIMEOUT, "the Fail webhook to refuse", || async {
        let i = n.fetch_add(1, Ordering::Relaxed);
        let cm = configmap(&format!("closed-{i}"), json!({"policy": "fail"}), json!({}));
        api_error(cms.create(&PostParams::default(), &cm).await)
            .filter(|s| s.message.contains("failed calling webhook"))
    })
    .await;
    assert_eq!(refused.code, 500, "{refused:?}");
    assert_eq!(
        refused.status_reason,
        k::StatusReason::InternalError,
        "{refused:?}"
    );
    assert!(
        refused
            .message
            .starts_with("Internal error occurred: failed calling webhook \"fail.kubeset.dev\": failed to call webhook: Post \"https://127.0.0.1:1/nowhere?timeout=10s\""),
        "{}",
        refused.message
    );
    let open = configmap("open", json!({"policy": "ignore"}), json!({}));
    ok(
        "create under Ignore",
        cms.create(&PostParams::default(), &open).await,
    );
    ok("stored under Ignore", cms.get("open").await);
    delete_validating(&client, &config).await;
}

/// `objectSelector` and `namespaceSelector` decide which writes a webhook
/// is sent: one refusing everything labelled `guard: on`, one refusing
/// everything in another namespace.
pub async fn selectors_filter_what_is_sent(client: Client, ns: &str) {
    let webhook = refuse_all("/guard", "guarded");
    let served = Served::start(webhook).await;
    let mut guarded = served.entry("guard.kubeset.dev", "/guard", ns);
    guarded["objectSelector"] = json!({"matchLabels": {"guard": "on"}});
    let mut elsewhere = served.entry("elsewhere.kubeset.dev", "/guard", ns);
    elsewhere["namespaceSelector"] =
        json!({"matchLabels": {"kubernetes.io/metadata.name": format!("{ns}-not-this-one")}});
    let config = validating(&client, vec![guarded, elsewhere]).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let n = AtomicU32::new(0);
    let denied = eventually(PROBE_TIMEOUT, "the object selector to match", || async {
        let i = n.fetch_add(1, Ordering::Relaxed);
        let cm = configmap(&format!("guarded-{i}"), json!({"guard": "on"}), json!({}));
        api_error(cms.create(&PostParams::default(), &cm).await)
            .filter(|s| s.message.contains("guarded"))
    })
    .await;
    assert!(
        denied.message.contains("\"guard.kubeset.dev\""),
        "{}",
        denied.message
    );
    // No `guard: on`: neither webhook is sent it.
    let other = configmap("unguarded", json!({"guard": "off"}), json!({}));
    ok(
        "create without the label",
        cms.create(&PostParams::default(), &other).await,
    );
    let plain = configmap("plain", json!({}), json!({}));
    ok(
        "create with no labels",
        cms.create(&PostParams::default(), &plain).await,
    );
    delete_validating(&client, &config).await;
    served.stop().await;
}

/// A `matchCondition` (CEL) decides which writes are sent: only names
/// starting `checked-` reach the webhook that refuses everything.
pub async fn match_condition_selects(client: Client, ns: &str) {
    let webhook = refuse_all("/checked", "checked and refused");
    let served = Served::start(webhook).await;
    let mut hook = served.entry("checked.kubeset.dev", "/checked", ns);
    hook["matchConditions"] = json!([{"name": "checked-names", "expression": "object.metadata.name.startsWith('checked-')"}]);
    let config = validating(&client, vec![hook]).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let n = AtomicU32::new(0);
    let denied = eventually(PROBE_TIMEOUT, "the match condition to hold", || async {
        let i = n.fetch_add(1, Ordering::Relaxed);
        let cm = configmap(&format!("checked-{i}"), json!({}), json!({}));
        api_error(cms.create(&PostParams::default(), &cm).await)
            .filter(|s| s.message.contains("checked and refused"))
    })
    .await;
    assert_eq!(denied.code, 403, "{denied:?}");
    let free = configmap("free-1", json!({}), json!({}));
    ok(
        "create outside the condition",
        cms.create(&PostParams::default(), &free).await,
    );
    delete_validating(&client, &config).await;
    served.stop().await;
}

/// `sideEffects`: admissionregistration/v1 takes only `None` and
/// `NoneOnDryRun` (a configuration with `Unknown` is refused, 422), and a
/// dry-run write is sent to such a webhook with `dryRun: true`, its patch
/// in the answer and nothing stored.
pub async fn dry_run_and_side_effects(client: Client, ns: &str) {
    let webhook = Webhook::new().mutate_for::<ConfigMap, _>(
        "/dry",
        &[Operation::Create],
        |req: AdmissionRequest<ConfigMap>| async move {
            let mut cm = req.object.unwrap_or_default();
            cm.data
                .get_or_insert_default()
                .insert("dryRun".to_owned(), req.dry_run.to_string());
            Ok(Mutated::new(cm))
        },
    );
    let served = Served::start(webhook).await;
    let mut unknown = served.entry("unknown.kubeset.dev", "/dry", ns);
    unknown["sideEffects"] = json!("Unknown");
    let api: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let bad =
        typed(json!({"metadata": {"name": unique("kubeset-scenario-bad")}, "webhooks": [unknown]}));
    let refused = api_error(api.create(&PostParams::default(), &bad).await)
        .expect("a configuration with sideEffects Unknown is refused");
    assert_eq!(refused.code, 422, "{refused:?}");
    assert!(
        refused.message.contains("webhooks[0].sideEffects"),
        "{}",
        refused.message
    );

    let name = unique("kubeset-scenario-dry");
    let mut hook = served.entry("dry.kubeset.dev", "/dry", ns);
    hook["sideEffects"] = json!("NoneOnDryRun");
    mutating(&client, &name, vec![hook]).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let n = AtomicU32::new(0);
    let answered = eventually(PROBE_TIMEOUT, "the webhook to see a dry run", || async {
        let i = n.fetch_add(1, Ordering::Relaxed);
        let cm = configmap(&format!("dry-{i}"), json!({}), json!({}));
        let created = cms
            .create(&PostParams::default().dry_run(), &cm)
            .await
            .ok()?;
        created
            .data
            .as_ref()?
            .contains_key("dryRun")
            .then_some(created)
    })
    .await;
    assert_eq!(
        answered
            .data
            .unwrap_or_default()
            .get("dryRun")
            .map(String::as_str),
        Some("true")
    );
    let name_of = answered.metadata.name.expect("a name");
    assert!(
        api_error(cms.get(&name_of).await).is_some_and(|s| s.code == 404),
        "a dry run stores nothing"
    );
    let real = configmap("wet", json!({}), json!({}));
    let stored = ok("create", cms.create(&PostParams::default(), &real).await);
    assert_eq!(
        stored
            .data
            .unwrap_or_default()
            .get("dryRun")
            .map(String::as_str),
        Some("false")
    );
    delete_mutating(&client, &name).await;
    served.stop().await;
}

/// UPDATEs (a PUT and a merge patch) are sent with `oldObject`: a webhook
/// that refuses a change of `data.owner` lets other changes through, and
/// a mutating webhook's patch on UPDATE is stored.
pub async fn updates_are_sent_with_the_old_object(client: Client, ns: &str) {
    let webhook = Webhook::new()
        .validate_for::<ConfigMap, _>(
            "/owner",
            &[Operation::Update],
            |req: AdmissionRequest<ConfigMap>| async move {
                let owner = |cm: Option<ConfigMap>| cm.and_then(|c| c.data?.get("owner").cloned());
                if owner(req.old_object) != owner(req.object) {
                    return Err(Denied::new("owner may not change"));
                }
                Ok(vec![])
            },
        )
        .mutate_for::<ConfigMap, _>(
            "/stamp",
            &[Operation::Update],
            |req: AdmissionRequest<ConfigMap>| async move {
                let mut cm = req.object.unwrap_or_default();
                let n = cm
                    .data
                    .as_ref()
                    .and_then(|d| d.get("updates")?.parse::<u32>().ok())
                    .unwrap_or(0);
                cm.data
                    .get_or_insert_default()
                    .insert("updates".to_owned(), (n + 1).to_string());
                Ok(Mutated::new(cm))
            },
        );
    let served = Served::start(webhook).await;
    let update = |mut e: Value| {
        e["rules"][0]["operations"] = json!(["UPDATE"]);
        e
    };
    let config = validating(
        &client,
        vec![update(served.entry("owner.kubeset.dev", "/owner", ns))],
    )
    .await;
    let mname = unique("kubeset-scenario-u");
    mutating(
        &client,
        &mname,
        vec![update(served.entry("stamp.kubeset.dev", "/stamp", ns))],
    )
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let n = AtomicU32::new(0);
    eventually(PROBE_TIMEOUT, "both UPDATE webhooks to act", || async {
        let i = n.fetch_add(1, Ordering::Relaxed);
        let name = format!("owned-{i}");
        let cm = configmap(&name, json!({}), json!({"owner": "a"}));
        let mut created = cms.create(&PostParams::default(), &cm).await.ok()?;
        created
            .data
            .get_or_insert_default()
            .insert("owner".to_owned(), "b".to_owned());
        let refused = api_error(cms.replace(&name, &PostParams::default(), &created).await)?;
        refused
            .message
            .contains("owner may not change")
            .then_some(())?;
        let mut fresh = cms.get(&name).await.ok()?;
        fresh
            .data
            .get_or_insert_default()
            .insert("note".to_owned(), "x".to_owned());
        let stored = cms
            .replace(&name, &PostParams::default(), &fresh)
            .await
            .ok()?;
        (stored.data?.get("updates")? == "1").then_some(())
    })
    .await;
    let cm = configmap("patched", json!({}), json!({"owner": "a"}));
    ok("create", cms.create(&PostParams::default(), &cm).await);
    let patch = k::Patch::Merge(json!({"data": {"note": "y"}}));
    let patched = ok(
        "merge patch",
        cms.patch("patched", &k::params::PatchParams::default(), &patch)
            .await,
    );
    let data = patched.data.unwrap_or_default();
    assert_eq!(data.get("updates").map(String::as_str), Some("1"));
    assert_eq!(data.get("note").map(String::as_str), Some("y"));
    let stolen = k::Patch::Merge(json!({"data": {"owner": "b"}}));
    let refused = api_error(
        cms.patch("patched", &k::params::PatchParams::default(), &stolen)
            .await,
    )
    .expect("a change of owner is refused");
    assert_eq!(refused.code, 403, "{refused:?}");
    assert_eq!(
        refused.message,
        "admission webhook \"owner.kubeset.dev\" denied the request: owner may not change"
    );
    let stored = ok("get", cms.get("patched").await);
    assert_eq!(
        stored
            .data
            .unwrap_or_default()
            .get("owner")
            .map(String::as_str),
        Some("a")
    );
    delete_validating(&client, &config).await;
    delete_mutating(&client, &mname).await;
    served.stop().await;
}

/// A mutating webhook's patch is stored with the rest of the object, its
/// warning reaches the client (`client` reports to `warnings`), and a dry
/// run reaches it as one (`sideEffects: None`).
pub async fn mutation_is_stored_and_its_warning_reaches_the_client(
    client: Client,
    warnings: Arc<Collect>,
    ns: &str,
) {
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
    let served = Served::start(webhook).await;
    let name = unique("kubeset-scenario-mutate");
    mutating(
        &client,
        &name,
        vec![served.entry("mutate.kubeset.dev", "/mutate", ns)],
    )
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let n = AtomicU32::new(0);
    eventually(PROBE_TIMEOUT, "the mutating webhook to label", || async {
        let i = n.fetch_add(1, Ordering::Relaxed);
        let cm = configmap(&format!("probe-{i}"), json!({}), json!({}));
        let created = cms.create(&PostParams::default(), &cm).await.ok()?;
        created
            .metadata
            .labels?
            .contains_key("kubeset.dev/mutated")
            .then_some(())
    })
    .await;
    warnings.take();
    let cm = configmap("labelled", json!({"keep": "me"}), json!({"k": "v"}));
    ok("create", cms.create(&PostParams::default(), &cm).await);
    let stored = ok("get", cms.get("labelled").await);
    let labels = stored.metadata.labels.unwrap_or_default();
    assert_eq!(
        labels.get("kubeset.dev/mutated").map(String::as_str),
        Some("true")
    );
    assert_eq!(labels.get("keep").map(String::as_str), Some("me"));
    assert_eq!(
        stored.data.unwrap_or_default().get("k").map(String::as_str),
        Some("v")
    );
    let seen = warnings.take();
    assert!(
        seen.iter().any(|w| w == "labelled by the kubeset webhook"),
        "warnings: {seen:?}"
    );
    let dry = configmap("dry", json!({}), json!({}));
    ok(
        "dry-run create",
        cms.create(&PostParams::default().dry_run(), &dry).await,
    );
    let seen = warnings.take();
    assert!(
        seen.iter()
            .any(|w| w == "labelled by the kubeset webhook (dry run)"),
        "warnings: {seen:?}"
    );
    delete_mutating(&client, &name).await;
    served.stop().await;
}

/// The webhook's serving certificate is replaced twice (same CA, new keys)
/// while creates flow through it under `failurePolicy: Fail`: none fails,
/// and every leaf is served.
pub async fn certificate_rotation_while_requests_flow_loses_none(client: Client, ns: &str) {
    const MAX_CREATES: usize = 5000;
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
    let served = Served::start(webhook).await;
    let config = validating(
        &client,
        vec![served.entry("rotate.kubeset.dev", "/validate", ns)],
    )
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let n = AtomicU32::new(0);
    eventually(PROBE_TIMEOUT, "the webhook to see a probe", || async {
        let i = n.fetch_add(1, Ordering::Relaxed);
        let cm = configmap(&format!("probe-{i}"), json!({}), json!({}));
        api_error(cms.create(&PostParams::default(), &cm).await)
            .filter(|s| s.message.contains("probe seen"))
    })
    .await;
    // Creates through the webhook, one after another, until a count set
    // once both rotations were served (capped).
    let done = Arc::new(AtomicUsize::new(0));
    let stop_at = Arc::new(AtomicUsize::new(MAX_CREATES));
    let creator = {
        let (cms, done, stop_at) = (cms.clone(), done.clone(), stop_at.clone());
        tokio::spawn(async move {
            let mut failures = Vec::new();
            let mut i = 0;
            while i < stop_at.load(Ordering::Relaxed) {
                let cm = configmap(&format!("flow-{i}"), json!({}), json!({}));
                if let Err(e) = cms.create(&PostParams::default(), &cm).await {
                    failures.push(format!("flow-{i}: {}", chain(&e)));
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
        served.certs.rotate();
        let at = done.load(Ordering::Relaxed);
        eventually(
            PROBE_TIMEOUT,
            &format!("a handshake with certificate {generation}"),
            || async {
                let per = served.stats.handshakes_per_generation();
                (per.get(generation).copied().unwrap_or(0) >= 1).then_some(())
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
    let handshakes = served.stats.handshakes_per_generation();
    println!(
        "rotation: {creates} creates, handshakes per certificate generation {handshakes:?}, \
         failed reloads (a half-written pair kept out) {}",
        served.stats.failed_reloads()
    );
    assert_eq!(served.stats.generation(), 2, "{:?}", served.stats);
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
    delete_validating(&client, &config).await;
    served.stop().await;
}

/// Sequential creates through a webhook whose certificate is replaced
/// once reuse their kept-alive connection: the API server makes one
/// connection per certificate generation (the webhook server closes the
/// old one after the rotation), not one per create. Counted from the
/// webhook server's handshakes, so no timing is assumed.
pub async fn rotated_webhook_keeps_its_connection(client: Client, ns: &str) {
    const PER_PHASE: usize = 30;
    let served = Served::start(Webhook::new().validate_for::<ConfigMap, _>(
        "/validate",
        &[Operation::Create],
        |_req: AdmissionRequest<ConfigMap>| async move { Ok::<_, Denied>(vec![]) },
    ))
    .await;
    let config = validating(
        &client,
        vec![served.entry("keepalive.kubeset.dev", "/validate", ns)],
    )
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let n = AtomicUsize::new(0);
    let (count, api) = (&n, &cms);
    let create = move || async move {
        let i = count.fetch_add(1, Ordering::Relaxed);
        let cm = configmap(&format!("keep-{i}"), json!({}), json!({}));
        ok(
            "create through the webhook",
            api.create(&PostParams::default(), &cm).await,
        );
    };
    // The configuration reaches the API server's admission (eventually on
    // kube-apiserver): a create the webhook saw.
    eventually(PROBE_TIMEOUT, "the webhook to see a create", || async {
        create().await;
        (served.stats.handshakes_per_generation()[0] >= 1).then_some(())
    })
    .await;
    for _ in 0..PER_PHASE {
        create().await;
    }
    served.certs.rotate();
    eventually(
        PROBE_TIMEOUT,
        "a handshake with the new certificate",
        || async {
            create().await;
            let per = served.stats.handshakes_per_generation();
            (per.get(1).copied().unwrap_or(0) >= 1).then_some(())
        },
    )
    .await;
    for _ in 0..PER_PHASE {
        create().await;
    }
    let creates = n.load(Ordering::Relaxed);
    let per = served.stats.handshakes_per_generation();
    let total: u64 = per.iter().sum();
    println!("keep-alive across a rotation: {creates} creates, handshakes per generation {per:?}");
    assert_eq!(served.stats.generation(), 1, "{:?}", served.stats);
    // One connection per generation is what reuse gives; a few more are
    // allowed (a connection the client replaced), one per create is not.
    assert!(
        total <= 6,
        "{creates} creates made {total} TLS handshakes ({per:?}): connections are not reused"
    );
    delete_validating(&client, &config).await;
    served.stop().await;
}

/// A DELETE is sent with `oldObject` (the object deleted) and no
/// `object`: a webhook refusing the deletion of what is labelled
/// `protected: yes` keeps it; another object is deleted.
pub async fn deletes_are_sent_with_the_old_object(client: Client, ns: &str) {
    let webhook = Webhook::new().validate_for::<ConfigMap, _>(
        "/protect",
        &[Operation::Delete],
        |req: AdmissionRequest<ConfigMap>| async move {
            assert!(req.object.is_none(), "a DELETE has no object");
            let protected = req
                .old_object
                .and_then(|cm| cm.metadata.labels?.get("protected").cloned());
            if protected.as_deref() == Some("yes") {
                return Err(Denied::new("protected objects stay"));
            }
            Ok(vec![])
        },
    );
    let served = Served::start(webhook).await;
    let mut hook = served.entry("protect.kubeset.dev", "/protect", ns);
    hook["rules"][0]["operations"] = json!(["DELETE"]);
    let config = validating(&client, vec![hook]).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let n = AtomicU32::new(0);
    let (name, refused) = eventually(PROBE_TIMEOUT, "the DELETE webhook to refuse", || async {
        let i = n.fetch_add(1, Ordering::Relaxed);
        let name = format!("protected-{i}");
        let cm = configmap(&name, json!({"protected": "yes"}), json!({}));
        cms.create(&PostParams::default(), &cm).await.ok()?;
        let refused = api_error(cms.delete(&name, &DeleteParams::default()).await)?;
        refused
            .message
            .contains("protected objects stay")
            .then_some((name, refused))
    })
    .await;
    assert_eq!(refused.code, 403, "{refused:?}");
    assert_eq!(
        refused.message,
        "admission webhook \"protect.kubeset.dev\" denied the request: protected objects stay"
    );
    ok("the protected object is kept", cms.get(&name).await);
    let cm = configmap("unprotected", json!({"protected": "no"}), json!({}));
    ok("create", cms.create(&PostParams::default(), &cm).await);
    ok(
        "delete",
        cms.delete("unprotected", &DeleteParams::default()).await,
    );
    assert!(
        api_error(cms.get("unprotected").await).is_some_and(|s| s.code == 404),
        "the unprotected object is deleted"
    );
    delete_validating(&client, &config).await;
    served.stop().await;
}

/// The names of the ConfigMaps a webhook was sent, in the order it was
/// sent them, with what it saw.
#[derive(Debug, Clone, Default)]
struct Seen(Arc<Mutex<Vec<ConfigMap>>>);

impl Seen {
    fn push(&self, cm: Option<ConfigMap>) {
        if let Some(cm) = cm {
            self.0.lock().unwrap_or_else(|p| p.into_inner()).push(cm);
        }
    }

    /// What was sent for the ConfigMap `name`.
    fn of(&self, name: &str) -> Vec<ConfigMap> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|c| c.metadata.name.as_deref() == Some(name))
            .cloned()
            .collect()
    }
}

/// A mutating webhook that replaces the spaces of data keys by dashes.
fn fix_keys(req: AdmissionRequest<ConfigMap>) -> Result<Mutated<ConfigMap>, Denied> {
    let mut cm = req.object.unwrap_or_default();
    if let Some(data) = cm.data.take() {
        cm.data = Some(
            data.into_iter()
                .map(|(k, v)| (k.replace(' ', "-"), v))
                .collect(),
        );
    }
    cm.metadata
        .labels
        .get_or_insert_default()
        .insert("fixed".to_owned(), "yes".to_owned());
    Ok(Mutated::new(cm))
}

/// Validation runs after the mutating webhooks, as kube-apiserver orders
/// admission: a ConfigMap whose data key is invalid as sent (`a key`) is
/// stored once a mutating webhook has fixed it, the validating webhook
/// sees the mutated object (with the `uid` the server gave it); one still
/// invalid after the mutation (`bad!key`) is refused with the same 422 as
/// without webhooks, and the validating webhook is not sent it.
pub async fn mutation_makes_an_invalid_object_valid(client: Client, ns: &str) {
    let seen = Seen::default();
    let recorder = seen.clone();
    let webhook = Webhook::new()
        .mutate_for::<ConfigMap, _>("/fix", &[Operation::Create], |req| {
            std::future::ready(fix_keys(req))
        })
        .validate_for::<ConfigMap, _>(
            "/see",
            &[Operation::Create],
            move |req: AdmissionRequest<ConfigMap>| {
                recorder.push(req.object);
                std::future::ready(Ok::<_, Denied>(vec![]))
            },
        );
    let served = Served::start(webhook).await;
    let only_fix = |mut e: Value| {
        e["objectSelector"] = json!({"matchLabels": {"fix": "yes"}});
        e
    };
    let mname = unique("kubeset-scenario-fix");
    mutating(
        &client,
        &mname,
        vec![only_fix(served.entry("fix.kubeset.dev", "/fix", ns))],
    )
    .await;
    let vname = validating(
        &client,
        vec![only_fix(served.entry("see.kubeset.dev", "/see", ns))],
    )
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let n = AtomicU32::new(0);
    let fixed = eventually(PROBE_TIMEOUT, "both webhooks to act", || async {
        let i = n.fetch_add(1, Ordering::Relaxed);
        let name = format!("fixme-{i}");
        let cm = configmap(&name, json!({"fix": "yes"}), json!({"a key": "v"}));
        let created = cms.create(&PostParams::default(), &cm).await.ok()?;
        (!seen.of(&name).is_empty()).then_some(created)
    })
    .await;
    let name = fixed.metadata.name.clone().expect("a name");
    let data = fixed.data.clone().unwrap_or_default();
    assert_eq!(
        data.get("a-key").map(String::as_str),
        Some("v"),
        "{fixed:?}"
    );
    assert!(!data.contains_key("a key"), "{fixed:?}");
    let stored = ok("get", cms.get(&name).await);
    assert_eq!(stored.data, fixed.data);
    let sent = seen.of(&name);
    assert_eq!(sent.len(), 1, "{sent:?}");
    let sent = &sent[0];
    assert_eq!(sent.data, fixed.data, "the validating webhook saw {sent:?}");
    let labels = sent.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels.get("fixed").map(String::as_str), Some("yes"));
    assert_eq!(sent.metadata.uid, stored.metadata.uid);
    assert!(sent.metadata.uid.is_some(), "{sent:?}");

    // Still invalid after the mutation: the same refusal as without
    // webhooks (the same object, not labelled for them).
    let bad = |labels: Value| configmap("still-bad", labels, json!({"bad!key": "v"}));
    let plain = api_error(cms.create(&PostParams::default(), &bad(json!({}))).await)
        .expect("an invalid key is refused");
    let after = api_error(
        cms.create(&PostParams::default(), &bad(json!({"fix": "yes"})))
            .await,
    )
    .expect("an invalid key is refused after the mutation");
    assert_eq!(plain.code, 422, "{plain:?}");
    assert_eq!(plain.status_reason, k::StatusReason::Invalid, "{plain:?}");
    let causes = &plain.details.as_ref().expect("details")["causes"];
    assert_eq!(causes[0]["field"], "data[bad!key]", "{plain:?}");
    assert_eq!(
        (
            after.code,
            &after.status_reason,
            &after.message,
            &after.details
        ),
        (
            plain.code,
            &plain.status_reason,
            &plain.message,
            &plain.details
        )
    );
    assert!(seen.of("still-bad").is_empty());
    assert!(
        api_error(cms.get("still-bad").await).is_some_and(|e| e.code == 404),
        "nothing stored"
    );
    delete_mutating(&client, &mname).await;
    delete_validating(&client, &vname).await;
    served.stop().await;
}

/// A webhook that counts what it is sent and allows everything.
fn counting(path: &str, calls: Arc<AtomicUsize>) -> Webhook {
    Webhook::new().validate_for::<ConfigMap, _>(
        path,
        &[Operation::Create, Operation::Update],
        move |_req: AdmissionRequest<ConfigMap>| {
            calls.fetch_add(1, Ordering::Relaxed);
            std::future::ready(Ok::<_, Denied>(vec![]))
        },
    )
}

/// Configurations stored whose webhooks cannot match a write (another
/// namespace, operation, resource or scope) are not called and
/// the write is answered as without them. `writes` reads the server's
/// count of writes that went through webhook admission where it has one
/// (the embedded server's; `None` for kube-apiserver): a write that
/// matches is counted, one that cannot is not.
pub async fn webhooks_that_cannot_match_are_not_called(
    client: Client,
    ns: &str,
    writes: impl Fn() -> Option<u64>,
) {
    let calls = Arc::new(AtomicUsize::new(0));
    let served = Served::start(counting("/count", calls.clone())).await;
    // The probe: Secrets created in the namespace are refused.
    let mut probe = served.entry("probe.kubeset.dev", "/refuse", ns);
    probe["rules"][0]["resources"] = json!(["secrets"]);
    let mut elsewhere = served.entry("elsewhere.kubeset.dev", "/count", ns);
    elsewhere["namespaceSelector"] =
        json!({"matchLabels": {"kubernetes.io/metadata.name": format!("{ns}-not-this-one")}});
    let mut deletes = served.entry("deletes.kubeset.dev", "/count", ns);
    deletes["rules"][0]["operations"] = json!(["DELETE"]);
    let mut cluster = served.entry("cluster.kubeset.dev", "/count", ns);
    cluster["rules"][0]["scope"] = json!("Cluster");
    let config = validating(&client, vec![probe, elsewhere, deletes, cluster]).await;
    let mname = unique("kubeset-scenario-none");
    let mut other = served.entry("other.kubeset.dev", "/count", ns);
    other["rules"][0]["apiGroups"] = json!(["apps"]);
    other["rules"][0]["resources"] = json!(["deployments"]);
    mutating(&client, &mname, vec![other]).await;
    let secrets: Api<k::api::core::v1::Secret> = Api::namespaced(client.clone(), ns);
    let n = AtomicU32::new(0);
    eventually(PROBE_TIMEOUT, "the probe webhook to be called", || async {
        let i = n.fetch_add(1, Ordering::Relaxed);
        let s = typed(json!({"metadata": {"name": format!("probe-{i}")}}));
        // The path `/refuse` is not served: the call fails, closed.
        api_error(secrets.create(&PostParams::default(), &s).await)
            .filter(|e| e.message.contains("probe.kubeset.dev"))
    })
    .await;
    // The mutating configuration is stored before the probe's: by now
    // kube-apiserver has both.
    let before = writes();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let cm = configmap("unmatched", json!({"l": "v"}), json!({"k": "v"}));
    let created = ok(
        "create no webhook matches",
        cms.create(&PostParams::default(), &cm).await,
    );
    assert_eq!(created.data, cm.data);
    let mut changed = created.clone();
    changed
        .data
        .get_or_insert_default()
        .insert("k".to_owned(), "w".to_owned());
    ok(
        "update no webhook matches",
        cms.replace("unmatched", &PostParams::default(), &changed)
            .await,
    );
    assert_eq!(calls.load(Ordering::Relaxed), 0, "no webhook was called");
    if let (Some(before), Some(after)) = (before, writes()) {
        assert_eq!(after, before, "no write went through webhook admission");
        let s = typed(json!({"metadata": {"name": "counted"}}));
        assert!(secrets.create(&PostParams::default(), &s).await.is_err());
        assert_eq!(writes(), Some(after + 1), "a matching write is counted");
    }
    delete_validating(&client, &config).await;
    delete_mutating(&client, &mname).await;
    served.stop().await;
}

/// `reinvocationPolicy`: of two mutating webhooks of one configuration
/// that change nothing, the one with `IfNeeded` is called again after a
/// webhook of a later configuration changed the object, the one with
/// `Never` (the default) once.
pub async fn reinvocation_if_needed(client: Client, ns: &str) {
    let seen_if = Seen::default();
    let seen_never = Seen::default();
    let record = |seen: Seen| {
        move |req: AdmissionRequest<ConfigMap>| {
            seen.push(req.object.clone());
            std::future::ready(Ok::<_, Denied>(Mutated::new(
                req.object.unwrap_or_default(),
            )))
        }
    };
    let change = |req: AdmissionRequest<ConfigMap>| {
        let mut cm = req.object.unwrap_or_default();
        cm.metadata
            .labels
            .get_or_insert_default()
            .insert("changed".to_owned(), "yes".to_owned());
        std::future::ready(Ok::<_, Denied>(Mutated::new(cm)))
    };
    let webhook = Webhook::new()
        .mutate_for::<ConfigMap, _>("/ifneeded", &[Operation::Create], record(seen_if.clone()))
        .mutate_for::<ConfigMap, _>("/never", &[Operation::Create], record(seen_never.clone()))
        .mutate_for::<ConfigMap, _>("/change", &[Operation::Create], change);
    let served = Served::start(webhook).await;
    let base = unique("kubeset-scenario-r");
    let (a, b) = (format!("{base}-a"), format!("{base}-b"));
    let mut if_needed = served.entry("ifneeded.kubeset.dev", "/ifneeded", ns);
    if_needed["reinvocationPolicy"] = json!("IfNeeded");
    let mut never = served.entry("never.kubeset.dev", "/never", ns);
    never["reinvocationPolicy"] = json!("Never");
    mutating(
        &client,
        &b,
        vec![served.entry("change.kubeset.dev", "/change", ns)],
    )
    .await;
    mutating(&client, &a, vec![if_needed, never]).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let n = AtomicU32::new(0);
    let name = eventually(PROBE_TIMEOUT, "the three webhooks to act", || async {
        let i = n.fetch_add(1, Ordering::Relaxed);
        let name = format!("reinvoked-{i}");
        let cm = configmap(&name, json!({}), json!({}));
        let created = cms.create(&PostParams::default(), &cm).await.ok()?;
        let labels = created.metadata.labels.unwrap_or_default();
        (labels.contains_key("changed") && !seen_never.of(&name).is_empty()).then_some(name)
    })
    .await;
    let again = seen_if.of(&name);
    assert_eq!(again.len(), 2, "IfNeeded: {again:?}");
    let first_labels = again[0].metadata.labels.clone().unwrap_or_default();
    let second_labels = again[1].metadata.labels.clone().unwrap_or_default();
    assert!(!first_labels.contains_key("changed"), "{again:?}");
    assert_eq!(
        second_labels.get("changed").map(String::as_str),
        Some("yes"),
        "reinvoked with the later change: {again:?}"
    );
    assert_eq!(seen_never.of(&name).len(), 1, "Never");
    delete_mutating(&client, &a).await;
    delete_mutating(&client, &b).await;
    served.stop().await;
}

/// What a webhook was sent: the request's `name` and the object.
#[derive(Debug, Clone, Default)]
struct Sent(Arc<Mutex<Vec<(String, ConfigMap)>>>);

impl Sent {
    fn push(&self, req: &AdmissionRequest<ConfigMap>) {
        if let Some(cm) = req.object.clone() {
            self.0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((req.name.clone(), cm));
        }
    }

    /// What was sent for objects of `generate_name`.
    fn of(&self, generate_name: &str) -> Vec<(String, ConfigMap)> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|(_, c)| c.metadata.generate_name.as_deref() == Some(generate_name))
            .cloned()
            .collect()
    }
}

/// A create with `generateName`: the mutating webhook is sent the object
/// as the client sent it (no name, `uid` or `creationTimestamp`; the
/// request's `name` empty), the validating webhook the object with the
/// generated name, the `uid` and `creationTimestamp` that are stored, and
/// that name as the request's.
pub async fn generated_names_reach_the_validating_webhooks(client: Client, ns: &str) {
    let (mutated, validated) = (Sent::default(), Sent::default());
    let (m, v) = (mutated.clone(), validated.clone());
    let webhook = Webhook::new()
        .mutate_for::<ConfigMap, _>(
            "/m",
            &[Operation::Create],
            move |req: AdmissionRequest<ConfigMap>| {
                m.push(&req);
                let mut cm = req.object.unwrap_or_default();
                cm.data
                    .get_or_insert_default()
                    .insert("mutated".to_owned(), "yes".to_owned());
                std::future::ready(Ok::<_, Denied>(Mutated::new(cm)))
            },
        )
        .validate_for::<ConfigMap, _>(
            "/v",
            &[Operation::Create],
            move |req: AdmissionRequest<ConfigMap>| {
                v.push(&req);
                std::future::ready(Ok::<_, Denied>(vec![]))
            },
        );
    let served = Served::start(webhook).await;
    let mname = unique("kubeset-scenario-g");
    mutating(
        &client,
        &mname,
        vec![served.entry("m.kubeset.dev", "/m", ns)],
    )
    .await;
    let vname = validating(&client, vec![served.entry("v.kubeset.dev", "/v", ns)]).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let n = AtomicU32::new(0);
    let (prefix, created) = eventually(PROBE_TIMEOUT, "both webhooks to act", || async {
        let prefix = format!("gen-{}-", n.fetch_add(1, Ordering::Relaxed));
        let cm: ConfigMap = typed(json!({"metadata": {"generateName": prefix}}));
        let created = cms.create(&PostParams::default(), &cm).await.ok()?;
        (!validated.of(&prefix).is_empty() && !mutated.of(&prefix).is_empty())
            .then_some((prefix, created))
    })
    .await;
    let name = created.metadata.name.clone().expect("a generated name");
    assert!(name.starts_with(&prefix), "{name}");
    let m = mutated.of(&prefix);
    assert_eq!(m.len(), 1, "{m:?}");
    let (m_name, m_obj) = &m[0];
    assert_eq!(m_name, "", "the mutating webhook's request name");
    assert_eq!(m_obj.metadata.name, None, "{m_obj:?}");
    assert_eq!(m_obj.metadata.uid, None, "{m_obj:?}");
    assert_eq!(m_obj.metadata.creation_timestamp, None, "{m_obj:?}");
    let v = validated.of(&prefix);
    assert_eq!(v.len(), 1, "{v:?}");
    let (v_name, v_obj) = &v[0];
    assert_eq!(v_name, &name, "the validating webhook's request name");
    assert_eq!(v_obj.metadata.name.as_ref(), Some(&name));
    assert_eq!(v_obj.metadata.uid, created.metadata.uid);
    assert_eq!(
        v_obj.metadata.creation_timestamp,
        created.metadata.creation_timestamp
    );
    assert_eq!(
        v_obj
            .data
            .as_ref()
            .and_then(|d| d.get("mutated"))
            .map(String::as_str),
        Some("yes")
    );
    delete_mutating(&client, &mname).await;
    delete_validating(&client, &vname).await;
    served.stop().await;
}
