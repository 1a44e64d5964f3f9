//! kubeset against a real kube-apiserver (realkube): one test binary, so
//! that the suite links once. Every test makes its own namespace and runs
//! in parallel with the others.
//!
//! Needs `tests/realkube/realkube.sh start --apiservers 3 --routable-addresses`
//! (or `cargo xtask test`); fails without it unless `KUBESET_SKIP_REALKUBE=1`.

mod clientset;
mod common;
mod crd;
mod crud;
mod failover;
mod faults;
mod list;
mod openapi;
mod patch;
mod runtime;
mod runtime_leader;
mod subresources;
mod throttle;
mod watch;
