//! `kubeset exec` and `kubeset attach`: stdin, stdout and stderr of a
//! command in a container, over WebSocket; the process exits with the
//! remote command's exit code, as kubectl does
//! (`command terminated with exit code N`).

use kubeset::api::core::v1::Pod;
use kubeset::ws::{AttachParams, AttachedProcess, TerminalSize, exit_code};
use kubeset::{Api, Client};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use super::namespace;
use crate::cli::{AttachArgs, ExecArgs, Global};
use crate::error::CliError;

/// The session's parameters; without `-c`, kubectl's default container.
async fn params(client: &Client, ns: &str, t: &AttachArgs) -> Result<AttachParams, CliError> {
    let container = match &t.container {
        Some(c) => c.clone(),
        None => super::container::default_for(client, ns, &t.pod).await?,
    };
    Ok(AttachParams::default()
        .container(container)
        .stdin(t.stdin)
        .tty(t.tty)
        .stderr(!t.tty))
}

/// `exec POD [-c C] [-i] [-t] -- CMD…`.
pub async fn exec(global: &Global, client: &Client, args: &ExecArgs) -> Result<(), CliError> {
    let t = &args.target;
    let ns = namespace(global, client);
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let ap = params(client, &ns, t).await?;
    let action = format!("executing in pod {:?}", t.pod);
    let p = pods
        .exec(&t.pod, args.command.iter().cloned(), &ap)
        .await
        .map_err(|e| CliError::api(action, e))?;
    run_session(p, t.stdin, t.tty).await
}

/// `attach POD [-c C] [-i] [-t]`.
pub async fn attach(global: &Global, client: &Client, args: &AttachArgs) -> Result<(), CliError> {
    let ns = namespace(global, client);
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let ap = params(client, &ns, args).await?;
    let action = format!("attaching to pod {:?}", args.pod);
    let p = pods
        .attach(&args.pod, &ap)
        .await
        .map_err(|e| CliError::api(action, e))?;
    run_session(p, args.stdin, args.tty).await
}

/// Copies until EOF; a closed local pipe ends the copy quietly.
async fn pump(mut from: impl AsyncRead + Unpin, mut to: impl AsyncWrite + Unpin) {
    let _ = tokio::io::copy(&mut from, &mut to).await;
    let _ = to.flush().await;
}

/// Wires the local stdio to the session and waits for its status.
pub(crate) async fn run_session(
    mut p: AttachedProcess,
    stdin: bool,
    tty: bool,
) -> Result<(), CliError> {
    let _raw = if tty {
        terminal::RawMode::enter()
    } else {
        None
    };
    if let Some(sizes) = p.terminal_size() {
        tokio::spawn(terminal::forward_sizes(sizes));
    }
    if stdin && let Some(remote) = p.stdin() {
        tokio::spawn(forward_stdin(remote));
    }
    let out = p
        .stdout()
        .map(|o| tokio::spawn(pump(o, tokio::io::stdout())));
    let err = p
        .stderr()
        .map(|e| tokio::spawn(pump(e, tokio::io::stderr())));
    let status = match p.take_status() {
        Some(s) => s.await,
        None => None,
    };
    for task in [out, err].into_iter().flatten() {
        let _ = task.await;
    }
    match outcome(status, p).await? {
        0 => Ok(()),
        code => Err(CliError::CommandExit { code }),
    }
}

/// The command's exit code from its final status; a status that is no
/// exit (the command did not run) or none at all (the stream broke) is
/// the error.
pub(crate) async fn outcome(
    status: Option<kubeset::apimachinery::pkg::apis::meta::v1::Status>,
    p: AttachedProcess,
) -> Result<i32, CliError> {
    match status {
        Some(s) => exit_code(&s).ok_or_else(|| CliError::Remote {
            message: s.message.unwrap_or_else(|| "the command failed".to_owned()),
        }),
        None => Err(match p.join().await {
            Err(e) => CliError::api("streaming", e),
            Ok(()) => CliError::Remote {
                message: "the stream ended without an exit status".to_owned(),
            },
        }),
    }
}

/// Local stdin to the remote one, from a thread of its own (a blocking
/// read of a terminal must not keep the process alive after the command
/// ends); EOF closes the remote stdin.
async fn forward_stdin(mut remote: impl AsyncWrite + Unpin + Send + 'static) {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Vec<u8>>(4);
    std::thread::spawn(move || {
        use std::io::Read as _;
        let mut stdin = std::io::stdin().lock();
        let mut buf = vec![0u8; 32 << 10];
        loop {
            match stdin.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if tx.blocking_send(buf[..n].to_vec()).is_err() {
                        return;
                    }
                }
            }
        }
    });
    while let Some(chunk) = rx.recv().await {
        if remote.write_all(&chunk).await.is_err() {
            return;
        }
    }
    let _ = remote.shutdown().await;
}

mod terminal {
    //! The local terminal for `-t`: raw mode while the session runs, and
    //! its size (at start and on every SIGWINCH) to the remote TTY.

    use super::TerminalSize;

    /// Restores the terminal's mode when dropped.
    pub(crate) struct RawMode {
        #[cfg(unix)]
        saved: rustix::termios::Termios,
    }

    #[cfg(unix)]
    impl RawMode {
        /// Raw mode on stdin, if it is a terminal.
        pub(crate) fn enter() -> Option<Self> {
            use rustix::termios::{OptionalActions, isatty, tcgetattr, tcsetattr};
            let stdin = std::io::stdin();
            if !isatty(&stdin) {
                return None;
            }
            let saved = tcgetattr(&stdin).ok()?;
            let mut raw = saved.clone();
            raw.make_raw();
            tcsetattr(&stdin, OptionalActions::Now, &raw).ok()?;
            Some(Self { saved })
        }
    }

    #[cfg(unix)]
    impl Drop for RawMode {
        fn drop(&mut self) {
            let _ = rustix::termios::tcsetattr(
                std::io::stdin(),
                rustix::termios::OptionalActions::Now,
                &self.saved,
            );
        }
    }

    #[cfg(not(unix))]
    impl RawMode {
        pub(crate) fn enter() -> Option<Self> {
            None
        }
    }

    #[cfg(unix)]
    fn size() -> Option<TerminalSize> {
        let ws = rustix::termios::tcgetwinsize(std::io::stdout()).ok()?;
        (ws.ws_col > 0 && ws.ws_row > 0).then_some(TerminalSize {
            width: ws.ws_col,
            height: ws.ws_row,
        })
    }

    /// Sends the size now and after every window change.
    #[cfg(unix)]
    pub(crate) async fn forward_sizes(tx: kubeset::ws::TerminalSizeSender) {
        use tokio::signal::unix::{SignalKind, signal};
        let mut changes = signal(SignalKind::window_change()).ok();
        loop {
            if let Some(s) = size()
                && tx.send(s).await.is_err()
            {
                return;
            }
            match &mut changes {
                Some(c) => {
                    if c.recv().await.is_none() {
                        return;
                    }
                }
                None => return,
            }
        }
    }

    #[cfg(not(unix))]
    pub(crate) async fn forward_sizes(_tx: kubeset::ws::TerminalSizeSender) {}
}
