//! `auth-provider: gcp` over real sockets with its cached `access-token`
//! and its `cmd-path` (no feature needed): real scripts written into a temp
//! directory stand in for `gcloud config config-helper`, and the embedded
//! API server accepts only the token they hand out.
#![cfg(unix)]

use std::{
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
    time::Duration,
};

use kubeset_rest::{
    Error, RestClient,
    config::{Config, ConfigError, KubeConfigOptions, Kubeconfig},
};
use kubeset_testserver::TestServer;
use serde_json::Value;

/// Bounds every request of a test (no timing assertion: a hang fails).
const DEADLINE: Duration = Duration::from_secs(60);
/// The token the API server accepts.
const GOOD: &str = "ya29.good-token";
const FAR: &str = "2999-01-01T00:00:00Z";
const PAST: &str = "2001-01-01T00:00:00Z";

/// A script in `dir` that appends its arguments to `dir/runs`, then runs
/// `body`.
fn script(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("gcloud");
    let runs = dir.join("runs");
    let text = format!("#!/bin/sh\necho \"$@\" >> '{}'\n{body}\n", runs.display());
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// How often the script ran, and with which arguments.
fn runs(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("runs"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// gcloud's `config config-helper --format=json` output (the parts read).
fn helper_output(token: &str, expiry: &str) -> String {
    format!(
        "cat <<'EOF'\n{{\"configuration\": {{\"active_configuration\": \"default\"}}, \"credential\": {{\"access_token\": \"{token}\", \"token_expiry\": \"{expiry}\"}}}}\nEOF"
    )
}

/// The kubeconfig user as gcloud writes it, with `extra` config lines.
fn kubeconfig(server: &str, extra: &str) -> Kubeconfig {
    let yaml = format!(
        "apiVersion: v1
kind: Config
current-context: c
contexts: [{{name: c, context: {{cluster: k, user: u}}}}]
clusters: [{{name: k, cluster: {{server: '{server}'}}}}]
users:
- name: u
  user:
    auth-provider:
      name: gcp
      config:
{extra}
"
    );
    Kubeconfig::from_yaml(&yaml).unwrap()
}

/// The config lines of a gcloud-written user running `cmd`.
fn gcloud_lines(cmd: &Path) -> String {
    format!(
        "        cmd-path: '{}'
        cmd-args: config config-helper --format=json
        token-key: '{{.credential.access_token}}'
        expiry-key: '{{.credential.token_expiry}}'",
        cmd.display()
    )
}

fn load(kubeconfig: Kubeconfig) -> Result<Config, ConfigError> {
    Config::from_custom_kubeconfig_sync(kubeconfig, &KubeConfigOptions::default())
}

fn client(config: Config) -> RestClient {
    RestClient::new(config.rest_config().unwrap().with_qps_burst(-1.0, 0)).unwrap()
}

async fn server() -> TestServer {
    TestServer::builder()
        .token(Some(GOOD.to_owned()))
        .start()
        .await
        .unwrap()
}

async fn list_namespaces(c: &RestClient) -> Result<Value, Error> {
    tokio::time::timeout(
        DEADLINE,
        c.get().resource("namespaces").send_json::<Value>(),
    )
    .await
    .expect("within the deadline")
}

/// The error and its causes, one line.
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        text.push_str(&format!(" / {s}"));
        source = s.source();
    }
    text
}

#[tokio::test]
async fn a_cached_access_token_is_sent_until_its_expiry_without_running_the_command() {
    let (server, dir) = (server().await, tempfile::tempdir().unwrap());
    let cmd = script(dir.path(), &helper_output("other", FAR));
    let lines = format!(
        "{}\n        access-token: {GOOD}\n        expiry: '{FAR}'",
        gcloud_lines(&cmd)
    );
    let c = client(load(kubeconfig(&server.url(), &lines)).unwrap());
    list_namespaces(&c)
        .await
        .expect("the cached token is accepted");
    list_namespaces(&c).await.expect("and again");
    assert!(runs(dir.path()).is_empty(), "{:?}", runs(dir.path()));
}

#[tokio::test]
async fn an_expired_access_token_is_replaced_by_the_commands_and_that_one_is_kept() {
    let (server, dir) = (server().await, tempfile::tempdir().unwrap());
    let cmd = script(dir.path(), &helper_output(GOOD, FAR));
    let lines = format!(
        "{}\n        access-token: stale\n        expiry: '{PAST}'",
        gcloud_lines(&cmd)
    );
    let c = client(load(kubeconfig(&server.url(), &lines)).unwrap());
    list_namespaces(&c)
        .await
        .expect("the command's token is accepted");
    list_namespaces(&c).await.expect("and kept");
    assert_eq!(runs(dir.path()), ["config config-helper --format=json"]);
}

#[tokio::test]
async fn a_token_at_its_expiry_is_fetched_again_for_the_next_request() {
    let (server, dir) = (server().await, tempfile::tempdir().unwrap());
    // Each run hands out a token already expired: every request runs it.
    let cmd = script(dir.path(), &helper_output(GOOD, PAST));
    let c = client(load(kubeconfig(&server.url(), &gcloud_lines(&cmd))).unwrap());
    for _ in 0..3 {
        list_namespaces(&c).await.expect("accepted");
    }
    assert_eq!(runs(dir.path()).len(), 3);
}

#[tokio::test]
async fn a_401_runs_the_command_again_although_the_cached_token_has_not_expired() {
    let (server, dir) = (server().await, tempfile::tempdir().unwrap());
    let cmd = script(dir.path(), &helper_output(GOOD, FAR));
    let lines = format!(
        "{}\n        access-token: revoked\n        expiry: '{FAR}'",
        gcloud_lines(&cmd)
    );
    let c = client(load(kubeconfig(&server.url(), &lines)).unwrap());
    // The 401 marks the token stale: the first request's retry or the next
    // request runs the command.
    if let Err(e) = list_namespaces(&c).await {
        assert!(e.is_unauthorized(), "{e}");
    }
    list_namespaces(&c)
        .await
        .expect("the command's token is accepted");
    assert_eq!(runs(dir.path()).len(), 1);
}

#[tokio::test]
async fn plain_output_is_the_token_and_cmd_path_alone_is_split_at_spaces() {
    let (server, dir) = (server().await, tempfile::tempdir().unwrap());
    let cmd = script(dir.path(), &format!("echo '  {GOOD}  '"));
    let lines = format!("        cmd-path: '{} print-token --quiet'", cmd.display());
    let c = client(load(kubeconfig(&server.url(), &lines)).unwrap());
    list_namespaces(&c)
        .await
        .expect("the printed token is accepted");
    list_namespaces(&c)
        .await
        .expect("and kept (no expiry: until a 401)");
    assert_eq!(runs(dir.path()), ["print-token --quiet"]);
}

#[tokio::test]
async fn concurrent_requests_share_one_run_of_the_command() {
    let (server, dir) = (server().await, tempfile::tempdir().unwrap());
    let cmd = script(dir.path(), &helper_output(GOOD, FAR));
    let c = client(load(kubeconfig(&server.url(), &gcloud_lines(&cmd))).unwrap());
    let all = futures::future::join_all((0..8).map(|_| list_namespaces(&c))).await;
    for result in all {
        result.expect("accepted");
    }
    assert_eq!(runs(dir.path()).len(), 1);
}

#[tokio::test]
async fn cmd_drop_env_keeps_the_named_variables_from_the_command() {
    let (server, dir) = (server().await, tempfile::tempdir().unwrap());
    // kube-rs's `cmd-drop-env`: HOME (always set here) is not passed on.
    let cmd = script(
        dir.path(),
        &format!("if [ -z \"$HOME\" ]; then echo {GOOD}; else echo home-was-passed; fi"),
    );
    let lines = format!(
        "        cmd-path: '{}'\n        cmd-drop-env: HOME OTHER",
        cmd.display()
    );
    let c = client(load(kubeconfig(&server.url(), &lines)).unwrap());
    list_namespaces(&c).await.expect("HOME was dropped");
}

/// The error of the first request of a client whose command is `body`.
async fn first_error(body: &str, timeout: Option<Duration>) -> (String, String) {
    let (server, dir) = (server().await, tempfile::tempdir().unwrap());
    let cmd = script(dir.path(), body);
    let mut config = load(kubeconfig(&server.url(), &gcloud_lines(&cmd))).unwrap();
    if let Some(t) = timeout {
        config = config.with_exec_timeout(t).unwrap();
        assert_eq!(config.exec_timeout(), Some(t));
    }
    let err = list_namespaces(&client(config))
        .await
        .expect_err("no usable token");
    (chain(&err), cmd.display().to_string())
}

#[tokio::test]
async fn a_command_that_hangs_is_killed_at_the_exec_timeout() {
    let (chain, cmd) = first_error("sleep 600", Some(Duration::from_secs(1))).await;
    assert!(
        chain.contains(&format!(
            "exec plugin {cmd:?} did not finish within 1s; killed"
        )),
        "{chain}"
    );
}

#[tokio::test]
async fn a_command_that_prints_100_mb_is_killed_at_the_output_cap() {
    let (chain, cmd) = first_error("head -c 100000000 /dev/zero", None).await;
    assert!(
        chain.contains(&format!("{cmd:?} printed more than 1048576 bytes; killed")),
        "{chain}"
    );
}

#[tokio::test]
async fn a_failing_command_is_named_with_its_status_and_stderr() {
    let body = "echo 'ERROR: (gcloud.config.config-helper) You do not currently have an active account selected.' >&2; exit 3";
    let (chain, cmd) = first_error(body, None).await;
    assert!(
        chain.contains(&format!("exec plugin {cmd:?} failed (exit status: 3): ERROR: (gcloud.config.config-helper) You do not"))
            && chain.contains("user \"u\""),
        "{chain}"
    );
}

#[tokio::test]
async fn output_that_is_not_json_or_lacks_the_keys_is_named_without_the_output() {
    let (chain, cmd) = first_error("echo 'ya29.secret-looking'", None).await;
    assert!(
        chain.contains(&format!(
            "auth-provider gcp: the output of {cmd:?}: not JSON"
        )),
        "{chain}"
    );
    assert!(!chain.contains("secret-looking"), "{chain}");
    let (chain, _) = first_error("echo '{\"credential\": {\"token\": \"t\"}}'", None).await;
    assert!(
        chain.contains("token-key \"{.credential.access_token}\": no field \"access_token\""),
        "{chain}"
    );
    let body = helper_output("ya29.x", "next tuesday");
    let (chain, _) = first_error(&body, None).await;
    assert!(
        chain.contains("expiry \"next tuesday\" is not RFC 3339"),
        "{chain}"
    );
}

#[test]
fn bad_keys_are_refused_at_load_naming_the_key() {
    let invalid = |lines: &str| match load(kubeconfig("https://k.example", lines)) {
        Err(ConfigError::InvalidField {
            entry,
            field,
            reason,
            ..
        }) => {
            assert_eq!(entry, "user \"u\"");
            (field, reason)
        }
        other => panic!("{lines}: {other:?}"),
    };
    let (field, reason) =
        invalid("        cmd-path: gcloud\n        token-key: '{.items[*].token}'");
    assert_eq!(field, "token-key");
    assert!(
        reason.contains("[*]") && reason.contains("only field names"),
        "{reason}"
    );
    let (field, _) = invalid("        cmd-path: gcloud\n        expiry-key: '{range .a}{.b}{end}'");
    assert_eq!(field, "expiry-key");
    let (field, reason) = invalid("        cmd-path: gcloud\n        time-fmt: '2006-01-02 15:04'");
    assert!(
        field == "time-fmt" && reason.contains("RFC 3339"),
        "{reason}"
    );
    let (field, _) = invalid("        cmd-path: ''");
    assert_eq!(field, "cmd-path");
    let (field, reason) = invalid("        access-token: t\n        expiry: yesterday");
    assert!(
        field == "expiry" && reason.contains("\"yesterday\""),
        "{reason}"
    );
}

#[cfg(not(feature = "oauth"))]
#[test]
fn without_oauth_a_user_with_no_command_and_no_valid_token_is_refused_at_load() {
    for lines in [
        "        scopes: a",
        &format!("        access-token: t\n        expiry: '{PAST}'"),
    ] {
        match load(kubeconfig("https://k.example", lines)) {
            Err(ConfigError::InvalidField { field, reason, .. }) => {
                assert_eq!(field, "auth-provider");
                assert!(reason.contains("feature `oauth`"), "{reason}");
            }
            other => panic!("{lines}: {other:?}"),
        }
    }
    let config = load(kubeconfig(
        "https://k.example",
        &format!("        access-token: s3cret\n        expiry: '{FAR}'"),
    ))
    .expect("a valid cached token alone is enough");
    assert!(!format!("{config:?} {config}").contains("s3cret"));
}

/// The `KUBESET_REALKUBE_*` settings of the instance named by
/// `KUBESET_REALKUBE_ENV` (the env file `realkube.sh start` writes, read
/// as bash reads it), `None` when it is not set.
fn realkube_env() -> Option<std::collections::BTreeMap<String, String>> {
    let path = std::env::var_os("KUBESET_REALKUBE_ENV")?;
    let out = std::process::Command::new("bash")
        .args(["-c", ". \"$1\" && env -0", "realkube-env"])
        .arg(&path)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(
        out.stdout
            .split(|b| *b == 0)
            .filter_map(|kv| std::str::from_utf8(kv).ok()?.split_once('='))
            .filter(|(k, _)| k.starts_with("KUBESET_REALKUBE_"))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
    )
}

#[tokio::test]
async fn on_realkube_the_commands_token_is_who_the_api_server_sees_and_a_401_replaces_a_revoked_one()
 {
    let Some(env) = realkube_env() else {
        eprintln!("KUBESET_REALKUBE_ENV is not set: the embedded server's tests above cover this");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let token = &env["KUBESET_REALKUBE_USER_TOKEN"];
    let cmd = script(dir.path(), &helper_output(token, FAR));
    let server = env["KUBESET_REALKUBE_SERVERS"].split(',').next().unwrap();
    let yaml = format!(
        "apiVersion: v1
kind: Config
current-context: c
contexts: [{{name: c, context: {{cluster: k, user: u}}}}]
clusters: [{{name: k, cluster: {{server: '{server}', certificate-authority: '{ca}'}}}}]
users:
- name: u
  user:
    auth-provider:
      name: gcp
      config:
{lines}
        access-token: revoked
        expiry: '{FAR}'
",
        ca = env["KUBESET_REALKUBE_CA"],
        lines = gcloud_lines(&cmd),
    );
    let c = client(load(Kubeconfig::from_yaml(&yaml).unwrap()).unwrap());
    let review = serde_json::json!({
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "SelfSubjectReview",
    });
    let whoami = || async {
        tokio::time::timeout(
            DEADLINE,
            c.post()
                .abs_path(["apis", "authentication.k8s.io", "v1", "selfsubjectreviews"])
                .json_body(&review)
                .send_json::<Value>(),
        )
        .await
        .expect("within the deadline")
    };
    // The revoked cached token is refused: the 401 makes the first
    // request's retry or the next one run the command.
    if let Err(e) = whoami().await {
        assert!(e.is_unauthorized(), "{e}");
    }
    let answer = whoami().await.expect("the command's token is accepted");
    assert_eq!(
        answer["status"]["userInfo"]["username"], "kubeset-tester-token",
        "{answer}"
    );
    assert_eq!(runs(dir.path()).len(), 1);
}
