//! The threads CEL rules are compiled on. cel-rust's parser recurses once
//! per nesting level, so compiling needs more stack than a tokio worker
//! (or a test's thread) has: [`COMPILE_STACK`] bytes. The threads start
//! once per process, at most one per core, and are kept: a thread started
//! for each schema paid its start and the page faults of a fresh stack on
//! every cold compile (a third of a cold server start with ten CRDs).
//!
//! A job run from one of these threads (a compile that compiles again)
//! runs in place, so jobs never wait on each other.

use std::cell::Cell;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, OnceLock, mpsc};

use super::COMPILE_STACK;

/// A job for the pool.
type Job = Box<dyn FnOnce() + Send>;

/// The most compile threads, whatever the number of cores.
const MAX_THREADS: usize = 4;

thread_local! {
    /// Set on the pool's own threads.
    static ON_POOL: Cell<bool> = const { Cell::new(false) };
}

/// The pool's queue, or `None` when no thread could be started.
fn queue() -> Option<&'static Mutex<mpsc::Sender<Job>>> {
    static QUEUE: OnceLock<Option<Mutex<mpsc::Sender<Job>>>> = OnceLock::new();
    QUEUE.get_or_init(start).as_ref()
}

fn start() -> Option<Mutex<mpsc::Sender<Job>>> {
    let (tx, rx) = mpsc::channel::<Job>();
    let rx = Arc::new(Mutex::new(rx));
    let wanted = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_THREADS);
    let started = (0..wanted)
        .filter(|i| {
            let rx = Arc::clone(&rx);
            std::thread::Builder::new()
                .name(format!("cel-compile-{i}"))
                .stack_size(COMPILE_STACK)
                .spawn(move || work(&rx))
                .is_ok()
        })
        .count();
    (started > 0).then(|| Mutex::new(tx))
}

/// A pool thread: runs jobs until the queue is gone (never, in practice:
/// it lives as long as the process).
fn work(rx: &Mutex<mpsc::Receiver<Job>>) {
    ON_POOL.with(|on| on.set(true));
    loop {
        let job = match rx.lock().unwrap_or_else(|p| p.into_inner()).recv() {
            Ok(job) => job,
            Err(_) => return,
        };
        // A job that panics loses its answer (its caller is told), not
        // the thread.
        let _ = std::panic::catch_unwind(AssertUnwindSafe(job));
    }
}

/// Runs `job` on a thread with [`COMPILE_STACK`] of stack and answers
/// what it returns: on the calling thread when that is already one of
/// them, else on the pool. `Err` names why there was no answer (no thread
/// could be started, or the job panicked).
pub(crate) fn on_compile_stack<T, F>(job: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    if ON_POOL.with(Cell::get) {
        return Ok(job());
    }
    let queue = queue().ok_or("no thread to compile on could be started")?;
    let (tx, rx) = mpsc::sync_channel(1);
    let sent = queue
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .send(Box::new(move || {
            let _ = tx.send(job());
        }));
    if sent.is_err() {
        return Err("the compile threads are gone".to_owned());
    }
    rx.recv().map_err(|_| "the compiler failed".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_run_on_a_large_stack_and_nested_jobs_run_in_place() {
        let outer = on_compile_stack(|| {
            let name = std::thread::current().name().map(str::to_owned);
            let inner = on_compile_stack(|| std::thread::current().name().map(str::to_owned));
            (name, inner)
        })
        .expect("answered");
        let name = outer.0.expect("a named thread");
        assert!(name.starts_with("cel-compile-"), "{name}");
        assert_eq!(outer.1.expect("answered"), Some(name));
    }

    #[test]
    fn a_panicking_job_is_an_error_and_the_pool_survives() {
        let err = on_compile_stack(|| -> u8 { panic!("boom") }).unwrap_err();
        assert_eq!(err, "the compiler failed");
        assert_eq!(on_compile_stack(|| 7).expect("answered"), 7);
    }
}
