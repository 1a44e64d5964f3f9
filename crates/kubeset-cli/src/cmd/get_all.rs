//! `kubeset get all`: every resource type of discovery's `all` category
//! (pods, services, deployments, …), one table per type (the server's) with
//! names as `kind/name`, as kubectl prints it.

use kubeset::Client;
use kubeset::dynamic::{ApiResource, DynamicObject};
use kubeset::params::ListParams;

use super::get::server_table;
use super::{discover, dynamic_api, namespace, print};
use crate::cli::{GetArgs, Global, OutputFormat};
use crate::error::CliError;
use crate::{output, table};

/// Lists every type of the `all` category and prints what is there.
pub async fn run(global: &Global, client: &Client, args: &GetArgs) -> Result<(), CliError> {
    if args.name.is_some() || args.watch {
        return Err(CliError::usage(
            "'get all' lists whole types: drop the name and --watch",
        ));
    }
    let discovery = discover(client).await?;
    let ns = namespace(global, client);
    let mut params = ListParams::default();
    if let Some(l) = &args.selector {
        params = params.labels(l);
    }
    if let Some(f) = &args.field_selector {
        params = params.fields(f);
    }
    let tables = matches!(args.output, None | Some(OutputFormat::Wide));
    let mut found: Vec<(ApiResource, Vec<DynamicObject>)> = Vec::new();
    let mut printed = Vec::new();
    for r in discovery.category("all") {
        if !r.verbs.iter().any(|v| v == "list") {
            continue;
        }
        let resource = r.resource.clone();
        let scope = (!args.all_namespaces).then_some(ns.as_str());
        let api = dynamic_api(client, &resource, scope);
        let action = || format!("listing {}", resource.plural);
        // The server's table, as kubectl; the client's columns where it
        // has none.
        if tables && let Some(table) = server_table(&api, None, &params, action).await? {
            if !table.is_empty() {
                let options = table::Options {
                    wide: args.output.is_some(),
                    namespace: args.all_namespaces && resource.namespaced,
                    kind: Some(output::kind_ref(&resource)),
                };
                printed.push(output::align(&table.rows(&options)));
            }
            continue;
        }
        let list = api
            .list(&params)
            .await
            .map_err(|e| CliError::api(action(), e))?;
        if !list.items.is_empty() {
            found.push((resource, list.items));
        }
    }
    if tables && !printed.is_empty() {
        printed.extend(found.iter().map(|(r, objs)| {
            output::table_with_kinds(r, objs, args.all_namespaces, args.output.is_some())
        }));
        return print(&printed.join("\n"));
    }
    if found.is_empty() && matches!(args.output, None | Some(OutputFormat::Wide)) {
        if args.all_namespaces {
            eprintln!("No resources found");
        } else {
            eprintln!("No resources found in {ns} namespace.");
        }
        return Ok(());
    }
    print(&render(args, &found)?)
}

fn render(args: &GetArgs, found: &[(ApiResource, Vec<DynamicObject>)]) -> Result<String, CliError> {
    match &args.output {
        None | Some(OutputFormat::Wide) => {
            let wide = args.output.is_some();
            let tables: Vec<String> = found
                .iter()
                .map(|(r, objs)| output::table_with_kinds(r, objs, args.all_namespaces, wide))
                .collect();
            Ok(tables.join("\n"))
        }
        Some(OutputFormat::Name) => Ok(found
            .iter()
            .flat_map(|(r, objs)| objs.iter().map(|o| output::object_ref(r, o.name()) + "\n"))
            .collect()),
        Some(format) => {
            let items = found
                .iter()
                .flat_map(|(r, objs)| {
                    objs.iter()
                        .map(|o| output::with_type(r, o, super::get::shown(args)))
                })
                .collect();
            output::encode(format, &output::list_doc(items))
        }
    }
}
