//! `#[derive(CustomResource)]` with the `#[kube(...)]` keys kube 5 has
//! (all but `no_spec` and `crates`, which kubeset lacks or spells
//! otherwise: README; `validation` is cel.rs's), the
//! CRD installed and awaited with `await_condition`, objects and their
//! status subresource (kube-rs's generic `Api::get_scale` is not
//! in kubeset for custom kinds: README).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use kube::{CustomResource, CustomResourceExt, Resource, ResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::support::{BoxError, server, within};

/// A database of the porting check.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "porting.example.com",
    version = "v1",
    kind = "Database",
    namespaced,
    status = "DatabaseStatus",
    derive = "PartialEq",
    attr = "allow(deprecated)",
    plural = "databases",
    singular = "database",
    shortname = "db",
    category = "porting",
    selectable = ".spec.engine",
    printcolumn(name = "Engine", type_ = "string", json_path = ".spec.engine"),
    printcolumn = r#"{"name":"Replicas", "type":"integer", "jsonPath":".spec.replicas"}"#,
    scale(
        spec_replicas_path = ".spec.replicas",
        status_replicas_path = ".status.replicas"
    ),
    label("porting.example.com/owner", "porting"),
    annotation("porting.example.com/doc", "the porting check"),
    doc = "A database, as the porting check declares it",
    served = true,
    storage = true,
    schema = "derived"
)]
#[serde(rename_all = "camelCase")]
pub struct DatabaseSpec {
    /// The engine (`postgres`, `mysql`).
    pub engine: String,
    /// How many instances.
    pub replicas: i32,
}

/// What the operator saw.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct DatabaseStatus {
    /// Running instances.
    pub replicas: i32,
    /// Whether every instance is up.
    pub ready: bool,
}

/// A cluster-scoped kind whose root struct is named apart from its kind,
/// deprecated in favour of another version.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "porting.example.com",
    version = "v1beta1",
    kind = "Backend",
    root = "BackendResource",
    deprecated = "use v1",
    served = true,
    storage = true
)]
pub struct BackendSpec {
    /// Where it listens.
    pub address: String,
}

#[test]
fn the_generated_crd_carries_every_key() -> Result<(), BoxError> {
    let crd = Database::crd();
    assert_eq!(crd.name_any(), "databases.porting.example.com");
    assert_eq!(crd.spec.scope, "Namespaced");
    assert_eq!(
        crd.spec.names.short_names.as_deref(),
        Some(&["db".to_owned()][..])
    );
    assert_eq!(
        crd.spec.names.categories.as_deref(),
        Some(&["porting".to_owned()][..])
    );
    assert_eq!(crd.spec.names.singular.as_deref(), Some("database"));
    assert_eq!(crd.labels()["porting.example.com/owner"], "porting");
    assert_eq!(
        crd.annotations()["porting.example.com/doc"],
        "the porting check"
    );
    let version = &crd.spec.versions[0];
    assert!(version.served && version.storage);
    let columns: Vec<&str> = version
        .additional_printer_columns
        .iter()
        .flatten()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(columns, ["Engine", "Replicas"]);
    let subresources = version.subresources.as_ref().ok_or("no subresources")?;
    assert!(subresources.status.is_some());
    let scale = subresources.scale.as_ref().ok_or("no scale")?;
    assert_eq!(scale.spec_replicas_path, ".spec.replicas");
    let fields: Vec<&str> = version
        .selectable_fields
        .iter()
        .flatten()
        .map(|f| f.json_path.as_str())
        .collect();
    assert_eq!(fields, [".spec.engine"]);
    assert_eq!(Database::kind(&()), "Database");
    assert_eq!(Database::plural(&()), "databases");
    assert_eq!(Database::api_version(&()), "porting.example.com/v1");

    let backend = BackendResource::crd();
    assert_eq!(backend.spec.scope, "Cluster");
    assert_eq!(backend.spec.versions[0].deprecated, Some(true));
    assert_eq!(
        backend.spec.versions[0].deprecation_warning.as_deref(),
        Some("use v1")
    );
    // derive = "PartialEq" on the root.
    let db = Database::new("d", DatabaseSpec::default_for_test());
    assert_eq!(db, Database::new("d", DatabaseSpec::default_for_test()));
    Ok(())
}

impl DatabaseSpec {
    fn default_for_test() -> Self {
        DatabaseSpec {
            engine: "postgres".to_owned(),
            replicas: 1,
        }
    }
}

#[tokio::test]
async fn install_await_established_and_patch_the_status() -> Result<(), BoxError> {
    let (_server, client) = server().await?;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Database::crd())
        .await?;
    let established = await_condition(
        crds,
        "databases.porting.example.com",
        conditions::is_crd_established(),
    );
    within("the CRD's Established condition", established).await??;

    let dbs: Api<Database> = Api::namespaced(client, "default");
    let db = Database::new("orders", DatabaseSpec::default_for_test());
    dbs.create(&PostParams::default(), &db).await?;

    let status = json!({"status": DatabaseStatus { replicas: 1, ready: true }});
    let patched = dbs
        .patch_status("orders", &PatchParams::default(), &Patch::Merge(&status))
        .await?;
    assert_eq!(
        patched.status,
        Some(DatabaseStatus {
            replicas: 1,
            ready: true
        })
    );

    Ok(())
}
