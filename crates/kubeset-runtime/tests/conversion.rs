//! Conversion webhooks: the hub-and-spoke table converting typed versions
//! (`Conversion::convert`, no I/O), the same through the server over a
//! real TLS socket (bounds and malformed reviews included), and the CRD's
//! conversion `caBundle` registered against the embedded API server.

mod common;

use std::path::PathBuf;
use std::sync::Arc;

use kubeset_client::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, WebhookClientConfig,
};
use kubeset_client::conversion::ConversionRequest;
use kubeset_client::crd::with_conversion_webhook;
use kubeset_client::params::PostParams;
use kubeset_client::{Api, CustomResource, CustomResourceExt, JsonSchema, merge_crds};
use kubeset_runtime::webhook::{
    CertFiles, Conversion, ConversionError, SelfSignedCa, Webhook, WebhookError,
    set_conversion_ca_bundle,
};
use rustls::pki_types::ServerName;
use rustls::pki_types::pem::PemObject as _;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

/// v1, the hub: one name.
mod v1 {
    use super::*;
    /// A person with one name.
    #[derive(CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
    #[kube(crates(kubeset = "kubeset_client"))]
    #[schema(crate = "kubeset_client")]
    #[kube(
        group = "conv.kubeset.dev",
        version = "v1",
        kind = "Person",
        namespaced
    )]
    pub struct PersonSpec {
        pub name: String,
    }
}

/// v2: first and last names.
mod v2 {
    use super::*;
    /// A person with a first and a last name.
    #[derive(CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
    #[kube(crates(kubeset = "kubeset_client"))]
    #[schema(crate = "kubeset_client")]
    #[kube(
        group = "conv.kubeset.dev",
        version = "v2",
        kind = "Person",
        namespaced
    )]
    pub struct PersonSpec {
        pub first: String,
        pub last: String,
    }
}

/// v3: a conversion that breaks the metadata rule when asked to.
mod v3 {
    use super::*;
    /// A person whose conversion may rename it.
    #[derive(CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
    #[kube(crates(kubeset = "kubeset_client"))]
    #[schema(crate = "kubeset_client")]
    #[kube(
        group = "conv.kubeset.dev",
        version = "v3",
        kind = "Person",
        namespaced
    )]
    pub struct PersonSpec {
        pub full_name: String,
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

impl TryFrom<v2::Person> for v1::Person {
    type Error = String;
    fn try_from(p: v2::Person) -> Result<Self, String> {
        if p.spec.first.is_empty() {
            return Err("spec.first must not be empty".to_owned());
        }
        let name = format!("{} {}", p.spec.first, p.spec.last)
            .trim()
            .to_owned();
        Ok(v1::Person {
            metadata: p.metadata,
            spec: v1::PersonSpec { name },
        })
    }
}

impl From<v1::Person> for v3::Person {
    fn from(mut p: v1::Person) -> Self {
        // Labels may change; a name may not.
        p.metadata
            .labels
            .get_or_insert_default()
            .insert("converted".to_owned(), "v3".to_owned());
        if p.spec.name == "rename me" {
            p.metadata.name = Some("renamed".to_owned());
        }
        if p.spec.name == "slow" {
            // A conversion past the server's deadline (not synchronisation).
            std::thread::sleep(std::time::Duration::from_secs(2));
        }
        v3::Person {
            metadata: p.metadata,
            spec: v3::PersonSpec {
                full_name: p.spec.name,
            },
        }
    }
}

impl From<v3::Person> for v1::Person {
    fn from(p: v3::Person) -> Self {
        v1::Person {
            metadata: p.metadata,
            spec: v1::PersonSpec {
                name: p.spec.full_name,
            },
        }
    }
}

fn table() -> Conversion<v1::Person> {
    Conversion::<v1::Person>::new()
        .spoke::<v2::Person>()
        .spoke::<v3::Person>()
}

fn person(version: &str, name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": format!("conv.kubeset.dev/{version}"),
        "kind": "Person",
        "metadata": {
            "name": name, "namespace": "ns", "uid": format!("uid-{name}"),
            "resourceVersion": "7", "generation": 2,
            "creationTimestamp": "2026-01-02T03:04:05Z",
            "labels": {"team": "a"},
            "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": format!("conv.kubeset.dev/{version}"),
                               "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}, "time": "2026-01-02T03:04:05Z"}]
        },
        "spec": spec
    })
}

fn request(desired: &str, objects: Vec<Value>) -> ConversionRequest {
    serde_json::from_value(json!({"uid": "uid-1", "desiredAPIVersion": format!("conv.kubeset.dev/{desired}"), "objects": objects}))
        .expect("request")
}

fn failure(table: &Conversion<v1::Person>, req: ConversionRequest) -> String {
    let response = table.convert(req);
    assert_eq!(response.result.status.as_deref(), Some("Failure"));
    assert!(response.converted_objects.is_empty());
    response.result.message.expect("a message")
}

#[test]
fn spokes_convert_through_the_hub_both_ways_keeping_metadata() {
    let table = table();
    assert_eq!(
        table.api_versions(),
        [
            "conv.kubeset.dev/v1",
            "conv.kubeset.dev/v2",
            "conv.kubeset.dev/v3"
        ]
    );
    let at_v1 = person("v1", "ada", json!({"name": "Ada Lovelace"}));
    let at_v2 = person("v2", "alan", json!({"first": "Alan", "last": "Turing"}));
    let at_v3 = person("v3", "grace", json!({"full_name": "Grace Hopper"}));

    // v1 (hub) → v2, v2 → v2 as it came, v3 → hub → v2: one review.
    let response = table.convert(request(
        "v2",
        vec![at_v1.clone(), at_v2.clone(), at_v3.clone()],
    ));
    assert_eq!(response.uid, "uid-1");
    assert_eq!(response.result.status.as_deref(), Some("Success"));
    let out = &response.converted_objects;
    assert_eq!(out.len(), 3);
    assert_eq!(out[0]["apiVersion"], "conv.kubeset.dev/v2");
    assert_eq!(out[0]["spec"], json!({"first": "Ada", "last": "Lovelace"}));
    // The request's metadata exactly (managedFields, timestamps, uid).
    assert_eq!(out[0]["metadata"], at_v1["metadata"]);
    assert_eq!(out[1], at_v2);
    assert_eq!(out[2]["spec"], json!({"first": "Grace", "last": "Hopper"}));

    // And back: v2 → v1 equals what was written at v1, byte for byte.
    let back = table.convert(request("v1", vec![out[0].clone()]));
    assert_eq!(back.converted_objects, std::slice::from_ref(&at_v1));

    // Labels may change on the way (v1 → v3 adds one).
    let to_v3 = table.convert(request("v3", vec![at_v1]));
    assert_eq!(
        to_v3.converted_objects[0]["metadata"]["labels"],
        json!({"team": "a", "converted": "v3"})
    );
    assert_eq!(to_v3.converted_objects[0]["metadata"]["uid"], "uid-ada");
}

#[test]
fn failures_name_the_object_the_version_and_the_path() {
    let table = table();
    let good = person("v1", "ada", json!({"name": "Ada Lovelace"}));

    let message = failure(&table, request("v9", vec![good.clone()]));
    assert_eq!(
        message,
        "desiredAPIVersion: apiVersion conv.kubeset.dev/v9 is not one this webhook converts \
         (it knows conv.kubeset.dev/v1, conv.kubeset.dev/v2, conv.kubeset.dev/v3)"
    );

    let unknown = person("v7", "x", json!({}));
    let message = failure(&table, request("v2", vec![good.clone(), unknown]));
    assert!(
        message.starts_with("object 1 (ns/x): apiVersion conv.kubeset.dev/v7 is not one"),
        "{message}"
    );

    let mut other_kind = good.clone();
    other_kind["kind"] = json!("Robot");
    let message = failure(&table, request("v2", vec![other_kind]));
    assert_eq!(message, "object 0 (ns/ada): kind \"Robot\" is not Person");

    let bad_field = person("v1", "bad", json!({"name": 42}));
    let message = failure(&table, request("v2", vec![good.clone(), bad_field]));
    assert!(
        message.starts_with(
            "object 1 (ns/bad): does not decode as conv.kubeset.dev/v1 at spec.name: invalid type: integer `42`"
        ),
        "{message}"
    );

    let refused = person("v2", "nobody", json!({"first": "", "last": "X"}));
    let message = failure(&table, request("v1", vec![refused]));
    assert_eq!(
        message,
        "object 0 (ns/nobody): converting conv.kubeset.dev/v2 to conv.kubeset.dev/v1: spec.first must not be empty"
    );

    let renaming = person("v1", "r", json!({"name": "rename me"}));
    let message = failure(&table, request("v3", vec![renaming]));
    assert_eq!(
        message,
        "object 0 (ns/r): the conversion changed metadata.name (only labels and annotations may change)"
    );
}

#[test]
fn a_version_twice_is_a_table_error() {
    let twice = table().spoke::<v2::Person>();
    let err = twice.check().unwrap_err();
    assert_eq!(
        err,
        ConversionError::Misconfigured {
            reason: "conv.kubeset.dev/v2 is registered twice".to_owned()
        }
    );
    let message = failure(
        &twice,
        request("v2", vec![person("v1", "a", json!({"name": "A"}))]),
    );
    assert_eq!(message, err.to_string());
}

struct Certs {
    _dir: tempfile::TempDir,
    cert: PathBuf,
    key: PathBuf,
    ca: SelfSignedCa,
}

fn certs() -> Certs {
    let dir = tempfile::tempdir().expect("temp dir");
    let ca = SelfSignedCa::generate("conversion-test-ca").expect("CA");
    let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    ca.issue(&["127.0.0.1"])
        .expect("leaf")
        .write(&cert, &key)
        .expect("written");
    Certs {
        _dir: dir,
        cert,
        key,
        ca,
    }
}

/// One request on its own TLS connection (`Connection: close`): status and body.
async fn send(addr: std::net::SocketAddr, ca_pem: &str, head: &str, body: &[u8]) -> (u16, Vec<u8>) {
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.expect("CA PEM")).expect("CA added");
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    let tcp = TcpStream::connect(addr).await.expect("connect");
    let mut tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("127.0.0.1").expect("name"), tcp)
        .await
        .expect("handshake");
    let request = format!(
        "{head} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    tls.write_all(request.as_bytes()).await.expect("write");
    let _ = tls.write_all(body).await;
    let mut answer = Vec::new();
    let _ = tls.read_to_end(&mut answer).await;
    let at = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a response head");
    let status = String::from_utf8_lossy(&answer[9..12])
        .parse()
        .expect("status");
    (status, answer[at + 4..].to_vec())
}

#[tokio::test]
async fn the_server_answers_conversion_reviews_within_its_bounds() {
    let certs = certs();
    let server = Webhook::new()
        .max_body_size(64 * 1024)
        .convert("/convert", table())
        .bind("127.0.0.1:0", CertFiles::new(&certs.cert, &certs.key))
        .await
        .expect("binds");
    let addr = server.local_addr();
    let stop = CancellationToken::new();
    let task = tokio::spawn(server.run(stop.clone().cancelled_owned()));
    let ca = certs.ca.cert_pem();

    let objects: Vec<Value> = (0..50)
        .map(|i| {
            person(
                "v1",
                &format!("p{i}"),
                json!({"name": format!("Person {i}")}),
            )
        })
        .collect();
    let review = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": "u-50", "desiredAPIVersion": "conv.kubeset.dev/v2", "objects": objects}});
    let (status, body) = send(
        addr,
        ca,
        "POST /convert",
        &serde_json::to_vec(&review).expect("JSON"),
    )
    .await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let answer: Value = serde_json::from_slice(&body).expect("JSON answer");
    assert_eq!(answer["apiVersion"], "apiextensions.k8s.io/v1");
    assert_eq!(answer["kind"], "ConversionReview");
    assert_eq!(answer["response"]["uid"], "u-50");
    assert_eq!(answer["response"]["result"]["status"], "Success");
    let converted = answer["response"]["convertedObjects"]
        .as_array()
        .expect("objects");
    assert_eq!(converted.len(), 50);
    for (i, object) in converted.iter().enumerate() {
        assert_eq!(object["metadata"]["name"], format!("p{i}"));
        assert_eq!(
            object["spec"],
            json!({"first": "Person", "last": i.to_string()})
        );
    }

    // A failed conversion is a 200 with a failed result (the API server reads it).
    let failing = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": "u-f", "desiredAPIVersion": "conv.kubeset.dev/v1",
                    "objects": [person("v2", "n", json!({"first": "", "last": "X"}))]}});
    let (status, body) = send(
        addr,
        ca,
        "POST /convert",
        &serde_json::to_vec(&failing).expect("JSON"),
    )
    .await;
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_slice(&body).expect("JSON answer");
    assert_eq!(answer["response"]["uid"], "u-f");
    assert_eq!(answer["response"]["result"]["status"], "Failure");
    assert!(
        answer["response"]["result"]["message"]
            .as_str()
            .expect("message")
            .ends_with("spec.first must not be empty"),
        "{answer}"
    );

    // Malformed: the path named; no request; too large; not POST.
    let (status, body) = send(addr, ca, "POST /convert", br#"{"request": {"uid": 5}}"#).await;
    assert_eq!(status, 400);
    assert!(
        String::from_utf8_lossy(&body).starts_with("malformed ConversionReview at request.uid:"),
        "{}",
        String::from_utf8_lossy(&body)
    );
    let (status, body) = send(addr, ca, "POST /convert", br#"{"kind":"ConversionReview"}"#).await;
    assert_eq!(
        (status, String::from_utf8_lossy(&body).as_ref()),
        (400, "the ConversionReview has no request")
    );
    let (status, _) = send(addr, ca, "POST /convert", &vec![b' '; 65 * 1024]).await;
    assert_eq!(status, 413);
    let (status, _) = send(addr, ca, "GET /convert", b"").await;
    assert_eq!(status, 405);

    stop.cancel();
    task.await.expect("server task");
}

#[tokio::test]
async fn a_conversion_past_the_deadline_fails_saying_so() {
    let certs = certs();
    let server = Webhook::new()
        .deadline(std::time::Duration::from_millis(300))
        .convert("/convert", table())
        .bind("127.0.0.1:0", CertFiles::new(&certs.cert, &certs.key))
        .await
        .expect("binds");
    let addr = server.local_addr();
    let stop = CancellationToken::new();
    let task = tokio::spawn(server.run(stop.clone().cancelled_owned()));
    let review = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": "u-slow", "desiredAPIVersion": "conv.kubeset.dev/v3",
                    "objects": [person("v1", "s", json!({"name": "slow"}))]}});
    let (status, body) = send(
        addr,
        certs.ca.cert_pem(),
        "POST /convert",
        &serde_json::to_vec(&review).expect("JSON"),
    )
    .await;
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_slice(&body).expect("JSON answer");
    assert_eq!(answer["response"]["uid"], "u-slow");
    assert_eq!(answer["response"]["result"]["status"], "Failure");
    assert_eq!(
        answer["response"]["result"]["message"],
        "the conversion at /convert did not answer within 300ms"
    );
    stop.cancel();
    task.await.expect("server task");
}

#[tokio::test]
async fn bind_refuses_a_wrong_table_or_a_shared_path() {
    let certs = certs();
    let err = Webhook::new()
        .convert("/convert", table().spoke::<v3::Person>())
        .bind("127.0.0.1:0", CertFiles::new(&certs.cert, &certs.key))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, WebhookError::Routes { path, reason }
            if path == "/convert" && reason.contains("conv.kubeset.dev/v3 is registered twice")),
        "{err:?}"
    );
    let err = Webhook::new()
        .convert("/both", table())
        .validate::<v1::Person, _>(
            "/both",
            |_req: kubeset_client::admission::AdmissionRequest<v1::Person>| async { Ok(vec![]) },
        )
        .bind("127.0.0.1:0", CertFiles::new(&certs.cert, &certs.key))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the webhook route /both: it has both admission and conversion handlers"
    );
}

fn people_crd(url: &str) -> CustomResourceDefinition {
    let merged =
        merge_crds(vec![v1::Person::crd(), v2::Person::crd()], "v1").expect("versions merge");
    with_conversion_webhook(
        merged,
        WebhookClientConfig {
            url: Some(url.to_owned()),
            ..WebhookClientConfig::default()
        },
    )
}

#[tokio::test]
async fn the_conversion_ca_bundle_is_registered_in_the_crd() {
    let api_server = kubeset_testserver::TestServer::start()
        .await
        .expect("server starts");
    let client = common::client(&api_server.urls());
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = people_crd("https://127.0.0.1:1/convert");
    let conversion = crd.spec.conversion.clone().expect("conversion");
    assert_eq!(conversion.strategy, "Webhook");
    let webhook = conversion.webhook.expect("webhook");
    assert_eq!(webhook.conversion_review_versions, ["v1"]);
    let storage: Vec<(&str, bool)> = crd
        .spec
        .versions
        .iter()
        .map(|v| (v.name.as_str(), v.storage))
        .collect();
    assert_eq!(storage, [("v1", true), ("v2", false)]);
    crds.create(&PostParams::default(), &crd)
        .await
        .expect("CRD created");

    let ca = SelfSignedCa::generate("conversion-bundle-ca").expect("CA");
    let stored = set_conversion_ca_bundle(&client, v1::Person::crd_name(), ca.cert_pem())
        .await
        .expect("caBundle set");
    let read = crds.get(v1::Person::crd_name()).await.expect("get");
    assert_eq!(
        read.spec.conversion, stored.spec.conversion,
        "the answer is what is stored"
    );
    let config = read
        .spec
        .conversion
        .and_then(|c| c.webhook)
        .and_then(|w| w.client_config)
        .expect("clientConfig");
    assert_eq!(
        config.ca_bundle.expect("caBundle").0,
        ca.cert_pem().as_bytes()
    );
    assert_eq!(config.url.as_deref(), Some("https://127.0.0.1:1/convert"));

    // A CRD without a conversion webhook is named in the error.
    let mut plain = v3::Person::crd();
    plain.metadata.name = Some("others.conv.kubeset.dev".to_owned());
    plain.spec.names.plural = "others".to_owned();
    plain.spec.names.kind = "Other".to_owned();
    plain.spec.names.singular = Some("other".to_owned());
    plain.spec.names.list_kind = Some("OtherList".to_owned());
    crds.create(&PostParams::default(), &plain)
        .await
        .expect("plain CRD created");
    let err = set_conversion_ca_bundle(&client, "others.conv.kubeset.dev", ca.cert_pem())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the CustomResourceDefinition others.conv.kubeset.dev has no conversion webhook to set the caBundle of"
    );
}
