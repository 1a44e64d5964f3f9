//! exec, attach and port-forward against the real kube-apiserver. The
//! suite has no kubelet, so this is the protocol up to the node: the
//! WebSocket upgrade request through TLS and client-certificate auth, and
//! the answers kube-apiserver gives before it would dial a kubelet
//! (`streamLocation`: container choice, a pod without a node, a node that
//! does not exist), each as a typed `Error::Api`. The data path is tested
//! against the embedded server (crates/kubeset/tests/ws_testserver.rs,
//! crates/kubeset-cli/tests/streams.rs).

use kubeset::api::core::v1::Pod;
use kubeset::params::PostParams;
use kubeset::ws::AttachParams;
use kubeset::{Api, Client, Error};
use serde_json::json;

use crate::common::{connect, ok, typed};

fn pod(name: &str, node: Option<&str>) -> Pod {
    let mut p = json!({
        "metadata": {"name": name},
        "spec": {"containers": [
            {"name": "main", "image": "registry.invalid/main:1"},
            {"name": "side", "image": "registry.invalid/side:1"},
        ]},
    });
    if let Some(n) = node {
        p["spec"]["nodeName"] = json!(n);
    }
    typed(p)
}

/// The API error's code and message (panics on anything else).
fn api(what: &str, r: Result<impl std::fmt::Debug, Error>) -> (u16, String) {
    match r {
        Err(e) => match e.api_error() {
            Some(a) => (a.code, a.message.clone()),
            None => panic!(
                "{what}: not an API error: {}",
                kubeset_tests::error_chain(&e)
            ),
        },
        Ok(v) => panic!("{what}: unexpectedly upgraded: {v:?}"),
    }
}

#[tokio::test]
async fn exec_attach_portforward_answers_before_the_kubelet() {
    let ctx = connect!("streams");
    let pods: Api<Pod> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    ok(
        "create",
        pods.create(&PostParams::default(), &pod("nonode", None))
            .await,
    );
    ok(
        "create",
        pods.create(
            &PostParams::default(),
            &pod("ghostnode", Some("no-such-node")),
        )
        .await,
    );
    let main = AttachParams::default().container("main");

    assert_eq!(
        api("exec, no node", pods.exec("nonode", ["echo"], &main).await),
        (400, "pod nonode does not have a host assigned".to_owned())
    );
    assert_eq!(
        api(
            "attach, no node",
            pods.attach("nonode", &main.clone().stdin(true)).await
        ),
        (400, "pod nonode does not have a host assigned".to_owned())
    );
    assert_eq!(
        api(
            "port-forward, no node",
            pods.portforward("nonode", &[80]).await
        ),
        (400, "pod nonode does not have a host assigned".to_owned())
    );
    assert_eq!(
        api(
            "exec, bad container",
            pods.exec(
                "nonode",
                ["echo"],
                &AttachParams::default().container("zzz")
            )
            .await
        ),
        (400, "container zzz is not valid for pod nonode".to_owned())
    );
    assert_eq!(
        api(
            "exec, no container named",
            pods.exec("nonode", ["echo"], &AttachParams::default())
                .await
        ),
        (
            400,
            "a container name must be specified for pod nonode, choose one of: [main side]"
                .to_owned()
        )
    );
    // A node that does not exist: kube-apiserver's own wording names pods.
    let (code, message) = api(
        "exec, unknown node",
        pods.exec("ghostnode", ["echo"], &main).await,
    );
    assert_eq!(
        (code, message.as_str()),
        (404, "pods \"no-such-node\" not found")
    );
    let err = pods.exec("ghost", ["echo"], &main).await.unwrap_err();
    assert!(err.api_error().is_some_and(|a| a.is_not_found()), "{err:?}");
}

#[tokio::test]
async fn the_upgrade_request_is_authenticated() {
    let ctx = connect!("streams-auth");
    let pods: Api<Pod> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    ok(
        "create",
        pods.create(&PostParams::default(), &pod("nonode", None))
            .await,
    );
    // The same server and CA, no client certificate: realkube allows
    // anonymous requests, so system:anonymous is refused pods/exec (403)
    // before any upgrade.
    let mut config = ctx
        .kube
        .config(None, kubeset_tests::Identity::Admin)
        .expect("config");
    config.tls.client_identity = None;
    config.authenticator = None;
    let anon: Api<Pod> =
        Api::namespaced(Client::try_from_config(&config).expect("client"), &ctx.ns);
    let (code, message) = api(
        "anonymous exec",
        anon.exec("nonode", ["echo"], &AttachParams::default())
            .await,
    );
    assert_eq!(code, 403, "{message}");
    assert!(
        message.contains("system:anonymous") && message.contains("pods/exec"),
        "{message}"
    );
    // The non-admin identity is authorized through RBAC and reaches the
    // pod check.
    let user = ctx
        .kube
        .client_for(None, kubeset_tests::Identity::User)
        .expect("user client");
    let pods: Api<Pod> = Api::namespaced(user, &ctx.ns);
    let (code, message) = api(
        "user exec",
        pods.exec(
            "nonode",
            ["echo"],
            &AttachParams::default().container("main"),
        )
        .await,
    );
    assert_eq!(
        (code, message.as_str()),
        (400, "pod nonode does not have a host assigned")
    );
}
