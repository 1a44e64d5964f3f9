//! kubectl users' habits (issue 22), each run by the built binary against
//! an embedded API server over real sockets: `-v N`, `get -w` rows,
//! `logs -c`, `create namespace|configmap`, `get all`, `-o jsonpath`,
//! `--dry-run=server`, shell completions.

mod common;

use common::*;
use kubeset_testserver::TestServer;
use serde_json::{Value, json};

async fn server() -> (TestServer, tempfile::TempDir, std::path::PathBuf) {
    let s = TestServer::builder().start().await.expect("start server");
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = dir.path().join("kubeconfig");
    s.write_kubeconfig(&kc).expect("kubeconfig");
    (s, dir, kc)
}

fn cells(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbosity_takes_a_separate_or_attached_level() {
    let (s, _dir, kc) = server().await;
    for flags in [&["-v", "9"][..], &["-v=9"], &["--v", "9"], &["-v9"]] {
        let mut args = flags.to_vec();
        args.extend(["get", "ns", "-o", "name"]);
        let r = kubeset(&kc, &args).await;
        assert_eq!(r.code, 0, "{flags:?}: {}", r.stderr);
        assert!(
            r.stdout.contains("namespace/default"),
            "{flags:?}: {}",
            r.stdout
        );
        // Level 9 is trace: the requests are logged on stderr.
        assert!(
            r.stderr.contains("TRACE") || r.stderr.contains("DEBUG"),
            "{flags:?}: {}",
            r.stderr
        );
    }
    // After the subcommand too (a global flag), and a bare -v is kubectl's
    // usage error.
    let r = kubeset(&kc, &["get", "ns", "-v", "0", "-o", "name"]).await;
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{}", r.stderr);
    let line = kubeset(&kc, &["-v"]).await.fails(2);
    assert!(line.contains("-v"), "{line}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_watch_prints_table_rows() {
    let (s, _dir, kc) = server().await;
    // Nothing yet: kubectl prints nothing, then the header with the first row.
    let g = Lines::spawn(command(&[
        "--kubeconfig",
        kc.to_str().unwrap(),
        "get",
        "cm",
        "-l",
        "app=w",
        "-w",
    ]));
    // The watch is open once a change shows; create until the first row
    // arrives would race, so create once and wait for its row.
    s.create(json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "w1", "namespace": "default", "labels": {"app": "w"}},
                    "data": {"a": "1"}}))
        .unwrap();
    assert_eq!(cells(&g.next()), ["NAME", "DATA", "AGE"]);
    let row = g.next();
    assert_eq!(cells(&row)[..2], ["w1", "1"], "{row}");
    s.create(json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "w2", "namespace": "default", "labels": {"app": "w"}}}))
        .unwrap();
    let row = g.next();
    assert_eq!(cells(&row)[..2], ["w2", "0"], "{row}");
    drop(g);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_checks_the_container_as_kubectl() {
    let (s, _dir, kc) = server().await;
    s.create(json!({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": "p", "namespace": "default"},
                    "spec": {"initContainers": [{"name": "init", "image": "busybox"}],
                             "containers": [{"name": "c", "image": "busybox"}]}}))
        .unwrap();
    // kubectl v1.32 against kube-apiserver v1.35 prints exactly this line.
    let line = kubeset(&kc, &["logs", "p", "-c", "wrong"]).await.fails(1);
    assert_eq!(line, "error: container wrong is not valid for pod p");
    for ok in ["c", "init"] {
        let r = kubeset(&kc, &["logs", "p", "-c", ok]).await;
        assert_eq!(r.code, 0, "{ok}: {}", r.stderr);
    }
    let line = kubeset(&kc, &["logs", "nope", "-c", "c"]).await.fails(1);
    assert_eq!(
        line,
        r#"Error from server (NotFound): pods "nope" not found"#
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_namespace_and_configmap_with_dry_run() {
    let (s, dir, kc) = server().await;
    let out = kubeset(&kc, &["create", "namespace", "team"]).await.ok();
    assert_eq!(out, "namespace/team created\n");
    assert!(s.get("v1", "Namespace", None, "team").is_ok());
    let out = kubeset(&kc, &["create", "ns", "ghost", "--dry-run=server"])
        .await
        .ok();
    assert_eq!(out, "namespace/ghost created (server dry run)\n");
    assert!(s.get("v1", "Namespace", None, "ghost").is_err());

    let text = write(dir.path(), "greeting.txt", "hello\n");
    let bin = dir.path().join("blob");
    std::fs::write(&bin, [0u8, 159, 146, 150]).unwrap();
    let from_text = text.to_str().unwrap();
    let from_bin = format!("raw={}", bin.to_str().unwrap());
    let args = [
        "-n",
        "team",
        "create",
        "configmap",
        "c",
        "--from-literal",
        "a=1",
        "--from-literal=b=x=y",
        "--from-file",
        from_text,
        "--from-file",
        &from_bin,
    ];
    assert_eq!(kubeset(&kc, &args).await.ok(), "configmap/c created\n");
    let cm = s.get("v1", "ConfigMap", Some("team"), "c").unwrap();
    assert_eq!(
        cm["data"],
        json!({"a": "1", "b": "x=y", "greeting.txt": "hello\n"})
    );
    assert_eq!(cm["binaryData"], json!({"raw": "AJ+Slg=="}));
    // A key twice is kubectl's error; nothing is sent.
    let line = kubeset(
        &kc,
        &[
            "create",
            "cm",
            "d",
            "--from-literal",
            "a=1",
            "--from-literal",
            "a=2",
        ],
    )
    .await
    .fails(2);
    assert!(line.contains("cannot add key a"), "{line}");
    // Both -f and a type: clap refuses.
    assert_eq!(
        kubeset(&kc, &["create", "-f", from_text, "ns", "x"])
            .await
            .code,
        2
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_run_server_on_every_writing_verb() {
    let (s, dir, kc) = server().await;
    let m = write(
        dir.path(),
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\ndata: {k: v}\n",
    );
    let m = m.to_str().unwrap();
    let out = kubeset(&kc, &["create", "-f", m, "--dry-run=server"])
        .await
        .ok();
    assert_eq!(out, "configmap/d created (server dry run)\n");
    assert!(s.get("v1", "ConfigMap", Some("default"), "d").is_err());
    let out = kubeset(&kc, &["apply", "-f", m, "--dry-run=server"])
        .await
        .ok();
    assert_eq!(out, "configmap/d serverside-applied (server dry run)\n");
    assert!(s.get("v1", "ConfigMap", Some("default"), "d").is_err());

    kubeset(&kc, &["apply", "-f", m]).await.ok();
    let patch = r#"{"data":{"k":"changed"}}"#;
    let out = kubeset(
        &kc,
        &[
            "patch",
            "cm",
            "d",
            "--type",
            "merge",
            "-p",
            patch,
            "--dry-run=server",
        ],
    )
    .await
    .ok();
    assert_eq!(out, "configmap/d patched (server dry run)\n");
    let out = kubeset(&kc, &["delete", "cm", "d", "--dry-run=server"])
        .await
        .ok();
    assert_eq!(out, "configmap \"d\" deleted (server dry run)\n");
    let cm = s.get("v1", "ConfigMap", Some("default"), "d").unwrap();
    assert_eq!(cm["data"]["k"], "v");
    // kubectl's `client` strategy needs no server; kubeset does not fake it.
    assert_eq!(
        kubeset(&kc, &["delete", "cm", "d", "--dry-run=client"])
            .await
            .code,
        2
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_all_lists_the_all_category() {
    let (s, _dir, kc) = server().await;
    let r = kubeset(&kc, &["get", "all"]).await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The embedded server has the `kubernetes` service in default.
    assert!(r.stdout.contains("service/kubernetes"), "{}", r.stdout);
    let r = kubeset(&kc, &["-n", "kube-public", "get", "all"]).await;
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, "", "No resources found in kube-public namespace.\n")
    );

    s.create(json!({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": "p", "namespace": "default"},
                    "spec": {"containers": [{"name": "c", "image": "busybox"}]}}))
        .unwrap();
    s.create(json!({"apiVersion": "apps/v1", "kind": "Deployment",
                    "metadata": {"name": "web", "namespace": "default"},
                    "spec": {"selector": {"matchLabels": {"app": "web"}},
                             "template": {"metadata": {"labels": {"app": "web"}},
                                          "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}))
        .unwrap();
    // A ConfigMap is not in `all`.
    s.create(json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "not-all", "namespace": "default"}}))
        .unwrap();
    let out = kubeset(&kc, &["get", "all"]).await.ok();
    let blocks: Vec<&str> = out.split("\n\n").collect();
    assert!(blocks.len() >= 3, "{out}");
    let pods = blocks
        .iter()
        .find(|b| b.contains("pod/p"))
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(
        cells(pods.lines().next().unwrap()),
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    );
    assert!(out.contains("deployment.apps/web"), "{out}");
    assert!(!out.contains("not-all"), "{out}");
    let names = kubeset(&kc, &["get", "all", "-o", "name"]).await.ok();
    let mut names: Vec<&str> = names.lines().collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["deployment.apps/web", "pod/p", "service/kubernetes"]
    );
    let doc: Value =
        serde_json::from_str(&kubeset(&kc, &["get", "all", "-o", "json"]).await.ok()).unwrap();
    assert_eq!(doc["kind"], "List");
    assert_eq!(doc["items"].as_array().map(Vec::len), Some(3));
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_jsonpath_and_the_other_formats() {
    let (s, _dir, kc) = server().await;
    for (name, app) in [("a", "web"), ("b", "db")] {
        s.create(json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": name, "namespace": "default", "labels": {"app": app}},
                        "data": {"k": name}}))
            .unwrap();
    }
    let get = |extra: &'static [&'static str]| {
        let kc = kc.clone();
        async move {
            let mut args = vec!["get", "cm"];
            args.extend_from_slice(extra);
            kubeset(&kc, &args).await.ok()
        }
    };
    assert_eq!(
        get(&["-o", "jsonpath={.items[*].metadata.name}"]).await,
        "a b"
    );
    assert_eq!(get(&["a", "-o", "jsonpath={.data.k}"]).await, "a");
    assert_eq!(
        get(&[
            "-o",
            r#"jsonpath={range .items[*]}{.metadata.name}={.metadata.labels.app}{"\n"}{end}"#
        ])
        .await,
        "a=web\nb=db\n"
    );
    assert_eq!(
        get(&[
            "-o",
            r#"jsonpath={.items[?(@.metadata.labels.app=="db")].metadata.name}"#
        ])
        .await,
        "b"
    );
    assert_eq!(get(&["a", "-o", "jsonpath={.missing}"]).await, "");
    assert_eq!(get(&["-l", "app=web", "-o", "name"]).await, "configmap/a\n");
    let yaml = get(&["a", "-o", "yaml"]).await;
    assert!(
        yaml.contains("kind: ConfigMap") && yaml.contains("name: a"),
        "{yaml}"
    );
    let json: Value = serde_json::from_str(&get(&["a", "-o", "json"]).await).unwrap();
    assert_eq!(json["data"]["k"], "a");
    // The server's table: a ConfigMap has no wide columns (as kubectl
    // shows against kube-apiserver).
    let wide = get(&["-o", "wide"]).await;
    assert_eq!(cells(wide.lines().next().unwrap()), ["NAME", "DATA", "AGE"]);
    let line = kubeset(&kc, &["get", "cm", "-o", "jsonpath={.items["])
        .await
        .fails(2);
    assert!(line.contains("jsonpath"), "{line}");
    s.shutdown().await;
}

#[test]
fn completion_scripts_for_bash_zsh_and_fish() {
    for shell in ["bash", "zsh", "fish"] {
        let out = command(&["completion", shell]).output().expect("run");
        assert!(
            out.status.success(),
            "{shell}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let script = String::from_utf8_lossy(&out.stdout);
        for word in ["kubeset", "get", "api-resources", "completion"] {
            assert!(script.contains(word), "{shell} script lacks {word}");
        }
    }
    // bash loads it and registers the completion function.
    let has_bash = std::process::Command::new("bash")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if has_bash {
        let out = std::process::Command::new("bash")
            .args([
                "-c",
                &format!("source <(\"{BIN}\" completion bash) && complete -p kubeset"),
            ])
            .output()
            .expect("bash");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("kubeset"),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(
        command(&["completion", "tcsh"])
            .output()
            .unwrap()
            .status
            .code(),
        Some(2)
    );
}
