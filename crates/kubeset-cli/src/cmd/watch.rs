//! `kubeset watch <resource>`: one line per event, resuming from the last
//! resourceVersion when the server ends the watch.

use futures::StreamExt as _;
use kubeset::dynamic::{ApiResource, DynamicObject};
use kubeset::params::WatchParams;
use kubeset::{Client, WatchEvent};

use super::{dynamic_api, namespace, print, resolve};
use crate::cli::{Global, WatchArgs};
use crate::error::CliError;
use crate::output::object_ref;

/// `ADDED configmap/x rv=12` (with the namespace, `ns/`, across namespaces).
pub fn event_line(
    resource: &ApiResource,
    kind: &str,
    obj: &DynamicObject,
    all_namespaces: bool,
) -> String {
    let ns = match (all_namespaces, obj.namespace()) {
        (true, Some(ns)) => format!("{ns}/"),
        _ => String::new(),
    };
    format!(
        "{kind} {ns}{} rv={}\n",
        object_ref(resource, obj.name()),
        obj.resource_version()
    )
}

/// Watches until interrupted (or until `--timeout`).
pub async fn run(global: &Global, client: &Client, args: &WatchArgs) -> Result<(), CliError> {
    let resource = resolve(client, &args.resource).await?;
    let ns = namespace(global, client);
    let api = if args.all_namespaces {
        dynamic_api(client, &resource, None)
    } else {
        dynamic_api(client, &resource, Some(&ns))
    };
    let mut params = WatchParams::default();
    if let Some(l) = &args.selector {
        params = params.labels(l);
    }
    if let Some(f) = &args.field_selector {
        params = params.fields(f);
    }
    if let Some(t) = args.timeout {
        params = params.timeout(t);
    }
    let mut rv = args.resource_version.clone().unwrap_or_default();
    loop {
        let mut stream = api
            .watch(&params, &rv)
            .await
            .map_err(|e| CliError::api(format!("watching {}", resource.plural), e))?;
        while let Some(event) = stream.next().await {
            let event =
                event.map_err(|e| CliError::api(format!("watching {}", resource.plural), e))?;
            let (kind, obj) = match event {
                WatchEvent::Added(o) => ("ADDED", o),
                WatchEvent::Modified(o) => ("MODIFIED", o),
                WatchEvent::Deleted(o) => ("DELETED", o),
                WatchEvent::Bookmark(o) => {
                    rv = o.resource_version().to_owned();
                    continue;
                }
                WatchEvent::Error(e) => {
                    return Err(CliError::api(
                        format!("watching {}", resource.plural),
                        kubeset::Error::from(e),
                    ));
                }
            };
            if !obj.resource_version().is_empty() {
                rv = obj.resource_version().to_owned();
            }
            print(&event_line(&resource, kind, &obj, args.all_namespaces))?;
        }
        if args.timeout.is_some() {
            return Ok(());
        }
        tracing::info!(resource_version = %rv, "watch ended; resuming");
    }
}
