//! exec, attach, cp and port-forward end to end: the real `kubectl` and
//! the `kubeset` binary against `kubeset serve --tls --container-runtime`
//! (TLS, a generated bearer token, WebSocket `v5.channel.k8s.io`). The
//! kubectl part skips loudly when kubectl is not installed.

mod common;

use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::*;

const POD: &str = "apiVersion: v1
kind: Pod
metadata: {name: box}
spec:
  nodeName: node-1
  containers:
  - name: main
    image: busybox
    command: [cat]
    stdin: true
    stdinOnce: true
    env: [{name: GREETING, value: hello}]
    ports: [{name: http, containerPort: 8080}, {containerPort: 7}]
---
apiVersion: v1
kind: Pod
metadata: {name: duo}
spec:
  nodeName: node-1
  containers: [{name: main, image: busybox}, {name: side, image: busybox}]
";

struct Served {
    _lines: Lines,
    kc: PathBuf,
    dir: tempfile::TempDir,
}

fn serve() -> Served {
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    let lines = Lines::spawn(command(&[
        "serve",
        "--tls",
        "--container-runtime",
        "--kubeconfig-out",
        kc.to_str().unwrap(),
    ]));
    while !lines.next().starts_with("ready:") {}
    Served {
        _lines: lines,
        kc,
        dir,
    }
}

/// Runs `program args…` with `input` on stdin (off the runtime's threads).
async fn run_with(program: &str, args: Vec<String>, input: Option<Vec<u8>>) -> Run {
    let program = program.to_owned();
    tokio::task::spawn_blocking(move || {
        let mut c = if program == "kubeset" {
            command(&[])
        } else {
            Command::new(&program)
        };
        c.args(&args).env_remove("KUBECONFIG");
        c.stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = c.spawn().expect("spawn");
        if let Some(data) = input {
            let mut stdin = child.stdin.take().unwrap();
            std::thread::spawn(move || {
                let _ = stdin.write_all(&data);
            });
        }
        let out = child.wait_with_output().expect("wait");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    })
    .await
    .unwrap()
}

fn kubectl_args(s: &Served, args: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = vec![
        "--kubeconfig".into(),
        s.kc.to_string_lossy().into_owned(),
        "--cache-dir".into(),
        s.dir.path().join("cache").to_string_lossy().into_owned(),
    ];
    v.extend(args.iter().map(|a| (*a).to_owned()));
    v
}

fn kubeset_args(s: &Served, args: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = vec!["--kubeconfig".into(), s.kc.to_string_lossy().into_owned()];
    v.extend(args.iter().map(|a| (*a).to_owned()));
    v
}

/// `kubeset serve` with the test pods, created by `program`.
async fn serve_with_pods(program: &str) -> Served {
    let s = serve();
    let pod = write(s.dir.path(), "pod.yaml", POD);
    let file = pod.to_str().unwrap();
    let args = if program == "kubectl" {
        kubectl_args(&s, &["apply", "-f", file])
    } else {
        kubeset_args(&s, &["apply", "-f", file])
    };
    run_with(program, args, None).await.ok();
    s
}

/// kubectl port-forward wants a Running pod (no kubelet reports it here).
async fn mark_running(s: &Served) {
    let patch = r#"{"status":{"phase":"Running"}}"#;
    let args = kubectl_args(
        s,
        &[
            "patch",
            "pod",
            "box",
            "--subresource=status",
            "--type=merge",
            "-p",
            patch,
        ],
    );
    run_with("kubectl", args, None).await.ok();
}

/// The same checks for both programs: exec, exit code, stdin, attach, cp.
async fn exec_attach_cp(program: &str, s: &Served) {
    let args = |a: &[&str]| {
        if program == "kubectl" {
            kubectl_args(s, a)
        } else {
            kubeset_args(s, a)
        }
    };
    let r = run_with(
        program,
        args(&["exec", "box", "--", "echo", "hi", "there"]),
        None,
    )
    .await;
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "hi there\n"),
        "{program}: {}",
        r.stderr
    );

    let r = run_with(
        program,
        args(&["exec", "box", "--", "sh", "-c", "exit 3"]),
        None,
    )
    .await;
    assert_eq!(r.code, 3, "{program}: {}", r.stderr);
    assert!(
        r.stderr.contains("command terminated with exit code 3"),
        "{program}: {}",
        r.stderr
    );

    // Two containers, no -c: kubectl's default and its note on stderr.
    let r = run_with(program, args(&["exec", "duo", "--", "echo", "first"]), None).await;
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "first\n"),
        "{program}: {}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("Defaulted container \"main\" out of: main, side"),
        "{program}: {}",
        r.stderr
    );

    let r = run_with(program, args(&["exec", "box", "--", "env"]), None).await;
    assert!(
        r.stdout.contains("GREETING=hello\n"),
        "{program}: {}",
        r.stdout
    );

    let input = b"line one\nline two\n".to_vec();
    let r = run_with(
        program,
        args(&["exec", "-i", "box", "--", "cat"]),
        Some(input.clone()),
    )
    .await;
    assert_eq!(
        (r.code, r.stdout.as_bytes()),
        (0, &input[..]),
        "{program}: {}",
        r.stderr
    );

    let r = run_with(
        program,
        args(&["attach", "-i", "box"]),
        Some(b"attached\n".to_vec()),
    )
    .await;
    assert_eq!(r.code, 0, "{program}: {}", r.stderr);
    assert_eq!(r.stdout, "attached\n", "{program}: {}", r.stderr);

    // cp a tree to the pod and back.
    let src = s.dir.path().join(format!("{program}-src"));
    std::fs::create_dir_all(src.join("sub")).unwrap();
    std::fs::write(src.join("a.txt"), "alpha\n").unwrap();
    let big: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(src.join("sub/big.bin"), &big).unwrap();
    let remote = format!("box:/tmp/{program}");
    let r = run_with(program, args(&["cp", src.to_str().unwrap(), &remote]), None).await;
    assert_eq!(r.code, 0, "{program} cp to: {}", r.stderr);
    let r = run_with(
        program,
        args(&["exec", "box", "--", "cat", &format!("/tmp/{program}/a.txt")]),
        None,
    )
    .await;
    assert_eq!(r.stdout, "alpha\n", "{program}: {}", r.stderr);
    let back = s.dir.path().join(format!("{program}-back"));
    let r = run_with(
        program,
        args(&["cp", &remote, back.to_str().unwrap()]),
        None,
    )
    .await;
    assert_eq!(r.code, 0, "{program} cp from: {}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(back.join("a.txt")).unwrap(),
        "alpha\n"
    );
    assert_eq!(std::fs::read(back.join("sub/big.bin")).unwrap(), big);
}

/// An HTTP GET through a local port forwarded by `program`.
async fn port_forward_get(program: &str, s: &Served) {
    let args = if program == "kubectl" {
        kubectl_args(s, &["port-forward", "box", ":8080"])
    } else {
        kubeset_args(s, &["port-forward", "box", ":8080"])
    };
    let mut cmd = if program == "kubeset" {
        command(&[])
    } else {
        Command::new(program)
    };
    cmd.args(&args).env_remove("KUBECONFIG");
    let pf = Lines::spawn(cmd);
    let line = pf.next();
    // `Forwarding from 127.0.0.1:PORT -> 8080`
    let addr = line
        .strip_prefix("Forwarding from ")
        .and_then(|r| r.split_once(" -> "))
        .map(|(a, _)| a.to_owned())
        .unwrap_or_else(|| panic!("{program}: {line}"));
    let answer = tokio::task::spawn_blocking(move || {
        let mut c = std::net::TcpStream::connect(&addr).expect("connect the forwarded port");
        c.set_read_timeout(Some(TIMEOUT)).unwrap();
        c.write_all(b"GET / HTTP/1.1\r\nHost: box\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 1024];
        while !got.ends_with(b"hello from port 8080\n") {
            let n = c.read(&mut buf).expect("read");
            assert!(n > 0, "EOF after {:?}", String::from_utf8_lossy(&got));
            got.extend_from_slice(&buf[..n]);
        }
        String::from_utf8(got).unwrap()
    })
    .await
    .unwrap();
    assert!(
        answer.starts_with("HTTP/1.1 200 OK\r\n"),
        "{program}: {answer}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubeset_binary_exec_attach_cp_port_forward() {
    let s = serve_with_pods("kubeset").await;
    exec_attach_cp("kubeset", &s).await;
    port_forward_get("kubeset", &s).await;
    // A command that does not exist: its stderr, exit 127 as sh would.
    let r = run_with(
        "kubeset",
        kubeset_args(&s, &["exec", "box", "--", "nope"]),
        None,
    )
    .await;
    assert_eq!(r.code, 127, "{}", r.stderr);
    // A missing pod: kubectl's line, exit 1.
    let line = run_with(
        "kubeset",
        kubeset_args(&s, &["exec", "ghost", "--", "true"]),
        None,
    )
    .await
    .fails(1);
    assert_eq!(
        line,
        "Error from server (NotFound): pods \"ghost\" not found"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_exec_attach_cp_port_forward() {
    if !kubectl_available() {
        eprintln!(
            "## SKIPPED: `kubectl` is not installed: kubectl exec/attach/cp/port-forward were NOT checked ##"
        );
        return;
    }
    let s = serve_with_pods("kubectl").await;
    exec_attach_cp("kubectl", &s).await;
    mark_running(&s).await;
    port_forward_get("kubectl", &s).await;
}

/// `exec -it` under a pseudo-terminal (util-linux `script`) whose size is
/// set first: the remote `stty size` sees it, so raw mode, the TTY flag
/// and the initial resize all made it through.
async fn tty_size(program: &str, s: &Served) {
    let bin = if program == "kubeset" {
        BIN.to_owned()
    } else {
        "kubectl".to_owned()
    };
    let args = if program == "kubectl" {
        kubectl_args(s, &["exec", "-it", "box", "--", "stty", "size"])
    } else {
        kubeset_args(s, &["exec", "-it", "box", "--", "stty", "size"])
    };
    let line = format!("stty cols 100 rows 30; {bin} {}", args.join(" "));
    let r = run_with(
        "script",
        vec!["-qec".into(), line, "/dev/null".into()],
        None,
    )
    .await;
    assert_eq!(r.code, 0, "{program}: {} {}", r.stdout, r.stderr);
    assert!(r.stdout.contains("30 100"), "{program}: {:?}", r.stdout);
}

fn script_available() -> bool {
    Command::new("script")
        .args(["-qec", "true", "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_it_sends_the_terminal_size() {
    if !script_available() {
        eprintln!(
            "## SKIPPED: util-linux `script` is not installed: exec -it under a TTY was NOT checked ##"
        );
        return;
    }
    let s = serve_with_pods("kubeset").await;
    tty_size("kubeset", &s).await;
    if kubectl_available() {
        tty_size("kubectl", &s).await;
    }
}
