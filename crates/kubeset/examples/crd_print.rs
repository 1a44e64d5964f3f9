//! `crd print`: a custom resource declared as a Rust type, its
//! CustomResourceDefinition printed as YAML (or JSON with `--json`) from the
//! binary itself, ready for `kubectl apply -f -`.
//!
//! ```text
//! cargo run -p kubeset --example crd_print | kubectl apply -f -
//! ```
//!
//! An operator installs the same CRD at start-up with
//! `Api::<CustomResourceDefinition>::cluster(client).create(.., &Backup::crd())`
//! and waits for it with
//! `kubeset::runtime::wait::await_condition(crds, Backup::crd_name(), conditions::is_crd_established())`.

use std::collections::BTreeMap;

use kubeset::apimachinery::pkg::apis::meta::v1::Condition;
use kubeset::{CustomResource, CustomResourceExt, JsonSchema};
use serde::{Deserialize, Serialize};

/// A scheduled backup of a database.
#[derive(CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(group = "example.com", version = "v1", kind = "Backup", namespaced)]
#[kube(status = "BackupStatus", shortname = "bk", category = "all")]
#[kube(printcolumn = r#"{"name":"Schedule","type":"string","jsonPath":".spec.schedule"}"#)]
#[kube(printcolumn(name = "Last", type_ = "date", json_path = ".status.lastSuccess"))]
#[kube(selectable = ".spec.database")]
#[serde(rename_all = "camelCase")]
struct BackupSpec {
    /// Name of the database to back up.
    #[schema(min_length = 1)]
    database: String,
    /// Cron schedule.
    #[schema(pattern = r"^(\S+\s+){4}\S+$")]
    schedule: String,
    /// How many backups to keep.
    #[schema(minimum = 1, maximum = 100)]
    #[serde(default = "default_keep")]
    keep: u32,
    /// Where backups go.
    target: Target,
    /// Extra labels for the backup objects.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    labels: BTreeMap<String, String>,
}

fn default_keep() -> u32 {
    7
}

/// Storage target, internally tagged by `type`.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Target {
    /// An S3 bucket.
    S3 { bucket: String, region: String },
    /// A volume claim.
    Volume {
        #[serde(rename = "claimName")]
        claim_name: String,
    },
}

/// Observed state.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
struct BackupStatus {
    /// When the last backup succeeded.
    #[serde(skip_serializing_if = "Option::is_none")]
    last_success: Option<kubeset::apimachinery::pkg::apis::meta::v1::Time>,
    /// Conditions, by type.
    #[serde(default)]
    #[schema(list_type = "map", map_keys = ["type"])]
    conditions: Vec<Condition>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let crd = Backup::crd();
    if std::env::args().any(|a| a == "--json") {
        println!("{}", serde_json::to_string_pretty(&crd)?);
    } else {
        print!("{}", serde_norway::to_string(&crd)?);
    }
    Ok(())
}
