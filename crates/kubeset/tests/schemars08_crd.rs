//! kube-rs 1's CRD idiom, renamed only: the spec derives schemars 0.8's
//! `JsonSchema` (kube-rs 1 and older depend on schemars 0.8; the echo
//! operator of issue #32 is one), and `#[derive(CustomResource)]` writes a
//! structural schema from it that the embedded API server accepts and
//! enforces.

use kubeset::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kubeset::dynamic::{ApiResource, DynamicObject};
use kubeset::params::PostParams;
use kubeset::rest::{RestClient, RestConfig};
use kubeset::{Api, Client, CustomResource, CustomResourceExt};
use kubeset_testserver::TestServer;
use schemars08::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// An echo server's desired shape.
#[derive(CustomResource, Serialize, Deserialize, Debug, PartialEq, Clone, JsonSchema)]
#[schemars(crate = "schemars08")]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Echo",
    plural = "echoes"
)]
#[kube(derive = "PartialEq", namespaced)]
pub struct EchoSpec {
    /// How many pods.
    pub replicas: i32,
    /// The image, when not the default.
    pub image: Option<String>,
    /// How it answers.
    pub mode: Option<Mode>,
    /// Where it listens.
    pub port: Option<Port>,
}

/// How an echo server answers.
#[derive(Serialize, Deserialize, Debug, PartialEq, Clone, JsonSchema)]
#[schemars(crate = "schemars08")]
pub enum Mode {
    /// With the request.
    Mirror,
    /// With nothing.
    Silent,
}

/// A port.
#[derive(Serialize, Deserialize, Debug, PartialEq, Clone, JsonSchema)]
#[schemars(crate = "schemars08")]
pub struct Port {
    /// Its number.
    pub number: i32,
}

#[test]
fn the_schemars08_schema_is_structural() {
    let crd = Echo::crd();
    assert_eq!(crd.metadata.name.as_deref(), Some("echoes.example.com"));
    let version = &crd.spec.versions[0];
    let schema = version.schema.as_ref().unwrap();
    let json = serde_json::to_value(schema.open_api_v3_schema.as_ref().unwrap()).unwrap();
    let spec = &json["properties"]["spec"];
    assert_eq!(spec["type"], "object", "{spec}");
    assert_eq!(spec["properties"]["replicas"]["type"], "integer");
    assert_eq!(spec["properties"]["replicas"]["format"], "int32");
    assert_eq!(
        spec["properties"]["replicas"]["description"],
        "How many pods."
    );
    assert_eq!(spec["properties"]["image"]["type"], "string");
    assert_eq!(spec["properties"]["image"]["nullable"], true);
    assert_eq!(spec["properties"]["port"]["type"], "object", "{spec}");
    assert_eq!(spec["properties"]["port"]["nullable"], true);
    assert_eq!(
        spec["properties"]["port"]["properties"]["number"]["type"],
        "integer"
    );
    assert_eq!(spec["properties"]["mode"]["type"], "string", "{spec}");
    assert_eq!(spec["required"], json!(["replicas"]));
    let text = json.to_string();
    for leftover in ["$schema", "$ref", "definitions", "\"title\":\"EchoSpec"] {
        assert!(!text.contains(leftover), "{leftover} in {text}");
    }
}

#[tokio::test]
async fn the_crd_is_accepted_and_enforced_by_the_embedded_server() {
    let server = TestServer::start().await.expect("test server starts");
    let rest = RestClient::new(RestConfig::new(server.url()).with_qps_burst(-1.0, 0)).unwrap();
    let client = Client::new(rest, "default");
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Echo::crd())
        .await
        .expect("the CRD is structural and accepted");
    let echoes: Api<Echo> = Api::default_namespaced(client.clone());
    let spec = EchoSpec {
        replicas: 2,
        image: None,
        mode: Some(Mode::Silent),
        port: Some(Port { number: 8080 }),
    };
    let created = echoes
        .create(&PostParams::default(), &Echo::new("a", spec.clone()))
        .await
        .expect("a valid echo");
    assert_eq!(created.spec, spec);

    // What the schema refuses, sent as JSON: a mode outside the enum, a
    // string for the port's number and no replicas.
    let res = ApiResource::of::<Echo>();
    let raw: Api<DynamicObject> = Api::dynamic(client, &res, Some("default"));
    let bad = DynamicObject::new("b", &res)
        .with("spec", json!({"mode": "Loud", "port": {"number": "x"}}));
    let err = raw.create(&PostParams::default(), &bad).await.unwrap_err();
    let api = err.api_error().expect("the server's Status");
    assert_eq!(api.code, 422, "{err}");
    for field in ["spec.mode", "spec.port.number", "spec.replicas"] {
        assert!(api.message.contains(field), "{field}: {}", api.message);
    }
}
