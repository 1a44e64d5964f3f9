//! The upgrade of `pods/exec`, `pods/attach` and `pods/portforward` over
//! real sockets, as kube-apiserver refuses or accepts it: the method, a
//! request that is no WebSocket upgrade, port-forward without ports on the
//! channel protocol, and the `101` with the negotiated subprotocol and the
//! RFC 6455 accept key.

mod common;

use common::client;
use kubeset_testserver::TestServer;
use serde_json::{Value, json};

async fn server() -> TestServer {
    let s = TestServer::builder()
        .container_runtime(true)
        .start()
        .await
        .expect("server starts");
    s.create(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"nodeName": "node-1", "containers": [{
            "name": "main", "image": "x", "command": ["cat"],
            "ports": [{"containerPort": 7}],
        }]},
    }))
    .expect("pod");
    s
}

/// `(status, Status message)` of a refused request.
async fn refused(rb: reqwest::RequestBuilder) -> (u16, String) {
    let resp = rb.send().await.expect("request");
    let code = resp.status().as_u16();
    let body: Value = resp.json().await.expect("a Status");
    (
        code,
        body["message"].as_str().unwrap_or_default().to_owned(),
    )
}

fn upgrade(rb: reqwest::RequestBuilder, protocol: &str) -> reqwest::RequestBuilder {
    rb.header("connection", "Upgrade")
        .header("upgrade", "websocket")
        .header("sec-websocket-version", "13")
        .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")
        .header("sec-websocket-protocol", protocol)
}

#[tokio::test]
async fn refusals_before_the_upgrade() {
    let s = server().await;
    let c = client();
    let pod = format!("{}/api/v1/namespaces/default/pods/web", s.url());

    let (code, _) = refused(c.put(format!("{pod}/exec?command=true"))).await;
    assert_eq!(code, 405);

    let (code, message) = refused(c.get(format!("{pod}/exec?command=true&stdout=true"))).await;
    assert_eq!(code, 400);
    assert!(
        message.starts_with("unable to upgrade connection"),
        "{message}"
    );

    let no_ports = upgrade(c.get(format!("{pod}/portforward")), "portforward.k8s.io");
    let (code, message) = refused(no_ports).await;
    assert_eq!(
        (code, message.as_str()),
        (400, "query parameter \"ports\" is required")
    );
}

#[tokio::test]
async fn an_upgrade_is_101_with_the_protocol_and_accept_key() {
    let s = server().await;
    let c = client();
    let url = format!(
        "{}/api/v1/namespaces/default/pods/web/exec?command=true&stdout=true",
        s.url()
    );
    let resp = upgrade(c.get(url), "v4.channel.k8s.io")
        .send()
        .await
        .expect("request");
    assert_eq!(resp.status().as_u16(), 101);
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(header("sec-websocket-protocol"), "v4.channel.k8s.io");
    // RFC 6455 section 1.3's example key and its accept value.
    assert_eq!(
        header("sec-websocket-accept"),
        "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
    );
    assert_eq!(header("upgrade"), "websocket");
}
