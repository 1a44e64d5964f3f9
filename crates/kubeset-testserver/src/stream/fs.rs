//! A container's files: an in-memory tree (no host file is ever read or
//! written), bounded in bytes and entries, and the tar reader and writer
//! `kubectl cp` talks to (`tar xf -`, `tar cf -`). Pure apart from the lock.

use std::collections::BTreeMap;
use std::sync::Mutex;

use bytes::Bytes;

/// Bytes of file data one container may hold.
pub(crate) const MAX_BYTES: usize = 64 << 20;
/// Files and directories one container may hold.
pub(crate) const MAX_ENTRIES: usize = 10_000;
/// Longest path accepted (Linux's PATH_MAX).
const MAX_PATH: usize = 4096;
/// Largest PAX extended header read.
const MAX_PAX: usize = 64 << 10;

/// One entry of the tree.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    Dir,
    File(Bytes),
}

/// Why a write was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum FsError {
    #[error("{path}: No space left on device")]
    Full { path: String },
    #[error("{path}: File name too long")]
    TooLong { path: String },
    #[error("{path}: Is a directory")]
    IsDir { path: String },
    #[error("{path}: Not a directory")]
    NotDir { path: String },
    #[error("{path}: Cannot open: No such file or directory")]
    Missing { path: String },
    #[error("This does not look like a tar archive ({reason})")]
    BadArchive { reason: &'static str },
}

/// The tree of one container; `/` and `/tmp` exist from the start.
#[derive(Debug)]
pub(crate) struct Fs {
    tree: Mutex<Tree>,
}

#[derive(Debug, Default)]
struct Tree {
    nodes: BTreeMap<String, Node>,
    /// Bytes of file data held (kept, not summed per write).
    used: usize,
}

fn size(n: &Node) -> usize {
    match n {
        Node::File(b) => b.len(),
        Node::Dir => 0,
    }
}

/// `path` made absolute (against `cwd`) and normalised: no `.`, `..` or
/// empty segments; `..` never climbs above `/`.
pub(crate) fn normalize(cwd: &str, path: &str) -> String {
    let joined = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("{cwd}/{path}")
    };
    let mut parts: Vec<&str> = Vec::new();
    for seg in joined.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

fn parent(path: &str) -> Option<&str> {
    match path.rfind('/') {
        Some(0) if path.len() > 1 => Some("/"),
        Some(0) | None => None,
        Some(i) => Some(&path[..i]),
    }
}

impl Default for Fs {
    fn default() -> Self {
        let mut nodes = BTreeMap::new();
        nodes.insert("/".to_owned(), Node::Dir);
        nodes.insert("/tmp".to_owned(), Node::Dir);
        Self {
            tree: Mutex::new(Tree { nodes, used: 0 }),
        }
    }
}

impl Fs {
    fn lock(&self) -> std::sync::MutexGuard<'_, Tree> {
        self.tree
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The node at an absolute, normalised path.
    pub(crate) fn get(&self, path: &str) -> Option<Node> {
        self.lock().nodes.get(path).cloned()
    }

    /// Writes a file or a directory, creating missing parents (as tar
    /// does); refused past [`MAX_BYTES`] or [`MAX_ENTRIES`].
    pub(crate) fn put(&self, path: &str, node: Node) -> Result<(), FsError> {
        if path.len() > MAX_PATH {
            return Err(FsError::TooLong { path: path.into() });
        }
        let mut tree = self.lock();
        let Tree { nodes, used } = &mut *tree;
        let old = match nodes.get(path) {
            Some(Node::Dir) if matches!(node, Node::File(_)) => {
                return Err(FsError::IsDir { path: path.into() });
            }
            Some(n) => size(n),
            None => 0,
        };
        let new = size(&node);
        if *used - old + new > MAX_BYTES || nodes.len() >= MAX_ENTRIES {
            return Err(FsError::Full { path: path.into() });
        }
        let mut dir = parent(path);
        while let Some(d) = dir {
            match nodes.get(d) {
                Some(Node::Dir) => break,
                Some(Node::File(_)) => return Err(FsError::NotDir { path: d.into() }),
                None => {
                    nodes.insert(d.to_owned(), Node::Dir);
                }
            }
            dir = parent(d);
        }
        if matches!((&node, nodes.get(path)), (Node::Dir, Some(Node::Dir))) {
            return Ok(());
        }
        nodes.insert(path.to_owned(), node);
        *used = *used - old + new;
        Ok(())
    }

    /// `root` and everything under it, in path order (a tar source's
    /// entries), or `Missing`.
    pub(crate) fn walk(&self, root: &str) -> Result<Vec<(String, Node)>, FsError> {
        let tree = self.lock();
        let nodes = &tree.nodes;
        if !nodes.contains_key(root) {
            return Err(FsError::Missing { path: root.into() });
        }
        let prefix = if root == "/" {
            "/".to_owned()
        } else {
            format!("{root}/")
        };
        Ok(nodes
            .range(root.to_owned()..)
            .take_while(|(p, _)| p.as_str() == root || p.starts_with(&prefix))
            .filter(|(p, _)| p.as_str() == root || p.starts_with(&prefix))
            .map(|(p, n)| (p.clone(), n.clone()))
            .collect())
    }
}

// ---- tar ----

const BLOCK: usize = 512;

fn octal(field: &[u8]) -> Option<u64> {
    if field.first().is_some_and(|b| b & 0x80 != 0) {
        // GNU base-256: big-endian after the marker bit.
        return field[1..].iter().try_fold(0u64, |acc, &b| {
            acc.checked_mul(256)?.checked_add(u64::from(b))
        });
    }
    let s = std::str::from_utf8(field).ok()?;
    let s = s.trim_matches(|c: char| c == '\0' || c == ' ');
    if s.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(s, 8).ok()
}

fn cstr(field: &[u8]) -> String {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    String::from_utf8_lossy(&field[..end]).into_owned()
}

/// `path=` of a PAX extended header (`"<len> key=value\n"` records).
fn pax_path(data: &[u8]) -> Option<String> {
    let mut rest = data;
    while !rest.is_empty() {
        let sp = rest.iter().position(|&b| b == b' ')?;
        let len: usize = std::str::from_utf8(&rest[..sp]).ok()?.parse().ok()?;
        if len <= sp || len > rest.len() {
            return None;
        }
        let record = &rest[sp + 1..len];
        let record = record.strip_suffix(b"\n").unwrap_or(record);
        if let Some(v) = record.strip_prefix(b"path=") {
            return Some(String::from_utf8_lossy(v).into_owned());
        }
        rest = &rest[len..];
    }
    None
}

enum State {
    Header,
    /// The data of the current entry: what is left of it and its padding.
    Data {
        kind: u8,
        name: String,
        left: u64,
        pad: usize,
        buf: Vec<u8>,
    },
    End,
}

/// Reads a tar stream in chunks of any size (`tar xf -`) into an [`Fs`]
/// below `dir`; regular files and directories, PAX and GNU long names;
/// other entry types (links, devices) are skipped.
pub(crate) struct TarReader<'a> {
    fs: &'a Fs,
    dir: String,
    state: State,
    pending: Vec<u8>,
    long_name: Option<String>,
    zero_blocks: u8,
    /// Files written.
    pub(crate) written: usize,
}

impl<'a> TarReader<'a> {
    pub(crate) fn new(fs: &'a Fs, dir: &str) -> Self {
        Self {
            fs,
            dir: dir.to_owned(),
            state: State::Header,
            pending: Vec::with_capacity(BLOCK),
            long_name: None,
            zero_blocks: 0,
            written: 0,
        }
    }

    /// True once the end-of-archive blocks were read.
    pub(crate) fn done(&self) -> bool {
        matches!(self.state, State::End)
    }

    /// Feeds the next chunk of the archive.
    pub(crate) fn feed(&mut self, mut chunk: &[u8]) -> Result<(), FsError> {
        while !chunk.is_empty() {
            match &mut self.state {
                State::End => return Ok(()),
                State::Header => {
                    let take = (BLOCK - self.pending.len()).min(chunk.len());
                    self.pending.extend_from_slice(&chunk[..take]);
                    chunk = &chunk[take..];
                    if self.pending.len() == BLOCK {
                        let block = std::mem::take(&mut self.pending);
                        self.header(&block)?;
                    }
                }
                State::Data { left, pad, buf, .. } => {
                    let want = usize::try_from(*left).unwrap_or(usize::MAX);
                    let take = want.min(chunk.len());
                    if buf.len() + take > MAX_BYTES {
                        return Err(FsError::Full {
                            path: self.dir.clone(),
                        });
                    }
                    buf.extend_from_slice(&chunk[..take]);
                    *left -= take as u64;
                    chunk = &chunk[take..];
                    let skip = (*pad).min(chunk.len());
                    if *left == 0 {
                        *pad -= skip;
                        chunk = &chunk[skip..];
                    }
                    if *left == 0 && *pad == 0 {
                        self.finish_entry()?;
                    }
                }
            }
        }
        Ok(())
    }

    fn header(&mut self, block: &[u8]) -> Result<(), FsError> {
        if block.iter().all(|&b| b == 0) {
            self.zero_blocks += 1;
            if self.zero_blocks == 2 {
                self.state = State::End;
            }
            return Ok(());
        }
        self.zero_blocks = 0;
        let sum: u64 = block
            .iter()
            .enumerate()
            .map(|(i, &b)| {
                if (148..156).contains(&i) {
                    32
                } else {
                    u64::from(b)
                }
            })
            .sum();
        if octal(&block[148..156]) != Some(sum) {
            return Err(FsError::BadArchive { reason: "checksum" });
        }
        let size = octal(&block[124..136]).ok_or(FsError::BadArchive { reason: "size" })?;
        let kind = block[156];
        let mut name = cstr(&block[..100]);
        if &block[257..262] == b"ustar" {
            let prefix = cstr(&block[345..500]);
            if !prefix.is_empty() {
                name = format!("{prefix}/{name}");
            }
        }
        if let Some(long) = self
            .long_name
            .take()
            .filter(|_| !matches!(kind, b'x' | b'L'))
        {
            name = long;
        }
        let pad = usize::try_from((BLOCK as u64 - size % BLOCK as u64) % BLOCK as u64).unwrap_or(0);
        if matches!(kind, b'x' | b'L') && size > MAX_PAX as u64 {
            return Err(FsError::BadArchive {
                reason: "extended header too large",
            });
        }
        self.state = State::Data {
            kind,
            name,
            left: size,
            pad,
            buf: Vec::new(),
        };
        if size == 0 {
            self.finish_entry()?;
        }
        Ok(())
    }

    fn finish_entry(&mut self) -> Result<(), FsError> {
        let State::Data {
            kind, name, buf, ..
        } = std::mem::replace(&mut self.state, State::Header)
        else {
            return Ok(());
        };
        let path = normalize(&self.dir, &name);
        match kind {
            b'x' => self.long_name = pax_path(&buf),
            b'L' => self.long_name = Some(cstr(&buf)),
            b'0' | 0 | b'7' => {
                self.fs.put(&path, Node::File(Bytes::from(buf)))?;
                self.written += 1;
            }
            b'5' => self.fs.put(&path, Node::Dir)?,
            _ => {}
        }
        Ok(())
    }
}

fn header_block(name: &str, node: &Node) -> Vec<u8> {
    let mut h = vec![0u8; BLOCK];
    let (mode, size, kind) = match node {
        Node::Dir => (0o755, 0, b'5'),
        Node::File(b) => (0o644, b.len(), b'0'),
    };
    let n = name.as_bytes();
    h[..n.len().min(100)].copy_from_slice(&n[..n.len().min(100)]);
    let mut put = |at: usize, width: usize, v: u64| {
        let s = format!("{v:0w$o}\0", w = width - 1);
        h[at..at + width].copy_from_slice(s.as_bytes());
    };
    put(100, 8, mode);
    put(108, 8, 0);
    put(116, 8, 0);
    put(124, 12, size as u64);
    put(136, 12, 0);
    h[156] = kind;
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].fill(b' ');
    let sum: u64 = h.iter().map(|&b| u64::from(b)).sum();
    let s = format!("{sum:06o}\0 ");
    h[148..156].copy_from_slice(s.as_bytes());
    h
}

/// The archive of `entries` (`tar cf -`), names without the leading `/`
/// as GNU tar writes them (a name longer than 100 bytes gets a PAX
/// header). Yields it in pieces so a large file is not copied twice.
pub(crate) fn write_tar(entries: &[(String, Node)]) -> Vec<Bytes> {
    let mut out = Vec::new();
    for (path, node) in entries {
        let mut name = path.trim_start_matches('/').to_owned();
        if matches!(node, Node::Dir) {
            name.push('/');
        }
        if name.len() > 100 {
            let body = {
                let rec = |len: usize| format!("{len} path={name}\n");
                let mut len = rec(0).len();
                while rec(len).len() != len {
                    len = rec(len).len();
                }
                rec(len)
            };
            let mut pax = header_block("PaxHeader", &Node::File(Bytes::from(body.clone())));
            pax[156] = b'x';
            pax[148..156].fill(b' ');
            let sum: u64 = pax.iter().map(|&b| u64::from(b)).sum();
            pax[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
            out.push(Bytes::from(pax));
            out.push(Bytes::from(padded(body.into_bytes())));
        }
        out.push(Bytes::from(header_block(&name, node)));
        if let Node::File(b) = node {
            out.push(b.clone());
            let pad = (BLOCK - b.len() % BLOCK) % BLOCK;
            if pad > 0 {
                out.push(Bytes::from(vec![0u8; pad]));
            }
        }
    }
    out.push(Bytes::from(vec![0u8; 2 * BLOCK]));
    out
}

fn padded(mut v: Vec<u8>) -> Vec<u8> {
    let pad = (BLOCK - v.len() % BLOCK) % BLOCK;
    v.resize(v.len() + pad, 0);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation() {
        assert_eq!(normalize("/", "a/./b/../c"), "/a/c");
        assert_eq!(normalize("/tmp", "../../etc"), "/etc");
        assert_eq!(normalize("/x", "/"), "/");
    }

    #[test]
    fn tar_round_trip_in_odd_chunks_with_a_long_name() {
        let src = Fs::default();
        let long = format!("/tmp/d/{}", "n".repeat(150));
        src.put("/tmp/d/a.txt", Node::File(Bytes::from_static(b"hello")))
            .unwrap();
        src.put(&long, Node::File(Bytes::from(vec![7u8; 1000])))
            .unwrap();
        let archive: Vec<u8> = write_tar(&src.walk("/tmp/d").unwrap()).concat();
        let dst = Fs::default();
        let mut r = TarReader::new(&dst, "/restore");
        for piece in archive.chunks(77) {
            r.feed(piece).unwrap();
        }
        assert!(r.done());
        assert_eq!(r.written, 2);
        let Some(Node::File(b)) = dst.get("/restore/tmp/d/a.txt") else {
            panic!("missing")
        };
        assert_eq!(&b[..], b"hello");
        let Some(Node::File(b)) = dst.get(&format!("/restore{long}")) else {
            panic!("long")
        };
        assert_eq!(b.len(), 1000);
        assert!(matches!(dst.get("/restore/tmp/d"), Some(Node::Dir)));
    }

    #[test]
    fn bad_checksum_and_quota_are_errors() {
        let fs = Fs::default();
        let mut r = TarReader::new(&fs, "/");
        assert!(matches!(
            r.feed(&[1u8; 512]),
            Err(FsError::BadArchive { .. })
        ));
        let big = Bytes::from(vec![0u8; MAX_BYTES]);
        fs.put("/a", Node::File(big)).unwrap();
        assert!(matches!(
            fs.put("/b", Node::File(Bytes::from_static(b"x"))),
            Err(FsError::Full { .. })
        ));
        assert!(matches!(
            fs.put("/a/b", Node::Dir),
            Err(FsError::NotDir { .. })
        ));
        assert!(matches!(
            fs.put("/tmp", Node::File(Bytes::new())),
            Err(FsError::IsDir { .. })
        ));
        // Replacing a file frees its bytes.
        fs.put("/a", Node::File(Bytes::from_static(b"small")))
            .unwrap();
        fs.put("/b", Node::File(Bytes::from_static(b"x"))).unwrap();
    }
}
