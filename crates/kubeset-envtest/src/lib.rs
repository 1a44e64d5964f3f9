//! kube-rs's `envtest` crate by name, over kubeset's embedded API server:
//! a project ported from kube-rs keeps `use envtest::Environment;` and its
//! integration tests, and adds one Cargo line,
//! `[patch.crates-io] envtest = { path = ".../crates/kubeset-envtest" }`.
//! No etcd, kube-apiserver, Go toolchain or download is involved: the
//! server runs in the test's process ([`kubeset::testing::TestServer`]).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = envtest::Environment::default().create().await?;
//! let client = server.client()?;
//! assert_eq!(client.default_namespace(), "default");
//! # Ok(()) }
//! ```

pub use kubeset::testing::envtest::{Environment, EnvironmentError, Server, ServerError};
