//! Reads the span logs the replicas write (`replica.rs`): one reconcile
//! per span. Shared by the runtime's `tests/shard.rs` (no two reconciles
//! of a key overlap) and the `shard_bench` example (takeover times).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

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
