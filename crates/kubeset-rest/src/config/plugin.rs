//! Running a credential plugin with bounds: a timeout, a cap on its
//! standard output and error, and, on timeout, cancellation or too much
//! output, SIGKILL to its whole process group (a plugin that forked a
//! helper must not leave it behind) and a reap.
//!
//! The plugin's exit ends the run. client-go reads the plugin's stdout into
//! a buffer with `cmd.Run()` and sets no `WaitDelay`, so Go waits for the
//! pipe to close: a helper the plugin left holding stdout (a daemon it
//! forked, `sleep &`) stalls the call until that helper exits. Here the
//! pipes are read until the plugin exited and then for at most
//! [`EXIT_GRACE`] more (Go's `WaitDelay` semantics, with a short delay):
//! what it printed by then is its output, and the pipes are closed (the
//! helper is left alone; its next write fails). The whole run, grace
//! included, stays within the timeout.

use std::{
    io::{self, Read},
    process::{Child, ChildStderr, ChildStdout, Command, ExitStatus, Stdio},
    sync::atomic::{AtomicBool, Ordering},
    time::{Duration, Instant},
};

#[cfg(unix)]
use rustix::event::{PollFd, PollFlags, Timespec};

/// How long the runner waits between looks at the child (its exit cannot
/// be polled for along with its pipes).
const POLL: Duration = Duration::from_millis(10);

/// How long the pipes are still read after the plugin exited, for output a
/// child of it is finishing; a pipe still open after that is closed.
pub(crate) const EXIT_GRACE: Duration = Duration::from_millis(500);

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
    /// Waiting for it, or reading its output, failed.
    Wait(io::Error),
}

#[cfg(unix)]
/// Kill the child's process group (it leads one: `process_group(0)`), then
/// the child itself, and reap it.
fn kill(child: &mut Child) {
    // The group is the child's own and the child is not reaped yet, so
    // its id cannot have been reused.
    if let Some(pid) = i32::try_from(child.id())
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(unix)]
/// `e`, after killing the plugin if it still runs.
fn fail(child: &mut Child, running: bool, e: RunError) -> Result<Finished, RunError> {
    if running {
        kill(child);
    }
    Err(e)
}

#[cfg(unix)]
/// One of the plugin's output pipes, read without blocking into a buffer
/// that keeps at most `keep` bytes.
struct Pipe<R> {
    from: Option<R>,
    kept: Vec<u8>,
    keep: usize,
    /// Whether more than `keep` bytes arrived.
    over: bool,
}

#[cfg(unix)]
impl<R: Read + rustix::fd::AsFd> Pipe<R> {
    fn new(from: Option<R>, keep: usize) -> io::Result<Self> {
        if let Some(f) = &from {
            rustix::io::ioctl_fionbio(f, true)?;
        }
        Ok(Self {
            from,
            kept: Vec::new(),
            keep,
            over: false,
        })
    }

    /// Reads what is there now; closes the pipe at its end.
    fn drain(&mut self) -> io::Result<()> {
        let mut buf = [0u8; 16 * 1024];
        while let Some(from) = self.from.as_mut() {
            match from.read(&mut buf) {
                Ok(0) => self.from = None,
                Ok(n) => {
                    let room = self.keep.saturating_sub(self.kept.len());
                    self.kept.extend_from_slice(&buf[..n.min(room)]);
                    self.over |= n > room;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn open(&self) -> bool {
        self.from.is_some()
    }
}

#[cfg(unix)]
/// Waits until one of the open pipes is readable, for at most `wait`.
fn wait_readable(
    out: &Pipe<ChildStdout>,
    err: &Pipe<ChildStderr>,
    wait: Duration,
) -> io::Result<()> {
    let mut fds = Vec::with_capacity(2);
    if let Some(f) = &out.from {
        fds.push(PollFd::new(f, PollFlags::IN));
    }
    if let Some(f) = &err.from {
        fds.push(PollFd::new(f, PollFlags::IN));
    }
    if fds.is_empty() {
        std::thread::sleep(wait);
        return Ok(());
    }
    let timeout = Timespec::try_from(wait).unwrap_or(Timespec {
        tv_sec: 0,
        tv_nsec: 10_000_000,
    });
    match rustix::event::poll(&mut fds, Some(&timeout)) {
        Ok(_) | Err(rustix::io::Errno::INTR) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(unix)]
/// Run `cmd` (stdin closed, stdout and stderr captured) for at most
/// `timeout`, stopping early when `cancel` becomes true. Stdout over
/// `max_stdout` bytes kills it; stderr is kept up to `max_stderr` bytes.
/// The run ends at the plugin's exit, or [`EXIT_GRACE`] after it when a
/// process it left behind holds a pipe open.
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
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(RunError::Spawn)?;
    let pipes = Pipe::new(child.stdout.take(), max_stdout)
        .and_then(|out| Ok((out, Pipe::new(child.stderr.take(), max_stderr)?)));
    let (mut out, mut err) = match pipes {
        Ok(p) => p,
        Err(e) => {
            kill(&mut child);
            return Err(RunError::Wait(e));
        }
    };
    let deadline = started.checked_add(timeout);
    let mut exited: Option<(ExitStatus, Instant)> = None;
    loop {
        // Once the plugin is reaped its id may be reused: only a running
        // plugin is killed.
        let running = exited.is_none();
        if let Err(e) = out.drain().and_then(|()| err.drain()) {
            return fail(&mut child, running, RunError::Wait(e));
        }
        if out.over {
            return fail(&mut child, running, RunError::TooLarge);
        }
        let now = Instant::now();
        let expired = cancel.load(Ordering::Relaxed) || deadline.is_some_and(|d| now >= d);
        if running {
            match child.try_wait() {
                Ok(status) => exited = status.map(|s| (s, now)),
                Err(e) => return fail(&mut child, true, RunError::Wait(e)),
            }
        }
        match exited {
            Some((status, at)) => {
                let open = out.open() || err.open();
                if !open || expired || now.duration_since(at) >= EXIT_GRACE {
                    if open {
                        tracing::debug!(
                            "exec plugin exited; a process it left holds its output open"
                        );
                    }
                    return Ok(Finished {
                        status,
                        stdout: out.kept,
                        stderr: err.kept,
                    });
                }
            }
            None if expired => return fail(&mut child, true, RunError::Timeout),
            None => {}
        }
        if let Err(e) = wait_readable(&out, &err, POLL) {
            return fail(&mut child, exited.is_none(), RunError::Wait(e));
        }
    }
}

/// Without `poll` and process groups: the pipes are read on helper
/// threads, the plugin alone is killed at the timeout, and a pipe still
/// open [`EXIT_GRACE`] after its exit is left to its thread.
#[cfg(not(unix))]
pub(crate) fn run(
    mut cmd: Command,
    timeout: Duration,
    cancel: &AtomicBool,
    max_stdout: usize,
    max_stderr: usize,
) -> Result<Finished, RunError> {
    use std::sync::mpsc;
    fn reader(from: Option<impl Read + Send + 'static>, keep: usize) -> mpsc::Receiver<Vec<u8>> {
        let (tx, rx) = mpsc::channel();
        if let Some(from) = from {
            std::thread::spawn(move || {
                let mut kept = Vec::new();
                let _ = from.take(keep as u64 + 1).read_to_end(&mut kept);
                let _ = tx.send(kept);
            });
        }
        rx
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(RunError::Spawn)?;
    let out = reader(child.stdout.take(), max_stdout);
    let err = reader(child.stderr.take(), max_stderr);
    let deadline = Instant::now().checked_add(timeout);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => {
                let _ = child.kill();
                return Err(RunError::Wait(e));
            }
        }
        if cancel.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(RunError::Timeout);
        }
        std::thread::sleep(POLL);
    };
    let stdout = out.recv_timeout(EXIT_GRACE).unwrap_or_default();
    if stdout.len() > max_stdout {
        return Err(RunError::TooLarge);
    }
    let mut stderr = err.recv_timeout(POLL).unwrap_or_default();
    stderr.truncate(max_stderr);
    Ok(Finished {
        status,
        stdout,
        stderr,
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::thread;

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

    /// A plugin that prints its answer and exits, leaving a child that
    /// holds stdout open: its exit ends the run (after the grace), with
    /// what it printed. Before, the run waited for the pipe to close and
    /// hit the timeout (120 s in the CLI, twice per call).
    #[test]
    fn a_child_left_holding_stdout_does_not_stall_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let pid = dir.path().join("pid");
        let script = format!(
            "printf answer; echo warn >&2; sleep 60 & echo $! > {}; exit 0",
            pid.display()
        );
        let r = run(sh(&script), Duration::from_secs(10), &never(), 100, 100);
        let pid = std::fs::read_to_string(&pid).unwrap();
        let _ = rustix::process::Pid::from_raw(pid.trim().parse().unwrap())
            .map(|p| rustix::process::kill_process(p, rustix::process::Signal::KILL));
        let Ok(done) = r else {
            panic!("the plugin exited: its output is its answer");
        };
        assert_eq!(done.stdout, b"answer");
        assert_eq!(done.stderr, b"warn\n");
        assert!(done.status.success());
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
