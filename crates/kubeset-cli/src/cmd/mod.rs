//! One module per subcommand, and what they share: resolving a resource
//! type through discovery and choosing the namespace.

pub mod api_resources;
pub mod apply;
pub mod completion;
pub mod container;
pub mod cp;
pub mod create;
pub mod delete;
pub mod demo;
pub mod exec;
pub mod get;
pub mod get_all;
pub mod logs;
pub mod manifest;
pub mod patch;
pub mod port_forward;
pub mod serve;
pub mod watch;

use std::io::Write as _;

use kubeset::Api;
use kubeset::Client;
use kubeset::discovery::Discovery;
use kubeset::dynamic::{ApiResource, DynamicObject};

use crate::cli::Global;
use crate::error::CliError;

/// Runs discovery.
pub async fn discover(client: &Client) -> Result<Discovery, CliError> {
    Discovery::run(client)
        .await
        .map_err(|e| CliError::api("discovering the server's resources", e))
}

/// Resolves what the user typed (`deploy`, `configmaps`, `Deployment`,
/// `deployments.apps`) to a served resource.
pub async fn resolve(client: &Client, typed: &str) -> Result<ApiResource, CliError> {
    let discovery = discover(client).await?;
    discovery
        .resolve_name(typed)
        .map(|r| r.resource.clone())
        .ok_or_else(|| CliError::UnknownResource {
            name: typed.to_owned(),
        })
}

/// The namespace a command works in: `-n`, else the context's.
pub fn namespace(global: &Global, client: &Client) -> String {
    global
        .namespace
        .clone()
        .unwrap_or_else(|| client.default_namespace().to_owned())
}

/// A dynamic API for `resource` in `namespace` (ignored for cluster-scoped
/// resources; `None` means every namespace).
pub fn dynamic_api(
    client: &Client,
    resource: &ApiResource,
    namespace: Option<&str>,
) -> Api<DynamicObject> {
    Api::dynamic(client.clone(), resource, namespace)
}

/// Writes `text` to stdout; a closed pipe is not an error worth a panic.
pub fn print(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::io("writing to stdout", e)),
    }
}

/// `configmaps "x"`: how the server names an object in messages.
pub fn describe(resource: &ApiResource, name: &str) -> String {
    if resource.group.is_empty() {
        format!("{} {name:?}", resource.plural)
    } else {
        format!("{}.{} {name:?}", resource.plural, resource.group)
    }
}
