//! The watcher's backoff: client-go's reflector backoff (800 ms doubling to
//! 30 s, full jitter on top, start over after 2 minutes without failures).
//! One implementation for the whole workspace: kubeset-rest's, which its
//! resumable watch uses too; re-exported here under kube-rs's path.

pub use kubeset_client::rest::backoff::Backoff;
