//! An operator with webhooks: a `Person` kind in two versions (v1
//! `spec.name`, the hub and storage version; v2 `spec.first`/`spec.last`),
//! a conversion webhook and a validating webhook on one HTTPS server, both
//! self-registered with a CA of its own (`caBundle` patched into the CRD's
//! conversion and into the `ValidatingWebhookConfiguration`), and a
//! controller that keeps a greeting ConfigMap for every person.
//!
//! ```text
//! cargo run -p kubeset --features webhook,runtime --example webhook_operator -- NAMESPACE          # until Ctrl-C
//! cargo run -p kubeset --features webhook,runtime --example webhook_operator -- NAMESPACE --check  # one pass, then exit
//! ```
//!
//! `--check` writes a person at v2 and reads it at v1, waits for its
//! greeting, and has one invalid person denied. The API server must reach
//! `https://127.0.0.1:<port>` (a local kube-apiserver such as the test
//! suite's realkube). The CRD and the configuration are deleted on the
//! way out.

use std::sync::Arc;
use std::time::Duration;

use kubeset::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use kubeset::api::core::v1::ConfigMap;
use kubeset::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, WebhookClientConfig,
};
use kubeset::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kubeset::core::admission::AdmissionRequest;
use kubeset::crd::with_conversion_webhook;
use kubeset::params::{DeleteParams, PostParams};
use kubeset::runtime::webhook::{
    CertFiles, Conversion, Denied, SelfSignedCa, Webhook, set_ca_bundle, set_conversion_ca_bundle,
};
use kubeset::runtime::{Action, Controller, WatcherConfig};
use kubeset::{Api, Client, CustomResourceExt, Resource, merge_crds};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The two versions of `Person`.
mod people {
    use kubeset::{CustomResource, JsonSchema};
    use serde::{Deserialize, Serialize};

    pub mod v1 {
        use super::*;
        /// A person with one name (the hub, stored).
        #[derive(CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
        #[kube(
            group = "operator.kubeset.dev",
            version = "v1",
            kind = "Person",
            namespaced
        )]
        pub struct PersonSpec {
            pub name: String,
        }
    }

    pub mod v2 {
        use super::*;
        /// A person with a first and a last name.
        #[derive(CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
        #[kube(
            group = "operator.kubeset.dev",
            version = "v2",
            kind = "Person",
            namespaced
        )]
        pub struct PersonSpec {
            pub first: String,
            pub last: String,
        }
    }

    impl From<v1::Person> for v2::Person {
        fn from(p: v1::Person) -> Self {
            let (first, last) = p.spec.name.split_once(' ').unwrap_or((&p.spec.name, ""));
            let spec = v2::PersonSpec {
                first: first.to_owned(),
                last: last.to_owned(),
            };
            v2::Person {
                metadata: p.metadata,
                spec,
            }
        }
    }

    impl From<v2::Person> for v1::Person {
        fn from(p: v2::Person) -> Self {
            let name = format!("{} {}", p.spec.first, p.spec.last)
                .trim()
                .to_owned();
            v1::Person {
                metadata: p.metadata,
                spec: v1::PersonSpec { name },
            }
        }
    }
}

use people::{v1, v2};

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
enum ReconcileError {
    #[error("the person has no name or namespace")]
    Unnamed,
    #[error("writing the greeting ConfigMap {name}")]
    Write {
        name: String,
        #[source]
        source: kubeset::Error,
    },
}

/// Keeps `<person>-greeting` with `Hello, <name>!`, owned by the person.
async fn reconcile(person: Arc<v1::Person>, client: Arc<Client>) -> Result<Action, ReconcileError> {
    let meta = &person.metadata;
    let (Some(name), Some(ns)) = (meta.name.as_deref(), meta.namespace.as_deref()) else {
        return Err(ReconcileError::Unnamed);
    };
    let cm_name = format!("{name}-greeting");
    let want = ConfigMap {
        metadata: ObjectMeta {
            name: Some(cm_name.clone()),
            owner_references: Some(vec![OwnerReference {
                api_version: v1::Person::API_VERSION.to_owned(),
                kind: v1::Person::KIND.to_owned(),
                name: name.to_owned(),
                uid: meta.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: None,
            }]),
            ..ObjectMeta::default()
        },
        data: Some(
            [(
                "greeting".to_owned(),
                format!("Hello, {}!", person.spec.name),
            )]
            .into(),
        ),
        ..ConfigMap::default()
    };
    let cms: Api<ConfigMap> = Api::namespaced((*client).clone(), ns);
    let write = |source| ReconcileError::Write {
        name: cm_name.clone(),
        source,
    };
    match cms.get_opt(&cm_name).await.map_err(write)? {
        None => {
            cms.create(&PostParams::default(), &want)
                .await
                .map_err(write)?;
            println!("reconciled {ns}/{name}: created {cm_name}");
        }
        Some(have) if have.data != want.data => {
            let mut fixed = want;
            fixed.metadata.resource_version = have.metadata.resource_version;
            cms.replace(&cm_name, &PostParams::default(), &fixed)
                .await
                .map_err(write)?;
            println!("reconciled {ns}/{name}: updated {cm_name}");
        }
        Some(_) => {}
    }
    Ok(Action::requeue(Duration::from_secs(300)))
}

/// Names must be letters and spaces.
async fn validate(req: AdmissionRequest<v1::Person>) -> Result<Vec<String>, Denied> {
    let name = req.object.map(|p| p.spec.name).unwrap_or_default();
    if name.trim().is_empty() || !name.chars().all(|c| c.is_alphabetic() || c == ' ') {
        return Err(Denied::new(format!(
            "a person's name is letters and spaces, not {name:?}"
        )));
    }
    Ok(vec![])
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let mut args = std::env::args().skip(1);
    let namespace = args
        .next()
        .ok_or("usage: webhook_operator NAMESPACE [--check]")?;
    let check = args.next().as_deref() == Some("--check");
    let client = Client::try_default().await?;

    // One server, two webhooks, a certificate from our own CA.
    let dir = std::env::temp_dir().join(format!("kubeset-operator-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let (cert, key) = (dir.join("tls.crt"), dir.join("tls.key"));
    let ca = SelfSignedCa::generate("webhook-operator-example-ca")?;
    ca.issue(&["127.0.0.1"])?.write(&cert, &key)?;
    let server = Webhook::new()
        .convert(
            "/convert",
            Conversion::<v1::Person>::new().spoke::<v2::Person>(),
        )
        .validate::<v1::Person, _>("/validate", validate)
        .bind("127.0.0.1:0", CertFiles::new(&cert, &key))
        .await?;
    let base = format!("https://{}", server.local_addr());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.run(async move {
        let _ = stopped.await;
    }));

    // Self-registration: the CRD converting through us, the validating
    // configuration, then the CA into both.
    let crd = with_conversion_webhook(
        merge_crds(vec![v1::Person::crd(), v2::Person::crd()], "v1")?,
        WebhookClientConfig {
            url: Some(format!("{base}/convert")),
            ..WebhookClientConfig::default()
        },
    );
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &crd).await?;
    set_conversion_ca_bundle(&client, v1::Person::crd_name(), ca.cert_pem()).await?;
    let config_name = format!("webhook-operator-example-{namespace}");
    let configs: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let config: ValidatingWebhookConfiguration = serde_json::from_value(serde_json::json!({
        "metadata": {"name": config_name},
        "webhooks": [{
            "name": "people.operator.kubeset.dev",
            "clientConfig": {"url": format!("{base}/validate")},
            "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["operator.kubeset.dev"],
                       "apiVersions": ["v1"], "resources": ["persons"]}],
            "matchPolicy": "Equivalent",
            "failurePolicy": "Fail",
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
        }]
    }))?;
    configs.create(&PostParams::default(), &config).await?;
    set_ca_bundle::<ValidatingWebhookConfiguration>(&client, &config_name, ca.cert_pem()).await?;
    println!(
        "serving {base}/convert and {base}/validate; registered {} and {config_name}",
        v1::Person::crd_name()
    );

    // The controller, on the hub version.
    let people: Api<v1::Person> = Api::namespaced(client.clone(), &namespace);
    let (halt, halted) = tokio::sync::oneshot::channel::<()>();
    let controller = Controller::new(people.clone(), WatcherConfig::default())
        .owns(
            Api::<ConfigMap>::namespaced(client.clone(), &namespace),
            WatcherConfig::default(),
        )
        .graceful_shutdown_on(async move {
            let _ = halted.await;
        });
    let running = tokio::spawn(controller.run_until_shutdown(reconcile, Arc::new(client.clone())));

    let outcome = if check {
        one_pass(&client, &namespace).await
    } else {
        tokio::signal::ctrl_c().await.map_err(BoxError::from)
    };
    let _ = halt.send(());
    running.await?;
    configs
        .delete(&config_name, &DeleteParams::default())
        .await?;
    crds.delete(v1::Person::crd_name(), &DeleteParams::default())
        .await?;
    let _ = stop.send(());
    serving.await?;
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

/// A person written at v2 and read at v1, its greeting, one denial.
async fn one_pass(client: &Client, namespace: &str) -> Result<(), BoxError> {
    let at_v1: Api<v1::Person> = Api::namespaced(client.clone(), namespace);
    let at_v2: Api<v2::Person> = Api::namespaced(client.clone(), namespace);
    let ada = v2::Person::new(
        "ada",
        v2::PersonSpec {
            first: "Ada".into(),
            last: "Lovelace".into(),
        },
    );
    // The API server takes a moment to serve the kind and trust our CA.
    let post = PostParams::default();
    let created = retry("a create at v2", || at_v2.create(&post, &ada)).await?;
    println!(
        "created {namespace}/ada at v2: first={:?} last={:?}",
        created.spec.first, created.spec.last
    );
    let stored = at_v1.get("ada").await?;
    println!("read {namespace}/ada at v1: name={:?}", stored.spec.name);

    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let greeting = retry("the greeting", || async {
        let cm = cms.get("ada-greeting").await.map_err(|e| e.to_string())?;
        cm.data
            .and_then(|d| d.get("greeting").cloned())
            .ok_or_else(|| "no greeting yet".to_owned())
    })
    .await?;
    println!("greeting ConfigMap {namespace}/ada-greeting: {greeting:?}");

    let robot = v2::Person::new(
        "r2d2",
        v2::PersonSpec {
            first: "R2".into(),
            last: "D2".into(),
        },
    );
    match at_v2.create(&PostParams::default(), &robot).await {
        Err(e) => println!("denied as expected: {e}"),
        Ok(_) => return Err("the validating webhook admitted r2d2".into()),
    }
    at_v1.delete("ada", &DeleteParams::default()).await?;
    Ok(())
}

/// `op` until it succeeds, 200 times at most, 100 ms apart.
async fn retry<T, E, F, Fut>(what: &str, mut op: F) -> Result<T, BoxError>
where
    E: std::fmt::Debug,
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    let mut last = None;
    for _ in 0..200 {
        match op().await {
            Ok(v) => return Ok(v),
            Err(e) => last = Some(e),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!("{what}: {last:?}").into())
}
