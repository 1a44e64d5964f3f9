//! What the watches of one server hold, and the accounting of it: the
//! initial states they share ([`Watches::snapshot`]) and each watch's
//! byte-bounded queue ([`Watches::queue`]). `watch.rs` runs the streams
//! over these.
//!
//! **Invariant:** every byte counted here is released when the watch that
//! holds it ends: a frame when the connection takes it (or the queue is
//! dropped), a snapshot with the last watch that started from it.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

use crate::WatchMemory;
use crate::bounds::Bounds;
use crate::conns::ConnHandle;
use crate::resources::Resource;
use crate::store::{Store, Stored};

/// The largest frame handed to the connection. hyper's HTTP/1 writer
/// takes up to 16 frames ahead of the socket, so small frames keep what
/// it holds per watch small (16 × 4 KiB) whatever the size of an event.
const FRAME: usize = 4096;

/// A kind's storage key (group, plural).
type StorageKey = (String, String);

/// The counters behind [`WatchMemory`].
#[derive(Default)]
struct Counters {
    open: AtomicUsize,
    queued_bytes: AtomicUsize,
    snapshots: AtomicUsize,
    snapshot_bytes: AtomicUsize,
}

/// What the watches of one server share.
#[derive(Default)]
pub(crate) struct Watches {
    /// The latest initial state per storage key, while a watch holds it.
    by_key: Mutex<HashMap<StorageKey, (u64, Weak<Snapshot>)>>,
    counters: Arc<Counters>,
}

/// The objects stored under one storage key at one resourceVersion, as
/// stored, each with its namespace: the initial state of every watch that
/// starts at that resourceVersion (3,000 watches of one kind hold one
/// copy, not 3,000), freed with the last of them.
pub(crate) struct Snapshot {
    pub(crate) items: Vec<(String, Arc<Stored>)>,
    pub(crate) rv: u64,
    bytes: usize,
    counters: Arc<Counters>,
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        self.counters.snapshots.fetch_sub(1, Ordering::SeqCst);
        self.counters
            .snapshot_bytes
            .fetch_sub(self.bytes, Ordering::SeqCst);
    }
}

/// One open watch, counted until dropped.
pub(crate) struct Open(Arc<Counters>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Watches {
    /// What the watches hold now.
    pub(crate) fn memory(&self) -> WatchMemory {
        let c = &self.counters;
        WatchMemory {
            open: c.open.load(Ordering::SeqCst),
            queued_bytes: c.queued_bytes.load(Ordering::SeqCst),
            snapshots: c.snapshots.load(Ordering::SeqCst),
            snapshot_bytes: c.snapshot_bytes.load(Ordering::SeqCst),
        }
    }

    /// Counts a watch as open until the guard is dropped.
    pub(crate) fn enter(&self) -> Open {
        self.counters.open.fetch_add(1, Ordering::SeqCst);
        Open(self.counters.clone())
    }

    /// The initial state of `res` now: the shared one when it is still
    /// at the current resourceVersion, else a new one.
    pub(crate) fn snapshot(&self, store: &Store, res: &Resource) -> Arc<Snapshot> {
        let key = res.storage_key();
        let current = store.current_rv();
        let mut by_key = self.by_key.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((rv, weak)) = by_key.get(&key)
            && *rv == current
            && let Some(snapshot) = weak.upgrade()
        {
            return snapshot;
        }
        let (items, rv) = store.watch_snapshot(res);
        // Its size as JSON, for the accounting (once per snapshot).
        let bytes = items.iter().map(|(ns, v)| ns.len() + v.json_len()).sum();
        self.counters.snapshots.fetch_add(1, Ordering::SeqCst);
        self.counters
            .snapshot_bytes
            .fetch_add(bytes, Ordering::SeqCst);
        let snapshot = Arc::new(Snapshot {
            items,
            rv,
            bytes,
            counters: self.counters.clone(),
        });
        by_key.retain(|_, (_, w)| w.strong_count() > 0);
        by_key.insert(key, (rv, Arc::downgrade(&snapshot)));
        snapshot
    }

    /// A watch's queue: `bounds.watch_queue_bytes` of frames, whose sender
    /// gives up after `bounds.slow_watcher` (and then closes `conn`).
    pub(crate) fn queue(&self, bounds: &Bounds, conn: Option<ConnHandle>) -> (QueueTx, QueueRx) {
        let (tx, rx) = mpsc::unbounded_channel();
        let budget = bounds
            .watch_queue_bytes
            .clamp(FRAME, Semaphore::MAX_PERMITS);
        let tx = QueueTx {
            tx,
            room: Arc::new(Semaphore::new(budget)),
            budget,
            patience: bounds.slow_watcher,
            conn,
            counters: self.counters.clone(),
        };
        (tx, QueueRx { rx })
    }
}

/// Why a watch stopped sending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gone {
    /// The client went away (the response body was dropped).
    Closed,
    /// The queue stayed full for the slow-watcher timeout.
    Slow,
}

/// Room for one queued frame, counted until the connection takes it.
struct Queued {
    _permit: OwnedSemaphorePermit,
    bytes: usize,
    counters: Arc<Counters>,
}

impl Drop for Queued {
    fn drop(&mut self) {
        self.counters
            .queued_bytes
            .fetch_sub(self.bytes, Ordering::SeqCst);
    }
}

type Item = (Result<Bytes, io::Error>, Option<Queued>);

/// The sending half of a watch's queue: bounded in bytes, not events, so
/// a watch holds at most its budget beyond what the connection has taken
/// (and the one event being sent).
pub(crate) struct QueueTx {
    tx: mpsc::UnboundedSender<Item>,
    room: Arc<Semaphore>,
    budget: usize,
    patience: Duration,
    /// The HTTP/1.x connection, closed with the watch when it is slow.
    conn: Option<ConnHandle>,
    counters: Arc<Counters>,
}

/// The receiving half: the response body's frames. Taking a frame frees
/// its room in the budget.
pub(crate) struct QueueRx {
    rx: mpsc::UnboundedReceiver<Item>,
}

impl QueueRx {
    /// The next frame, `None` when the watch has ended.
    pub(crate) async fn recv(&mut self) -> Option<Result<Bytes, io::Error>> {
        let (item, queued) = self.rx.recv().await?;
        drop(queued);
        Some(item)
    }
}

impl QueueTx {
    /// Queues `bytes` in frames of at most [`FRAME`] bytes, waiting at
    /// most the slow-watcher timeout for room for each.
    pub(crate) async fn send(&self, mut bytes: Bytes) -> Result<(), Gone> {
        while !bytes.is_empty() {
            let frame = bytes.split_to(bytes.len().min(FRAME));
            self.send_frame(frame).await?;
        }
        Ok(())
    }

    async fn send_frame(&self, bytes: Bytes) -> Result<(), Gone> {
        let n = bytes.len();
        let permits = u32::try_from(n).unwrap_or(u32::MAX);
        let wait =
            tokio::time::timeout(self.patience, self.room.clone().acquire_many_owned(permits));
        let permit = tokio::select! {
            got = wait => match got {
                Ok(Ok(permit)) => permit,
                Ok(Err(_)) => return Err(Gone::Closed),
                Err(_) => return Err(Gone::Slow),
            },
            () = self.tx.closed() => return Err(Gone::Closed),
        };
        self.counters.queued_bytes.fetch_add(n, Ordering::SeqCst);
        let queued = Queued {
            _permit: permit,
            bytes: n,
            counters: self.counters.clone(),
        };
        self.tx
            .send((Ok(bytes), Some(queued)))
            .map_err(|_| Gone::Closed)
    }

    /// Ends the response with `why` as its error; with `close_conn` also
    /// closes the HTTP/1.x connection at once. hyper does not poll a body
    /// whose bytes it cannot write, so for a client that does not read the
    /// error would wait behind them; under HTTP/1.x the connection is this
    /// watch's alone and closing it frees what it buffered. (An HTTP/2
    /// stream is bounded by its flow-control window and the stream's send
    /// buffer, and ends with its connection.)
    pub(crate) fn abort(&self, why: &'static str, close_conn: bool) {
        let _ = self.tx.send((
            Err(io::Error::new(io::ErrorKind::ConnectionAborted, why)),
            None,
        ));
        if close_conn && let Some(conn) = &self.conn {
            conn.close();
        }
    }

    /// Whether the connection has taken every queued frame.
    pub(crate) fn is_empty(&self) -> bool {
        self.room.available_permits() == self.budget
    }

    /// Resolves when the response body was dropped (the client went away).
    pub(crate) async fn closed(&self) {
        self.tx.closed().await;
    }
}
