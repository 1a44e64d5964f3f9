//! The porting check, kubeset's side: tests/porting/kube's programs with
//! `kube::` and `k8s_openapi::` renamed to `kubeset::` by build.rs, built
//! against the facade. `cargo test -p porting-kubeset` runs them;
//! `cargo test -p porting-kube` runs the originals on kube-rs.

include!(concat!(env!("OUT_DIR"), "/porting.rs"));
