//! `kubeset get -o yaml|json|jsonpath` byte for byte as the real kubectl
//! prints the same objects from the same embedded server: go-yaml's
//! quoting, folding, key order and layout, encoding/json's indent and
//! escapes, managedFields hidden (or shown with `--show-managed-fields`).
//! Skips loudly when kubectl is not installed.

mod common;

use std::path::Path;
use std::time::Instant;

use common::*;
use serde_json::json;

/// Strings each of go-yaml's rules treats differently.
fn tricky_config_map() -> serde_json::Value {
    let data = json!({
        "num": "10", "bool": "true", "yes": "yes", "on": "on", "empty": "",
        "ts": "2026-12-01T16:08:22Z", "ver": "1.2.3", "dash": "- a", "colon": ": x",
        "ab": "a: b", "hash": "a #b", "lead": " lead", "trail": "trail ", "tab": "tab\there",
        "emoji": "\u{1F600}", "quote": "it's: x", "oct": "0755", "exp": "1e3", "hex": "0x1F",
        "sexa": "1:20", "null": "null", "tilde": "~", "ml": "a\nb", "ml2": "a\nb\n",
        "ml3": "a\n\n", "ml4": " leading\nspace", "long": "word ".repeat(40).trim_end(),
        "longcolon": "a: b ".repeat(30).trim_end(), "longtab": "x\t ".repeat(40).trim_end(),
        "html": "<b>&amp;</b>", "uni": "héllo wörld", "ls": "a\u{2028}b",
        "json": "{\"a\": [1, 2]}\n", "star": "*x", "q": "\"quoted\"", "back": "C:\\dir",
        "longword": "x".repeat(120), "mixed": "line one\n  indented\n\nlast",
        "spaces": "a  b", "longspaces": "ab  ".repeat(30),
    });
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {
            "name": "tricky",
            "labels": {"app": "web", "a10": "x", "a9": "y", "A": "z", "a_b": "1"},
            "annotations": {"note": "long annotation text ".repeat(8).trim_end()},
        },
        "data": data,
    })
}

const CRD: &str = r#"{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "things.example.com"},
 "spec": {"group": "example.com", "scope": "Namespaced",
  "names": {"kind": "Thing", "plural": "things", "singular": "thing"},
  "versions": [{"name": "v1", "served": true, "storage": true,
   "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}"#;

/// Keys in go-yaml's order and every layout: nested lists, empty
/// collections, numbers as kubectl holds them, complex keys.
fn thing() -> serde_json::Value {
    let mut spec = json!({
        "a10": 1, "a9": 2, "a": 3, "B": 4, "_x": 5, "1": 6, "a.b": 7, "a-b": 8, "A": 9,
        "a01": 10, "a1": 11, "n": 12, "y": true, "key: colon": "v", "x\ny": "multi-line key",
        "nested": [[1, [2, {"z": []}]], {}, [], {"deep": {"deeper": [{"a": 1,
            "b": [1.5, 1e21, 0.000001, -0.0]}]}}],
        "f": 18446744073709551615u64, "big": 9223372036854775807i64, "nul": null, "e": "",
        "üni": "v", "0": "zero", "00": "zz", "-1": "neg", "a b": "space key",
    });
    let map = spec.as_object_mut().unwrap();
    map.insert("k".repeat(130), json!("long key"));
    map.insert(
        format!("{} {}", "w".repeat(10), "w".repeat(80)),
        json!("long key, a space"),
    );
    json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t1"}, "spec": spec})
}

fn kubectl_ok(kc: &Path, cache: &Path, args: &[&str]) -> String {
    let out = kubectl(kc, cache, args).output().expect("run kubectl");
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// `kubectl create -f` of a JSON document, retried while a new CRD's
/// resource is not served yet (bounded).
fn create(kc: &Path, cache: &Path, dir: &Path, name: &str, doc: &serde_json::Value) {
    let file = write(dir, name, &doc.to_string());
    let start = Instant::now();
    loop {
        let out = kubectl(kc, cache, &["create", "-f", file.to_str().unwrap()])
            .output()
            .expect("run kubectl");
        if out.status.success() {
            return;
        }
        assert!(
            start.elapsed() < TIMEOUT,
            "kubectl create {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn machine_output_is_kubectl_s_byte_for_byte() {
    if !kubectl_available() {
        eprintln!("kubectl is not installed: the output comparison with kubectl is skipped");
        return;
    }
    let (_server, dir, kc) = server().await;
    let cache = dir.path().join("kubectl-cache");
    let setup = {
        let (kc, cache, dir) = (kc.clone(), cache.clone(), dir.path().to_owned());
        move || {
            kubectl_ok(
                &kc,
                &cache,
                &[
                    "create",
                    "deployment",
                    "web",
                    "--image=nginx",
                    "--replicas=2",
                ],
            );
            kubectl_ok(
                &kc,
                &cache,
                &["create", "service", "nodeport", "web", "--tcp=80:8080"],
            );
            create(&kc, &cache, &dir, "cm.json", &tricky_config_map());
            create(
                &kc,
                &cache,
                &dir,
                "crd.json",
                &serde_json::from_str(CRD).unwrap(),
            );
            create(&kc, &cache, &dir, "thing.json", &thing());
        }
    };
    tokio::task::spawn_blocking(setup).await.unwrap();
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["get", "cm", "tricky", "-o", "yaml"],
            &["get", "configmap", "tricky", "-o", "yaml"],
        ),
        (
            &["get", "cm", "tricky", "-o", "json"],
            &["get", "configmap", "tricky", "-o", "json"],
        ),
        (
            &["get", "cm", "-o", "yaml"],
            &["get", "configmaps", "-o", "yaml"],
        ),
        (
            &["get", "cm", "-o", "json"],
            &["get", "configmaps", "-o", "json"],
        ),
        (
            &["get", "thing", "t1", "-o", "yaml"],
            &["get", "things", "t1", "-o", "yaml"],
        ),
        (
            &["get", "thing", "t1", "-o", "json"],
            &["get", "things", "t1", "-o", "json"],
        ),
        (
            &["get", "deploy", "web", "-o", "yaml"],
            &["get", "deployment", "web", "-o", "yaml"],
        ),
        (
            &[
                "get",
                "deploy",
                "web",
                "-o",
                "yaml",
                "--show-managed-fields",
            ],
            &[
                "get",
                "deployment",
                "web",
                "-o",
                "yaml",
                "--show-managed-fields",
            ],
        ),
        (
            &["get", "svc", "web", "-o", "json", "--show-managed-fields"],
            &[
                "get",
                "service",
                "web",
                "-o",
                "json",
                "--show-managed-fields",
            ],
        ),
        (
            &["get", "cm", "tricky", "-o", "jsonpath={.metadata}"],
            &["get", "configmap", "tricky", "-o", "jsonpath={.metadata}"],
        ),
        (&["get", "all", "-o", "yaml"], &["get", "all", "-o", "yaml"]),
    ];
    for (theirs, ours) in cases {
        let want = tokio::task::spawn_blocking({
            let (kc, cache) = (kc.clone(), cache.clone());
            move || kubectl_ok(&kc, &cache, theirs)
        })
        .await
        .unwrap();
        let got = kubeset(&kc, ours).await.ok();
        if got != want {
            let at = want
                .lines()
                .zip(got.lines())
                .position(|(w, g)| w != g)
                .unwrap_or(want.lines().count().min(got.lines().count()));
            panic!(
                "kubeset {ours:?} differs from kubectl {theirs:?} at line {}:\nkubectl: {:?}\nkubeset: {:?}",
                at + 1,
                want.lines().nth(at),
                got.lines().nth(at)
            );
        }
    }
    // Tables are the server's: the same cells as kubectl's (ages may tick
    // between the two runs, so durations compare as one token).
    let tables: &[(&[&str], &[&str])] = &[
        (&["get", "things"], &["get", "things"]),
        (&["get", "crd"], &["get", "crd"]),
        (
            &["get", "deploy", "-o", "wide"],
            &["get", "deployments", "-o", "wide"],
        ),
        (&["get", "svc", "-A"], &["get", "services", "-A"]),
        (&["get", "cm", "tricky"], &["get", "configmap", "tricky"]),
        (&["get", "all"], &["get", "all"]),
        (
            &["get", "all", "-A", "-o", "wide"],
            &["get", "all", "-A", "-o", "wide"],
        ),
    ];
    for (theirs, ours) in tables {
        let want = tokio::task::spawn_blocking({
            let (kc, cache) = (kc.clone(), cache.clone());
            move || kubectl_ok(&kc, &cache, theirs)
        })
        .await
        .unwrap();
        let got = kubeset(&kc, ours).await.ok();
        assert_eq!(
            cells(&got),
            cells(&want),
            "kubeset {ours:?} vs kubectl {theirs:?}"
        );
    }
    watch_rows_as_kubectl(&kc, &cache).await;
    // The default hides managedFields, which the server did record.
    let shown = kubeset(
        &kc,
        &[
            "get",
            "deployment",
            "web",
            "-o",
            "yaml",
            "--show-managed-fields",
        ],
    )
    .await
    .ok();
    assert!(shown.contains("managedFields:"), "{shown}");
}

/// A table's cells, a duration (`5s`, `3m20s`, `2d4h`) as `<age>`.
fn cells(table: &str) -> Vec<Vec<String>> {
    let duration = |c: &str| {
        !c.is_empty()
            && c.chars().next().is_some_and(|d| d.is_ascii_digit())
            && c.chars().all(|d| d.is_ascii_digit() || "smhdy".contains(d))
            && c.chars().last().is_some_and(|d| "smhdy".contains(d))
    };
    table
        .lines()
        .map(|l| {
            l.split_whitespace()
                .map(|c| {
                    if duration(c) {
                        "<age>".to_owned()
                    } else {
                        c.to_owned()
                    }
                })
                .collect()
        })
        .collect()
}

/// `get pods -w`: the list, then one row per change, the columns as wide
/// as everything printed so far (kubectl's tabwriter remembers widths), so
/// a longer name widens its column without a new header.
async fn watch_rows_as_kubectl(kc: &Path, cache: &Path) {
    let run = |kc: &Path, cache: &Path, args: &[&str]| {
        let (kc, cache) = (kc.to_owned(), cache.to_owned());
        let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
        tokio::task::spawn_blocking(move || {
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            kubectl_ok(&kc, &cache, &refs);
        })
    };
    run(kc, cache, &["run", "w0", "--image=nginx"])
        .await
        .unwrap();
    let theirs = Lines::spawn(kubectl(kc, cache, &["get", "pods", "-w"]));
    let mut ours_cmd = command(&["--kubeconfig", kc.to_str().unwrap(), "get", "pods", "-w"]);
    ours_cmd.stdin(std::process::Stdio::null());
    let ours = Lines::spawn(ours_cmd);
    let mut got = (
        vec![theirs.next(), theirs.next()],
        vec![ours.next(), ours.next()],
    );
    run(
        kc,
        cache,
        &["run", "a-much-longer-pod-name", "--image=nginx"],
    )
    .await
    .unwrap();
    got.0.push(theirs.next());
    got.1.push(ours.next());
    let (want, have) = (got.0.join("\n"), got.1.join("\n"));
    assert_eq!(
        cells(&have),
        cells(&want),
        "kubectl:\n{want}\nkubeset:\n{have}"
    );
    // The row of the longer name: its columns where kubectl puts them.
    let column = |line: &str| line.find("0/1");
    assert_eq!(
        column(&got.1[2]),
        column(&got.0[2]),
        "kubectl:\n{want}\nkubeset:\n{have}"
    );
    assert!(
        got.1[2].starts_with("a-much-longer-pod-name   0/1"),
        "{have}"
    );
}
