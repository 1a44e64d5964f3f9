//! The simulated container runtime: a small fixed set of built-in
//! commands over a session's channels and the container's in-memory
//! files. Nothing here starts a host process or touches a host file.
//!
//! | command | does |
//! |---|---|
//! | `echo ARGS…` | the arguments, space-separated, and a newline |
//! | `cat [FILE…]` | the files, or stdin until it closes |
//! | `wc -c` | the number of stdin bytes |
//! | `env` | the container's `env` values, `HOSTNAME`, `PATH` |
//! | `sleep SECONDS` | waits (at most the session limit) |
//! | `true`, `false`, `exit N` | exit 0, 1, N |
//! | `test -d\|-f\|-e PATH` | exit 0 when it is a directory / file / either |
//! | `stty size` | the TTY's `rows cols` (waits for the first resize) |
//! | `tar xf - [-C DIR]`, `tar cf - PATH…` | unpack stdin into / pack the files |
//! | `sh -c 'CMD; CMD…'` | each `;`-separated command, words split at spaces (no quoting, pipes or variables) |
//! | `sh` | reads such lines from stdin and runs them, until `exit` or EOF |
//!
//! Anything else writes `exec: "X": executable file not found in $PATH`
//! to stderr and exits 127.

use std::time::Duration;

use bytes::Bytes;
use tokio::sync::{mpsc, watch};

use super::channel::{STDERR, STDOUT};
use super::fs::{self, Fs, Node, TarReader};

/// Longest line `sh` reads from stdin.
const MAX_LINE: usize = 64 << 10;
/// Longest `sleep`.
pub(crate) const MAX_SLEEP: Duration = Duration::from_secs(600);

/// What a command sees of its container.
pub(crate) struct Container<'a> {
    pub(crate) hostname: &'a str,
    pub(crate) env: &'a [(String, String)],
    pub(crate) fs: &'a Fs,
}

/// A session's standard streams, as the commands see them.
pub(crate) struct Stdio {
    /// `None`: the client asked for no stdin (reads see EOF at once).
    pub(crate) stdin: Option<mpsc::Receiver<Bytes>>,
    /// Channel and data towards the client; bounded, so a slow client
    /// slows the command (no unbounded buffering).
    pub(crate) out: mpsc::Sender<(u8, Bytes)>,
    /// Latest terminal size (width, height); `None` without a TTY.
    pub(crate) tty: Option<watch::Receiver<Option<(u16, u16)>>>,
    /// Unread stdin bytes of the last chunk (`sh` reads lines).
    leftover: Bytes,
}

impl Stdio {
    pub(crate) fn new(
        stdin: Option<mpsc::Receiver<Bytes>>,
        out: mpsc::Sender<(u8, Bytes)>,
        tty: Option<watch::Receiver<Option<(u16, u16)>>>,
    ) -> Self {
        Self {
            stdin,
            out,
            tty,
            leftover: Bytes::new(),
        }
    }

    async fn read(&mut self) -> Option<Bytes> {
        if !self.leftover.is_empty() {
            return Some(std::mem::take(&mut self.leftover));
        }
        loop {
            let chunk = self.stdin.as_mut()?.recv().await?;
            if !chunk.is_empty() {
                return Some(chunk);
            }
        }
    }

    /// One line without its `\n`; `None` at EOF with nothing read.
    async fn read_line(&mut self) -> Option<String> {
        let mut line = Vec::new();
        loop {
            let Some(chunk) = self.read().await else {
                return (!line.is_empty()).then(|| String::from_utf8_lossy(&line).into_owned());
            };
            if let Some(i) = chunk.iter().position(|&b| b == b'\n') {
                line.extend_from_slice(&chunk[..i]);
                self.leftover = chunk.slice(i + 1..);
                let s = String::from_utf8_lossy(&line);
                return Some(s.trim_end_matches('\r').to_owned());
            }
            line.extend_from_slice(&chunk);
            if line.len() > MAX_LINE {
                return Some(String::from_utf8_lossy(&line).into_owned());
            }
        }
    }

    async fn write(&self, channel: u8, data: impl Into<Bytes>) {
        // A client that went away ends the session elsewhere; nothing to do.
        let _ = self.out.send((channel, data.into())).await;
    }

    async fn stderr(&self, msg: String) {
        // With a TTY the kubelet merges stderr into stdout.
        let ch = if self.tty.is_some() { STDOUT } else { STDERR };
        self.write(ch, format!("{msg}\n")).await;
    }
}

/// Runs `argv` to completion; the exit code.
pub(crate) async fn run(argv: &[String], io: &mut Stdio, c: &Container<'_>) -> i32 {
    let Some((cmd, args)) = argv.split_first() else {
        return 0;
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match cmd.as_str() {
        "sh" | "/bin/sh" | "bash" | "/bin/bash" => sh(&args, io, c).await,
        _ => Box::pin(simple(cmd, &args, io, c)).await,
    }
}

async fn sh(args: &[&str], io: &mut Stdio, c: &Container<'_>) -> i32 {
    if let ["-c", script, ..] = args {
        return script_lines(script, io, c)
            .await
            .unwrap_or_else(|code| code);
    }
    let mut last = 0;
    while let Some(line) = io.read_line().await {
        match script_lines(&line, io, c).await {
            Ok(code) => last = code,
            Err(code) => return code,
        }
    }
    last
}

/// Runs `a; b; …`; `Err(code)` when `exit` ended the shell.
async fn script_lines(script: &str, io: &mut Stdio, c: &Container<'_>) -> Result<i32, i32> {
    let mut last = 0;
    for part in script.split(';') {
        let words: Vec<&str> = part.split_whitespace().collect();
        match words.as_slice() {
            [] => {}
            ["exit"] => return Err(last),
            ["exit", n, ..] => return Err(n.parse().unwrap_or(2)),
            [cmd, rest @ ..] => last = Box::pin(simple(cmd, rest, io, c)).await,
        }
    }
    Ok(last)
}

async fn simple(cmd: &str, args: &[&str], io: &mut Stdio, c: &Container<'_>) -> i32 {
    match (cmd.rsplit('/').next().unwrap_or(cmd), args) {
        ("echo", a) => {
            io.write(STDOUT, format!("{}\n", a.join(" "))).await;
            0
        }
        ("true", _) => 0,
        ("false", _) => 1,
        ("exit", []) => 0,
        ("exit", [n, ..]) => n.parse().unwrap_or(2),
        ("cat", files) => cat(files, io, c).await,
        ("wc", ["-c"]) => {
            let mut n: u64 = 0;
            while let Some(chunk) = io.read().await {
                n += chunk.len() as u64;
            }
            io.write(STDOUT, format!("{n}\n")).await;
            0
        }
        ("env" | "printenv", []) => {
            let mut s = format!(
                "PATH=/usr/local/bin:/usr/bin:/bin\nHOSTNAME={}\n",
                c.hostname
            );
            for (k, v) in c.env {
                s.push_str(&format!("{k}={v}\n"));
            }
            io.write(STDOUT, s).await;
            0
        }
        ("sleep", [secs]) => match secs.trim_end_matches('s').parse::<f64>() {
            Ok(s) if s.is_finite() && s >= 0.0 => {
                tokio::time::sleep(Duration::from_secs_f64(s).min(MAX_SLEEP)).await;
                0
            }
            _ => {
                io.stderr(format!("sleep: invalid time interval '{secs}'"))
                    .await;
                1
            }
        },
        ("test" | "[", [flag, path, ..]) => {
            let node = c.fs.get(&fs::normalize("/", path));
            let ok = matches!(
                (*flag, node),
                ("-d", Some(Node::Dir)) | ("-f", Some(Node::File(_))) | ("-e", Some(_))
            );
            i32::from(!ok)
        }
        ("stty", ["size"]) => stty_size(io).await,
        ("tar", a) => tar(a, io, c).await,
        (other, _) => {
            io.stderr(format!(
                "exec: \"{other}\": executable file not found in $PATH"
            ))
            .await;
            127
        }
    }
}

async fn cat(files: &[&str], io: &mut Stdio, c: &Container<'_>) -> i32 {
    if files.is_empty() || files == ["-"] {
        while let Some(chunk) = io.read().await {
            io.write(STDOUT, chunk).await;
        }
        return 0;
    }
    let mut code = 0;
    for f in files {
        match c.fs.get(&fs::normalize("/", f)) {
            Some(Node::File(b)) => io.write(STDOUT, b).await,
            Some(Node::Dir) => {
                io.stderr(format!("cat: {f}: Is a directory")).await;
                code = 1;
            }
            None => {
                io.stderr(format!("cat: {f}: No such file or directory"))
                    .await;
                code = 1;
            }
        }
    }
    code
}

async fn stty_size(io: &mut Stdio) -> i32 {
    let Some(tty) = io.tty.as_mut() else {
        io.stderr("stty: 'standard input': Inappropriate ioctl for device".into())
            .await;
        return 1;
    };
    let size = tokio::time::timeout(Duration::from_secs(30), tty.wait_for(Option::is_some))
        .await
        .ok()
        .and_then(Result::ok)
        .and_then(|s| *s);
    match size {
        Some((w, h)) => {
            io.write(STDOUT, format!("{h} {w}\n")).await;
            0
        }
        None => 1,
    }
}

/// `tar` as `kubectl cp` calls it: `x` or `c`, `f -`, optional `-C DIR`
/// and `-m`/`-v` (ignored), then the paths to pack.
async fn tar(args: &[&str], io: &mut Stdio, c: &Container<'_>) -> i32 {
    let mut mode = None;
    let mut dir = "/".to_owned();
    let mut paths = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if *a == "-C" {
            dir = fs::normalize("/", it.next().copied().unwrap_or("/"));
        } else if *a == "-" {
        } else if mode.is_none()
            && a.trim_start_matches('-')
                .chars()
                .all(|ch| "xcfmvpo".contains(ch))
        {
            let flags = a.trim_start_matches('-');
            mode = flags.chars().find(|ch| matches!(ch, 'x' | 'c'));
        } else {
            paths.push(*a);
        }
    }
    match mode {
        Some('x') => tar_extract(&dir, io, c).await,
        Some('c') => {
            let mut entries = Vec::new();
            for p in paths {
                match c.fs.walk(&fs::normalize(&dir, p)) {
                    Ok(e) => entries.extend(e),
                    Err(e) => {
                        io.stderr(format!("tar: {e}")).await;
                        return 2;
                    }
                }
            }
            for piece in fs::write_tar(&entries) {
                io.write(STDOUT, piece).await;
            }
            0
        }
        _ => {
            io.stderr("tar: You must specify one of the '-xc' options".into())
                .await;
            2
        }
    }
}

async fn tar_extract(dir: &str, io: &mut Stdio, c: &Container<'_>) -> i32 {
    let mut reader = TarReader::new(c.fs, dir);
    while let Some(chunk) = io.read().await {
        if let Err(e) = reader.feed(&chunk) {
            io.stderr(format!("tar: {e}")).await;
            return 2;
        }
    }
    // Go's archive/tar writes the two end blocks; a stream cut short is an error.
    if reader.done() {
        0
    } else {
        io.stderr("tar: Unexpected EOF in archive".into()).await;
        2
    }
}
