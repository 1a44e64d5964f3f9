//! `pods/attach`: the container's main process (its `command` + `args`,
//! `sh` by default), started on the first attach and shared by every
//! attach after it, as a kubelet's container is: output is broadcast to
//! the attached sessions (what was written before an attach is not seen;
//! a session too slow for 256 chunks misses some, never blocks the
//! process), stdin from any of them goes to the one process, and with the
//! container's `stdinOnce` the first session's stdin close is its EOF. A
//! finished process is started again on the next attach (restartPolicy
//! Always); its sessions get its exit status.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::StreamExt;
use tokio::sync::{broadcast, mpsc, watch};

use super::channel::{self, STDERR, STDOUT};
use super::runtime::{self, Container, Stdio};
use super::session::{self, MAX_SESSION, Ws};
use super::{ExecTarget, Runtime};

/// Output chunks a slow session may fall behind by.
const BACKLOG: usize = 256;

/// A container's running main process.
pub(crate) struct Main {
    stdin: Mutex<Option<mpsc::Sender<Bytes>>>,
    out: broadcast::Sender<(u8, Bytes)>,
    exit: watch::Receiver<Option<i32>>,
    size: watch::Sender<Option<(u16, u16)>>,
    argv: Vec<String>,
}

impl Main {
    fn start(rt: &Runtime, t: &ExecTarget) -> Arc<Self> {
        let (stdin_tx, stdin_rx) = mpsc::channel::<Bytes>(16);
        let (out_tx, mut out_rx) = mpsc::channel::<(u8, Bytes)>(16);
        let (bcast, _) = broadcast::channel(BACKLOG);
        let (exit_tx, exit_rx) = watch::channel(None);
        let (size_tx, size_rx) = watch::channel(None);
        let fs = rt.fs(&t.uid, &t.container);
        let (argv, env, host, tty) = (t.command.clone(), t.env.clone(), t.pod.clone(), t.tty);
        let cancel = rt.cancel.clone();
        let process = tokio::spawn(async move {
            let c = Container {
                hostname: &host,
                env: &env,
                fs: &fs,
            };
            let mut io = Stdio::new(Some(stdin_rx), out_tx, tty.then_some(size_rx));
            tokio::select! {
                code = runtime::run(&argv, &mut io, &c) => code,
                () = tokio::time::sleep(MAX_SESSION) => 137,
                () = cancel.cancelled() => 137,
            }
        });
        let fanout = bcast.clone();
        tokio::spawn(async move {
            while let Some(item) = out_rx.recv().await {
                // No session attached: the output is gone, as on a kubelet.
                let _ = fanout.send(item);
            }
            let code = process.await.unwrap_or(1);
            exit_tx.send_replace(Some(code));
        });
        Arc::new(Self {
            stdin: Mutex::new(Some(stdin_tx)),
            out: bcast,
            exit: exit_rx,
            size: size_tx,
            argv: t.command.clone(),
        })
    }

    fn stdin(&self) -> std::sync::MutexGuard<'_, Option<mpsc::Sender<Bytes>>> {
        self.stdin
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Runtime {
    /// The running main process of the container, started if there is
    /// none or the last one finished.
    fn main_process(&self, t: &ExecTarget) -> Arc<Main> {
        let mut mains = self
            .mains
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = (t.uid.clone(), t.container.clone());
        if let Some(m) = mains.get(&key)
            && m.exit.borrow().is_none()
        {
            return m.clone();
        }
        mains.retain(|_, m| m.exit.borrow().is_none());
        let m = Main::start(self, t);
        mains.insert(key, m.clone());
        m
    }
}

/// Resolves once the process has an exit code.
async fn exited(exit: &mut watch::Receiver<Option<i32>>) {
    let _ = exit.wait_for(Option::is_some).await;
}

/// One attach session to its end: the main process's exit, the client
/// going away, or the session limit.
pub(crate) async fn run(
    rt: &Runtime,
    ws: Ws,
    protocol: &'static str,
    t: ExecTarget,
    stdin_once: bool,
) {
    let v5 = protocol == channel::V5;
    let main = rt.main_process(&t);
    let mut output = main.out.subscribe();
    let mut exit = main.exit.clone();
    let (mut sink, mut source) = ws.split();
    let stdin = if t.stdin { main.stdin().clone() } else { None };
    let close_stdin = || {
        if stdin_once {
            main.stdin().take();
        }
    };
    let reader = session::client_reader(&mut source, v5, stdin, &main.size, close_stdin);
    let wants = [t.stdout, t.stderr && !t.tty];
    let send = |(ch, data): (u8, Bytes)| {
        let wanted = match ch {
            STDOUT => wants[0],
            STDERR => wants[1],
            _ => false,
        };
        wanted.then(|| {
            tokio_tungstenite::tungstenite::Message::Binary(channel::frame(ch, &data).into())
        })
    };
    let writer = async {
        use futures::SinkExt;
        loop {
            tokio::select! {
                biased;
                item = output.recv() => match item {
                    Ok(item) => {
                        if let Some(msg) = send(item)
                            && sink.send(msg).await.is_err()
                        {
                            return;
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => break,
                },
                () = exited(&mut exit) => break,
            }
        }
        // Everything the process wrote before it ended is queued already.
        while let Ok(item) = output.try_recv() {
            if let Some(msg) = send(item)
                && sink.send(msg).await.is_err()
            {
                return;
            }
        }
        let code = (*exit.borrow()).unwrap_or(1);
        session::finish(&mut sink, &main.argv, code).await;
    };
    tokio::select! {
        () = writer => {}
        () = reader => {}
        () = tokio::time::sleep(MAX_SESSION) => {}
    }
}
