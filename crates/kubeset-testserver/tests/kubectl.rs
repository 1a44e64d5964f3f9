//! The real `kubectl` against the embedded server: get, create -f,
//! apply --server-side (with a conflict), delete and get -w, over HTTP and
//! over HTTPS with a token. Skips loudly when kubectl is not installed.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::*;
use kubeset_testserver::TestServer;
use serde_json::json;

fn kubectl_available() -> bool {
    match Command::new("kubectl")
        .args(["version", "--client"])
        .output()
    {
        Ok(o) => o.status.success(),
        Err(_) => false,
    }
}

fn skip_loudly() {
    eprintln!();
    eprintln!("################################################################");
    eprintln!("## SKIPPED: `kubectl` is not installed (not found on PATH).    ##");
    eprintln!("## The kubectl compatibility test did NOT run.                  ##");
    eprintln!("################################################################");
    eprintln!();
}

struct Kubectl {
    kubeconfig: PathBuf,
    cache: PathBuf,
}

impl Kubectl {
    /// kubectl with `s`'s kubeconfig and a cache dir, both under `dir`.
    fn for_server(s: &TestServer, dir: &Path) -> Self {
        let kubeconfig = dir.join("kubeconfig");
        s.write_kubeconfig(&kubeconfig).unwrap();
        Self {
            kubeconfig,
            cache: dir.join("cache"),
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new("kubectl");
        c.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(&self.cache)
            .arg("--request-timeout=20s")
            .args(args)
            .env_remove("KUBECONFIG");
        c
    }

    /// Runs kubectl off the runtime's worker threads.
    async fn run(&self, args: &[&str]) -> Output {
        let mut cmd = self.command(args);
        tokio::task::spawn_blocking(move || cmd.output().expect("run kubectl"))
            .await
            .expect("join")
    }

    async fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args).await;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_create_apply_delete_and_watch() {
    if !kubectl_available() {
        skip_loudly();
        return;
    }
    let s = TestServer::builder().replicas(2).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let k = Kubectl::for_server(&s, dir.path());

    let ns = k.ok(&["get", "namespaces"]).await;
    assert!(ns.contains("default") && ns.contains("kube-system"), "{ns}");

    let cm = write(
        dir.path(),
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\n  labels: {app: web}\ndata:\n  a: \"1\"\n",
    );
    let out = k.ok(&["create", "-f", &cm]).await;
    assert!(out.contains("configmap/demo created"), "{out}");
    let out = k.ok(&["get", "configmaps", "-l", "app=web"]).await;
    assert!(out.contains("NAME") && out.contains("demo"), "{out}");
    let out = k
        .ok(&["get", "configmap", "demo", "-o", "jsonpath={.data.a}"])
        .await;
    assert_eq!(out, "1");

    let dep = write(dir.path(), "dep.yaml", DEPLOYMENT);
    let out = k.ok(&["apply", "--server-side", "-f", &dep]).await;
    assert!(
        out.contains("deployment.apps/web serverside-applied"),
        "{out}"
    );
    let dep5 = write(
        dir.path(),
        "dep5.yaml",
        &DEPLOYMENT.replace("replicas: 2", "replicas: 5"),
    );
    let conflict = k
        .run(&[
            "apply",
            "--server-side",
            "--field-manager=other",
            "-f",
            &dep5,
        ])
        .await;
    assert!(!conflict.status.success());
    let err = String::from_utf8_lossy(&conflict.stderr);
    assert!(
        err.contains("conflict with \"kubectl\"") && err.contains(".spec.replicas"),
        "{err}"
    );
    k.ok(&[
        "apply",
        "--server-side",
        "--field-manager=other",
        "--force-conflicts",
        "-f",
        &dep5,
    ])
    .await;
    let out = k
        .ok(&[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.spec.replicas}",
        ])
        .await;
    assert_eq!(out, "5");

    // get -w: start watching, then create through the API, read the line.
    let mut watch = k
        .command(&["get", "configmaps", "-w"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn kubectl get -w");
    let stdout = watch.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let c = client();
    let base = format!("{}/api/v1/namespaces/default/configmaps", s.urls()[1]);
    // Wait until the watch is established: a Table header, then "demo".
    let header = tokio::task::block_in_place(|| rx.recv_timeout(TIMEOUT)).expect("watch header");
    assert!(
        header.starts_with("NAME") && header.contains("AGE"),
        "{header}"
    );
    let first = tokio::task::block_in_place(|| rx.recv_timeout(TIMEOUT)).expect("first watch line");
    assert!(first.starts_with("demo "), "{first}");
    let (code, _) = post(&c, &base, &json!({"metadata": {"name": "watched"}})).await;
    assert_eq!(code, 201);
    let mut seen = Vec::new();
    let deadline = std::time::Instant::now() + TIMEOUT;
    while std::time::Instant::now() < deadline {
        match tokio::task::block_in_place(|| rx.recv_timeout(Duration::from_millis(200))) {
            Ok(line) => {
                let done = line.starts_with("watched ");
                seen.push(line);
                if done {
                    break;
                }
            }
            Err(_) => tokio::task::yield_now().await,
        }
    }
    let _ = watch.kill();
    let _ = watch.wait();
    let _ = reader.join();
    assert!(seen.iter().any(|l| l.starts_with("watched ")), "{seen:?}");

    let out = k.ok(&["delete", "configmap", "demo"]).await;
    assert!(out.contains("configmap \"demo\" deleted"), "{out}");
    let missing = k.run(&["get", "configmap", "demo"]).await;
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("configmaps \"demo\" not found"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_over_tls_with_token() {
    if !kubectl_available() {
        skip_loudly();
        return;
    }
    let s = TestServer::builder()
        .tls(true)
        .token(Some("t0ken".into()))
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let k = Kubectl::for_server(&s, dir.path());
    let out = k
        .ok(&[
            "get",
            "endpoints",
            "kubernetes",
            "-o",
            "jsonpath={.subsets[0].ports[0].name}",
        ])
        .await;
    assert_eq!(out, "https");
    // Wrong token: kubectl reports the 401.
    let bad = k.run(&["--token", "nope", "get", "configmaps"]).await;
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr).to_lowercase();
    assert!(
        err.contains("unauthorized") || err.contains("credentials"),
        "{err}"
    );
}

/// One Event store (issue 19): an Event written through core/v1 is served
/// by events.k8s.io/v1 with the fields renamed, and the other way round;
/// `kubectl describe` finds a Pod's events through the
/// `involvedObject.*` field selector.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_event_store_and_kubectl_describe_shows_events() {
    let s = TestServer::start().await.unwrap();
    let c = client();
    let core = format!("{}/api/v1/namespaces/default/events", s.url());
    let v1 = format!(
        "{}/apis/events.k8s.io/v1/namespaces/default/events",
        s.url()
    );
    let (code, pod) = post(&c, &format!("{}/api/v1/namespaces/default/pods", s.url()),
        &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0"}, "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}})).await;
    assert_eq!(code, 201);
    let uid = pod["metadata"]["uid"].as_str().unwrap().to_owned();
    let (code, _) = post(
        &c,
        &core,
        &json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "web-0.1"},
        "involvedObject": {"kind": "Pod", "name": "web-0", "namespace": "default", "uid": uid},
        "reason": "Pulled", "message": "Successfully pulled image nginx:1", "type": "Normal",
        "source": {"component": "kubelet"}, "count": 1,
        "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:00Z"}),
    )
    .await;
    assert_eq!(code, 201);
    let (code, seen) = get(&c, &format!("{v1}/web-0.1")).await;
    assert_eq!(code, 200);
    assert_eq!(seen["apiVersion"], "events.k8s.io/v1");
    assert_eq!(seen["regarding"]["name"], "web-0");
    assert_eq!(seen["note"], "Successfully pulled image nginx:1");
    assert_eq!(seen["deprecatedSource"]["component"], "kubelet");
    assert_eq!(seen["deprecatedCount"], 1);
    assert!(seen.get("involvedObject").is_none(), "{seen}");
    let (code, _) = post(&c, &v1, &json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "web-0.2"},
        "eventTime": "2026-01-01T00:00:01.000000Z", "reportingController": "kubeset.dev/test", "reportingInstance": "i",
        "action": "Scale", "reason": "Started", "note": "Started container c", "type": "Normal",
        "regarding": {"kind": "Pod", "name": "web-0", "namespace": "default", "uid": uid}})).await;
    assert_eq!(code, 201);
    let (_, back) = get(&c, &format!("{core}/web-0.2")).await;
    assert_eq!(back["involvedObject"]["uid"], uid.as_str());
    assert_eq!(back["message"], "Started container c");
    assert_eq!(back["reportingComponent"], "kubeset.dev/test");
    let (_, list) = get(
        &c,
        &format!("{core}?fieldSelector=involvedObject.uid%3D{uid}"),
    )
    .await;
    assert_eq!(list["items"].as_array().unwrap().len(), 2);

    if !kubectl_available() {
        skip_loudly();
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let k = Kubectl::for_server(&s, dir.path());
    let out = k.ok(&["describe", "pod", "web-0"]).await;
    let events = out.split("Events:").nth(1).unwrap_or_default();
    assert!(
        events.contains("Pulled") && events.contains("Successfully pulled image nginx:1"),
        "{out}"
    );
    assert!(events.contains("Started container c"), "{out}");
    assert!(!events.contains("<none>"), "{out}");
}

/// The spec directory the models were generated from (`$KUBESET_SPECS`
/// or `../shared/specs` beside the repository).
fn spec_dir() -> Option<PathBuf> {
    let root = std::env::var_os("KUBESET_SPECS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/specs"));
    let version = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../specs/kubernetes-version"),
    )
    .ok()?;
    let dir = root.join("kubernetes").join(version.trim());
    dir.is_dir().then_some(dir)
}

/// `/openapi/v2` and `/openapi/v3` from the specs (issue 19): `kubectl
/// explain` two levels deep on a built-in kind and on a CRD, ETags that
/// answer 304, and the CRD's schema in both documents.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openapi_from_the_specs_and_kubectl_explain() {
    let Some(specs) = spec_dir() else {
        eprintln!("## SKIPPED: no spec directory (set KUBESET_SPECS); /openapi was NOT checked ##");
        return;
    };
    let s = TestServer::builder()
        .openapi_specs(specs)
        .start()
        .await
        .unwrap();
    s.register_crd(json!({
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "description": "A widget.", "properties": {
                    "spec": {"type": "object", "description": "What the widget should be.", "properties": {
                        "size": {"type": "integer", "description": "How big the widget is."}}}}}}}]}
    })).unwrap();
    let c = client();
    let (code, index) = get(&c, &format!("{}/openapi/v3", s.url())).await;
    assert_eq!(code, 200);
    let core = index["paths"]["api/v1"]["serverRelativeURL"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(core.starts_with("/openapi/v3/api/v1?hash="), "{core}");
    let resp = c.get(format!("{}{core}", s.url())).send().await.unwrap();
    let etag = resp.headers()["etag"].to_str().unwrap().to_owned();
    let doc: serde_json::Value = resp.json().await.unwrap();
    assert!(
        doc["components"]["schemas"]["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
            .is_object()
    );
    let again = c
        .get(format!("{}/openapi/v3/api/v1", s.url()))
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status().as_u16(), 304);
    let (code, crd_doc) = get(&c, &format!("{}/openapi/v3/apis/example.com/v1", s.url())).await;
    assert_eq!(code, 200);
    assert_eq!(
        crd_doc["components"]["schemas"]["com.example.v1.Widget"]["properties"]["spec"]["properties"]
            ["size"]["type"],
        "integer"
    );
    let (code, v2) = get(&c, &format!("{}/openapi/v2", s.url())).await;
    assert_eq!(code, 200);
    assert!(v2["definitions"]["io.k8s.api.apps.v1.Deployment"].is_object());
    assert!(v2["definitions"]["com.example.v1.Widget"].is_object());

    if !kubectl_available() {
        skip_loudly();
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let k = Kubectl::for_server(&s, dir.path());
    let out = k.ok(&["explain", "pods.spec"]).await;
    assert!(
        out.contains("KIND:") && out.contains("Pod") && out.contains("containers"),
        "{out}"
    );
    let out = k
        .ok(&["explain", "deployments.spec.template.spec.containers"])
        .await;
    assert!(out.contains("image"), "{out}");
    let out = k.ok(&["explain", "widgets.spec"]).await;
    assert!(
        out.contains("What the widget should be.") && out.contains("size"),
        "{out}"
    );
}

/// `/openapi/v3` from the schemas compiled into the binary, with no spec
/// directory (issue 30): every served group-version in the index, each
/// built-in kind's definition under its upstream name with its GVK, the
/// fields and descriptions of the models, ETags that answer 304, a CRD's
/// document with `ObjectMeta`; and the real `kubectl explain` two levels
/// deep on built-in kinds and on the CRD.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openapi_compiled_in_and_kubectl_explain() {
    let s = TestServer::start().await.unwrap();
    s.register_crd(json!({
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "description": "A widget.", "properties": {
                    "spec": {"type": "object", "description": "What the widget should be.", "properties": {
                        "size": {"type": "integer", "description": "How big the widget is."}}}}}}}]}
    })).unwrap();
    compiled_documents_are_served(&s).await;
    if !kubectl_available() {
        skip_loudly();
        return;
    }
    kubectl_explains_from_compiled_documents(&s).await;
}

/// The `/openapi/v3` index and documents of [`openapi_compiled_in_and_kubectl_explain`].
async fn compiled_documents_are_served(s: &TestServer) {
    let c = client();
    let (code, index) = get(&c, &format!("{}/openapi/v3", s.url())).await;
    assert_eq!(code, 200);
    for gv in [
        "api/v1",
        "apis/apps/v1",
        "apis/batch/v1",
        "apis/example.com/v1",
    ] {
        assert!(
            index["paths"][gv]["serverRelativeURL"].is_string(),
            "{gv}: {index}"
        );
    }
    let apps = index["paths"]["apis/apps/v1"]["serverRelativeURL"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(apps.starts_with("/openapi/v3/apis/apps/v1?hash="), "{apps}");
    let resp = c.get(format!("{}{apps}", s.url())).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let etag = resp.headers()["etag"].to_str().unwrap().to_owned();
    // The index lists each document's ETag as its hash (without building
    // the documents not asked for).
    assert_eq!(
        format!("\"{}\"", apps.rsplit("hash=").next().unwrap()),
        etag
    );
    let doc: serde_json::Value = resp.json().await.unwrap();
    let deployment = &doc["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"];
    assert_eq!(
        deployment["x-kubernetes-group-version-kind"],
        json!([{"group": "apps", "kind": "Deployment", "version": "v1"}])
    );
    // Definitions by upstream name, referred to by `$ref` as kube-apiserver
    // publishes them.
    let schemas = &doc["components"]["schemas"];
    assert_eq!(
        deployment["properties"]["spec"]["allOf"][0]["$ref"],
        "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"
    );
    let spec = &schemas["io.k8s.api.apps.v1.DeploymentSpec"];
    let strategy = &spec["properties"]["strategy"];
    assert_eq!(
        strategy["description"],
        "The deployment strategy to use to replace existing pods with new ones."
    );
    assert_eq!(
        schemas["io.k8s.api.apps.v1.RollingUpdateDeployment"]["properties"]["maxSurge"]["allOf"][0]
            ["$ref"],
        "#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString"
    );
    assert_eq!(
        schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["x-kubernetes-int-or-string"],
        true
    );
    let containers = &schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
    assert_eq!(containers["x-kubernetes-list-type"], "map");
    assert_eq!(containers["x-kubernetes-list-map-keys"], json!(["name"]));
    assert_eq!(
        containers["items"]["allOf"][0]["$ref"],
        "#/components/schemas/io.k8s.api.core.v1.Container"
    );
    let again = c
        .get(format!("{}/openapi/v3/apis/apps/v1", s.url()))
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status().as_u16(), 304);
    let (code, core) = get(&c, &format!("{}/openapi/v3/api/v1", s.url())).await;
    assert_eq!(code, 200);
    assert!(
        core["components"]["schemas"]["io.k8s.api.core.v1.PodSpec"]["properties"]["nodeName"]
            ["description"]
            .as_str()
            .is_some_and(|d| d.starts_with("NodeName")),
        "{}",
        core["components"]["schemas"]["io.k8s.api.core.v1.PodSpec"]
    );
    let (code, crd_doc) = get(&c, &format!("{}/openapi/v3/apis/example.com/v1", s.url())).await;
    assert_eq!(code, 200);
    assert!(
        crd_doc["components"]["schemas"]["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]
            ["properties"]["labels"]
            .is_object()
    );
    let (code, _) = get(
        &c,
        &format!("{}/openapi/v3/apis/nothing.example/v1", s.url()),
    )
    .await;
    assert_eq!(code, 404);
}

/// The real `kubectl explain` of [`openapi_compiled_in_and_kubectl_explain`],
/// two levels deep on built-in kinds and on the CRD.
async fn kubectl_explains_from_compiled_documents(s: &TestServer) {
    let dir = tempfile::tempdir().unwrap();
    let k = Kubectl::for_server(s, dir.path());
    // The referenced definition's name and description, as kube-apiserver
    // publishes them.
    let out = k.ok(&["explain", "deployment.spec.strategy"]).await;
    assert!(
        out.contains("KIND:       Deployment")
            && out.contains("FIELD: strategy <DeploymentStrategy>")
            && out.contains("The deployment strategy to use to replace existing pods")
            && out.contains("DeploymentStrategy describes how to replace existing pods")
            && out.contains("rollingUpdate\t<RollingUpdateDeployment>")
            && out.contains("type\t<string>"),
        "{out}"
    );
    let out = k.ok(&["explain", "pods.spec.containers"]).await;
    assert!(
        out.contains("FIELD: containers <[]Container>")
            && out.contains("image\t<string>")
            && out.contains("livenessProbe\t<Probe>"),
        "{out}"
    );
    let out = k.ok(&["explain", "pods.spec.containers.resources"]).await;
    assert!(
        out.contains("limits\t<map[string]Quantity>") && out.contains("claims\t<[]ResourceClaim>"),
        "{out}"
    );
    let out = k.ok(&["explain", "pods.metadata.creationTimestamp"]).await;
    assert!(
        out.contains("FIELD: creationTimestamp <string>")
            && out.contains("Time is a wrapper around time.Time"),
        "{out}"
    );
    let out = k.ok(&["explain", "widgets.spec"]).await;
    assert!(
        out.contains("What the widget should be.") && out.contains("size\t<integer>"),
        "{out}"
    );
    let out = k.ok(&["explain", "widgets.metadata.labels"]).await;
    assert!(
        out.contains("FIELD: labels <map[string]string>")
            && out.contains("organize and categorize"),
        "{out}"
    );
}

/// Tables with kube-apiserver's printer columns (issue 19): `kubectl get`
/// shows READY/UP-TO-DATE/AVAILABLE for Deployments, the wide pod columns,
/// and a CRD's additionalPrinterColumns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_prints_the_real_columns() {
    if !kubectl_available() {
        skip_loudly();
        return;
    }
    let s = TestServer::start().await.unwrap();
    s.create(json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx:1"}]}}}})).unwrap();
    s.create(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "default"},
        "spec": {"nodeName": "n1", "containers": [{"name": "web", "image": "nginx:1"}]}})).unwrap();
    s.register_crd(json!({"metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                    {"name": "Text", "type": "string", "jsonPath": ".spec.size"},
                    {"name": "Since", "type": "date", "jsonPath": ".spec.since"}]}]}})).unwrap();
    s.register_crd(json!({"metadata": {"name": "gadgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}})).unwrap();
    s.create(json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1", "namespace": "default"},
        "spec": {"size": 7, "since": "2020-01-01T00:00:00Z"}})).unwrap();
    s.create(json!({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g1", "namespace": "default"}})).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let k = Kubectl::for_server(&s, dir.path());
    let out = k.ok(&["get", "deployments"]).await;
    assert!(
        out.contains("READY") && out.contains("UP-TO-DATE") && out.contains("0/2"),
        "{out}"
    );
    let out = k.ok(&["get", "pods", "-o", "wide"]).await;
    assert!(
        out.contains("NOMINATED NODE") && out.contains("Pending") && out.contains("n1"),
        "{out}"
    );
    let out = k.ok(&["get", "widgets"]).await;
    let lines: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(lines[0], ["NAME", "SIZE", "TEXT", "SINCE"], "{out}");
    // A date column is the age of its timestamp, as apiextensions-apiserver
    // writes it (years since 2020), a string column the value as text.
    assert_eq!(lines[1][..3], ["w1", "7", "7"], "{out}");
    assert!(lines[1][3].contains('y'), "{out}");
    // HorizontalPodAutoscalers: kube-apiserver 1.35's columns, defaults
    // (minReplicas 1, no metrics = cpu at 80 %) and metrics text.
    let target = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"});
    for (name, metrics) in [
        (
            "h-cr",
            json!([
            {"type": "ContainerResource", "containerResource": {"name": "cpu", "container": "app",
                "target": {"type": "Utilization", "averageUtilization": 60}}},
            {"type": "Resource", "resource": {"name": "memory",
                "target": {"type": "AverageValue", "averageValue": "100Mi"}}}]),
        ),
        (
            "h-many",
            json!([
            {"type": "Pods", "pods": {"metric": {"name": "p"}, "target": {"type": "AverageValue", "averageValue": "1k"}}},
            {"type": "Object", "object": {"metric": {"name": "rps"}, "describedObject": {"apiVersion": "v1", "kind": "Service", "name": "web"},
                "target": {"type": "AverageValue", "averageValue": "5"}}},
            {"type": "External", "external": {"metric": {"name": "q"}, "target": {"type": "Value", "value": "7"}}}]),
        ),
        ("h-none", json!([])),
    ] {
        s.create(
            json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"scaleTargetRef": target, "maxReplicas": 4, "metrics": metrics}}),
        )
        .unwrap();
    }
    let out = k.ok(&["get", "hpa"]).await;
    let rows: Vec<&str> = out.lines().collect();
    assert!(
        rows[0].starts_with("NAME     REFERENCE        TARGETS"),
        "{out}"
    );
    let cells = |row: &str| {
        row.split("   ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        cells(rows[1])[..6],
        [
            "h-cr",
            "Deployment/web",
            "cpu: <unknown>/60%, memory: <unknown>/100Mi",
            "1",
            "4",
            "0"
        ],
        "{out}"
    );
    assert_eq!(
        cells(rows[2])[2],
        "<unknown>/1k, <unknown>/5 (avg) + 1 more...",
        "{out}"
    );
    assert_eq!(cells(rows[3])[2], "cpu: <unknown>/80%", "{out}");
    // Without printer columns: NAME and AGE, the age relative too.
    let out = k.ok(&["get", "gadgets"]).await;
    let lines: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(lines[0], ["NAME", "AGE"], "{out}");
    assert!(
        lines[1][1].ends_with('s') || lines[1][1].ends_with('m'),
        "a fresh object's age: {out}"
    );
}

/// A server with controllers-lite and the Deployment `web` rolled out
/// (`kubectl apply`, `kubectl rollout status`).
async fn web_with_controllers(dir: &Path) -> (TestServer, Kubectl) {
    let s = TestServer::builder()
        .controllers(true)
        .start()
        .await
        .unwrap();
    let k = Kubectl::for_server(&s, dir);
    let manifest = write(dir, "deploy.yaml", DEPLOYMENT);
    k.ok(&["apply", "-f", &manifest]).await;
    let out = k
        .ok(&["rollout", "status", "deployment/web", "--timeout=60s"])
        .await;
    assert!(out.contains("successfully rolled out"), "{out}");
    (s, k)
}

/// Controllers-lite (issue 19): `kubectl rollout status`, `kubectl wait`,
/// `scale`, `set image`, Events in `describe`, Job completion and
/// garbage collection of a deleted Deployment's ReplicaSets and Pods.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_rollouts_with_controllers_lite() {
    if !kubectl_available() {
        skip_loudly();
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (s, k) = web_with_controllers(dir.path()).await;
    k.ok(&[
        "wait",
        "--for=condition=Available",
        "deployment/web",
        "--timeout=60s",
    ])
    .await;
    let pods = k.ok(&["get", "pods", "-l", "app=web", "-o", "name"]).await;
    assert_eq!(pods.lines().count(), 2, "{pods}");
    k.ok(&[
        "wait",
        "--for=condition=Ready",
        "pod",
        "-l",
        "app=web",
        "--timeout=60s",
    ])
    .await;

    k.ok(&["scale", "deployment/web", "--replicas=3"]).await;
    k.ok(&["rollout", "status", "deployment/web", "--timeout=60s"])
        .await;
    let pods = k.ok(&["get", "pods", "-l", "app=web", "-o", "name"]).await;
    assert_eq!(pods.lines().count(), 3, "{pods}");

    k.ok(&["set", "image", "deployment/web", "web=nginx:2"])
        .await;
    k.ok(&["rollout", "status", "deployment/web", "--timeout=60s"])
        .await;
    let images = k
        .ok(&[
            "get",
            "pods",
            "-l",
            "app=web",
            "-o",
            "jsonpath={.items[*].spec.containers[0].image}",
        ])
        .await;
    assert_eq!(
        images.split_whitespace().collect::<Vec<_>>(),
        ["nginx:2"; 3],
        "{images}"
    );
    let sets = k
        .ok(&[
            "get",
            "replicasets",
            "-o",
            "jsonpath={range .items[*]}{.spec.replicas} {end}",
        ])
        .await;
    let mut counts: Vec<&str> = sets.split_whitespace().collect();
    counts.sort_unstable();
    assert_eq!(counts, ["0", "3"], "{sets}");
    let described = k.ok(&["describe", "deployment", "web"]).await;
    assert!(described.contains("ScalingReplicaSet"), "{described}");

    // `rollout undo` reads the Deployment's revision annotations and the
    // old ReplicaSet's defaulted template (issue 30): back to nginx:1.
    k.ok(&["rollout", "undo", "deployment/web"]).await;
    k.ok(&["rollout", "status", "deployment/web", "--timeout=60s"])
        .await;
    let images = k
        .ok(&[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}",
        ])
        .await;
    assert_eq!(images.trim(), "nginx:1", "{images}");

    s.create(json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi", "namespace": "default"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "pi", "image": "perl:5"}]}}}})).unwrap();
    k.ok(&[
        "wait",
        "--for=condition=complete",
        "job/pi",
        "--timeout=60s",
    ])
    .await;

    k.ok(&["delete", "deployment", "web"]).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let left = k
            .ok(&["get", "replicasets,pods", "-l", "app=web", "-o", "name"])
            .await;
        if left.trim().is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not collected: {left}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The one-node scheduler of controllers-lite (issue 30): a `kubectl run`
/// pod is bound to the registered node, runs, and `kubectl exec` reaches
/// it through the container runtime.
#[tokio::test]
async fn kubectl_run_then_exec_with_controllers_lite() {
    if !kubectl_available() {
        skip_loudly();
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = TestServer::builder()
        .controllers(true)
        .container_runtime(true)
        .start()
        .await
        .unwrap();
    let k = Kubectl::for_server(&s, dir.path());
    k.ok(&["run", "box", "--image=busybox:1", "--", "sleep", "3600"])
        .await;
    k.ok(&["wait", "--for=condition=Ready", "pod/box", "--timeout=60s"])
        .await;
    let node = k
        .ok(&["get", "pod", "box", "-o", "jsonpath={.spec.nodeName}"])
        .await;
    assert_eq!(node.trim(), "kubeset-node");
    let nodes = k.ok(&["get", "nodes", "-o", "name"]).await;
    assert_eq!(nodes.trim(), "node/kubeset-node");
    let out = k.ok(&["exec", "box", "--", "echo", "hi"]).await;
    assert_eq!(out.trim(), "hi");
}

/// Deletion propagation with controllers-lite: `--cascade=orphan` leaves
/// the ReplicaSet without its owner reference, `--cascade=foreground`
/// returns only once the Pods are gone, and then the ReplicaSet is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_delete_cascades_with_controllers_lite() {
    if !kubectl_available() {
        skip_loudly();
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (s, k) = web_with_controllers(dir.path()).await;

    let out = k
        .ok(&[
            "delete",
            "deployment",
            "web",
            "--cascade=orphan",
            "--timeout=60s",
        ])
        .await;
    assert!(out.contains("deployment.apps \"web\" deleted"), "{out}");
    let gone = k.run(&["get", "deployment", "web"]).await;
    assert!(!gone.status.success(), "the deployment is still there");
    let owners = k
        .ok(&[
            "get",
            "replicasets",
            "-l",
            "app=web",
            "-o",
            "jsonpath={range .items[*]}{.metadata.name}={.metadata.ownerReferences}{\"\\n\"}{end}",
        ])
        .await;
    let sets: Vec<&str> = owners.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(sets.len(), 1, "{owners}");
    assert!(sets[0].ends_with('='), "still owned: {owners}");
    let pods = k.ok(&["get", "pods", "-l", "app=web", "-o", "name"]).await;
    assert_eq!(pods.lines().count(), 2, "orphaned pods: {pods}");

    // kubectl waits until the ReplicaSet is gone, which foreground
    // propagation allows only after its Pods are.
    let rs = sets[0].trim_end_matches('=');
    k.ok(&[
        "delete",
        "replicaset",
        rs,
        "--cascade=foreground",
        "--timeout=60s",
    ])
    .await;
    let left = k
        .ok(&["get", "replicasets,pods", "-l", "app=web", "-o", "name"])
        .await;
    assert!(
        left.trim().is_empty(),
        "left after a foreground delete: {left}"
    );
    s.shutdown().await;
}

/// The kubectl script of issue 19: each command runs against the embedded
/// server and, with a realkube instance (`KUBESET_REALKUBE_ENV`), against
/// the real kube-apiserver; exit code, stdout and stderr must agree (only
/// commands a server without a kubelet or controllers can answer; ages
/// are not printed). Without realkube the embedded answers must still
/// succeed or fail as the script says.
const SCRIPT: &[(&str, bool)] = &[
    ("create -f {dir}/ns.yaml", true),
    ("-n kubeset-script create -f {dir}/cfg.yaml", true),
    (
        "-n kubeset-script get configmap cfg -o jsonpath={.data.a}",
        true,
    ),
    ("-n kubeset-script apply -f {dir}/deploy.yaml", true),
    (
        "-n kubeset-script get deployment web -o jsonpath={.spec.replicas}",
        true,
    ),
    ("-n kubeset-script scale deployment web --replicas=3", true),
    (
        "-n kubeset-script get deployment web -o jsonpath={.spec.replicas}",
        true,
    ),
    (
        "-n kubeset-script set image deployment/web nginx=nginx:2",
        true,
    ),
    (
        "-n kubeset-script get deployment web -o jsonpath={.spec.template.spec.containers[0].image}",
        true,
    ),
    ("-n kubeset-script label configmap cfg tier=db", true),
    ("-n kubeset-script get configmaps -l tier=db -o name", true),
    ("-n kubeset-script annotate configmap cfg note=x", true),
    (
        "-n kubeset-script patch configmap cfg --type=merge -p {\"data\":{\"b\":\"2\"}}",
        true,
    ),
    (
        "-n kubeset-script get configmap cfg -o jsonpath={.data.b}",
        true,
    ),
    (
        "-n kubeset-script patch configmap cfg --type=json -p [{\"op\":\"remove\",\"path\":\"/data/b\"}]",
        true,
    ),
    (
        "-n kubeset-script get configmap cfg -o jsonpath={.data}",
        true,
    ),
    ("-n kubeset-script create -f {dir}/svc.yaml", true),
    (
        "-n kubeset-script get service db -o jsonpath={.spec.ports[0].port}",
        true,
    ),
    (
        "-n kubeset-script apply --server-side -f {dir}/secret.yaml",
        true,
    ),
    ("-n kubeset-script get secret s -o jsonpath={.type}", true),
    ("-n kubeset-script apply -f {dir}/sa.yaml", true),
    ("-n kubeset-script get serviceaccount robot -o name", true),
    (
        "get namespace kubeset-script -o jsonpath={.status.phase}",
        true,
    ),
    ("-n kubeset-script get configmap missing", false),
    ("-n kubeset-script create -f {dir}/cfg.yaml", false),
    ("-n kubeset-script create -f {dir}/upper.yaml", false),
    (
        "-n kubeset-script get pods --field-selector spec.nodeName=nowhere",
        true,
    ),
    (
        "-n kubeset-script get events --field-selector involvedObject.kind=Nothing",
        true,
    ),
    (
        "-n kubeset-script get pods --field-selector spec.foo=x",
        false,
    ),
    (
        "-n kubeset-script get configmaps --field-selector metadata.name=cfg -o name",
        true,
    ),
    ("-n kubeset-script create -f {dir}/job.yaml", true),
    (
        "-n kubeset-script get job pi -o jsonpath={.spec.completions}/{.spec.parallelism}/{.spec.backoffLimit}/{.spec.completionMode}/{.spec.suspend}",
        true,
    ),
    (
        "-n kubeset-script patch job pi --type=merge -p {\"spec\":{\"completions\":5}}",
        false,
    ),
    ("-n kubeset-script create -f {dir}/cron.yaml", true),
    (
        "-n kubeset-script get cronjob tick -o jsonpath={.spec.suspend}/{.spec.concurrencyPolicy}/{.spec.successfulJobsHistoryLimit}",
        true,
    ),
    ("-n kubeset-script create -f {dir}/websvc.yaml", true),
    (
        "-n kubeset-script get service web -o jsonpath={.spec.ipFamilyPolicy}/{.spec.ports[0].targetPort}/{.spec.sessionAffinity}/{.spec.internalTrafficPolicy}",
        true,
    ),
    (
        "-n kubeset-script patch service web --type=merge -p {\"spec\":{\"clusterIP\":\"10.0.0.250\"}}",
        false,
    ),
    ("explain pods.spec.nodeName", true),
    ("explain deployments.spec.replicas", true),
    ("explain cronjobs.spec.jobTemplate.spec.backoffLimit", true),
    ("explain deployments.spec.selector", true),
    ("explain deployments.spec.template", true),
    ("explain pods.spec.containers.resources", true),
    ("explain pods.metadata.ownerReferences", true),
    ("explain cronjobs.spec.jobTemplate", true),
    ("-n kubeset-script delete configmap cfg", true),
    ("-n kubeset-script delete deployment web", true),
    ("-n kubeset-script get configmap cfg", false),
];

/// The manifests the script creates (kubectl's imperative `create X`
/// generators send protobuf, which the embedded server does not speak).
const SCRIPT_FILES: &[(&str, &str)] = &[
    (
        "ns.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: kubeset-script}\n",
    ),
    (
        "cfg.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: \"1\"}\n",
    ),
    (
        "upper.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: UPPER}\n",
    ),
    (
        "svc.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: db}\nspec: {ports: [{port: 5432}], selector: {app: db}}\n",
    ),
    (
        "secret.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {k: v}\n",
    ),
    (
        "sa.yaml",
        "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: robot}\n",
    ),
    (
        "job.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: pi}\nspec:\n  template:\n    spec: {restartPolicy: Never, containers: [{name: pi, image: \"perl:5\"}]}\n",
    ),
    (
        "cron.yaml",
        "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: tick}\nspec:\n  schedule: \"@hourly\"\n  jobTemplate:\n    spec:\n      template:\n        spec: {restartPolicy: Never, containers: [{name: t, image: \"busybox:1\"}]}\n",
    ),
    (
        "websvc.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  ports: [{port: 80, targetPort: 8080}]\n",
    ),
    (
        "deploy.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: nginx, image: \"nginx:1\"}]}\n",
    ),
];

fn run_script(
    kubeconfig: &Path,
    cache: &Path,
    files: &Path,
    ns: &str,
) -> Vec<(i32, String, String)> {
    SCRIPT
        .iter()
        .map(|(cmd, _)| {
            let dir = files.to_string_lossy();
            let args: Vec<String> = cmd
                .split(' ')
                .map(|a| a.replace("{dir}", &dir).replace("kubeset-script", ns))
                .collect();
            let out = Command::new("kubectl")
                .arg("--kubeconfig")
                .arg(kubeconfig)
                .arg("--cache-dir")
                .arg(cache)
                .arg("--request-timeout=20s")
                .args(&args)
                .env_remove("KUBECONFIG")
                .stdin(Stdio::null())
                .output()
                .expect("run kubectl");
            (
                out.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_script_agrees_with_the_real_server() {
    if !kubectl_available() {
        skip_loudly();
        return;
    }
    // `explain` reads the schemas compiled in (no spec directory), two
    // levels deep, with the type names of referenced definitions. Not
    // fields of an enum type: kube-apiserver's documents list their values
    // (`ENUM: Recreate …`), which the spec directory codegen reads lacks
    // (see openapi.rs).
    let s = TestServer::builder()
        .controllers(true)
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let k = Kubectl::for_server(&s, dir.path());
    // A namespace of its own per run: without a namespace controller the
    // real server never finishes deleting one.
    let ns = format!("kubeset-script-{}", std::process::id());
    for (name, text) in SCRIPT_FILES {
        write(dir.path(), name, &text.replace("kubeset-script", &ns));
    }
    let files = dir.path().to_owned();
    let (kc, cache, f, n) = (
        k.kubeconfig.clone(),
        k.cache.clone(),
        files.clone(),
        ns.clone(),
    );
    let ours = tokio::task::spawn_blocking(move || run_script(&kc, &cache, &f, &n))
        .await
        .unwrap();
    for ((cmd, ok), (code, out, err)) in SCRIPT.iter().zip(&ours) {
        assert_eq!(*code == 0, *ok, "kubectl {cmd}: {out}{err}");
    }
    let Some(real_kc) =
        common::realkube_env().map(|env| env["KUBESET_REALKUBE_KUBECONFIG"].clone())
    else {
        eprintln!("## realkube not configured: the script ran against the embedded server only ##");
        return;
    };
    let cache = dir.path().join("real-cache");
    let real_kc = PathBuf::from(real_kc);
    let real = tokio::task::spawn_blocking(move || {
        let r = run_script(&real_kc, &cache, &files, &ns);
        // The namespace stays Terminating (no namespace controller runs);
        // its objects are gone.
        let _ = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&real_kc)
            .args(["delete", "namespace", &ns, "--wait=false"])
            .output();
        r
    })
    .await
    .unwrap();
    let differ: Vec<String> = SCRIPT
        .iter()
        .zip(ours.iter().zip(&real))
        .filter(|(_, (a, b))| a != b)
        .map(|((cmd, _), (a, b))| format!("kubectl {cmd}\n  embedded: {a:?}\n  real:     {b:?}"))
        .collect();
    eprintln!(
        "kubectl script: {} of {} commands agree",
        SCRIPT.len() - differ.len(),
        SCRIPT.len()
    );
    assert!(
        differ.is_empty(),
        "{} differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
}
