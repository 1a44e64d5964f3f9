//! Real TLS on loopback: CA bundles, client certificates of every key type
//! and PEM encoding, bearer tokens, tls-server-name and
//! insecure-skip-tls-verify, all loaded from kubeconfig files.

#[path = "config_fixtures/support.rs"]
mod support;

use std::{net::SocketAddr, sync::Arc};

use base64::Engine as _;
use kubeset_rest::config::{Config, KubeConfigOptions, Kubeconfig};
use rcgen::KeyPair;
use support::{Pki, Seen, client, fixtures, serve, write};

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// A server that answers with the client certificate's common name.
async fn cn_server(pki: &Pki) -> SocketAddr {
    let server = pki.server(&["127.0.0.1", "localhost"]);
    serve(
        &server,
        Some(pki),
        Arc::new(|s: &Seen<'_>| (200, s.client_cn.clone().unwrap_or_default())),
    )
    .await
}

fn load(dir: &std::path::Path, yaml: &str) -> Config {
    let path = write(dir, "kubeconfig", yaml);
    let kc = Kubeconfig::read_from(&path).unwrap();
    Config::from_custom_kubeconfig_sync(kc, &KubeConfigOptions::default()).unwrap()
}

async fn get(config: &Config) -> Result<(u16, String), reqwest::Error> {
    let http = client(config.tls.client_config().unwrap());
    let mut req = http.get(config.cluster_url.clone());
    if let Some(auth) = &config.authenticator
        && let Some(h) = auth.authorization().await.unwrap()
    {
        req = req.header(http::header::AUTHORIZATION, h);
    }
    for (k, v) in config.default_headers().unwrap().iter() {
        req = req.header(k, v);
    }
    let resp = req.send().await?;
    let status = resp.status().as_u16();
    Ok((status, resp.text().await?))
}

fn client_kubeconfig(addr: SocketAddr, cert: &str, key: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
current-context: c
contexts: [{{name: c, context: {{cluster: k, user: u}}}}]
clusters: [{{name: k, cluster: {{server: 'https://{addr}', certificate-authority: ca.crt}}}}]
users: [{{name: u, user: {{client-certificate: {cert}, client-key: {key}}}}}]
"
    )
}

#[tokio::test]
async fn client_certificates_of_every_key_type_and_encoding() {
    let pki = Pki::new("test-ca");
    let addr = cn_server(&pki).await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ca.crt", &pki.ca_pem);

    let fx = fixtures();
    let rsa = KeyPair::from_pem_and_sign_algo(
        &std::fs::read_to_string(fx.join("rsa.pkcs8.pem")).unwrap(),
        &rcgen::PKCS_RSA_SHA256,
    )
    .unwrap();
    let ec = KeyPair::from_pem(&std::fs::read_to_string(fx.join("ec.pkcs8.pem")).unwrap()).unwrap();
    let ed = KeyPair::generate_for(&rcgen::PKCS_ED25519).unwrap();
    let cases: Vec<(&str, String, String)> = vec![
        (
            "rsa-pkcs1",
            pki.client_for("rsa-pkcs1", &rsa),
            std::fs::read_to_string(fx.join("rsa.pkcs1.pem")).unwrap(),
        ),
        (
            "rsa-pkcs8",
            pki.client_for("rsa-pkcs8", &rsa),
            std::fs::read_to_string(fx.join("rsa.pkcs8.pem")).unwrap(),
        ),
        (
            "ec-sec1",
            pki.client_for("ec-sec1", &ec),
            std::fs::read_to_string(fx.join("ec.sec1.pem")).unwrap(),
        ),
        (
            "ec-pkcs8",
            pki.client_for("ec-pkcs8", &ec),
            std::fs::read_to_string(fx.join("ec.pkcs8.pem")).unwrap(),
        ),
        (
            "ed25519-pkcs8",
            pki.client_for("ed25519-pkcs8", &ed),
            ed.serialize_pem(),
        ),
    ];
    for (name, cert, key) in cases {
        // Relative paths: resolved against the kubeconfig's directory.
        write(dir.path(), &format!("{name}.crt"), &cert);
        write(dir.path(), &format!("{name}.key"), &key);
        let config = load(
            dir.path(),
            &client_kubeconfig(addr, &format!("{name}.crt"), &format!("{name}.key")),
        );
        let (status, body) = get(&config).await.unwrap();
        assert_eq!((status, body.as_str()), (200, name), "{name}");
    }
}

#[tokio::test]
async fn inline_data_fields_work_and_no_client_certificate_is_refused() {
    let pki = Pki::new("test-ca");
    let addr = cn_server(&pki).await;
    let dir = tempfile::tempdir().unwrap();
    let alice = pki.client("alice");
    let yaml = format!(
        "current-context: c
contexts: [{{name: c, context: {{cluster: k, user: u}}}}]
clusters: [{{name: k, cluster: {{server: 'https://{addr}/', certificate-authority-data: {}}}}}]
users:
- name: u
  user: {{client-certificate-data: {}, client-key-data: {}}}
- name: anonymous
  user: {{}}
",
        b64(&pki.ca_pem),
        b64(&alice.cert_pem),
        b64(&alice.key_pem)
    );
    let config = load(dir.path(), &yaml);
    assert_eq!(get(&config).await.unwrap(), (200, "alice".to_owned()));

    let path = write(dir.path(), "kubeconfig", &yaml);
    let anonymous = Config::from_custom_kubeconfig_sync(
        Kubeconfig::read_from(&path).unwrap(),
        &KubeConfigOptions::default().with_user("anonymous"),
    )
    .unwrap();
    assert!(
        get(&anonymous).await.is_err(),
        "the server requires a client certificate"
    );
}

#[tokio::test]
async fn bearer_token_and_impersonation_headers_reach_the_server() {
    let pki = Pki::new("test-ca");
    let server = pki.server(&["127.0.0.1"]);
    let addr = serve(
        &server,
        None,
        Arc::new(|s: &Seen<'_>| {
            if s.header("authorization") != Some("Bearer s3cret-token") {
                return (401, "unauthorized".to_owned());
            }
            (
                200,
                format!(
                    "{}|{}",
                    s.header("impersonate-user").unwrap_or(""),
                    s.headers("impersonate-group").join(",")
                ),
            )
        }),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ca.crt", &pki.ca_pem);
    let yaml = format!(
        "current-context: c
contexts: [{{name: c, context: {{cluster: k, user: u, namespace: team-a}}}}]
clusters: [{{name: k, cluster: {{server: 'https://{addr}', certificate-authority: ca.crt}}}}]
users:
- name: u
  user: {{token: s3cret-token, as: bob, as-groups: [devs, ops]}}
- name: wrong
  user: {{token: nope}}
"
    );
    let config = load(dir.path(), &yaml);
    assert_eq!(config.default_namespace, "team-a");
    assert_eq!(
        get(&config).await.unwrap(),
        (200, "bob|devs,ops".to_owned())
    );

    let path = write(dir.path(), "kubeconfig", &yaml);
    let wrong = Config::from_custom_kubeconfig_sync(
        Kubeconfig::read_from(&path).unwrap(),
        &KubeConfigOptions::default().with_user("wrong"),
    )
    .unwrap();
    assert_eq!(get(&wrong).await.unwrap().0, 401);
}

#[tokio::test]
async fn tls_server_name_overrides_the_checked_name() {
    let pki = Pki::new("test-ca");
    let server = pki.server(&["kubernetes.internal"]);
    let addr = serve(
        &server,
        None,
        Arc::new(|_: &Seen<'_>| (200, "ok".to_owned())),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ca.crt", &pki.ca_pem);
    let with = |extra: &str| {
        format!(
            "current-context: c
contexts: [{{name: c, context: {{cluster: k}}}}]
clusters: [{{name: k, cluster: {{server: 'https://{addr}', certificate-authority: ca.crt{extra}}}}}]
"
        )
    };
    let plain = load(dir.path(), &with(""));
    assert!(
        get(&plain).await.is_err(),
        "127.0.0.1 is not in the certificate"
    );
    let named = load(dir.path(), &with(", tls-server-name: kubernetes.internal"));
    assert_eq!(get(&named).await.unwrap(), (200, "ok".to_owned()));
    let wrong = load(dir.path(), &with(", tls-server-name: other.internal"));
    assert!(
        get(&wrong).await.is_err(),
        "the override name is checked too"
    );
}

#[tokio::test]
async fn insecure_skip_tls_verify_only_when_asked() {
    let pki = Pki::new("test-ca");
    let other = Pki::new("other-ca");
    let server = pki.server(&["127.0.0.1"]);
    let addr = serve(
        &server,
        None,
        Arc::new(|_: &Seen<'_>| (200, "ok".to_owned())),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "other.crt", &other.ca_pem);
    let wrong_ca = load(
        dir.path(),
        &format!(
            "current-context: c
contexts: [{{name: c, context: {{cluster: k}}}}]
clusters: [{{name: k, cluster: {{server: 'https://{addr}', certificate-authority: other.crt}}}}]
"
        ),
    );
    assert!(
        get(&wrong_ca).await.is_err(),
        "a certificate from another CA is refused"
    );
    let insecure = load(
        dir.path(),
        &format!(
            "current-context: c
contexts: [{{name: c, context: {{cluster: k}}}}]
clusters: [{{name: k, cluster: {{server: 'https://{addr}', insecure-skip-tls-verify: true}}}}]
"
        ),
    );
    assert!(insecure.tls.insecure_skip_verify);
    assert_eq!(get(&insecure).await.unwrap(), (200, "ok".to_owned()));
}
