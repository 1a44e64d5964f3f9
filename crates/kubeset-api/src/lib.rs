//! Typed Kubernetes API models, generated from the OpenAPI specs by
//! `cargo xtask codegen`.
//!
//! Module paths follow the definition names of the spec with the `io.k8s.`
//! prefix dropped: `io.k8s.api.core.v1.Pod` is [`api::core::v1::Pod`].

pub mod resources;
