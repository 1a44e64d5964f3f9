//! kube-rs's CRD idiom, renamed only: the spec and status derive schemars'
//! `JsonSchema` (controller-rs's `Document`), `#[derive(CustomResource)]`
//! writes a structural schema from it, and the CRD is accepted and enforced
//! by the embedded API server.

use kubeset::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kubeset::dynamic::{ApiResource, DynamicObject};
use kubeset::params::PostParams;
use kubeset::rest::{RestClient, RestConfig};
use kubeset::{Api, Client, CustomResource, CustomResourceExt};
use kubeset_testserver::TestServer;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A document, as in kube-rs's controller-rs.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(kind = "Document", group = "kube.rs", version = "v1", namespaced)]
#[kube(status = "DocumentStatus", shortname = "doc")]
pub struct DocumentSpec {
    /// The title.
    pub title: String,
    /// Whether to hide it.
    pub hide: bool,
    /// The text.
    pub content: String,
    /// How to show it.
    pub mode: Option<Mode>,
    /// Labels of it.
    pub tags: Vec<String>,
}

/// How a document is shown.
#[derive(Deserialize, Serialize, Clone, Debug, JsonSchema)]
pub enum Mode {
    /// Quickly.
    Fast,
    /// Carefully.
    Slow,
}

/// The status object of `Document`.
#[derive(Deserialize, Serialize, Clone, Default, Debug, JsonSchema)]
pub struct DocumentStatus {
    /// Whether it is hidden.
    pub hidden: bool,
}

#[test]
fn the_schemars_schema_is_structural() {
    let crd = Document::crd();
    let version = &crd.spec.versions[0];
    let schema = version
        .schema
        .as_ref()
        .unwrap()
        .open_api_v3_schema
        .as_ref()
        .unwrap();
    let json = serde_json::to_value(schema).unwrap();
    let spec = &json["properties"]["spec"];
    assert_eq!(spec["type"], "object");
    assert_eq!(spec["properties"]["title"]["description"], "The title.");
    assert_eq!(spec["properties"]["hide"]["type"], "boolean");
    assert_eq!(spec["properties"]["tags"]["items"]["type"], "string");
    // An optional enum as kubeset's own `Option` writes it (the server
    // checks a node's `enum` even for null).
    assert_eq!(
        spec["properties"]["mode"]["anyOf"],
        serde_json::json!([{"enum": ["Fast", "Slow"]}, {"enum": [null]}]),
        "{spec}"
    );
    assert_eq!(spec["properties"]["mode"]["type"], "string");
    assert_eq!(spec["properties"]["mode"]["nullable"], true);
    let mut required: Vec<_> = spec["required"].as_array().unwrap().iter().collect();
    required.sort_by_key(|v| v.as_str().map(str::to_owned));
    assert_eq!(required, ["content", "hide", "tags", "title"]);
    assert_eq!(json["properties"]["status"]["nullable"], true);
    assert_eq!(
        json["properties"]["status"]["properties"]["hidden"]["type"],
        "boolean"
    );
    let text = json.to_string();
    for leftover in [
        "$schema",
        "$ref",
        "definitions",
        "\"title\":\"Document",
        "const",
    ] {
        assert!(!text.contains(leftover), "{leftover} in {text}");
    }
}

#[tokio::test]
async fn the_crd_is_accepted_and_enforced_by_the_embedded_server() {
    let server = TestServer::start().await.expect("test server starts");
    let rest = RestClient::new(RestConfig::new(server.url()).with_qps_burst(-1.0, 0)).unwrap();
    let client = Client::new(rest, "default");
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Document::crd())
        .await
        .expect("the CRD is structural and accepted");
    let docs: Api<Document> = Api::default_namespaced(client.clone());
    let spec = DocumentSpec {
        title: "t".into(),
        hide: false,
        content: "c".into(),
        mode: Some(Mode::Slow),
        tags: vec!["x".into()],
    };
    docs.create(&PostParams::default(), &Document::new("a", spec))
        .await
        .expect("a valid document");

    // What the schema refuses, sent as JSON: a mode outside the enum and a
    // missing required field.
    let res = ApiResource::of::<Document>();
    let raw: Api<DynamicObject> = Api::dynamic(client, &res, Some("default"));
    let bad = DynamicObject::new("b", &res).with(
        "spec",
        json!({"title": "t", "hide": false, "mode": "Sideways", "tags": []}),
    );
    let err = raw.create(&PostParams::default(), &bad).await.unwrap_err();
    let api = err.api_error().expect("the server's Status");
    assert_eq!(api.code, 422, "{err}");
    assert!(api.message.contains("spec.mode"), "{}", api.message);
    assert!(api.message.contains("spec.content"), "{}", api.message);
}
