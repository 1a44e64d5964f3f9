//! The HTTP conversation with a Kubernetes API server.

pub mod auth;
pub mod config;
