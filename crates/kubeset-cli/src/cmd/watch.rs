//! `kubeset watch <resource>`: one line per event, resuming from the last
//! resourceVersion when the server ends the watch.

use futures::StreamExt as _;
use kubeset::dynamic::{ApiResource, DynamicObject};
use kubeset::params::{ListParams, WatchParams};
use kubeset::rest::{ResumableWatch, Verb};
use kubeset::{Client, WatchEvent};

use super::{dynamic_api, namespace, print, resolve};
use crate::cli::{EventPrint, Global, WatchArgs};
use crate::error::CliError;
use crate::output::{self, object_ref, watch_row};
use crate::table::{self, Table};

/// The header and row of a `Table` event (a `get -w` watch of a server
/// with tables); `None` for a plain object.
fn server_row(
    resource: &ApiResource,
    obj: &DynamicObject,
    all_namespaces: bool,
    wide: bool,
) -> Option<Vec<Vec<String>>> {
    let table = Table::from_object(obj)?;
    let options = table::Options {
        wide,
        namespace: all_namespaces && resource.namespaced,
        kind: None,
    };
    Some(table.rows(&options))
}

/// The rows aligned with their header and what was printed before, the
/// header line only when asked.
fn rows_text(rows: &[Vec<String>], widths: &mut Vec<usize>, with_header: bool) -> String {
    output::header_if(output::align_remembering(rows, widths), with_header)
}

/// `ADDED configmap/x rv=12` (with the namespace, `ns/`, across namespaces);
/// what the server sent is printed with its control and bidi characters
/// escaped.
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
    let line = format!(
        "{kind} {ns}{} rv={}",
        object_ref(resource, obj.name()),
        obj.resource_version()
    );
    format!("{}\n", crate::error::escape_controls(&line))
}

/// Watches until interrupted (or until `--timeout`). Without
/// `--resource-version` the current objects are listed first and printed
/// as ADDED, and the watch starts from the list's resourceVersion. Without
/// `--timeout` the watch is resumable: when its server dies or ends it, it
/// reopens (on the next `--server`, if several) from the last
/// resourceVersion, so nothing is lost or repeated.
pub async fn run(global: &Global, client: &Client, args: &WatchArgs) -> Result<(), CliError> {
    let resource = resolve(client, &args.resource).await?;
    let ns = namespace(global, client);
    let api = if args.all_namespaces {
        dynamic_api(client, &resource, None)
    } else {
        dynamic_api(client, &resource, Some(&ns))
    };
    let action = || format!("watching {}", resource.plural);
    let mut params = WatchParams::default().bookmarks();
    let mut list = ListParams::default();
    if let Some(l) = &args.selector {
        params = params.labels(l);
        list = list.labels(l);
    }
    if let Some(f) = &args.field_selector {
        params = params.fields(f);
        list = list.fields(f);
    }
    let rv = match &args.resource_version {
        Some(rv) => rv.clone(),
        None => {
            let current = api
                .list(&list)
                .await
                .map_err(|e| CliError::api(format!("listing {}", resource.plural), e))?;
            for obj in &current.items {
                print(&event_line(&resource, "ADDED", obj, args.all_namespaces))?;
            }
            current.metadata.resource_version.unwrap_or_default()
        }
    };
    if let Some(t) = args.timeout {
        let stream = api
            .watch(&params.timeout(t), &rv)
            .await
            .map_err(|e| CliError::api(action(), e))?;
        return follow(&resource, args, stream, action).await;
    }
    let mut pairs = Vec::new();
    params.watch_pairs(&rv, &mut pairs);
    let mut req = api.request(Verb::Get, None);
    for (k, v) in pairs {
        req = req.param(k, v);
    }
    if matches!(args.print, EventPrint::Rows { .. }) {
        // Rows of the server's table, as kubectl's `get -w` (a server
        // without tables sends the objects).
        req = req.header(
            http::header::ACCEPT,
            http::HeaderValue::from_static(table::ACCEPT),
        );
    }
    let stream: ResumableWatch<DynamicObject> = req
        .watch_resumable()
        .await
        .map_err(|e| CliError::api(action(), e))?;
    follow(&resource, args, stream, action).await
}

/// Prints every event of `stream` until it ends; an error event or a
/// failed stream is the command's error.
async fn follow<S>(
    resource: &ApiResource,
    args: &WatchArgs,
    mut stream: S,
    action: impl Fn() -> String,
) -> Result<(), CliError>
where
    S: futures::Stream<Item = Result<WatchEvent<DynamicObject>, kubeset::Error>> + Unpin,
{
    let mut print_as = args.print;
    let mut widths = args.widths.clone();
    while let Some(event) = stream.next().await {
        let event = event.map_err(|e| CliError::api(action(), e))?;
        let (kind, obj) = match event {
            WatchEvent::Added(o) => ("ADDED", o),
            WatchEvent::Modified(o) => ("MODIFIED", o),
            WatchEvent::Deleted(o) => ("DELETED", o),
            WatchEvent::Bookmark(_) => continue,
            WatchEvent::Error(e) => {
                return Err(CliError::api(action(), kubeset::Error::from(e)));
            }
        };
        let line = match &mut print_as {
            EventPrint::Lines => event_line(resource, kind, &obj, args.all_namespaces),
            EventPrint::Rows {
                wide,
                header_printed,
            } => {
                let row = match server_row(resource, &obj, args.all_namespaces, *wide) {
                    Some(rows) => rows_text(&rows, &mut widths, !*header_printed),
                    None => watch_row(resource, &obj, args.all_namespaces, *wide, !*header_printed),
                };
                *header_printed = true;
                row
            }
        };
        print(&line)?;
    }
    Ok(())
}
