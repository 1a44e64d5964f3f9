//! The built `kubeset` binary against an embedded API server started in
//! the test: every verb, output formats, exit codes, warnings, TLS+token.

mod common;

use std::path::Path;

use common::*;
use kubeset_testserver::TestServer;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_get_apply_patch_delete() {
    let (s, dir, kc) = server().await;
    let kc = kc.as_path();
    create_from_a_manifest(kc, dir.path()).await;
    get_with_selectors_and_formats(kc).await;
    apply_server_side(&s, kc, dir.path()).await;
    patch_in_three_flavours(&s, kc).await;
    delete_then_not_found(kc).await;
    s.shutdown().await;
}

/// `get namespaces`, then `create -f` of [`MANIFEST`] twice: the second
/// time every object fails, each reported, exit 1.
async fn create_from_a_manifest(kc: &Path, dir: &Path) {
    let out = kubeset(kc, &["get", "namespaces"]).await.ok();
    let first = out.lines().next().unwrap_or_default();
    assert!(first.starts_with("NAME") && first.ends_with("AGE"), "{out}");
    assert!(out.contains("kube-system"), "{out}");

    let m = write(dir, "m.yaml", MANIFEST);
    let m = m.to_str().unwrap();
    let out = kubeset(kc, &["create", "-f", m]).await.ok();
    assert_eq!(
        out,
        "configmap/a created\nconfigmap/b created\ndeployment.apps/web created\n"
    );
    // Again: every object fails, each reported, then a summary; exit 1.
    let again = kubeset(kc, &["create", "-f", m]).await;
    assert_eq!(again.code, 1, "{}", again.stderr);
    assert!(
        again
            .stderr
            .contains("Error from server (AlreadyExists): configmaps \"a\" already exists"),
        "{}",
        again.stderr
    );
}

/// Selectors and the name output; short names and kinds resolve; the
/// wide table; JSON and YAML output.
async fn get_with_selectors_and_formats(kc: &Path) {
    let out = kubeset(kc, &["get", "cm", "-l", "app=web", "-o", "name"])
        .await
        .ok();
    assert_eq!(out, "configmap/a\n");
    let out = kubeset(
        kc,
        &[
            "get",
            "ConfigMap",
            "--field-selector",
            "metadata.name=b",
            "-o",
            "name",
        ],
    )
    .await
    .ok();
    assert_eq!(out, "configmap/b\n");
    let out = kubeset(kc, &["get", "deployments.apps", "-o", "wide"])
        .await
        .ok();
    let mut lines = out.lines();
    assert_eq!(
        lines.next().unwrap().split_whitespace().collect::<Vec<_>>(),
        [
            "NAME",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR"
        ]
    );
    let row: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(row[0], "web");
    assert_eq!(row[1], "0/2");
    assert_eq!(row[5..], ["web,sidecar", "nginx:1,busybox:1", "app=web"]);

    // JSON: one object as itself, a list as kind List with typed items.
    let one: Value = serde_json::from_str(
        &kubeset(kc, &["get", "deploy", "web", "-o", "json"])
            .await
            .ok(),
    )
    .unwrap();
    assert_eq!(one["kind"], "Deployment");
    assert_eq!(one["spec"]["replicas"], 2);
    let list: Value =
        serde_json::from_str(&kubeset(kc, &["get", "cm", "-o", "json"]).await.ok()).unwrap();
    assert_eq!(list["kind"], "List");
    let kinds: Vec<&Value> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["kind"])
        .collect();
    assert!(
        !kinds.is_empty() && kinds.iter().all(|k| *k == "ConfigMap"),
        "{list}"
    );
    let yaml: Value =
        serde_norway::from_str(&kubeset(kc, &["get", "cm", "a", "-o", "yaml"]).await.ok()).unwrap();
    assert_eq!(yaml["data"]["x"], "1");
    assert_eq!(yaml["apiVersion"], "v1");
}

/// Server-side apply: replicas belong to the create ("kubeset-create"),
/// so changing them conflicts until forced; then "kubeset" owns them, and
/// another manager takes them over only with `--force-conflicts`.
async fn apply_server_side(s: &TestServer, kc: &Path, dir: &Path) {
    let applied = write(
        dir,
        "apply.yaml",
        &MANIFEST.replace("replicas: 2", "replicas: 3"),
    );
    let applied = applied.to_str().unwrap();
    let conflict = kubeset(kc, &["apply", "--server-side", "-f", applied]).await;
    assert_eq!(conflict.code, 1, "{}", conflict.stderr);
    assert!(
        conflict.stderr.contains("conflict with \"kubeset-create\"")
            && conflict.stderr.contains(".spec.replicas"),
        "{}",
        conflict.stderr
    );
    let out = kubeset(
        kc,
        &["apply", "--server-side", "--force-conflicts", "-f", applied],
    )
    .await
    .ok();
    assert!(
        out.contains("deployment.apps/web serverside-applied"),
        "{out}"
    );
    let dep = s
        .get("apps/v1", "Deployment", Some("default"), "web")
        .unwrap();
    assert_eq!(dep["spec"]["replicas"], 3);
    let managers: Vec<&str> = dep["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["manager"].as_str())
        .collect();
    assert!(managers.contains(&"kubeset"), "{managers:?}");

    let other = write(
        dir,
        "other.yaml",
        &MANIFEST.replace("replicas: 2", "replicas: 5"),
    );
    let other = other.to_str().unwrap();
    let conflict = kubeset(kc, &["apply", "-f", other, "--field-manager", "other"]).await;
    assert_eq!(conflict.code, 1, "{}", conflict.stderr);
    assert!(
        conflict.stderr.contains("Error from server (Conflict)"),
        "{}",
        conflict.stderr
    );
    kubeset(
        kc,
        &[
            "apply",
            "-f",
            other,
            "--field-manager",
            "other",
            "--force-conflicts",
        ],
    )
    .await
    .ok();
    let dep = s
        .get("apps/v1", "Deployment", Some("default"), "web")
        .unwrap();
    assert_eq!(dep["spec"]["replicas"], 5);
}

/// Patches of the three flavours: merge, JSON, strategic (which keeps
/// the sidecar).
async fn patch_in_three_flavours(s: &TestServer, kc: &Path) {
    let out = kubeset(
        kc,
        &[
            "patch",
            "cm",
            "a",
            "--type",
            "merge",
            "-p",
            r#"{"data":{"y":"2"}}"#,
        ],
    )
    .await
    .ok();
    assert_eq!(out, "configmap/a patched\n");
    kubeset(
        kc,
        &[
            "patch",
            "cm",
            "a",
            "--type",
            "json",
            "-p",
            r#"[{"op":"remove","path":"/data/x"}]"#,
        ],
    )
    .await
    .ok();
    assert_eq!(
        s.get("v1", "ConfigMap", Some("default"), "a").unwrap()["data"],
        json!({"y": "2"})
    );
    let out = kubeset(
        kc,
        &[
            "patch",
            "deploy",
            "web",
            "-p",
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:2"}]}}}}"#,
        ],
    )
    .await
    .ok();
    assert_eq!(out, "deployment.apps/web patched\n");
    let dep = s
        .get("apps/v1", "Deployment", Some("default"), "web")
        .unwrap();
    let containers = &dep["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers[0]["image"], "nginx:2");
    assert_eq!(
        containers[1]["name"], "sidecar",
        "strategic merge kept the sidecar"
    );
}

/// Delete, then NotFound is exit 1 with kubectl's line; empty lists say
/// so on stderr, like kubectl.
async fn delete_then_not_found(kc: &Path) {
    // Delete, then NotFound is exit 1 with kubectl's line.
    let out = kubeset(kc, &["delete", "configmap", "a", "b"]).await.ok();
    assert_eq!(out, "configmap \"a\" deleted\nconfigmap \"b\" deleted\n");
    let line = kubeset(kc, &["get", "cm", "a"]).await.fails(1);
    assert_eq!(
        line,
        "Error from server (NotFound): configmaps \"a\" not found"
    );
    let line = kubeset(kc, &["delete", "cm", "a"]).await.fails(1);
    assert!(line.contains("NotFound"), "{line}");
    kubeset(kc, &["delete", "cm", "a", "--ignore-not-found"])
        .await
        .ok();

    // Empty lists say so on stderr, like kubectl.
    let r = kubeset(kc, &["get", "cm", "-l", "app=none"]).await;
    assert_eq!(r.code, 0);
    assert_eq!(r.stdout, "");
    assert!(
        r.stderr
            .contains("No resources found in default namespace."),
        "{}",
        r.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespaces_stdin_and_all_namespaces() {
    let (s, _dir, kc) = server().await;
    let kc = kc.to_string_lossy().into_owned();
    s.create(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}))
        .unwrap();
    let mut child = command(&["--kubeconfig", &kc, "-n", "team", "create", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"j"}}"#)
            .unwrap();
    }
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "configmap/j created\n"
    );
    assert!(s.get("v1", "ConfigMap", Some("team"), "j").is_ok());

    let out = run_raw(vec![
        "--kubeconfig".into(),
        kc.clone(),
        "get".into(),
        "cm".into(),
        "-A".into(),
    ])
    .await
    .ok();
    let header: Vec<&str> = out.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAMESPACE", "NAME", "DATA", "AGE"]);
    assert!(
        out.lines()
            .any(|l| l.starts_with("team ") && l.contains(" j ")),
        "{out}"
    );

    // A manifest whose namespace disagrees with -n is refused (exit 2).
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "ns.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: k, namespace: other}\n",
    );
    let line = run_raw(vec![
        "--kubeconfig".into(),
        kc,
        "-n".into(),
        "team".into(),
        "create".into(),
        "-f".into(),
        f.to_string_lossy().into_owned(),
    ])
    .await
    .fails(2);
    assert!(line.contains("does not match the namespace"), "{line}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_codes_for_usage_config_and_api_errors() {
    let (s, dir, kc) = server().await;
    let kcs = kc.to_str().unwrap();

    // Usage errors: exit 2, one line.
    let line = run_raw(vec!["get".into()]).await.fails(2);
    assert!(line.starts_with("error:"), "{line}");
    run_raw(vec!["get".into(), "pods".into(), "--bogus".into()])
        .await
        .fails(2);
    run_raw(vec!["frobnicate".into()]).await.fails(2);
    kubeset(&kc, &["patch", "cm", "x", "--type", "json", "-p", "{}"])
        .await
        .fails(2);
    kubeset(&kc, &["get", "pods", "--request-timeout", "soon"])
        .await
        .fails(2);
    run_raw(vec![
        "--server".into(),
        "ftp://x".into(),
        "get".into(),
        "pods".into(),
    ])
    .await
    .fails(2);

    // Config errors: broken, missing, wrong context.
    let broken = write(
        dir.path(),
        "broken",
        "clusters: [this is: not: a kubeconfig",
    );
    let line = kubeset(&broken, &["get", "pods"]).await.fails(2);
    assert!(line.contains("not a valid kubeconfig"), "{line}");
    let line = kubeset(&dir.path().join("missing"), &["get", "pods"])
        .await
        .fails(2);
    assert!(line.contains("missing"), "{line}");
    run_raw(vec![
        "--kubeconfig".into(),
        kcs.into(),
        "--context".into(),
        "nope".into(),
        "get".into(),
        "pods".into(),
    ])
    .await
    .fails(2);
    let bad_manifest = write(dir.path(), "bad.yaml", "kind: [");
    kubeset(&kc, &["create", "-f", bad_manifest.to_str().unwrap()])
        .await
        .fails(2);

    // API errors: exit 1.
    let line = kubeset(&kc, &["get", "nosuchthing"]).await.fails(1);
    assert_eq!(
        line,
        "error: the server doesn't have a resource type \"nosuchthing\""
    );
    kubeset(&kc, &["get", "pod", "missing"]).await.fails(1);
    kubeset(&kc, &["logs", "missing"]).await.fails(1);

    // A server that is gone: exit 1 with one line, quickly.
    s.shutdown().await;
    let started = std::time::Instant::now();
    let line = kubeset(&kc, &["get", "ns", "--request-timeout", "2s"])
        .await
        .fails(1);
    assert!(line.starts_with("error:"), "{line}");
    assert!(started.elapsed() < std::time::Duration::from_secs(25));

    // --help and --version are not errors.
    let help = run_raw(vec!["--help".into()]).await.ok();
    assert!(help.contains("demo") && help.contains("--server"), "{help}");
    run_raw(vec!["--version".into()]).await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_prints_one_line_per_event() {
    let (s, _dir, kc) = server().await;
    let w = Lines::spawn(command(&[
        "--kubeconfig",
        kc.to_str().unwrap(),
        "watch",
        "configmaps",
        "-l",
        "app=w",
    ]));
    // Wait for the watch to be open: the first ADDED proves it.
    let created = s
        .create(json!({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": "w1", "namespace": "default", "labels": {"app": "w"}}}))
        .unwrap();
    let rv = created["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    // Either the initial state or the event itself, always exactly once.
    assert_eq!(w.next(), format!("ADDED configmap/w1 rv={rv}"));
    kubeset(
        &kc,
        &[
            "patch",
            "cm",
            "w1",
            "--type",
            "merge",
            "-p",
            r#"{"data":{"a":"b"}}"#,
        ],
    )
    .await
    .ok();
    let modified = w.next();
    assert!(
        modified.starts_with("MODIFIED configmap/w1 rv="),
        "{modified}"
    );
    kubeset(&kc, &["delete", "cm", "w1"]).await.ok();
    let deleted = w.next();
    assert!(deleted.starts_with("DELETED configmap/w1 rv="), "{deleted}");
    drop(w);

    // get -w: the table, then a row per change after the list's
    // resourceVersion (habits.rs has the empty-list case).
    s.create(json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "g1", "namespace": "default", "labels": {"app": "g"}}}))
        .unwrap();
    let g = Lines::spawn(command(&[
        "--kubeconfig",
        kc.to_str().unwrap(),
        "get",
        "cm",
        "-l",
        "app=g",
        "-w",
    ]));
    assert!(g.next().starts_with("NAME "));
    assert!(g.next().starts_with("g1 "));
    s.create(json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "g2", "namespace": "default", "labels": {"app": "g"}}}))
        .unwrap();
    let row = g.next();
    assert_eq!(
        row.split_whitespace().take(2).collect::<Vec<_>>(),
        ["g2", "0"],
        "{row}"
    );
    drop(g);

    // --timeout bounds the watch: it exits 0 on its own.
    let r = kubeset(&kc, &["watch", "cm", "--timeout", "1"]).await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_resources_warnings_and_logs() {
    let (s, _dir, kc) = server().await;
    let out = kubeset(&kc, &["api-resources"]).await.ok();
    let deploy = out
        .lines()
        .find(|l| l.starts_with("deployments "))
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(
        deploy.split_whitespace().collect::<Vec<_>>(),
        ["deployments", "deploy", "apps/v1", "true", "Deployment"]
    );
    let names = kubeset(&kc, &["api-resources", "-o", "name"]).await.ok();
    assert!(names.lines().any(|l| l == "deployments.apps"), "{names}");
    assert!(names.lines().any(|l| l == "configmaps"), "{names}");

    // The server's deprecation warning reaches stderr once.
    let r = kubeset(&kc, &["get", "endpoints"]).await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let warnings: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("Warning: "))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", r.stderr);
    assert!(
        warnings[0].contains("Endpoints is deprecated"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.contains("kubernetes"), "{}", r.stdout);

    // Logs of an existing pod: the embedded server answers an empty log.
    s.create(json!({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": "p", "namespace": "default"},
                    "spec": {"containers": [{"name": "c", "image": "busybox"}]}}))
        .unwrap();
    let r = kubeset(&kc, &["logs", "p"]).await;
    assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{}", r.stderr);
    let out = kubeset(&kc, &["get", "pods"]).await.ok();
    assert_eq!(
        out.lines()
            .next()
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>(),
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    );
    assert!(out.contains("p      0/1     Pending"), "{out}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_token_and_tls_flags_without_kubeconfig() {
    let s = TestServer::builder()
        .tls(true)
        .token(Some("s3cret".into()))
        .replicas(2)
        .start()
        .await
        .unwrap();
    let urls = s.urls();
    let base = |extra: &[&str]| {
        let mut v: Vec<String> = vec![
            "--server".into(),
            urls[0].clone(),
            "--server".into(),
            urls[1].clone(),
            "--insecure-skip-tls-verify".into(),
        ];
        v.extend(extra.iter().map(|s| (*s).to_owned()));
        v
    };
    let out = run_raw(base(&["--token", "s3cret", "get", "ns", "-o", "name"]))
        .await
        .ok();
    assert!(out.contains("namespace/default"), "{out}");
    let r = run_raw(base(&["--token", "wrong", "get", "ns"])).await;
    assert_eq!(r.code, 1, "{}", r.stderr);
    let lines: Vec<&str> = r.stderr.lines().collect();
    // The insecure flag warns at the default verbosity, then the error.
    assert_eq!(lines.len(), 2, "{}", r.stderr);
    assert!(
        lines[0].starts_with("Warning: insecure-skip-tls-verify is set"),
        "{}",
        r.stderr
    );
    assert!(lines[1].contains("Unauthorized"), "{}", r.stderr);
    // Without --insecure-skip-tls-verify the generated CA is not trusted.
    let r = run_raw(vec![
        "--server".into(),
        urls[0].clone(),
        "--token".into(),
        "s3cret".into(),
        "get".into(),
        "ns".into(),
    ])
    .await;
    assert_eq!(r.code, 1, "{}", r.stderr);
    s.shutdown().await;
}

#[test]
fn demo_runs_to_completion() {
    let out = command(&["demo"]).output().expect("run demo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for needle in [
        "409 Conflict",
        "ADDED job-3 and ADDED job-4",
        "nothing lost and nothing repeated",
        "The watch resumed by itself on",
        "All steps checked out.",
        "Next: `kubeset serve --kubeconfig-out",
    ] {
        assert!(
            stdout.contains(needle),
            "{needle:?} missing from:\n{stdout}"
        );
    }
    // Every numbered step reports, in order.
    let mut from = 0;
    for step in [
        "1. Created the namespace",
        "2. Created the Deployment",
        "3. Created the ConfigMaps",
        "4. Listed ConfigMaps",
        "5. Watched app=web ConfigMaps",
        "6. A strategic merge patch",
        "7. Server-side apply",
        "8. A replace of web-config",
        "9. A failover client",
    ] {
        let Some(at) = stdout[from..].find(step) else {
            panic!("{step:?} missing after byte {from} of:\n{stdout}");
        };
        from += at + step.len();
    }
    // The last line says where to go next.
    let last = stdout.lines().last().unwrap_or_default();
    assert!(last.starts_with("Next: "), "{last}");
}
