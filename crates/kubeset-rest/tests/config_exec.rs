//! Exec credential plugins as real shell scripts: tokens and client
//! certificates cached until expirationTimestamp, refreshed after a 401,
//! cluster info passed in KUBERNETES_EXEC_INFO, and every failure mode.

#[path = "config_fixtures/support.rs"]
mod support;

use std::{
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use kubeset_rest::config::{Config, ConfigError, KubeConfigOptions, Kubeconfig};
use support::{Pki, Seen, serve, write};

const PAST: &str = "2000-01-01T00:00:00Z";
const FUTURE: &str = "2999-01-01T00:00:00Z";

/// Writes a plugin that counts its runs in `dir/count`, saves its
/// KUBERNETES_EXEC_INFO in `dir/info-N.json`, and prints `dir/cred-N.json`
/// (or `dir/cred.json`).
fn plugin(dir: &Path) -> PathBuf {
    let script = r#"#!/bin/sh
d="$PLUGIN_DIR"
n=$(cat "$d/count" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$d/count"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$d/info-$n.json"
if [ -f "$d/cred-$n.json" ]; then cat "$d/cred-$n.json"; else cat "$d/cred.json"; fi
"#;
    let path = write(dir, "plugin.sh", script);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn runs(dir: &Path) -> u32 {
    std::fs::read_to_string(dir.join("count"))
        .map(|s| s.trim().parse().unwrap())
        .unwrap_or(0)
}

fn token_cred(token: &str, expires: &str) -> String {
    serde_json::json!({
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": token, "expirationTimestamp": expires}
    })
    .to_string()
}

fn kubeconfig(dir: &Path, server: &str, ca: &str, exec_extra: &str) -> Config {
    kubeconfig_with(dir, server, ca, exec_extra, &KubeConfigOptions::default()).unwrap()
}

fn kubeconfig_with(
    dir: &Path,
    server: &str,
    ca: &str,
    exec_extra: &str,
    options: &KubeConfigOptions,
) -> Result<Config, ConfigError> {
    let yaml = format!(
        "current-context: c
contexts: [{{name: c, context: {{cluster: k, user: u}}}}]
clusters: [{{name: k, cluster: {{server: '{server}', certificate-authority: {ca}}}}}]
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./plugin.sh
      interactiveMode: Never
      env: [{{name: PLUGIN_DIR, value: '{}'}}]
{exec_extra}",
        dir.display()
    );
    let path = write(dir, "kubeconfig", yaml);
    Config::from_custom_kubeconfig_sync(Kubeconfig::read_from(&path).unwrap(), options)
}

#[tokio::test]
async fn token_is_cached_until_expiry_and_refreshed_after_a_401() {
    let pki = Pki::new("ca");
    let server = pki.server(&["127.0.0.1"]);
    // Only the third credential is accepted.
    let addr = serve(
        &server,
        None,
        Arc::new(|s: &Seen<'_>| match s.header("authorization") {
            Some("Bearer three") => (200, "ok".to_owned()),
            _ => (401, "no".to_owned()),
        }),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    plugin(d);
    write(d, "ca.crt", &pki.ca_pem);
    write(d, "cred-1.json", token_cred("one", PAST));
    write(d, "cred-2.json", token_cred("two", FUTURE));
    write(d, "cred-3.json", token_cred("three", FUTURE));
    let config = kubeconfig(d, &format!("https://{addr}"), "ca.crt", "");
    let auth = config.authenticator.clone().unwrap();
    assert_eq!(runs(d), 0, "the plugin runs on first use, not at load");

    let h = auth.authorization().await.unwrap().unwrap();
    assert_eq!(h, "Bearer one");
    assert!(h.is_sensitive());
    assert_eq!(runs(d), 1);
    // "one" has expired: the plugin runs again.
    assert_eq!(auth.authorization().await.unwrap().unwrap(), "Bearer two");
    assert_eq!(runs(d), 2);
    // "two" is valid until 2999: cached.
    assert_eq!(auth.authorization().await.unwrap().unwrap(), "Bearer two");
    assert_eq!(runs(d), 2);

    // Over the wire: 401 with "two", invalidate, retry with "three".
    let http = support::client(config.tls.client_config().unwrap());
    let mut statuses = Vec::new();
    for _ in 0..2 {
        let h = auth.authorization().await.unwrap().unwrap();
        let resp = http
            .get(config.cluster_url.clone())
            .header(http::header::AUTHORIZATION, h)
            .send()
            .await
            .unwrap();
        statuses.push(resp.status().as_u16());
        if resp.status() == 401 {
            auth.invalidate();
        } else {
            break;
        }
    }
    assert_eq!(statuses, [401, 200]);
    assert_eq!(runs(d), 3);
}

#[tokio::test]
async fn concurrent_requests_share_one_plugin_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    plugin(d);
    write(d, "ca.crt", Pki::new("ca").ca_pem);
    write(d, "cred.json", token_cred("shared", FUTURE));
    let config = kubeconfig(d, "https://127.0.0.1:1", "ca.crt", "");
    let auth = config.authenticator.clone().unwrap();
    let all = futures_join(
        (0..8)
            .map(|_| {
                let auth = auth.clone();
                tokio::spawn(async move { auth.authorization().await.unwrap().unwrap() })
            })
            .collect(),
    )
    .await;
    assert!(all.iter().all(|h| h == "Bearer shared"));
    assert_eq!(runs(d), 1);
}

async fn futures_join<T>(handles: Vec<tokio::task::JoinHandle<T>>) -> Vec<T> {
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

#[tokio::test]
async fn client_certificate_from_the_plugin_is_refreshed_without_rebuilding_the_client() {
    let pki = Pki::new("ca");
    let server = pki.server(&["127.0.0.1"]);
    let addr = serve(
        &server,
        Some(&pki),
        Arc::new(|s: &Seen<'_>| (200, s.client_cn.clone().unwrap_or_default())),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    plugin(d);
    write(d, "ca.crt", &pki.ca_pem);
    for (n, cn, expires) in [(1, "exec-one", PAST), (2, "exec-two", FUTURE)] {
        let id = pki.client(cn);
        let cred = serde_json::json!({
            "apiVersion": "client.authentication.k8s.io/v1",
            "kind": "ExecCredential",
            "status": {
                "clientCertificateData": id.cert_pem,
                "clientKeyData": id.key_pem,
                "expirationTimestamp": expires,
            }
        });
        write(d, &format!("cred-{n}.json"), cred.to_string());
    }
    let config = kubeconfig(d, &format!("https://{addr}"), "ca.crt", "");
    let auth = config.authenticator.clone().unwrap();
    // One client for the whole test; no pooling so that each request
    // handshakes again and picks up the latest certificate.
    let http = reqwest::Client::builder()
        .use_preconfigured_tls(config.tls.client_config().unwrap())
        .no_proxy()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let mut seen = Vec::new();
    for _ in 0..3 {
        // A certificate-only credential sends no Authorization header.
        assert_eq!(auth.authorization().await.unwrap(), None);
        let body = http
            .get(config.cluster_url.clone())
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        seen.push(body);
    }
    assert_eq!(seen, ["exec-one", "exec-two", "exec-two"]);
    assert_eq!(runs(d), 2);
}

#[tokio::test]
async fn provide_cluster_info_passes_the_cluster_to_the_plugin() {
    let pki = Pki::new("ca");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    plugin(d);
    write(d, "ca.crt", &pki.ca_pem);
    write(d, "cred.json", token_cred("t", FUTURE));
    let config = kubeconfig(
        d,
        "https://10.1.2.3:6443",
        "ca.crt",
        "      provideClusterInfo: true\n",
    );
    config
        .authenticator
        .clone()
        .unwrap()
        .authorization()
        .await
        .unwrap();
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("info-1.json")).unwrap()).unwrap();
    assert_eq!(info["kind"], "ExecCredential");
    assert_eq!(info["apiVersion"], "client.authentication.k8s.io/v1");
    assert_eq!(info["spec"]["interactive"], false);
    assert_eq!(info["spec"]["cluster"]["server"], "https://10.1.2.3:6443/");
    use base64::Engine as _;
    let ca = base64::engine::general_purpose::STANDARD
        .decode(
            info["spec"]["cluster"]["certificate-authority-data"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
    assert_eq!(String::from_utf8(ca).unwrap(), pki.ca_pem);
}

async fn exec_error(script: &str, exec_extra: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = write(d, "plugin.sh", script);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    write(d, "ca.crt", Pki::new("ca").ca_pem);
    let config = kubeconfig(d, "https://127.0.0.1:1", "ca.crt", exec_extra);
    let err = config
        .authenticator
        .clone()
        .unwrap()
        .authorization()
        .await
        .unwrap_err();
    let config_err = err.downcast_ref::<ConfigError>().expect("a ConfigError");
    let text = config_err.to_string();
    assert!(text.contains("user \"u\""), "{text}");
    assert!(text.contains("plugin.sh"), "{text}");
    text
}

#[tokio::test]
async fn plugin_failures_are_errors_that_name_the_user_and_command() {
    let text = exec_error("#!/bin/sh\necho 'no credentials here' >&2\nexit 3\n", "").await;
    assert!(text.contains("failed"), "{text}");
    assert!(text.contains("exit status: 3"), "{text}");
    assert!(text.contains("no credentials here"), "{text}");

    let text = exec_error("#!/bin/sh\necho 'garbage-secret-output'\n", "").await;
    assert!(text.contains("invalid ExecCredential"), "{text}");
    assert!(
        !text.contains("garbage-secret-output"),
        "output never shown: {text}"
    );

    let text = exec_error(
        "#!/bin/sh\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\"}}'\n",
        "",
    )
    .await;
    assert!(text.contains("apiVersion"), "{text}");

    let text = exec_error(
        "#!/bin/sh\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\",\"expirationTimestamp\":\"tomorrow\"}}'\n",
        "",
    )
    .await;
    assert!(text.contains("expirationTimestamp"), "{text}");

    let text = exec_error(
        "#!/bin/sh\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{}}'\n",
        "",
    )
    .await;
    assert!(
        text.contains("neither token nor client certificate"),
        "{text}"
    );
}

#[tokio::test]
async fn a_plugin_flooding_stdout_is_killed_with_a_clear_error() {
    let text = exec_error("#!/bin/sh\nexec cat /dev/zero\n", "").await;
    assert!(
        text.contains("printed more than 1048576 bytes; killed"),
        "{text}"
    );
}

/// A plugin that prints its credential and exits, leaving a helper that
/// holds its stdout (and stderr) open for a minute: the plugin's exit ends
/// the run and the credential it printed is used, over the wire, with one
/// run. Before, each run waited for the pipe until the exec timeout (120 s
/// in the CLI) and failed. The exec timeout here (10 s) is a hang guard.
#[tokio::test]
async fn a_plugin_leaving_a_helper_on_its_stdout_still_authenticates() {
    let pki = Pki::new("ca");
    let server = pki.server(&["127.0.0.1"]);
    let addr = serve(
        &server,
        None,
        Arc::new(|s: &Seen<'_>| match s.header("authorization") {
            Some("Bearer held") => (200, "ok".to_owned()),
            _ => (401, "no".to_owned()),
        }),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let script = format!(
        "#!/bin/sh\nn=$(cat \"$PLUGIN_DIR/count\" 2>/dev/null || echo 0)\necho $((n + 1)) > \"$PLUGIN_DIR/count\"\n\
         printf '%s' '{}'\nsleep 60 &\necho $! >> \"$PLUGIN_DIR/helpers\"\nexit 0\n",
        token_cred("held", FUTURE)
    );
    let path = write(d, "plugin.sh", script);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    write(d, "ca.crt", &pki.ca_pem);
    let options = KubeConfigOptions::default();
    let config = kubeconfig_with(d, &format!("https://{addr}"), "ca.crt", "", &options)
        .unwrap()
        .with_exec_timeout(Duration::from_secs(10))
        .unwrap();
    let client = kubeset_rest::RestClient::new(config.rest_config().unwrap()).unwrap();
    let sent = client.get().send().await;
    for pid in std::fs::read_to_string(d.join("helpers"))
        .unwrap_or_default()
        .split_whitespace()
    {
        let _ = std::process::Command::new("kill")
            .args(["-9", pid])
            .status();
    }
    let response = sent.expect("the credential printed before the exit is used");
    assert_eq!(response.status, 200);
    assert_eq!(runs(d), 1, "one run, cached");
}

/// Whether `pid` is gone (or a zombie waiting for its reaper).
fn dead(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    })
}

/// A plugin that starts a helper (`sleep 300`), writes both pids to
/// `dir/pids` and waits for ever.
fn hanging_plugin(dir: &Path) {
    let script = "#!/bin/sh\nsleep 300 &\necho $! > \"$PLUGIN_DIR/pids\"\necho $$ >> \"$PLUGIN_DIR/pids\"\nwait\n";
    let path = write(dir, "plugin.sh", script);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    write(dir, "ca.crt", Pki::new("ca").ca_pem);
}

#[tokio::test]
async fn a_hanging_plugin_is_killed_when_the_call_gives_up() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    hanging_plugin(d);
    let mut config = kubeconfig(d, "https://127.0.0.1:1", "ca.crt", "");
    config.timeout = Some(Duration::from_secs(1));
    let client = kubeset_rest::RestClient::new(config.rest_config().unwrap()).unwrap();
    let started = std::time::Instant::now();
    let err = client.get().send().await.unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_plugin_gone(d).await;
}

/// Waits (30 s at most) until both processes of [`hanging_plugin`] are gone.
async fn assert_plugin_gone(d: &Path) {
    let until = std::time::Instant::now() + Duration::from_secs(30);
    let pids = loop {
        let pids = std::fs::read_to_string(d.join("pids")).unwrap_or_default();
        if pids.split_whitespace().count() == 2 || std::time::Instant::now() > until {
            break pids;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    for pid in pids.split_whitespace() {
        while !dead(pid) {
            assert!(
                std::time::Instant::now() < until,
                "plugin process {pid} still runs"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// The configured exec timeout, not the call's budget (there is none
/// here), ends a hanging plugin: set through `Config::with_exec_timeout`
/// on a loaded configuration. The error names the timeout, and the plugin
/// and its helper are killed.
#[tokio::test]
async fn the_configured_exec_timeout_kills_a_hanging_plugin() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    hanging_plugin(d);
    let two = Duration::from_secs(2);
    let config = kubeconfig(d, "https://127.0.0.1:1", "ca.crt", "");
    assert_eq!(
        config.exec_timeout(),
        Some(kubeset_rest::config::DEFAULT_EXEC_TIMEOUT)
    );
    let config = config.with_exec_timeout(two).unwrap();
    assert_eq!(config.exec_timeout(), Some(two));
    assert!(
        config.timeout.is_none(),
        "no call budget: the plugin timeout ends it"
    );
    let client = kubeset_rest::RestClient::new(config.rest_config().unwrap()).unwrap();
    let err = client.get().send().await.unwrap_err();
    let chain: Vec<&dyn std::error::Error> =
        std::iter::successors(Some(&err as &dyn std::error::Error), |e| e.source()).collect();
    let text: Vec<String> = chain.iter().map(ToString::to_string).collect();
    let timeout = chain
        .iter()
        .filter_map(|e| e.downcast_ref::<ConfigError>())
        .find_map(|e| match e {
            ConfigError::ExecTimeout { timeout, .. } => Some(*timeout),
            _ => None,
        });
    assert_eq!(timeout, Some(two), "{text:?}");
    assert!(
        text.iter()
            .any(|t| t.contains("/plugin.sh\" did not finish within 2s; killed")),
        "{text:?}"
    );
    assert_plugin_gone(d).await;
}

#[test]
fn exec_timeouts_outside_one_second_to_one_hour_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    hanging_plugin(d);
    for bad in [
        Duration::ZERO,
        Duration::from_millis(999),
        Duration::from_secs(3601),
        Duration::MAX,
    ] {
        let loaded = kubeconfig(d, "https://127.0.0.1:1", "ca.crt", "");
        let err = loaded.with_exec_timeout(bad).unwrap_err();
        assert!(
            matches!(err, ConfigError::ExecTimeoutOutOfRange { timeout, .. } if timeout == bad),
            "{err}"
        );
        assert!(err.to_string().contains("is outside 1s..=1h0m0s"), "{err}");
    }
    for good in [Duration::from_secs(1), Duration::from_secs(3600)] {
        let loaded = kubeconfig(d, "https://127.0.0.1:1", "ca.crt", "");
        let config = loaded.with_exec_timeout(good).unwrap();
        assert_eq!(config.exec_timeout(), Some(good));
    }
}

#[tokio::test]
async fn missing_plugin_reports_the_install_hint() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ca.crt", Pki::new("ca").ca_pem);
    let config = kubeconfig(
        d,
        "https://127.0.0.1:1",
        "ca.crt",
        "      installHint: install it with your package manager\n",
    );
    let err = config
        .authenticator
        .clone()
        .unwrap()
        .authorization()
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("cannot run exec plugin"), "{text}");
    assert!(
        text.contains("install it with your package manager"),
        "{text}"
    );
}

#[test]
fn invalid_exec_settings_fail_at_load_naming_file_user_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (exec, field) in [
        (
            "{command: x, apiVersion: client.authentication.k8s.io/v1}",
            "exec.interactiveMode",
        ),
        (
            "{command: x, apiVersion: client.authentication.k8s.io/v1alpha1}",
            "exec.apiVersion",
        ),
        (
            "{command: x, apiVersion: client.authentication.k8s.io/v1, interactiveMode: Always}",
            "exec.interactiveMode",
        ),
        (
            "{apiVersion: client.authentication.k8s.io/v1beta1}",
            "exec.command",
        ),
    ] {
        let yaml = format!(
            "current-context: c
contexts: [{{name: c, context: {{cluster: k, user: u}}}}]
clusters: [{{name: k, cluster: {{server: 'https://127.0.0.1:1', insecure-skip-tls-verify: true}}}}]
users: [{{name: u, user: {{exec: {exec}}}}}]
"
        );
        let path = write(d, "kubeconfig", yaml);
        let err = Config::from_custom_kubeconfig_sync(
            Kubeconfig::read_from(&path).unwrap(),
            &KubeConfigOptions::default(),
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(&err, ConfigError::InvalidField { field: f, .. } if *f == field),
            "{text}"
        );
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains("user \"u\""), "{text}");
    }
}
