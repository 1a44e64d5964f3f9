//! The span logs of the replicas (`replica.rs`): written there, one
//! reconcile per span, and read back by the runtime's `tests/shard.rs` and
//! `tests/leader_warm.rs` (no two reconciles of a key overlap) and the
//! `shard_bench` example (takeover times).
//!
//! Lines: `start <id> <replica> <key> <want> <ns>`, `end <id> <ns>`, and
//! the leader-election replicas' `leading <replica> <ns>` (it became
//! leader) and `list <replica> <ns>` (its primary cache began a (re)list).

use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

/// Nanoseconds since the epoch (the span log's clock: one machine).
pub fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos()
}

/// Appends whole lines to a span log (one write each).
#[derive(Clone)]
pub struct SpanLog(Arc<Mutex<std::fs::File>>);

impl SpanLog {
    /// Opens `path` for appending.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(SpanLog(Arc::new(Mutex::new(file))))
    }

    /// Appends `s` and a newline.
    pub fn line(&self, s: &str) {
        let mut f = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = f.write_all(format!("{s}\n").as_bytes());
    }

    /// Writes a start line; the returned guard writes the end line when
    /// dropped (the reconcile finished or was cancelled).
    pub fn start(&self, id: String, replica: &str, key: &str, want: &str) -> EndLine {
        self.line(&format!("start {id} {replica} {key} {want} {}", now_ns()));
        EndLine {
            log: self.clone(),
            id,
        }
    }

    /// An event of `replica` now (`leading`, `list`).
    pub fn event(&self, what: &str, replica: &str) {
        self.line(&format!("{what} {replica} {}", now_ns()));
    }
}

/// Writes the end line when the reconcile finishes or is cancelled.
pub struct EndLine {
    log: SpanLog,
    id: String,
}

impl Drop for EndLine {
    fn drop(&mut self) {
        self.log.line(&format!("end {} {}", self.id, now_ns()));
    }
}

/// The `leading`/`list` lines of `dir`'s logs: (what, replica, ns).
pub fn read_events(dir: &Path) -> Result<Vec<(String, String, u128)>, String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().and_then(|e| e.to_str()) != Some("log") {
            continue;
        }
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        for line in text.lines() {
            if let [what @ ("leading" | "list"), replica, t] =
                line.split(' ').collect::<Vec<_>>().as_slice()
            {
                let t = t.parse().map_err(|_| format!("a bad time: {line}"))?;
                out.push(((*what).to_owned(), (*replica).to_owned(), t));
            }
        }
    }
    Ok(out)
}

/// One reconcile: replica, key, the `want` it worked towards, start and
/// end (ns since the epoch).
#[derive(Debug, Clone)]
pub struct Span {
    /// The replica that ran it.
    pub replica: String,
    /// The ConfigMap's name.
    pub key: String,
    /// The `want` it wrote.
    pub want: String,
    /// When it started.
    pub start: u128,
    /// When it ended (or, open at a kill, the kill).
    pub end: u128,
}

/// Every span of the `*.log` files in `dir`. A reconcile left open ends
/// at its replica's entry in `stopped` (when it was killed or stopped);
/// one without an entry there is an error.
pub fn read_spans(dir: &Path, stopped: &HashMap<String, u128>) -> Result<Vec<Span>, String> {
    let mut spans = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().and_then(|e| e.to_str()) != Some("log") {
            continue;
        }
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut open: HashMap<String, Span> = HashMap::new();
        for line in text.lines() {
            let f: Vec<&str> = line.split(' ').collect();
            match f.as_slice() {
                ["start", id, replica, key, want, t] => {
                    let start = t.parse().map_err(|_| format!("a bad time: {line}"))?;
                    let span = Span {
                        replica: (*replica).to_owned(),
                        key: (*key).to_owned(),
                        want: (*want).to_owned(),
                        start,
                        end: u128::MAX,
                    };
                    open.insert((*id).to_owned(), span);
                }
                ["end", id, t] => {
                    let mut s = open
                        .remove(*id)
                        .ok_or_else(|| format!("an end without its start: {line}"))?;
                    s.end = t.parse().map_err(|_| format!("a bad time: {line}"))?;
                    spans.push(s);
                }
                // A line cut by SIGKILL.
                _ => {}
            }
        }
        for (_, mut s) in open {
            s.end = *stopped.get(&s.replica).ok_or_else(|| {
                format!("{} left a reconcile open but was not stopped", s.replica)
            })?;
            spans.push(s);
        }
    }
    Ok(spans)
}

/// Every pair of reconciles of one key that overlapped in time (touching
/// is fine), described.
pub fn overlaps(spans: &[Span]) -> Vec<String> {
    let mut by_key: BTreeMap<&str, Vec<&Span>> = BTreeMap::new();
    for s in spans {
        by_key.entry(&s.key).or_default().push(s);
    }
    let mut bad = Vec::new();
    for (key, mut v) in by_key {
        v.sort_by_key(|s| s.start);
        for w in v.windows(2) {
            if w[1].start < w[0].end {
                bad.push(format!(
                    "{key}: {} [{}, {}] and {} [{}, {}]",
                    w[0].replica, w[0].start, w[0].end, w[1].replica, w[1].start, w[1].end
                ));
            }
        }
    }
    bad
}
