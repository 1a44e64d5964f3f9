//! `kubeset serve` as a black box: the kubeset binary and the real
//! `kubectl` against it, the admin endpoint's faults, and a clean stop on
//! SIGTERM. The kubectl part skips loudly when kubectl is not installed.

mod common;

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::*;

/// `kubeset serve` with its printed endpoints.
struct Served {
    lines: Lines,
    replicas: Vec<String>,
    admin: String,
}

fn serve(kubeconfig: &Path) -> Served {
    let lines = Lines::spawn(command(&[
        "serve",
        "--replicas",
        "2",
        "--admin",
        "--kubeconfig-out",
        kubeconfig.to_str().unwrap(),
    ]));
    let mut replicas = Vec::new();
    let mut admin = String::new();
    loop {
        let line = lines.next();
        if let Some(rest) = line.strip_prefix("replica ") {
            let (_, url) = rest.split_once(": ").expect("replica line");
            replicas.push(url.to_owned());
        } else if let Some(url) = line.strip_prefix("admin: ") {
            admin = url.to_owned();
        } else if line.starts_with("ready:") {
            break;
        }
    }
    assert_eq!(replicas.len(), 2);
    assert!(admin.starts_with("http://127.0.0.1:"), "{admin}");
    Served {
        lines,
        replicas,
        admin,
    }
}

/// A plain HTTP/1.1 request to the admin endpoint; the response text.
fn admin(base: &str, method: &str, path: &str) -> String {
    let addr = base.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).expect("connect admin");
    s.set_read_timeout(Some(TIMEOUT)).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).expect("read admin response");
    out
}

fn skip_loudly() {
    eprintln!();
    eprintln!("##################################################################");
    eprintln!("## SKIPPED: `kubectl` is not installed (not found on PATH).      ##");
    eprintln!("## kubectl against `kubeset serve` was NOT checked.               ##");
    eprintln!("##################################################################");
    eprintln!();
}

async fn kubectl_ok(kc: &Path, cache: &Path, args: &[&str]) -> String {
    let mut cmd = kubectl(kc, cache, args);
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("run kubectl"))
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "kubectl {args:?}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubeset_and_kubectl_against_kubeset_serve() {
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    let mut served = serve(&kc);

    // The kubeset binary through the written kubeconfig.
    let out = kubeset(&kc, &["get", "ns", "-o", "name"]).await.ok();
    assert!(out.contains("namespace/kube-system"), "{out}");

    // Faults through the admin endpoint: replica 0 down, replica 1 serves.
    let state = admin(&served.admin, "GET", "/replicas");
    assert!(state.starts_with("HTTP/1.1 200"), "{state}");
    let down = admin(&served.admin, "POST", "/replicas/0/down");
    assert!(down.starts_with("HTTP/1.1 200"), "{down}");
    let line = run_raw(vec![
        "--server".into(),
        served.replicas[0].clone(),
        "--request-timeout".into(),
        "5s".into(),
        "get".into(),
        "ns".into(),
    ])
    .await
    .fails(1);
    assert!(line.starts_with("error:"), "{line}");
    run_raw(vec![
        "--server".into(),
        served.replicas[1].clone(),
        "get".into(),
        "ns".into(),
    ])
    .await
    .ok();
    // Both replicas as --server: the call fails over to replica 1.
    let both = |args: &[&str]| {
        let mut v: Vec<String> = vec![
            "--server".into(),
            served.replicas[0].clone(),
            "--server".into(),
            served.replicas[1].clone(),
        ];
        v.extend(args.iter().map(|s| (*s).to_owned()));
        v
    };
    let out = run_raw(both(&["get", "ns", "-o", "name"])).await.ok();
    assert!(out.contains("namespace/default"), "{out}");
    let up = admin(&served.admin, "POST", "/replicas/0/up");
    assert!(up.starts_with("HTTP/1.1 200"), "{up}");
    kubeset(&kc, &["get", "ns"]).await.ok();

    // A watch over both replicas survives the death of replica 0: it
    // resumes on replica 1 from the last resourceVersion.
    let mut cmd = command(&[]);
    cmd.args(both(&["watch", "configmaps", "-l", "app=fo"]));
    let w = Lines::spawn(cmd);
    let cm = |name: &str| {
        write(
            Path::new(dir.path()),
            &format!("{name}.yaml"),
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  labels: {{app: fo}}\n"
            ),
        )
    };
    let f1 = cm("fo1");
    kubeset(&kc, &["create", "-f", f1.to_str().unwrap()])
        .await
        .ok();
    assert!(w.next().starts_with("ADDED configmap/fo1 rv="));
    let down = admin(&served.admin, "POST", "/replicas/0/down");
    assert!(down.starts_with("HTTP/1.1 200"), "{down}");
    let f2 = cm("fo2");
    run_raw(both(&["create", "-f", f2.to_str().unwrap()]))
        .await
        .ok();
    let line = w.next();
    assert!(line.starts_with("ADDED configmap/fo2 rv="), "{line}");
    drop(w);
    let up = admin(&served.admin, "POST", "/replicas/0/up");
    assert!(up.starts_with("HTTP/1.1 200"), "{up}");

    if kubectl_available() {
        kubectl_checks(&kc, &dir.path().join("cache"), dir.path()).await;
    } else {
        skip_loudly();
    }

    // SIGTERM stops the server cleanly (exit 0).
    let pid = served.lines.child.id().to_string();
    let killed = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("run kill");
    assert!(killed.success());
    let status = tokio::task::block_in_place(|| {
        let deadline = std::time::Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = served.lines.child.try_wait().expect("try_wait") {
                return Some(status);
            }
            if std::time::Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let status = status.expect("kubeset serve did not stop within the timeout on SIGTERM");
    assert!(status.success(), "{status:?}");
}

async fn kubectl_checks(kc: &Path, cache: &Path, dir: &Path) {
    let out = kubectl_ok(kc, cache, &["get", "namespaces"]).await;
    assert!(out.contains("kube-system"), "{out}");

    let cm = write(
        dir,
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kc1\n  labels: {app: k}\ndata: {a: \"1\"}\n",
    );
    let out = kubectl_ok(kc, cache, &["create", "-f", cm.to_str().unwrap()]).await;
    assert!(out.contains("configmap/kc1 created"), "{out}");

    let dep = write(dir, "dep.yaml", MANIFEST);
    let out = kubectl_ok(
        kc,
        cache,
        &["apply", "--server-side", "-f", dep.to_str().unwrap()],
    )
    .await;
    assert!(
        out.contains("deployment.apps/web serverside-applied"),
        "{out}"
    );
    // What kubectl applied, kubeset reads.
    let out = kubeset(kc, &["get", "deploy", "web", "-o", "json"])
        .await
        .ok();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["spec"]["replicas"], 2);

    // kubectl get -w sees kubeset's writes.
    let watch = Lines::spawn(kubectl(
        kc,
        cache,
        &["get", "configmaps", "-l", "app=k", "-w"],
    ));
    let header = watch.next();
    assert!(header.starts_with("NAME"), "{header}");
    let first = watch.next();
    assert!(first.starts_with("kc1 "), "{first}");
    let other = write(
        dir,
        "cm2.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kc2\n  labels: {app: k}\n",
    );
    kubeset(kc, &["create", "-f", other.to_str().unwrap()])
        .await
        .ok();
    let second = watch.next();
    assert!(second.starts_with("kc2 "), "{second}");
    drop(watch);

    let out = kubectl_ok(kc, cache, &["delete", "configmap", "kc1", "kc2"]).await;
    assert!(out.contains("configmap \"kc1\" deleted"), "{out}");
    let line = kubeset(kc, &["get", "cm", "kc1"]).await.fails(1);
    assert!(line.contains("NotFound"), "{line}");
}

/// `serve --tls` writes a kubeconfig kubectl uses as it is (a generated
/// token beside the CA, mode 0600); without a kubeconfig to put them in it
/// refuses to start; `--help` puts the server's flags under their own
/// heading and lists the limits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_tls_writes_a_kubeconfig_kubectl_can_use() {
    let help = kubeset(Path::new("/nonexistent"), &["serve", "--help"])
        .await
        .ok();
    assert!(help.contains("Server options:"), "{help}");
    assert!(help.contains("Limits"), "{help}");
    assert!(
        help.contains("--controllers") && help.contains("--openapi-specs"),
        "{help}"
    );
    let refused = kubeset(Path::new("/nonexistent"), &["serve", "--tls"])
        .await
        .fails(2);
    assert!(refused.contains("--kubeconfig-out"), "{refused}");

    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    let lines = Lines::spawn(command(&[
        "serve",
        "--tls",
        "--admin",
        "--kubeconfig-out",
        kc.to_str().unwrap(),
    ]));
    while !lines.next().starts_with("ready:") {}
    let text = std::fs::read_to_string(&kc).unwrap();
    assert!(text.contains("token: "), "{text}");
    assert!(text.contains("certificate-authority-data: "), "{text}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&kc).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let out = kubeset(&kc, &["get", "ns", "-o", "name"]).await.ok();
    assert!(out.contains("namespace/default"), "{out}");
    if !kubectl_available() {
        skip_loudly();
        return;
    }
    // stdin closed: a kubectl that wanted a user name would fail here.
    let cache = dir.path().join("kubectl-cache");
    let mut cmd = kubectl(&kc, &cache, &["get", "ns", "-o", "name"]);
    cmd.stdin(std::process::Stdio::null());
    let got = tokio::task::spawn_blocking(move || cmd.output().expect("kubectl"))
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&got.stdout);
    assert!(
        got.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&got.stderr)
    );
    assert!(stdout.contains("namespace/default"), "{stdout}");
}
