//! Extra realkube instances a test starts for itself (its own state
//! directory and ports), stopped again when dropped; and signals to API
//! server processes.

use std::path::PathBuf;
use std::process::Command;

use crate::HarnessError;
use crate::env::{RealkubeEnv, workspace_root};

/// `tests/realkube/realkube.sh`.
pub fn script() -> PathBuf {
    workspace_root().join("tests/realkube/realkube.sh")
}

/// A realkube instance owned by one test: `realkube.sh start` with its own
/// `REALKUBE_CACHE`, `realkube.sh stop` on drop (also when the test panics).
#[derive(Debug)]
pub struct Instance {
    cache: PathBuf,
    /// The instance's settings (servers, pids, certificates).
    pub env: RealkubeEnv,
}

impl Instance {
    /// Starts an instance whose state lives in `<workspace>/.cache/<name>`,
    /// with `realkube.sh start` arguments `args` (which must give it ports
    /// of its own: `--port`, `--etcd-port`). Blocks until every API server
    /// is ready (10-20 s); call it from `spawn_blocking` in async code.
    /// A leftover instance of the same name (a crashed earlier run) is
    /// stopped first.
    pub fn start(name: &str, args: &[&str]) -> Result<Instance, HarnessError> {
        let cache = workspace_root().join(".cache").join(name);
        // Whatever an earlier, interrupted run left under this name is ours.
        run_script(&cache, &["stop"])?;
        let mut all = vec!["start"];
        all.extend_from_slice(args);
        if let Err(first) = run_script(&cache, &all) {
            // Seen once on the loaded machine: etcd exited during start
            // with an empty log. One more try before failing.
            eprintln!("kubeset-tests: starting {name} failed, retrying once: {first}");
            std::thread::sleep(std::time::Duration::from_secs(2));
            run_script(&cache, &all)?;
        }
        match RealkubeEnv::read_file(&cache.join("env")) {
            Ok(env) => Ok(Instance { cache, env }),
            Err(e) => {
                // Do not leave the started processes behind.
                let _ = run_script(&cache, &["stop"]);
                Err(e)
            }
        }
    }

    /// Sends `signal` (`"KILL"`, `"STOP"`, `"CONT"`) to API server `index`.
    pub fn signal(&self, index: usize, signal: &str) -> Result<(), HarnessError> {
        let pid = self.env.apiserver_pids.get(index).copied().ok_or_else(|| {
            HarnessError::BadSetting {
                name: "apiserver index".to_owned(),
                value: index.to_string(),
            }
        })?;
        send_signal(pid, signal)
    }

    /// Stops the instance now (also done on drop).
    pub fn stop(&mut self) -> Result<(), HarnessError> {
        run_script(&self.cache, &["stop"])
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Err(e) = run_script(&self.cache, &["stop"]) {
            eprintln!("kubeset-tests: stopping {}: {e}", self.cache.display());
        }
    }
}

/// `kill -<signal> <pid>`.
pub fn send_signal(pid: u32, signal: &str) -> Result<(), HarnessError> {
    let out = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .output()
        .map_err(|source| HarnessError::Io {
            what: format!("running kill -{signal} {pid}"),
            source,
        })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(HarnessError::Command {
            command: format!("kill -{signal} {pid}"),
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }
}

fn run_script(cache: &std::path::Path, args: &[&str]) -> Result<(), HarnessError> {
    let script = script();
    let out = Command::new("bash")
        .arg(&script)
        .args(args)
        .env("REALKUBE_CACHE", cache)
        .output()
        .map_err(|source| HarnessError::Io {
            what: format!("running {} {}", script.display(), args.join(" ")),
            source,
        })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(HarnessError::Command {
            command: format!(
                "REALKUBE_CACHE={} {} {}",
                cache.display(),
                script.display(),
                args.join(" ")
            ),
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }
}
