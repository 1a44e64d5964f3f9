//! Programs written in kube-rs's idiom (kube 5, k8s-openapi 0.29): the
//! porting check of kubeset's promise that moving over is a rename.
//!
//! This crate builds them against kube-rs. `tests/porting/kubeset` builds
//! the same files, with `kube::` and `k8s_openapi::` renamed to
//! `kubeset::` and nothing else, against kubeset's facade. Both are
//! workspace members, so CI builds and runs both ways.
//!
//! Rules for the files here, so that the rename stays mechanical:
//! - a module per file, declared below as `#[cfg(test)] mod name;` (the
//!   renaming build script inlines every `src/*.rs` but this one);
//! - kube-rs's and k8s-openapi's paths written in full (`kube::…`,
//!   `k8s_openapi::…`); nothing else named after either crate;
//! - the tests talk to the embedded server (`kubeset_testserver`) over a
//!   real socket, or to tower-test mocks.

#[cfg(test)]
mod admission;
#[cfg(test)]
mod cel;
#[cfg(test)]
mod crd;
#[cfg(test)]
mod dynamic;
#[cfg(test)]
mod hand_resource;
#[cfg(test)]
mod kubeconfig;
#[cfg(test)]
mod metadata;
#[cfg(test)]
mod mock;
#[cfg(test)]
mod operator;
#[cfg(test)]
mod scale_store_discovery;
#[cfg(test)]
mod support;
#[cfg(test)]
mod typed;
#[cfg(test)]
mod ws;
