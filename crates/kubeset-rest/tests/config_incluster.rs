//! In-cluster configuration from a temporary service-account directory:
//! the error cases in order, IPv6, token rotation (paused time), and a
//! request to a loopback TLS server with the service-account token.

#[path = "config_fixtures/support.rs"]
mod support;

use std::{sync::Arc, time::Duration};

use kubeset_rest::config::{Config, ConfigError, InClusterOptions};
use support::{Pki, Seen, serve, write};

fn opts(host: Option<&str>, port: Option<&str>, root: &std::path::Path) -> InClusterOptions {
    InClusterOptions::new(host.map(str::to_owned), port.map(str::to_owned), root)
}

#[test]
fn errors_come_in_the_reference_order() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let err = |o: &InClusterOptions| Config::incluster_from(o).unwrap_err();

    // 1. host/port not set.
    let e = err(&opts(None, None, root));
    assert!(
        matches!(
            e,
            ConfigError::InClusterEnvNotSet {
                var: "KUBERNETES_SERVICE_HOST"
            }
        ),
        "{e}"
    );
    let e = err(&opts(Some("10.0.0.1"), None, root));
    assert!(
        matches!(
            e,
            ConfigError::InClusterEnvNotSet {
                var: "KUBERNETES_SERVICE_PORT"
            }
        ),
        "{e}"
    );
    // 2. set but empty.
    let e = err(&opts(Some(""), Some(""), root));
    assert!(
        matches!(
            e,
            ConfigError::InClusterEnvEmpty {
                var: "KUBERNETES_SERVICE_HOST"
            }
        ),
        "{e}"
    );
    let e = err(&opts(Some("10.0.0.1"), Some(""), root));
    assert!(
        matches!(
            e,
            ConfigError::InClusterEnvEmpty {
                var: "KUBERNETES_SERVICE_PORT"
            }
        ),
        "{e}"
    );
    let ok = opts(Some("10.0.0.1"), Some("443"), root);
    // 3. CA missing (even though the token is missing too).
    let e = err(&ok);
    assert!(
        matches!(
            &e,
            ConfigError::InClusterFileMissing {
                what: "CA certificate",
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("ca.crt"), "{e}");
    // 4. CA empty.
    write(root, "ca.crt", "\n");
    let e = err(&ok);
    assert!(
        matches!(
            &e,
            ConfigError::InClusterFileEmpty {
                what: "CA certificate",
                ..
            }
        ),
        "{e}"
    );
    // 5. token missing.
    let pki = Pki::new("cluster-ca");
    write(root, "ca.crt", &pki.ca_pem);
    let e = err(&ok);
    assert!(
        matches!(&e, ConfigError::InClusterFileMissing { what: "token", .. }),
        "{e}"
    );
    // 6. token empty.
    write(root, "token", "");
    let e = err(&ok);
    assert!(
        matches!(&e, ConfigError::InClusterFileEmpty { what: "token", .. }),
        "{e}"
    );
    // A CA file that is not PEM.
    write(root, "token", "tok");
    write(root, "ca.crt", "not a certificate");
    let e = err(&ok);
    assert!(e.to_string().contains("ca.crt"), "{e}");

    // Complete.
    write(root, "ca.crt", &pki.ca_pem);
    let c = Config::incluster_from(&ok).unwrap();
    assert_eq!(c.cluster_url.as_str(), "https://10.0.0.1/");
    assert_eq!(c.default_namespace, "default");
    assert_eq!(c.tls.root_certs.len(), 1);
    write(root, "namespace", "kube-system\n");
    let c = Config::incluster_from(&opts(Some("fd00:10::1"), Some("6443"), root)).unwrap();
    assert_eq!(c.cluster_url.as_str(), "https://[fd00:10::1]:6443/");
    assert_eq!(c.default_namespace, "kube-system");
}

#[tokio::test(start_paused = true)]
async fn token_is_re_read_every_minute_and_a_failed_read_keeps_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "ca.crt", Pki::new("ca").ca_pem);
    let token = write(root, "token", "one\n");
    let c = Config::incluster_from(&opts(Some("10.0.0.1"), Some("443"), root)).unwrap();
    let auth = c.authenticator.clone().unwrap();
    let current = || async { auth.authorization().await.unwrap().unwrap() };

    assert_eq!(current().await, "Bearer one");
    std::fs::write(&token, "two").unwrap();
    tokio::time::advance(Duration::from_secs(30)).await;
    assert_eq!(current().await, "Bearer one", "not re-read before a minute");
    tokio::time::advance(Duration::from_secs(31)).await;
    assert_eq!(current().await, "Bearer two");

    std::fs::remove_file(&token).unwrap();
    tokio::time::advance(Duration::from_secs(61)).await;
    assert_eq!(
        current().await,
        "Bearer two",
        "missing file: old token kept"
    );
    std::fs::write(&token, "  \n").unwrap();
    tokio::time::advance(Duration::from_secs(61)).await;
    assert_eq!(current().await, "Bearer two", "empty file: old token kept");

    std::fs::write(&token, "three").unwrap();
    tokio::time::advance(Duration::from_secs(61)).await;
    assert_eq!(current().await, "Bearer three");

    // A 401 forces a re-read at once.
    std::fs::write(&token, "four").unwrap();
    assert_eq!(current().await, "Bearer three");
    auth.invalidate();
    assert_eq!(current().await, "Bearer four");
}

#[tokio::test]
async fn in_cluster_config_reaches_a_tls_server_with_the_token() {
    let pki = Pki::new("cluster-ca");
    let server = pki.server(&["127.0.0.1"]);
    let addr = serve(
        &server,
        None,
        Arc::new(|s: &Seen<'_>| match s.header("authorization") {
            Some("Bearer sa-token") => (200, "hello pod".to_owned()),
            _ => (401, String::new()),
        }),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ca.crt", &pki.ca_pem);
    write(dir.path(), "token", "sa-token\n");
    let port = addr.port().to_string();
    let c = Config::incluster_from(&opts(Some("127.0.0.1"), Some(&port), dir.path())).unwrap();
    let http = support::client(c.tls.client_config().unwrap());
    let h = c
        .authenticator
        .clone()
        .unwrap()
        .authorization()
        .await
        .unwrap()
        .unwrap();
    let resp = http
        .get(c.cluster_url.clone())
        .header(http::header::AUTHORIZATION, h)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.text().await.unwrap(), "hello pod");
}
