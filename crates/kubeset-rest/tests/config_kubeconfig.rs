//! Kubeconfig files on disk: KUBECONFIG merging, context selection,
//! relative paths, token files, bad input and redaction.

#[path = "config_fixtures/support.rs"]
mod support;

use std::{
    ffi::OsString,
    path::Path,
    time::{Duration, SystemTime},
};

use base64::Engine as _;
use kubeset_rest::config::{Config, ConfigError, KubeConfigOptions, Kubeconfig};
use support::{Pki, write};

fn server_of(c: &Config) -> &str {
    c.cluster_url.as_str()
}

fn from_file(path: &Path, options: &KubeConfigOptions) -> Result<Config, ConfigError> {
    Config::from_custom_kubeconfig_sync(Kubeconfig::read_from(path)?, options)
}

const FIRST: &str = "apiVersion: v1
kind: Config
clusters:
- {name: shared, cluster: {server: 'https://first.example:6443'}}
- {name: only-first, cluster: {server: 'https://only-first.example'}}
users:
- {name: shared-user, user: {token: first-token}}
contexts:
- {name: a, context: {cluster: shared, user: shared-user, namespace: from-first}}
";

const SECOND: &str = "apiVersion: v1
kind: Config
current-context: b
clusters:
- {name: shared, cluster: {server: 'https://second.example:6443'}}
- {name: only-second, cluster: {server: 'https://only-second.example/prefix/'}}
users:
- {name: shared-user, user: {token: second-token}}
contexts:
- {name: a, context: {cluster: only-second, user: shared-user}}
- {name: b, context: {cluster: shared, user: shared-user, namespace: from-second}}
- {name: c, context: {cluster: only-second}}
";

#[test]
fn kubeconfig_list_merges_first_wins_and_takes_current_context_from_the_first_that_has_one() {
    let dir = tempfile::tempdir().unwrap();
    let first = write(dir.path(), "first.yaml", FIRST);
    let second = write(dir.path(), "second.yaml", SECOND);
    let missing = dir.path().join("missing.yaml");
    // KUBECONFIG as the environment would hold it; missing files are skipped.
    let var = std::env::join_paths([&first, &missing, &second]).unwrap();
    let merged = Kubeconfig::from_env_values(Some(&var), None).unwrap();
    assert_eq!(merged.current_context.as_deref(), Some("b"));
    assert_eq!(merged.files, vec![first.clone(), second.clone()]);
    assert_eq!(merged.clusters.len(), 3);
    assert_eq!(merged.contexts.len(), 3);

    // current context "b" comes from the second file, but the cluster and
    // user it names are the first file's.
    let b =
        Config::from_custom_kubeconfig_sync(merged.clone(), &KubeConfigOptions::default()).unwrap();
    assert_eq!(server_of(&b), "https://first.example:6443/");
    assert_eq!(b.default_namespace, "from-second");
    // Context "a" is the first file's.
    let a = Config::from_custom_kubeconfig_sync(
        merged.clone(),
        &KubeConfigOptions::default().with_context("a"),
    )
    .unwrap();
    assert_eq!(a.default_namespace, "from-first");
    // No namespace in the context: "default"; trailing slash trimmed.
    let c = Config::from_custom_kubeconfig_sync(
        merged.clone(),
        &KubeConfigOptions::default().with_context("c"),
    )
    .unwrap();
    assert_eq!(c.default_namespace, "default");
    assert_eq!(server_of(&c), "https://only-second.example/prefix");
    assert!(c.authenticator.is_none());
    // --cluster overrides the context's.
    let o = Config::from_custom_kubeconfig_sync(
        merged,
        &KubeConfigOptions::default()
            .with_context("b")
            .with_cluster("only-first"),
    )
    .unwrap();
    assert_eq!(server_of(&o), "https://only-first.example/");

    // Order matters: second first.
    let var = std::env::join_paths([&second, &first]).unwrap();
    let merged = Kubeconfig::from_env_values(Some(&var), None).unwrap();
    let b = Config::from_custom_kubeconfig_sync(merged, &KubeConfigOptions::default()).unwrap();
    assert_eq!(server_of(&b), "https://second.example:6443/");
}

#[test]
fn without_kubeconfig_the_home_config_is_used_and_absence_is_reported() {
    let home = tempfile::tempdir().unwrap();
    let err = Kubeconfig::from_env_values(None, Some(home.path())).unwrap_err();
    assert!(
        matches!(err, ConfigError::KubeconfigNotFound { .. }),
        "{err}"
    );
    assert!(err.to_string().contains(".kube"), "{err}");

    std::fs::create_dir(home.path().join(".kube")).unwrap();
    write(&home.path().join(".kube"), "config", SECOND);
    let empty = OsString::new();
    let k = Kubeconfig::from_env_values(Some(&empty), Some(home.path())).unwrap();
    assert_eq!(k.current_context.as_deref(), Some("b"));
}

#[test]
fn relative_paths_resolve_against_the_file_directory() {
    let pki = Pki::new("ca");
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("nested");
    std::fs::create_dir_all(sub.join("certs")).unwrap();
    write(&sub.join("certs"), "ca.crt", &pki.ca_pem);
    let alice = pki.client("alice");
    write(&sub.join("certs"), "alice.crt", &alice.cert_pem);
    write(&sub.join("certs"), "alice.key", &alice.key_pem);
    write(&sub, "token", "file-token\n");
    let path = write(
        &sub,
        "config",
        "current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: 'https://127.0.0.1:6443', certificate-authority: certs/ca.crt}}]
users: [{name: u, user: {client-certificate: certs/alice.crt, client-key: certs/alice.key, tokenFile: token}}]
",
    );
    let k = Kubeconfig::read_from(&path).unwrap();
    let user = k.users[0].user.as_ref().unwrap();
    assert_eq!(
        user.client_certificate.as_deref(),
        Some(sub.join("certs/alice.crt").to_str().unwrap())
    );
    assert_eq!(
        user.token_file.as_deref(),
        Some(sub.join("token").to_str().unwrap())
    );
    let config = Config::from_custom_kubeconfig_sync(k, &KubeConfigOptions::default()).unwrap();
    assert_eq!(config.tls.root_certs.len(), 1);
    assert!(config.tls.client_identity.is_some());
    assert!(config.authenticator.is_some());
}

#[tokio::test]
async fn token_file_is_re_read_when_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let token = write(dir.path(), "token", "first\n");
    let path = write(
        dir.path(),
        "config",
        "current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: 'https://127.0.0.1:6443', insecure-skip-tls-verify: true}}]
users: [{name: u, user: {tokenFile: token}}]
",
    );
    let config = from_file(&path, &KubeConfigOptions::default()).unwrap();
    let auth = config.authenticator.clone().unwrap();
    assert_eq!(auth.authorization().await.unwrap().unwrap(), "Bearer first");
    std::fs::write(&token, "second").unwrap();
    // Make the change visible even on filesystems with coarse timestamps.
    let f = std::fs::File::options().write(true).open(&token).unwrap();
    f.set_modified(SystemTime::now() + Duration::from_secs(5))
        .unwrap();
    drop(f);
    assert_eq!(
        auth.authorization().await.unwrap().unwrap(),
        "Bearer second"
    );
    // A failed re-read keeps the last token.
    std::fs::remove_file(&token).unwrap();
    assert_eq!(
        auth.authorization().await.unwrap().unwrap(),
        "Bearer second"
    );
}

#[test]
fn basic_auth_is_encoded_and_conflicts_with_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = |user: &str| {
        format!(
            "current-context: c
contexts: [{{name: c, context: {{cluster: k, user: u}}}}]
clusters: [{{name: k, cluster: {{server: 'https://127.0.0.1:6443', insecure-skip-tls-verify: true}}}}]
users: [{{name: u, user: {user}}}]
"
        )
    };
    let path = write(
        dir.path(),
        "config",
        yaml("{username: admin, password: pw}"),
    );
    let config = from_file(&path, &KubeConfigOptions::default()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let h = rt
        .block_on(config.authenticator.clone().unwrap().authorization())
        .unwrap()
        .unwrap();
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("admin:pw")
    );
    assert_eq!(h, expected.as_str());

    let path = write(
        dir.path(),
        "config",
        yaml("{username: admin, password: pw, token: t}"),
    );
    let err = from_file(&path, &KubeConfigOptions::default()).unwrap_err();
    assert!(matches!(err, ConfigError::Conflict { .. }), "{err}");
}

#[test]
fn bad_input_is_an_error_that_names_file_entry_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let name = |p: &Path| p.display().to_string();

    // Not YAML.
    let p = write(d, "notyaml", "clusters: [unclosed\n  - : : :\n");
    let err = Kubeconfig::read_from(&p).unwrap_err();
    assert!(matches!(err, ConfigError::ParseKubeconfig { .. }), "{err}");
    assert!(err.to_string().contains(&name(&p)), "{err}");
    // YAML of the wrong shape.
    let p = write(d, "wrongshape", "clusters: 42\n");
    let err = Kubeconfig::read_from(&p).unwrap_err();
    assert!(matches!(err, ConfigError::ParseKubeconfig { .. }), "{err}");
    // Binary garbage.
    let p = write(d, "binary", [0xffu8, 0xfe, 0x00, 0x01]);
    assert!(Kubeconfig::read_from(&p).is_err());
    // Missing file.
    let err = Kubeconfig::read_from(d.join("absent")).unwrap_err();
    assert!(matches!(err, ConfigError::ReadFile { .. }), "{err}");

    let base = "clusters:
- {name: k, cluster: {server: 'https://127.0.0.1:6443', certificate-authority: missing-ca.crt}}
- {name: ok, cluster: {server: 'https://127.0.0.1:6443', insecure-skip-tls-verify: true}}
- {name: noserver, cluster: {insecure-skip-tls-verify: true}}
- {name: badserver, cluster: {server: 'not a url'}}
- {name: badca, cluster: {server: 'https://h', certificate-authority-data: '!!!'}}
- {name: notpem, cluster: {server: 'https://h', certificate-authority-data: aGVsbG8=}}
users:
- {name: nocert, user: {client-certificate: missing.crt, client-key: missing.key}}
- {name: keyonly, user: {client-key-data: aGVsbG8=}}
- {name: legacy, user: {auth-provider: {name: azure, config: {access-token: hidden}}}}
- {name: gcpkey, user: {auth-provider: {name: gcp, config: {access-token: hidden, cmd-path: gcloud, token-key: '{.items[*].token}'}}}}
- {name: gcpexpiry, user: {auth-provider: {name: gcp, config: {access-token: hidden, expiry: soon}}}}
- {name: notoken, user: {tokenFile: missing-token}}
contexts:
- {name: ca, context: {cluster: k}}
- {name: nocert, context: {cluster: ok, user: nocert}}
- {name: keyonly, context: {cluster: ok, user: keyonly}}
- {name: legacy, context: {cluster: ok, user: legacy}}
- {name: gcpkey, context: {cluster: ok, user: gcpkey}}
- {name: gcpexpiry, context: {cluster: ok, user: gcpexpiry}}
- {name: notoken, context: {cluster: ok, user: notoken}}
- {name: nouser, context: {cluster: ok, user: ghost}}
- {name: nocluster, context: {cluster: ghost}}
- {name: noserver, context: {cluster: noserver}}
- {name: badserver, context: {cluster: badserver}}
- {name: badca, context: {cluster: badca}}
- {name: notpem, context: {cluster: notpem}}
";
    let p = write(d, "config", base);
    let file = name(&p);
    let load = |ctx: &str| from_file(&p, &KubeConfigOptions::default().with_context(ctx));

    let err = from_file(&p, &KubeConfigOptions::default()).unwrap_err();
    assert!(matches!(err, ConfigError::NoCurrentContext { .. }), "{err}");

    let err = load("nonexistent").unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(
            err,
            ConfigError::NotFound {
                kind: "context",
                ..
            }
        ),
        "{text}"
    );
    assert!(
        text.contains("\"nonexistent\"") && text.contains(&file),
        "{text}"
    );

    let cases: &[(&str, &[&str])] = &[
        (
            "ca",
            &["cluster \"k\"", "certificate-authority", "missing-ca.crt"],
        ),
        (
            "nocert",
            &["user \"nocert\"", "client-certificate", "missing.crt"],
        ),
        ("keyonly", &["user \"keyonly\"", "client-certificate"]),
        ("legacy", &["user \"legacy\"", "auth-provider", "azure"]),
        ("gcpkey", &["user \"gcpkey\"", "token-key", "[*]"]),
        ("gcpexpiry", &["user \"gcpexpiry\"", "expiry", "\"soon\""]),
        (
            "notoken",
            &["user \"notoken\"", "tokenFile", "missing-token"],
        ),
        ("nouser", &["user \"ghost\"", "context \"nouser\""]),
        ("nocluster", &["cluster \"ghost\"", "context \"nocluster\""]),
        ("noserver", &["cluster \"noserver\"", "server"]),
        ("badserver", &["cluster \"badserver\"", "server"]),
        (
            "badca",
            &["cluster \"badca\"", "certificate-authority-data", "base64"],
        ),
        (
            "notpem",
            &["cluster \"notpem\"", "certificate-authority-data", "PEM"],
        ),
    ];
    for (ctx, needles) in cases {
        let err = load(ctx).unwrap_err();
        let text = err.to_string();
        assert!(text.contains(&file), "{ctx}: {text}");
        for n in *needles {
            assert!(text.contains(n), "{ctx}: {text:?} lacks {n:?}");
        }
        assert!(!text.contains("hidden"), "{ctx}: {text}");
    }
}

#[test]
fn loaded_config_never_shows_secrets() {
    let pki = Pki::new("ca");
    let alice = pki.client("alice");
    let key_b64 = base64::engine::general_purpose::STANDARD.encode(&alice.key_pem);
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "current-context: c
contexts:
- {{name: c, context: {{cluster: k, user: u}}}}
- {{name: basic, context: {{cluster: k, user: basic}}}}
- {{name: exec, context: {{cluster: k, user: exec}}}}
clusters: [{{name: k, cluster: {{server: 'https://127.0.0.1:6443', certificate-authority-data: {ca}, proxy-url: 'http://proxyuser:proxy-pass-123@127.0.0.1:3128'}}}}]
users:
- name: u
  user:
    token: tok-SECRET-123
    client-certificate-data: {cert}
    client-key-data: {key_b64}
- {{name: basic, user: {{username: admin, password: pw-SECRET-456}}}}
- name: exec
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: /bin/true
      env: [{{name: API_KEY, value: env-SECRET-789}}]
",
        ca = base64::engine::general_purpose::STANDARD.encode(&pki.ca_pem),
        cert = base64::engine::general_purpose::STANDARD.encode(&alice.cert_pem),
    );
    let p = write(dir.path(), "config", &yaml);
    let secrets = [
        "tok-SECRET-123",
        "pw-SECRET-456",
        "env-SECRET-789",
        "proxy-pass-123",
        &key_b64,
        "PRIVATE KEY",
    ];
    let kubeconfig = Kubeconfig::read_from(&p).unwrap();
    let mut shown = vec![format!("{kubeconfig:?}"), format!("{kubeconfig:#?}")];
    for ctx in ["c", "basic", "exec"] {
        let config = from_file(&p, &KubeConfigOptions::default().with_context(ctx)).unwrap();
        shown.push(format!("{config:?}"));
        shown.push(format!("{config:#?}"));
        shown.push(format!("{config}"));
        shown.push(format!("{:?}", config.authenticator));
    }
    for text in &shown {
        for s in &secrets {
            assert!(!text.contains(s), "{s:?} leaked in {text}");
        }
    }
    // The non-secret parts are visible.
    assert!(shown.iter().any(|t| t.contains("https://127.0.0.1:6443")));
    assert!(shown.iter().any(|t| t.contains("admin")));
}

#[test]
fn ipv6_server_in_a_kubeconfig() {
    let k = Kubeconfig::from_yaml(
        "current-context: c
contexts: [{name: c, context: {cluster: k}}]
clusters: [{name: k, cluster: {server: 'https://[::1]:6443/', insecure-skip-tls-verify: true}}]
",
    )
    .unwrap();
    let c = Config::from_custom_kubeconfig_sync(k, &KubeConfigOptions::default()).unwrap();
    assert_eq!(c.cluster_url.host_str(), Some("[::1]"));
    assert_eq!(c.cluster_url.port(), Some(6443));
}

/// `Config::infer` and `Kubeconfig::from_env` read the process
/// environment, which tests must not change (it is shared by the test
/// threads): they run in a child process of this test binary.
#[test]
fn infer_uses_kubeconfig_then_in_cluster_and_explains_both_failures() {
    if std::env::var_os("KUBESET_CONFIG_CHILD").is_some() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let kc = write(dir.path(), "config", SECOND);
    let run = |kubeconfig: &Path, expect: &str| {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "child_infer", "--nocapture", "--test-threads=1"])
            .env("KUBESET_CONFIG_CHILD", expect)
            .env("KUBECONFIG", kubeconfig)
            .env("HOME", dir.path().join("no-home"))
            .env_remove("KUBERNETES_SERVICE_HOST")
            .env_remove("KUBERNETES_SERVICE_PORT")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("1 passed"), "{stdout}");
    };
    run(&kc, "kubeconfig");
    run(&dir.path().join("nothing-here"), "neither");
}

#[tokio::test]
async fn child_infer() {
    let Some(expect) = std::env::var_os("KUBESET_CONFIG_CHILD") else {
        return;
    };
    match expect.to_str() {
        Some("kubeconfig") => {
            let config = Config::infer().await.unwrap();
            assert_eq!(config.default_namespace, "from-second");
            assert_eq!(server_of(&config), "https://second.example:6443/");
        }
        _ => {
            let err = Config::infer().await.unwrap_err();
            let text = err.to_string();
            assert!(matches!(err, ConfigError::Infer { .. }), "{text}");
            assert!(text.contains("nothing-here"), "{text}");
            assert!(
                text.contains("KUBERNETES_SERVICE_HOST is not set"),
                "{text}"
            );
        }
    }
}

#[test]
fn odd_documents_are_errors_or_empty_never_panics() {
    let docs = [
        "[]",
        "just a string",
        "42",
        "clusters: [1, 2]",
        "clusters: [{name: k}]\ncontexts: [{name: c, context: null}]\ncurrent-context: c",
        "clusters: [{name: k, cluster: null}]\ncontexts: [{name: c, context: {cluster: k}}]\ncurrent-context: c",
        "contexts: [{name: c, context: {cluster: k, user: u}}]\ncurrent-context: c\nclusters: [{name: k, cluster: {server: 'https://h'}}]\nusers: [{name: u, user: null}]",
        "contexts: [{name: c}]\ncurrent-context: c",
        "current-context: [a, b]",
        "users: [{name: u, user: {exec: {command: x, args: null, env: null}}}]",
        "&a [*a, *a]",
        "? complex key\n: value",
        "clusters: !!binary aGVsbG8=",
        "\t\tbad indentation:\n  - x\n\t- y",
        "---\n---\n",
    ];
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let mut all: Vec<String> = docs.iter().map(|s| s.to_string()).collect();
    all.push(deep);
    // Pseudo-random printable noise, deterministic.
    let mut x: u32 = 0x1234_5678;
    for _ in 0..200 {
        let doc: String = (0..64)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                char::from(b" \n:-[]{}\"'#&*!|>,.abck0123"[(x % 26) as usize])
            })
            .collect();
        all.push(doc);
    }
    let mut parsed = 0;
    for doc in &all {
        if let Ok(k) = Kubeconfig::from_yaml(doc) {
            parsed += 1;
            // Resolving may fail but must not panic.
            let _ = Config::from_custom_kubeconfig_sync(k, &KubeConfigOptions::default());
        }
    }
    assert!(parsed >= 1, "some documents are valid");
    assert!(Kubeconfig::from_yaml("[]").is_err());
}

#[test]
fn a_ca_with_insecure_skip_tls_verify_is_a_conflict() {
    let k = Kubeconfig::from_yaml(
        "current-context: c
contexts: [{name: c, context: {cluster: k}}]
clusters: [{name: k, cluster: {server: 'https://h', insecure-skip-tls-verify: true, certificate-authority-data: aGVsbG8=}}]
",
    )
    .unwrap();
    let err = Config::from_custom_kubeconfig_sync(k, &KubeConfigOptions::default()).unwrap_err();
    assert!(matches!(err, ConfigError::Conflict { .. }), "{err}");
    assert!(err.to_string().contains("cluster \"k\""), "{err}");
}

#[test]
fn oversized_and_endless_kubeconfigs_fail_fast_naming_the_file_and_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let sparse = dir.path().join("huge");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(kubeset_rest::config::MAX_FILE_BYTES + 1)
        .unwrap();
    for path in [std::path::Path::new("/dev/zero"), sparse.as_path()] {
        let started = std::time::Instant::now();
        let err = Kubeconfig::read_from(path).unwrap_err();
        assert!(
            matches!(&err, ConfigError::FileTooLarge { path: p, limit: 16_777_216 } if p == path),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "{} is larger than the limit of 16777216 bytes",
                path.display()
            )
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
    }
}

#[test]
fn a_numeric_server_is_refused_naming_the_cluster_and_the_value() {
    let k = Kubeconfig::from_yaml(
        "current-context: c
contexts: [{name: c, context: {cluster: k}}]
clusters: [{name: k, cluster: {server: 12345}}]
",
    )
    .unwrap();
    let err = Config::from_custom_kubeconfig_sync(k, &KubeConfigOptions::default()).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("cluster \"k\""), "{text}");
    assert!(
        text.contains("\"12345\"") && text.contains("0.0.48.57"),
        "{text}"
    );
}
