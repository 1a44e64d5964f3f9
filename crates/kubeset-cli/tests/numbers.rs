//! Numbers beyond `int64` and floats, stored in a custom resource on the
//! real kube-apiserver (realkube), printed by kubeset and by the real
//! `kubectl`: `-o json`, `-o yaml`, `-o jsonpath` and the table agree
//! number for number. kube-apiserver keeps such integers as float64, so
//! `18446744073709551617` comes back as `18446744073709552000`.
//!
//! Needs a running realkube (`KUBESET_REALKUBE_KUBECONFIG`, the env file
//! named by `KUBESET_REALKUBE_ENV`, or the workspace's default instance);
//! skips loudly only with `KUBESET_SKIP_REALKUBE=1` or without kubectl.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

const GROUP: &str = "cli-numbers.kubeset.example";

/// The realkube kubeconfig, as the suite finds it (tests/src/env.rs).
fn realkube_kubeconfig() -> Option<PathBuf> {
    if let Some(kc) = std::env::var_os("KUBESET_REALKUBE_KUBECONFIG") {
        return Some(kc.into());
    }
    let file = std::env::var_os("KUBESET_REALKUBE_ENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.cache/realkube/env"));
    let text = std::fs::read_to_string(file).ok()?;
    text.lines().find_map(|l| {
        l.trim_start_matches("export ")
            .strip_prefix("KUBESET_REALKUBE_KUBECONFIG=")
            .map(PathBuf::from)
    })
}

fn skip(why: &str) {
    eprintln!(
        "\n########## SKIPPED: {why}: kubeset's numbers were NOT compared with kubectl's ##########\n"
    );
}

fn kubectl(kc: &Path, cache: &Path, args: &[&str]) -> String {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kc)
        .arg("--cache-dir")
        .arg(cache)
        .arg("--request-timeout=30s")
        .args(args)
        .env_remove("KUBECONFIG")
        .output()
        .expect("run kubectl");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "kubectl {args:?}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A table with the AGE column's cells blanked (the two runs are seconds
/// apart).
fn without_age(table: &str) -> String {
    table
        .lines()
        .map(|l| {
            let mut cells: Vec<&str> = l.split_whitespace().collect();
            if cells.len() > 1 && !l.starts_with("NAME") {
                cells[1] = "-";
            }
            cells.join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

const CRD: &str = r#"{
  "apiVersion": "apiextensions.k8s.io/v1",
  "kind": "CustomResourceDefinition",
  "metadata": {"name": "numbers.cli-numbers.kubeset.example"},
  "spec": {
    "group": "cli-numbers.kubeset.example",
    "scope": "Namespaced",
    "names": {"plural": "numbers", "singular": "number", "kind": "Number"},
    "versions": [{"name": "v1", "served": true, "storage": true,
      "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]
  }
}"#;

/// The spec as sent; the server answers with float64s for the integers
/// above int64 and for every fraction and exponent.
const SPEC: &str = r#"{"big": 18446744073709551617, "u64max": 18446744073709551615,
  "i64max1": 9223372036854775808, "i64max": 9223372036854775807,
  "e20": 123456789012345678901, "x": 1e20, "huge": 1e21, "huge2": 1.5e300,
  "tiny": 1e-7, "small": 0.000001, "half": 0.5, "neg": -2.5e-9,
  "eight": 100000000.0, "m": 1234567.5, "frac": 123456.789,
  "max": 1.7976931348623157e308, "minpos": 5e-324,
  "list": [1e22, 3.0, -0.0, {"deep": 18446744073709551617}]}"#;

#[tokio::test]
async fn numbers_beyond_int64_print_as_kubectl_prints_them() {
    let Some(kc) = realkube_kubeconfig() else {
        if std::env::var("KUBESET_SKIP_REALKUBE").is_ok_and(|v| v == "1") {
            return skip("KUBESET_SKIP_REALKUBE=1");
        }
        panic!("no realkube: start tests/realkube/realkube.sh (or set KUBESET_SKIP_REALKUBE=1)");
    };
    if !Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return skip("kubectl is not installed");
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("kubectl-cache");
    let k = |args: &[&str]| kubectl(&kc, &cache, args);
    let ns = format!("cli-numbers-{}", std::process::id());
    let crd = write(dir.path(), "crd.json", CRD);
    k(&["apply", "-f", crd.to_str().unwrap()]);
    k(&[
        "wait",
        "--for=condition=Established",
        "--timeout=120s",
        &format!("crd/numbers.{GROUP}"),
    ]);
    k(&["create", "namespace", &ns]);
    for name in ["n1", "n2"] {
        let obj = format!(
            r#"{{"apiVersion": "{GROUP}/v1", "kind": "Number", "metadata": {{"name": "{name}", "namespace": "{ns}"}}, "spec": {SPEC}}}"#
        );
        let file = write(dir.path(), &format!("{name}.json"), &obj);
        k(&["create", "-f", file.to_str().unwrap()]);
    }

    let raw = k(&[
        "get",
        "--raw",
        &format!("/apis/{GROUP}/v1/namespaces/{ns}/numbers/n1"),
    ]);
    assert!(
        raw.contains(r#""big":18446744073709552000"#),
        "the server's float64: {raw}"
    );

    let resource = format!("numbers.{GROUP}");
    let jsonpaths = [
        "{.spec.big} {.spec.u64max} {.spec.i64max1} {.spec.i64max} {.spec.e20} {.spec.x}",
        "{.spec.huge} {.spec.tiny} {.spec.small} {.spec.neg} {.spec.eight} {.spec.m} {.spec.max} {.spec.minpos}",
        "{.spec.list}|{.spec}",
        "{range .items[*]}{.metadata.name}={.spec.big},{.spec.list[0]};{end}",
    ];
    let mut cases: Vec<Vec<String>> = Vec::new();
    for target in [
        vec![resource.clone(), "n1".to_owned()],
        vec![resource.clone()],
    ] {
        for output in ["json", "yaml"] {
            let mut args = target.clone();
            args.extend(["-o".to_owned(), output.to_owned()]);
            cases.push(args);
        }
        for template in jsonpaths {
            if template.contains(".items") != (target.len() == 1) {
                continue;
            }
            let mut args = target.clone();
            args.push(format!("-o=jsonpath={template}"));
            cases.push(args);
        }
    }
    let mut compared = 0;
    // Byte for byte: layout, quoting and managedFields included.
    for args in cases {
        let mut all = vec!["get".to_owned(), "-n".to_owned(), ns.clone()];
        all.extend(args);
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        let ours = kubeset(&kc, &refs).await.ok();
        let theirs = k(&refs);
        assert_eq!(ours, theirs, "{all:?}");
        compared += 1;
    }
    assert_eq!(compared, 8);
    // Both print the same numbers (not just the same layout) where they
    // differ from serde_json's own notation.
    let yaml = kubeset(&kc, &["get", "-n", &ns, &resource, "n1", "-o", "yaml"])
        .await
        .ok();
    for line in [
        "big: 1.8446744073709552e+19",
        "i64max1: 9223372036854776000",
        "small: 1e-06",
        "x: 1e+20",
    ] {
        assert!(yaml.contains(line), "{line} in {yaml}");
    }

    let table = |args: &[&str]| {
        let mut all = vec!["get", "-n", &ns];
        all.extend(args);
        all.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>()
    };
    let args = table(&[&resource]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let theirs = k(&refs);
    let ours = kubeset(&kc, &refs).await.ok();
    assert_eq!(without_age(&ours), without_age(&theirs));

    library_decoding_names_the_field(&kc, &ns).await;
    k(&["delete", "namespace", &ns, "--wait=false"]);
    // Leave no CRD behind for the suites that read the cluster's OpenAPI.
    k(&[
        "delete",
        "crd",
        &format!("numbers.{GROUP}"),
        "--timeout=120s",
    ]);
}

/// The library's side of the same object: the dynamic client keeps the
/// float64, converting it into a type with an integer field fails naming
/// the field, and a typed `Api` get says which field too.
async fn library_decoding_names_the_field(kc: &Path, ns: &str) {
    use kubeset::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use kubeset::dynamic::{ApiResource, DynamicObject, ParseDynamicObjectError};

    #[derive(kubeset::Resource, serde::Deserialize, serde::Serialize, Clone, Debug)]
    #[resource(
        group = "cli-numbers.kubeset.example",
        version = "v1",
        kind = "Number",
        plural = "numbers",
        namespaced
    )]
    struct Number {
        metadata: ObjectMeta,
        spec: NumberSpec,
    }
    #[derive(serde::Deserialize, serde::Serialize, Clone, Debug)]
    struct NumberSpec {
        i64max: i64,
        big: u64,
    }

    let kubeconfig = kubeset::rest::config::Kubeconfig::read_from(kc).unwrap();
    let config =
        kubeset::rest::config::Config::from_custom_kubeconfig_sync(kubeconfig, &Default::default())
            .unwrap();
    let client = kubeset::Client::try_from_config(&config).unwrap();
    let resource = ApiResource::of::<Number>();
    let dynamic: kubeset::Api<DynamicObject> =
        kubeset::Api::dynamic(client.clone(), &resource, Some(ns));
    let obj = dynamic.get("n1").await.unwrap();
    assert_eq!(
        obj.data["spec"]["big"].as_f64(),
        Some(18446744073709552000.0)
    );
    assert_eq!(obj.data["spec"]["i64max"].as_i64(), Some(i64::MAX));
    let err = obj.try_parse::<Number>().unwrap_err();
    assert!(
        matches!(&err, ParseDynamicObjectError::IntegerOutOfRange { path, .. } if path == "spec.big"),
        "{err:?}"
    );
    let typed: kubeset::Api<Number> = kubeset::Api::namespaced(client, ns);
    let err = typed.get("n1").await.unwrap_err();
    let chain: Vec<String> =
        std::iter::successors(Some(&err as &dyn std::error::Error), |e| e.source())
            .map(ToString::to_string)
            .collect();
    assert!(
        chain.iter().any(|e| e.starts_with(
            "field spec.big: invalid type: floating point `1.8446744073709552e+19`, expected u64"
        )),
        "{chain:?}"
    );
}
