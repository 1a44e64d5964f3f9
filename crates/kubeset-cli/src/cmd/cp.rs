//! `kubeset cp SRC DEST`: tar over exec, as kubectl does. To a pod:
//! `test -d DEST` (a directory gets the source's name appended), then a
//! tar of the local file or tree into `tar -xmf - -C DIR`. From a pod:
//! `tar cf - SRC`, unpacked locally below DEST with the source prefix
//! stripped; entries that would land outside DEST (`..`, absolute paths)
//! and links are skipped with a warning, as kubectl skips them.

use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use kubeset::api::core::v1::Pod;
use kubeset::ws::AttachParams;
use kubeset::{Api, Client};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

use super::namespace;
use crate::cli::{CpArgs, Global};
use crate::error::CliError;

/// `[NAMESPACE/]POD:PATH`, or a local path.
#[derive(Debug, PartialEq, Eq)]
pub enum Spec {
    /// A path in a pod.
    Remote {
        /// Namespace, when given.
        namespace: Option<String>,
        /// Pod.
        pod: String,
        /// Path in the container.
        path: String,
    },
    /// A local path.
    Local(PathBuf),
}

/// kubectl's reading: a `:` before any `/` names a pod.
pub fn parse_spec(s: &str) -> Spec {
    match s.split_once(':') {
        Some((pod, path)) if !pod.is_empty() && !path.is_empty() => match pod.split_once('/') {
            Some((ns, pod)) if !ns.is_empty() && !pod.is_empty() && !pod.contains('/') => {
                Spec::Remote {
                    namespace: Some(ns.to_owned()),
                    pod: pod.to_owned(),
                    path: path.to_owned(),
                }
            }
            None => Spec::Remote {
                namespace: None,
                pod: pod.to_owned(),
                path: path.to_owned(),
            },
            Some(_) => Spec::Local(PathBuf::from(s)),
        },
        _ => Spec::Local(PathBuf::from(s)),
    }
}

/// Copies in the direction the specs say.
pub async fn run(global: &Global, client: &Client, args: &CpArgs) -> Result<(), CliError> {
    let (remote, local, upload) = match (parse_spec(&args.src), parse_spec(&args.dest)) {
        (Spec::Local(src), remote @ Spec::Remote { .. }) => (remote, src, true),
        (remote @ Spec::Remote { .. }, Spec::Local(dest)) => (remote, dest, false),
        (Spec::Local(_), Spec::Local(_)) => {
            return Err(CliError::usage(
                "one of src or dest must be a remote file specification (POD:PATH)",
            ));
        }
        (Spec::Remote { .. }, Spec::Remote { .. }) => {
            return Err(CliError::usage("copying between two pods is not supported"));
        }
    };
    let Spec::Remote {
        namespace: ns,
        pod,
        path,
    } = remote
    else {
        return Err(CliError::usage("no remote file specification (POD:PATH)"));
    };
    let ns = ns.unwrap_or_else(|| namespace(global, client));
    let api: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let container = match &args.container {
        Some(c) => c.clone(),
        None => super::container::default_for(client, &ns, &pod).await?,
    };
    let r = Remote {
        api: &api,
        pod: &pod,
        container: Some(&container),
    };
    if upload {
        to_pod(&r, &local, &path).await
    } else {
        from_pod(&r, &path, &local).await
    }
}

fn params(container: Option<&str>, stdin: bool) -> AttachParams {
    let ap = AttachParams::default().stdin(stdin);
    match container {
        Some(c) => ap.container(c),
        None => ap,
    }
}

/// The container a copy runs its commands in.
struct Remote<'a> {
    api: &'a Api<Pod>,
    pod: &'a str,
    container: Option<&'a str>,
}

/// Runs `command`, feeding `input` chunks to its stdin; stdout chunks go
/// to `output`. The exit code; the command's stderr is printed when it
/// is not 0.
async fn run_remote(
    r: &Remote<'_>,
    command: Vec<String>,
    input: Option<mpsc::Receiver<Vec<u8>>>,
    output: Option<mpsc::Sender<Vec<u8>>>,
) -> Result<i32, CliError> {
    let action = format!("executing in pod {:?}", r.pod);
    let mut p = r
        .api
        .exec(r.pod, command, &params(r.container, input.is_some()))
        .await
        .map_err(|e| CliError::api(action, e))?;
    if let (Some(mut input), Some(mut stdin)) = (input, p.stdin()) {
        tokio::spawn(async move {
            while let Some(chunk) = input.recv().await {
                if stdin.write_all(&chunk).await.is_err() {
                    return;
                }
            }
            let _ = stdin.shutdown().await;
        });
    }
    let mut stdout = p.stdout();
    let out_task = tokio::spawn(async move {
        let mut buf = vec![0u8; 32 << 10];
        while let Some(s) = stdout.as_mut() {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if let Some(o) = &output
                        && o.send(buf[..n].to_vec()).await.is_err()
                    {
                        break;
                    }
                }
            }
        }
    });
    let mut stderr = String::new();
    if let Some(mut e) = p.stderr() {
        let _ = (&mut e).take(64 << 10).read_to_string(&mut stderr).await;
    }
    let status = match p.take_status() {
        Some(s) => s.await,
        None => None,
    };
    let _ = out_task.await;
    let code = super::exec::outcome(status, p).await?;
    if code != 0 && !stderr.is_empty() {
        eprint!("{stderr}");
    }
    Ok(code)
}

/// `dir` and `base` of a remote path (`/tmp/x` → `/tmp`, `x`).
fn split_remote(path: &str) -> (String, String) {
    let trimmed = path.trim_end_matches('/');
    match trimmed.rsplit_once('/') {
        Some(("", base)) => ("/".to_owned(), base.to_owned()),
        Some((dir, base)) => (dir.to_owned(), base.to_owned()),
        None => (String::new(), trimmed.to_owned()),
    }
}

async fn to_pod(r: &Remote<'_>, src: &Path, dest: &str) -> Result<(), CliError> {
    if !src.exists() {
        return Err(CliError::io(
            format!("{}", src.display()),
            std::io::Error::from(std::io::ErrorKind::NotFound),
        ));
    }
    let test = vec!["test".into(), "-d".into(), dest.to_owned()];
    let dest = if run_remote(r, test, None, None).await? == 0 {
        let name = src
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        format!("{}/{name}", dest.trim_end_matches('/'))
    } else {
        dest.to_owned()
    };
    let (dir, base) = split_remote(&dest);
    let (tx, rx) = mpsc::channel::<Vec<u8>>(4);
    let src = src.to_owned();
    let writer = std::thread::spawn(move || -> std::io::Result<()> {
        let mut b = tar::Builder::new(ChannelWriter { tx });
        b.follow_symlinks(false);
        if src.is_dir() {
            b.append_dir_all(&base, &src)?;
        } else {
            b.append_path_with_name(&src, &base)?;
        }
        b.into_inner()?.flush()
    });
    let mut cmd: Vec<String> = vec!["tar".into(), "-xmf".into(), "-".into()];
    if !dir.is_empty() {
        cmd.extend(["-C".into(), dir]);
    }
    let code = run_remote(r, cmd, Some(rx), None).await?;
    match writer.join() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(CliError::io("reading the local files", e)),
        Err(_) => {
            return Err(CliError::Remote {
                message: "the tar writer failed".into(),
            });
        }
    }
    if code == 0 {
        Ok(())
    } else {
        Err(CliError::CommandExit { code })
    }
}

async fn from_pod(r: &Remote<'_>, src: &str, dest: &Path) -> Result<(), CliError> {
    let prefix = src.trim_start_matches('/').trim_end_matches('/').to_owned();
    let (tx, rx) = mpsc::channel::<Vec<u8>>(4);
    let dest = dest.to_owned();
    let reader = std::thread::spawn(move || {
        untar(
            ChannelReader {
                rx,
                chunk: Vec::new(),
                at: 0,
            },
            &prefix,
            &dest,
        )
    });
    let cmd = vec!["tar".into(), "cf".into(), "-".into(), src.to_owned()];
    let code = run_remote(r, cmd, None, Some(tx)).await?;
    let result = reader.join().map_err(|_| CliError::Remote {
        message: "the tar reader failed".into(),
    })?;
    if code != 0 {
        return Err(CliError::CommandExit { code });
    }
    result.map_err(|e| CliError::io("writing the copied files", e))
}

/// Unpacks the archive below `dest`, `prefix` stripped from each name.
fn untar(input: impl Read, prefix: &str, dest: &Path) -> std::io::Result<()> {
    let mut archive = tar::Archive::new(input);
    for entry in archive.entries()? {
        let mut entry = entry?;
        let name = entry.path()?.to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(prefix) else {
            eprintln!("warning: skipping {name:?}: outside the copied path");
            continue;
        };
        let rel = Path::new(rest.trim_start_matches('/'));
        if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
            eprintln!("warning: skipping {name:?}: it would be written outside the destination");
            continue;
        }
        let target = if rel.as_os_str().is_empty() {
            dest.to_owned()
        } else {
            dest.join(rel)
        };
        match entry.header().entry_type() {
            tar::EntryType::Directory => std::fs::create_dir_all(&target)?,
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(parent)?;
                }
                let mut f = std::fs::File::create(&target)?;
                std::io::copy(&mut entry, &mut f)?;
            }
            other => eprintln!("warning: skipping {name:?}: entry type {other:?} is not copied"),
        }
    }
    Ok(())
}

struct ChannelWriter {
    tx: mpsc::Sender<Vec<u8>>,
}

impl Write for ChannelWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tx
            .blocking_send(buf.to_vec())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

struct ChannelReader {
    rx: mpsc::Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    at: usize,
}

impl Read for ChannelReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.chunk.len() {
            match self.rx.blocking_recv() {
                Some(c) => {
                    self.chunk = c;
                    self.at = 0;
                }
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.chunk.len() - self.at);
        buf[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        assert_eq!(
            parse_spec("ns/p:/tmp/x"),
            Spec::Remote {
                namespace: Some("ns".into()),
                pod: "p".into(),
                path: "/tmp/x".into()
            }
        );
        assert_eq!(
            parse_spec("p:x"),
            Spec::Remote {
                namespace: None,
                pod: "p".into(),
                path: "x".into()
            }
        );
        assert_eq!(parse_spec("/tmp/a:b"), Spec::Local("/tmp/a:b".into()));
        assert_eq!(parse_spec("file"), Spec::Local("file".into()));
        assert_eq!(split_remote("/tmp/x"), ("/tmp".into(), "x".into()));
        assert_eq!(split_remote("/x"), ("/".into(), "x".into()));
    }
}
