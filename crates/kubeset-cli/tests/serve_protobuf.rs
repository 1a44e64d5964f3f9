//! The real `kubectl`'s imperative commands against `kubeset serve`: they
//! send protobuf bodies and accept protobuf answers
//! (`application/vnd.kubernetes.protobuf,application/json`), which the
//! embedded server reads and writes for built-in kinds. Skips loudly when
//! kubectl is not installed.

mod common;

use std::path::Path;

use common::*;

fn ok(kc: &Path, args: &[&str]) -> (String, String) {
    let out = kubectl(kc, &kc.with_file_name("cache"), args)
        .output()
        .expect("run kubectl");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "kubectl {args:?}: {stdout}\n{stderr}");
    (stdout, stderr)
}

#[test]
fn kubectl_imperative_commands_speak_protobuf_to_kubeset_serve() {
    if !kubectl_available() {
        eprintln!(
            "\n## SKIPPED: `kubectl` is not installed: protobuf against `kubeset serve` NOT checked ##\n"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    let lines = Lines::spawn(command(&[
        "serve",
        "--kubeconfig-out",
        kc.to_str().unwrap(),
    ]));
    while !lines.next().starts_with("ready:") {}

    // -v=8 prints the request and response headers: protobuf both ways.
    let (out, log) = ok(&kc, &["create", "namespace", "pb", "-v=8"]);
    assert!(out.contains("namespace/pb created"), "{out}");
    assert!(
        log.contains("Content-Type: application/vnd.kubernetes.protobuf"),
        "kubectl sent no protobuf body: {log}"
    );
    let answers = log
        .lines()
        .skip_while(|l| !l.contains("Response Status: 201"))
        .any(|l| l.contains("Content-Type: application/vnd.kubernetes.protobuf"));
    assert!(answers, "the server did not answer in protobuf: {log}");

    let (out, _) = ok(
        &kc,
        &["create", "configmap", "x", "--from-literal=a=b", "-n", "pb"],
    );
    assert!(out.contains("configmap/x created"), "{out}");
    let (out, _) = ok(
        &kc,
        &["create", "deployment", "web", "--image=nginx:1", "-n", "pb"],
    );
    assert!(out.contains("deployment.apps/web created"), "{out}");
    let (out, _) = ok(
        &kc,
        &[
            "create",
            "secret",
            "generic",
            "s",
            "--from-literal=k=v",
            "-n",
            "pb",
        ],
    );
    assert!(out.contains("secret/s created"), "{out}");
    let (out, _) = ok(&kc, &["auth", "can-i", "create", "pods", "-n", "pb"]);
    assert_eq!(out.trim(), "yes");

    // What protobuf carried is what JSON reads back.
    let (data, _) = ok(
        &kc,
        &[
            "get",
            "configmap",
            "x",
            "-n",
            "pb",
            "-o",
            "jsonpath={.data.a}",
        ],
    );
    assert_eq!(data, "b");
    let (secret, _) = ok(
        &kc,
        &["get", "secret", "s", "-n", "pb", "-o", "jsonpath={.data.k}"],
    );
    assert_eq!(secret, "dg==", "base64 of \"v\"");
    let (image, _) = ok(
        &kc,
        &[
            "get",
            "deployment",
            "web",
            "-n",
            "pb",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}",
        ],
    );
    assert_eq!(image, "nginx:1");
    let (out, _) = ok(&kc, &["delete", "configmap", "x", "-n", "pb"]);
    assert!(out.contains("deleted"), "{out}");

    // The generators for Jobs, CronJobs and Services send protobuf too.
    let (out, _) = ok(&kc, &["create", "job", "j", "--image=busybox", "-n", "pb"]);
    assert!(out.contains("job.batch/j created"), "{out}");
    let (out, _) = ok(
        &kc,
        &[
            "create",
            "cronjob",
            "c",
            "--image=busybox",
            "--schedule=*/5 * * * *",
            "-n",
            "pb",
        ],
    );
    assert!(out.contains("cronjob.batch/c created"), "{out}");
    let (out, _) = ok(
        &kc,
        &[
            "create",
            "service",
            "clusterip",
            "svc",
            "--tcp=80:8080",
            "-n",
            "pb",
        ],
    );
    assert!(out.contains("service/svc created"), "{out}");
    // kubectl's body carries `nodePort: 0` (a plain int32 in Go): unset,
    // as kube-apiserver reads it, so the column shows no node port.
    let (node_port, _) = ok(
        &kc,
        &[
            "get",
            "service",
            "svc",
            "-n",
            "pb",
            "-o",
            "jsonpath={.spec.ports[0].nodePort}",
        ],
    );
    assert_eq!(node_port, "");
    let (table, _) = ok(&kc, &["get", "service", "svc", "-n", "pb", "--no-headers"]);
    assert!(table.contains(" 80/TCP "), "{table}");
}
