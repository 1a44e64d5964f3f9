//! Running a credential plugin with bounds: a timeout, a cap on its
//! standard output and error, and, on timeout, cancellation or too much
//! output, SIGKILL to its whole process group (a plugin that forked a
//! helper must not leave it behind) and a reap.

use std::{
    io::{self, Read},
    process::{Child, Command, ExitStatus, Stdio},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    thread,
    time::{Duration, Instant},
};

/// How often the runner looks at the child between its start and its end.
const POLL: Duration = Duration::from_millis(10);

/// What a finished plugin left.
pub(crate) struct Finished {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: Vec<u8>,
}

/// Why a plugin run produced no [`Finished`].
pub(crate) enum RunError {
    /// It could not be started.
    Spawn(io::Error),
    /// The timeout passed, or the caller cancelled; it was killed.
    Timeout,
    /// It printed more than the limit on stdout; it was killed.
    TooLarge,
    /// Waiting for it failed.
    Wait(io::Error),
}

/// Read at most `limit` bytes of `from`; `None` when there were more (the
/// reader stops there, so a flood costs no memory).
fn read_capped(mut from: impl Read, limit: usize) -> io::Result<Option<Vec<u8>>> {
    let mut out = Vec::new();
    from.by_ref().take(limit as u64 + 1).read_to_end(&mut out)?;
    Ok((out.len() <= limit).then_some(out))
}

/// Kill the child's process group (it leads one: `process_group(0)`), then
/// the child itself, and reap it.
fn kill(child: &mut Child) {
    // The group is the child's own and the child is not reaped yet, so
    // its id cannot have been reused.
    #[cfg(unix)]
    if let Some(pid) = i32::try_from(child.id())
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Run `cmd` (stdin closed, stdout and stderr captured) for at most
/// `timeout`, stopping early when `cancel` becomes true. Stdout over
/// `max_stdout` bytes kills it; stderr is kept up to `max_stderr` bytes.
pub(crate) fn run(
    mut cmd: Command,
    timeout: Duration,
    cancel: &AtomicBool,
    max_stdout: usize,
    max_stderr: usize,
) -> Result<Finished, RunError> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().map_err(RunError::Spawn)?;
    let over = Arc::new(AtomicBool::new(false));
    let stdout = child.stdout.take().map(|out| {
        let over = over.clone();
        thread::spawn(move || {
            let read = read_capped(out, max_stdout);
            if matches!(read, Ok(None)) {
                over.store(true, Ordering::Relaxed);
            }
            read
        })
    });
    let stderr = child.stderr.take().map(|err| {
        thread::spawn(move || {
            let mut kept = Vec::new();
            let mut err = err;
            let _ = err.by_ref().take(max_stderr as u64).read_to_end(&mut kept);
            // Drain the rest so the plugin never blocks on a full pipe.
            let _ = io::copy(&mut err, &mut io::sink());
            kept
        })
    });
    let deadline = Instant::now().checked_add(timeout);
    let expired =
        || cancel.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d);
    let mut status = None;
    // Until the plugin exited and its pipes are closed (a helper it forked
    // may hold them open after it exits).
    let open = |h: &Option<thread::JoinHandle<_>>| h.as_ref().is_some_and(|h| !h.is_finished());
    while status.is_none() || open(&stdout) || stderr.as_ref().is_some_and(|h| !h.is_finished()) {
        if over.load(Ordering::Relaxed) {
            kill(&mut child);
            return Err(RunError::TooLarge);
        }
        if status.is_none() {
            status = child.try_wait().map_err(|e| {
                kill(&mut child);
                RunError::Wait(e)
            })?;
        }
        if expired() {
            kill(&mut child);
            return Err(RunError::Timeout);
        }
        thread::sleep(POLL);
    }
    let Some(status) = status else {
        return Err(RunError::Timeout);
    };
    let stdout = match stdout.map(thread::JoinHandle::join) {
        Some(Ok(Ok(Some(out)))) => out,
        Some(Ok(Ok(None))) => return Err(RunError::TooLarge),
        Some(Ok(Err(e))) => return Err(RunError::Wait(e)),
        Some(Err(_)) | None => Vec::new(),
    };
    let stderr = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
    Ok(Finished {
        status,
        stdout,
        stderr,
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    fn never() -> AtomicBool {
        AtomicBool::new(false)
    }

    /// Whether `pid` is gone (or a zombie waiting for its reaper).
    fn dead(pid: &str) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        }
    }

    fn wait_dead(pid: &str) -> bool {
        let until = Instant::now() + Duration::from_secs(30);
        while Instant::now() < until {
            if dead(pid) {
                return true;
            }
            thread::sleep(Duration::from_millis(20));
        }
        false
    }

    #[test]
    fn output_is_captured() {
        let Ok(done) = run(
            sh("echo out; echo err >&2; exit 3"),
            Duration::from_secs(60),
            &never(),
            100,
            100,
        ) else {
            panic!("the plugin should run");
        };
        assert_eq!(done.stdout, b"out\n");
        assert_eq!(done.stderr, b"err\n");
        assert_eq!(done.status.code(), Some(3));
    }

    #[test]
    fn a_hung_plugin_and_its_children_are_killed_at_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        let script = format!(
            "sleep 300 & echo $! > {0}; echo $$ >> {0}; wait",
            pids.display()
        );
        let started = Instant::now();
        let r = run(sh(&script), Duration::from_millis(300), &never(), 100, 100);
        assert!(matches!(r, Err(RunError::Timeout)));
        assert!(started.elapsed() < Duration::from_secs(30));
        let pids = std::fs::read_to_string(&pids).unwrap();
        for pid in pids.split_whitespace() {
            assert!(wait_dead(pid), "process {pid} still runs");
        }
    }

    #[test]
    fn cancelling_kills_the_plugin() {
        let cancel = AtomicBool::new(true);
        let r = run(sh("sleep 300"), Duration::from_secs(300), &cancel, 100, 100);
        assert!(matches!(r, Err(RunError::Timeout)));
    }

    #[test]
    fn too_much_output_kills_the_plugin() {
        for script in ["head -c 2000 /dev/zero", "cat /dev/zero"] {
            let r = run(sh(script), Duration::from_secs(60), &never(), 1000, 100);
            assert!(matches!(r, Err(RunError::TooLarge)), "{script}");
        }
        let r = run(
            sh("head -c 1000 /dev/zero"),
            Duration::from_secs(60),
            &never(),
            1000,
            100,
        );
        assert!(matches!(r, Ok(Finished { ref stdout, .. }) if stdout.len() == 1000));
    }

    #[test]
    fn a_missing_command_is_a_spawn_error() {
        let r = run(
            Command::new("/nonexistent/plugin"),
            Duration::from_secs(1),
            &never(),
            1,
            1,
        );
        assert!(matches!(r, Err(RunError::Spawn(_))));
    }
}
