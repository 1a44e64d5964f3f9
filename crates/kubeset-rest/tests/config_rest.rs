//! End to end through the request layer: a kubeconfig → `Config` →
//! `RestConfig` → `RestClient` → a loopback TLS server that requires a
//! client certificate and a bearer token.

#[path = "config_fixtures/support.rs"]
mod support;

use std::{os::unix::fs::PermissionsExt, sync::Arc};

use kubeset_rest::{
    RestClient,
    config::{Config, KubeConfigOptions, Kubeconfig},
};
use support::{Pki, Seen, serve, write};

#[tokio::test]
async fn kubeconfig_to_rest_client_with_client_cert_exec_token_refresh_and_impersonation() {
    end_to_end(&["g1"]).await;
}

/// Fails today: the request layer hands the default headers to reqwest's
/// `ClientBuilder::default_headers`, which `insert`s each entry, so only the
/// last `Impersonate-Group` survives.
#[tokio::test]
#[ignore = "request layer keeps only the last value of a repeated default header"]
async fn every_impersonated_group_is_sent() {
    end_to_end(&["g1", "g2"]).await;
}

async fn end_to_end(groups: &[&str]) {
    let pki = Pki::new("ca");
    let server = pki.server(&["127.0.0.1"]);
    // Accepts only the second token the plugin hands out.
    let addr = serve(
        &server,
        Some(&pki),
        Arc::new(|s: &Seen<'_>| {
            if s.header("authorization") != Some("Bearer two") {
                return (401, "{\"kind\":\"Status\",\"status\":\"Failure\",\"code\":401,\"message\":\"Unauthorized\"}".to_owned());
            }
            let path = s.head.split(' ').nth(1).unwrap_or("").to_owned();
            let body = serde_json::json!({
                "cn": s.client_cn,
                "path": path,
                "as": s.header("impersonate-user"),
                "groups": s.headers("impersonate-group"),
                "ua": s.header("user-agent"),
            });
            (200, body.to_string())
        }),
    )
    .await;

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ca.crt", &pki.ca_pem);
    let carol = pki.client("carol");
    write(d, "carol.crt", &carol.cert_pem);
    write(d, "carol.key", &carol.key_pem);
    let script = r#"#!/bin/sh
d="$PLUGIN_DIR"
n=$(cat "$d/count" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$d/count"
[ "$n" = 1 ] && t=one || t=two
printf '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"2999-01-01T00:00:00Z"}}' "$t"
"#;
    let plugin = write(d, "plugin.sh", script);
    std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let kubeconfig = write(
        d,
        "config",
        format!(
            "current-context: c
contexts: [{{name: c, context: {{cluster: k, user: u, namespace: apps}}}}]
clusters: [{{name: k, cluster: {{server: 'https://{addr}/base/', certificate-authority: ca.crt}}}}]
users:
- name: u
  user:
    client-certificate: carol.crt
    client-key: carol.key
    as: dave
    as-groups: [{groups}]
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: ./plugin.sh
      env: [{{name: PLUGIN_DIR, value: '{}'}}]
",
            d.display(),
            groups = groups.join(", ")
        ),
    );
    let mut config = Config::from_custom_kubeconfig_sync(
        Kubeconfig::read_from(&kubeconfig).unwrap(),
        &KubeConfigOptions::default(),
    )
    .unwrap();
    config.user_agent = Some("config-test/1".to_owned());
    let client = RestClient::new(config.rest_config().unwrap()).unwrap();
    let got: serde_json::Value = client
        .get()
        .namespace(&config.default_namespace)
        .resource("pods")
        .name("web-0")
        .send_json()
        .await
        .unwrap();
    assert_eq!(got["cn"], "carol");
    assert_eq!(got["path"], "/base/api/v1/namespaces/apps/pods/web-0");
    assert_eq!(got["as"], "dave");
    assert_eq!(got["groups"], serde_json::json!(groups));
    assert_eq!(got["ua"], "config-test/1");
    // Token "one" was refused with 401; the plugin ran again for "two".
    assert_eq!(
        std::fs::read_to_string(d.join("count")).unwrap().trim(),
        "2"
    );
}
