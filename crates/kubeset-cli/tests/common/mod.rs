//! Running the built `kubeset` binary from tests.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// An embedded API server and a kubeconfig for it in a temporary directory.
pub async fn server() -> (
    kubeset_testserver::TestServer,
    tempfile::TempDir,
    std::path::PathBuf,
) {
    let s = kubeset_testserver::TestServer::builder()
        .start()
        .await
        .expect("start server");
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = dir.path().join("kubeconfig");
    s.write_kubeconfig(&kc).expect("kubeconfig");
    (s, dir, kc)
}

/// Generous: the machine may be loaded.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_kubeset");

/// The result of one run.
pub struct Run {
    /// Exit code (-1 when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    fn from(out: Output) -> Self {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Asserts exit 0 and returns stdout.
    pub fn ok(self) -> String {
        assert_eq!(
            self.code, 0,
            "stdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        self.stdout
    }

    /// Asserts the exit code and exactly one line on stderr, without any
    /// panic or backtrace; returns that line.
    pub fn fails(self, code: i32) -> String {
        assert_eq!(
            self.code, code,
            "stdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "one line on stderr: {:?}", self.stderr);
        assert!(
            !self.stderr.contains("panicked") && !self.stderr.contains("backtrace"),
            "{}",
            self.stderr
        );
        lines[0].to_owned()
    }
}

/// A base command: the binary, no KUBECONFIG from the environment.
pub fn command(args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args)
        .env_remove("KUBECONFIG")
        .env("HOME", std::env::temp_dir())
        .stdin(Stdio::null());
    c
}

/// Runs `kubeset --kubeconfig <kc> args…` off the async runtime's threads.
pub async fn kubeset(kc: &Path, args: &[&str]) -> Run {
    let mut all = vec!["--kubeconfig".to_owned(), kc.to_string_lossy().into_owned()];
    all.extend(args.iter().map(|s| (*s).to_owned()));
    run_raw(all).await
}

/// Runs `kubeset args…` (no kubeconfig added) off the runtime's threads.
pub async fn run_raw(args: Vec<String>) -> Run {
    tokio::task::spawn_blocking(move || {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        Run::from(command(&refs).output().expect("run kubeset"))
    })
    .await
    .expect("join")
}

/// Whether the real `kubectl` is installed (tests that need it skip
/// loudly without it).
pub fn kubectl_available() -> bool {
    Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `kubectl --kubeconfig <kc> --cache-dir <cache> --request-timeout=20s
/// args…`, no KUBECONFIG from the environment.
pub fn kubectl(kc: &Path, cache: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("kubectl");
    c.arg("--kubeconfig")
        .arg(kc)
        .arg("--cache-dir")
        .arg(cache)
        .arg("--request-timeout=20s")
        .args(args)
        .env_remove("KUBECONFIG");
    c
}

/// Writes a file in `dir`.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write file");
    p
}

/// A child process whose stdout lines arrive on a channel; killed on drop.
pub struct Lines {
    /// The process.
    pub child: Child,
    /// Its stdout, line by line.
    pub rx: mpsc::Receiver<String>,
}

impl Lines {
    /// Spawns `cmd` with stdout and stderr piped.
    pub fn spawn(mut cmd: Command) -> Self {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Lines { child, rx }
    }

    /// The next line, waiting up to [`TIMEOUT`] (off the runtime's threads).
    pub fn next(&self) -> String {
        tokio::task::block_in_place(|| self.rx.recv_timeout(TIMEOUT)).unwrap_or_else(|e| {
            panic!("no line within {TIMEOUT:?}: {e}");
        })
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Two ConfigMaps and a Deployment with two containers.
pub const MANIFEST: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  labels: {app: web}
data: {x: \"1\"}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: b
  labels: {app: db}
---
apiVersion: apps/v1
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
      - name: sidecar
        image: busybox:1
";
