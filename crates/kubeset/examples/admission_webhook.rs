//! A validating admission webhook that registers itself: a CA of its own,
//! a serving certificate written to files (and reloaded when they
//! change), a `ValidatingWebhookConfiguration` for ConfigMap creates in one
//! namespace with `caBundle` set by the program.
//!
//! ```text
//! cargo run -p kubeset --features webhook --example admission_webhook -- NAMESPACE          # until Ctrl-C
//! cargo run -p kubeset --features webhook --example admission_webhook -- NAMESPACE --check  # one denied create, then exit
//! ```
//!
//! The API server must reach the webhook at `https://127.0.0.1:<port>`
//! (a local kube-apiserver such as the test suite's realkube). The
//! configuration is deleted on the way out.

use kubeset::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use kubeset::api::core::v1::ConfigMap;
use kubeset::core::admission::{AdmissionRequest, Operation};
use kubeset::params::{DeleteParams, PostParams};
use kubeset::runtime::webhook::{CertFiles, Denied, SelfSignedCa, Webhook, set_ca_bundle};
use kubeset::{Api, Client};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let mut args = std::env::args().skip(1);
    let namespace = args
        .next()
        .ok_or("usage: admission_webhook NAMESPACE [--check]")?;
    let check = args.next().as_deref() == Some("--check");
    let client = Client::try_default().await?;

    // Certificates: a CA, and a leaf for 127.0.0.1 in files the server watches.
    let dir = std::env::temp_dir().join(format!("kubeset-webhook-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let (cert, key) = (dir.join("tls.crt"), dir.join("tls.key"));
    let ca = SelfSignedCa::generate("admission-webhook-example-ca")?;
    ca.issue(&["127.0.0.1"])?.write(&cert, &key)?;

    let server = Webhook::new()
        .validate_for::<ConfigMap, _>(
            "/validate",
            &[Operation::Create],
            |req: AdmissionRequest<ConfigMap>| async move {
                let data = req.object.and_then(|cm| cm.data).unwrap_or_default();
                if data.keys().any(|k| k.contains("password")) {
                    return Err(Denied::new(
                        "ConfigMaps must not hold passwords; use a Secret",
                    ));
                }
                Ok(vec![])
            },
        )
        .bind("127.0.0.1:0", CertFiles::new(&cert, &key))
        .await?;
    let url = format!("https://{}/validate", server.local_addr());
    let stop = tokio_util_free::Stop::new();
    let serving = tokio::spawn(server.run(stop.wait()));

    // Registration: the configuration, then its caBundle (self-registration).
    let name = format!("admission-webhook-example-{namespace}");
    let configs: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let config: ValidatingWebhookConfiguration = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
        "webhooks": [{
            "name": "no-passwords.example.com",
            "clientConfig": {"url": url},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
            "failurePolicy": "Fail",
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
        }]
    }))?;
    configs.create(&PostParams::default(), &config).await?;
    set_ca_bundle::<ValidatingWebhookConfiguration>(&client, &name, ca.cert_pem()).await?;
    println!("serving {url}; registered {name} for ConfigMap creates in {namespace}");

    let outcome = if check {
        denied_create(&client, &namespace).await
    } else {
        tokio::signal::ctrl_c().await.map_err(BoxError::from)
    };
    configs.delete(&name, &DeleteParams::default()).await?;
    stop.now();
    serving.await?;
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

/// Creates ConfigMaps with a password until the webhook is seen to deny one
/// (the API server picks up a new configuration after a moment).
async fn denied_create(client: &Client, namespace: &str) -> Result<(), BoxError> {
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    for attempt in 0..100 {
        let cm: ConfigMap = serde_json::from_value(serde_json::json!({
            "metadata": {"name": format!("example-{attempt}-{}", std::process::id())},
            "data": {"db-password": "hunter2"}
        }))?;
        match cms.create(&PostParams::default(), &cm).await {
            Err(e)
                if e.api_error()
                    .is_some_and(|a| a.message.contains("use a Secret")) =>
            {
                println!("denied as expected: {e}");
                return Ok(());
            }
            Ok(_) => {
                let _ = cms
                    .delete(
                        &format!("example-{attempt}-{}", std::process::id()),
                        &DeleteParams::default(),
                    )
                    .await;
            }
            Err(_) => {}
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    Err("the webhook never denied a create".into())
}

/// A one-shot stop signal (the example needs no tokio-util).
mod tokio_util_free {
    use std::sync::Arc;
    use tokio::sync::Notify;

    pub struct Stop(Arc<Notify>);

    impl Stop {
        pub fn new() -> Self {
            Stop(Arc::new(Notify::new()))
        }
        pub fn wait(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
            let notify = self.0.clone();
            async move { notify.notified().await }
        }
        pub fn now(&self) {
            self.0.notify_one();
        }
    }
}
