//! `kubeset get <resource> [name]`.

use std::fmt;

use kubeset::dynamic::{ApiResource, DynamicObject};
use kubeset::params::{ListParams, QueryParams as _};
use kubeset::rest::Verb;
use kubeset::{Api, Client};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::{describe, dynamic_api, namespace, print, resolve};
use crate::cli::{EventPrint, GetArgs, Global, OutputFormat, WatchArgs};
use crate::error::CliError;
use crate::output;
use crate::table::{self, Table};

/// Lists or reads objects and prints them.
pub async fn run(global: &Global, client: &Client, args: &GetArgs) -> Result<(), CliError> {
    if args.resource == "all" {
        return super::get_all::run(global, client, args).await;
    }
    let resource = resolve(client, &args.resource).await?;
    if args.all_namespaces && args.name.is_some() {
        return Err(CliError::usage(
            "a resource cannot be retrieved by name across all namespaces",
        ));
    }
    let ns = namespace(global, client);
    let api = if args.all_namespaces {
        dynamic_api(client, &resource, None)
    } else {
        dynamic_api(client, &resource, Some(&ns))
    };
    if args.watch && args.name.is_some() {
        return Err(CliError::usage(
            "--watch follows a whole resource type; drop the name or use --field-selector metadata.name=NAME",
        ));
    }
    // A table, as kubectl: the server's own columns for every kind (with
    // -w, the rows of the changes too).
    if matches!(args.output, None | Some(OutputFormat::Wide))
        && let Some(table) =
            server_table(
                &api,
                args.name.as_deref(),
                &list_params(args),
                || match &args.name {
                    Some(name) => format!("getting {}", describe(&resource, name)),
                    None => format!("listing {}", resource.plural),
                },
            )
            .await?
    {
        // As kubectl: with -w an empty list prints nothing.
        let mut widths = Vec::new();
        if !(args.watch && table.is_empty()) {
            widths = show_table(args, &resource, &ns, &table)?;
        }
        if !args.watch {
            return Ok(());
        }
        let rv = table.resource_version().to_owned();
        return watch_rows(global, client, args, rv, widths).await;
    }
    let mut list_rv = String::new();
    let streamed = output::ListFormat::of(args.output.as_ref());
    let machine = streamed.is_some();
    let (objects, single) = match (&args.name, streamed) {
        (None, Some(format)) => {
            list_rv =
                list_streamed(&api, &list_params(args), format, &resource, shown(args)).await?;
            (Vec::new(), false)
        }
        (Some(name), _) => {
            let obj = api
                .get(name)
                .await
                .map_err(|e| CliError::api(format!("getting {}", describe(&resource, name)), e))?;
            (vec![obj], true)
        }
        (None, None) => {
            let list = api
                .list(&list_params(args))
                .await
                .map_err(|e| CliError::api(format!("listing {}", resource.plural), e))?;
            list_rv = list.metadata.resource_version.clone().unwrap_or_default();
            (list.items, false)
        }
    };
    // As kubectl: with -w an empty list prints nothing, the header comes
    // with the first change. A streamed list (-o json|yaml|name) has
    // printed itself already.
    let table_printed = !objects.is_empty();
    if (!machine || single) && !(args.watch && objects.is_empty()) {
        show(args, &resource, &ns, &objects, single)?;
    }
    if args.watch {
        // The client's columns: each row aligned with its own header.
        let widths = if table_printed { vec![0] } else { Vec::new() };
        return watch_rows(global, client, args, list_rv, widths).await;
    }
    Ok(())
}

/// `get -w`: the changes after the list, as table rows (`-o wide`'s with
/// it) or, with another `-o`, as event lines; `widths` are the columns the
/// list printed (none: no header yet).
async fn watch_rows(
    global: &Global,
    client: &Client,
    args: &GetArgs,
    resource_version: String,
    widths: Vec<usize>,
) -> Result<(), CliError> {
    let header_printed = !widths.is_empty();
    let watch = WatchArgs {
        resource: args.resource.clone(),
        all_namespaces: args.all_namespaces,
        selector: args.selector.clone(),
        field_selector: args.field_selector.clone(),
        resource_version: Some(resource_version),
        timeout: None,
        print: match &args.output {
            None | Some(OutputFormat::Wide) => EventPrint::Rows {
                wide: args.output.is_some(),
                header_printed,
            },
            Some(_) => EventPrint::Lines,
        },
        widths,
    };
    super::watch::run(global, client, &watch).await
}

/// The server's `Table` of the object `name` or of the list; `None` when
/// it answers a plain object or list (no table support).
pub(super) async fn server_table(
    api: &Api<DynamicObject>,
    name: Option<&str>,
    params: &ListParams,
    action: impl Fn() -> String,
) -> Result<Option<Table>, CliError> {
    let mut req = api.request(Verb::Get, name);
    if name.is_none() {
        let mut pairs = Vec::new();
        params.query_pairs(&mut pairs);
        for (k, v) in pairs {
            req = req.param(k, v);
        }
    }
    let req = req.header(
        http::header::ACCEPT,
        http::HeaderValue::from_static(table::ACCEPT),
    );
    let response = req
        .send_raw()
        .await
        .and_then(kubeset::rest::Response::into_result)
        .map_err(|e| CliError::api(action(), e))?;
    Ok(Table::parse(&response.body))
}

/// Prints the table; returns its column widths.
fn show_table(
    args: &GetArgs,
    resource: &ApiResource,
    ns: &str,
    table: &Table,
) -> Result<Vec<usize>, CliError> {
    if table.is_empty() {
        no_resources(args, resource, ns);
        return Ok(Vec::new());
    }
    let options = table::Options {
        wide: matches!(args.output, Some(OutputFormat::Wide)),
        namespace: args.all_namespaces && resource.namespaced,
        kind: None,
    };
    let mut widths = Vec::new();
    print(&output::align_remembering(
        &table.rows(&options),
        &mut widths,
    ))?;
    Ok(widths)
}

fn no_resources(args: &GetArgs, resource: &ApiResource, ns: &str) {
    if resource.namespaced && !args.all_namespaces {
        eprintln!("No resources found in {ns} namespace.");
    } else {
        eprintln!("No resources found");
    }
}

fn list_params(args: &GetArgs) -> ListParams {
    let mut params = ListParams::default();
    if let Some(l) = &args.selector {
        params = params.labels(l);
    }
    if let Some(f) = &args.field_selector {
        params = params.fields(f);
    }
    params
}

/// Lists and prints in a machine format item by item, straight from the
/// response body: each item is decoded, printed and dropped before the
/// next, so peak memory is the body and one item (the whole list decoded,
/// converted to JSON values and rendered to one string took 16 times the
/// body). Returns the list's resourceVersion.
async fn list_streamed(
    api: &Api<DynamicObject>,
    params: &ListParams,
    format: output::ListFormat,
    resource: &ApiResource,
    shown: output::Shown,
) -> Result<String, CliError> {
    let action = || format!("listing {}", resource.plural);
    let mut pairs = Vec::new();
    params.query_pairs(&mut pairs);
    let mut req = api.request(Verb::Get, None);
    for (k, v) in pairs {
        req = req.param(k, v);
    }
    let response = req.send().await.map_err(|e| CliError::api(action(), e))?;
    let stdout = std::io::stdout();
    let mut writer = output::ListWriter::new(
        std::io::BufWriter::new(stdout.lock()),
        format,
        resource,
        shown,
    );
    let mut failed = None;
    let mut on_item = |obj: DynamicObject| match writer.item(&obj) {
        Ok(()) => !writer.closed(),
        Err(e) => {
            failed = Some(e);
            false
        }
    };
    let seed = ListSeed {
        on_item: &mut on_item,
    };
    let decoded = seed.deserialize(&mut serde_json::Deserializer::from_slice(&response.body));
    if let Some(e) = failed {
        return Err(e);
    }
    let decode_error = |source| {
        let source = kubeset::Error::Decode {
            type_name: "List<DynamicObject>",
            source,
        };
        CliError::api(action(), source)
    };
    let head = decoded.map_err(decode_error)?;
    if head.kind.as_deref() == Some("Status") {
        // A 200 whose body is a `Status`, not a list: its failure is the
        // error, as client-go's decoding (and the table path) reports it.
        // The writer has written nothing (a Status has no items).
        response
            .json::<IgnoredAny>()
            .map_err(|e| CliError::api(action(), e))?;
        return Err(decode_error(de::Error::custom(
            "the server answered a Status, not a list",
        )));
    }
    drop(response);
    writer.finish()?;
    Ok(head.resource_version)
}

/// What a list body says besides its items.
#[derive(Default)]
struct ListHead {
    /// `metadata.resourceVersion`.
    resource_version: String,
    /// `kind` (`Status` is not a list).
    kind: Option<String>,
}

/// Decodes a list body, handing each item to `on_item` (which returns
/// `false` to stop) and returning its [`ListHead`].
struct ListSeed<'f, F: FnMut(DynamicObject) -> bool> {
    on_item: &'f mut F,
}

impl<'de, F: FnMut(DynamicObject) -> bool> DeserializeSeed<'de> for ListSeed<'_, F> {
    type Value = ListHead;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<ListHead, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, F: FnMut(DynamicObject) -> bool> Visitor<'de> for ListSeed<'_, F> {
    type Value = ListHead;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ListHead, A::Error> {
        #[derive(serde::Deserialize, Default)]
        #[serde(default, rename_all = "camelCase")]
        struct Meta {
            resource_version: Option<String>,
        }
        let mut head = ListHead::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match &*key {
                "items" => map.next_value_seed(Items {
                    on_item: &mut *self.on_item,
                })?,
                "metadata" => {
                    head.resource_version = map
                        .next_value::<Meta>()?
                        .resource_version
                        .unwrap_or_default()
                }
                "kind" => head.kind = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(head)
    }
}

/// The `items` array of a list, one item at a time (`null` is empty).
struct Items<'f, F: FnMut(DynamicObject) -> bool> {
    on_item: &'f mut F,
}

impl<'de, F: FnMut(DynamicObject) -> bool> DeserializeSeed<'de> for Items<'_, F> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, F: FnMut(DynamicObject) -> bool> Visitor<'de> for Items<'_, F> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of objects")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(obj) = seq.next_element::<DynamicObject>()? {
            if !(self.on_item)(obj) {
                // Stop reading: the output failed (its error is kept).
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                break;
            }
        }
        Ok(())
    }
}

/// The fields `-o json|yaml|jsonpath` print.
pub(super) fn shown(args: &GetArgs) -> output::Shown {
    output::Shown::of(args.output.as_ref(), args.show_managed_fields)
}

fn show(
    args: &GetArgs,
    resource: &ApiResource,
    ns: &str,
    objects: &[DynamicObject],
    single: bool,
) -> Result<(), CliError> {
    match &args.output {
        None | Some(OutputFormat::Wide) if objects.is_empty() => {
            no_resources(args, resource, ns);
            Ok(())
        }
        None => print(&output::table(
            resource,
            objects,
            args.all_namespaces,
            false,
        )),
        Some(OutputFormat::Wide) => {
            print(&output::table(resource, objects, args.all_namespaces, true))
        }
        Some(format) => print(&output::render(
            format,
            resource,
            objects,
            single,
            shown(args),
        )?),
    }
}
