//! `kubeset get <resource> [name]`.

use kubeset::Client;
use kubeset::dynamic::{ApiResource, DynamicObject};
use kubeset::params::ListParams;

use super::{describe, dynamic_api, namespace, print, resolve};
use crate::cli::{EventPrint, GetArgs, Global, OutputFormat, WatchArgs};
use crate::error::CliError;
use crate::output;

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
    let mut list_rv = String::new();
    let (objects, single) = match &args.name {
        Some(name) => {
            let obj = api
                .get(name)
                .await
                .map_err(|e| CliError::api(format!("getting {}", describe(&resource, name)), e))?;
            (vec![obj], true)
        }
        None => {
            let mut params = ListParams::default();
            if let Some(l) = &args.selector {
                params = params.labels(l);
            }
            if let Some(f) = &args.field_selector {
                params = params.fields(f);
            }
            let list = api
                .list(&params)
                .await
                .map_err(|e| CliError::api(format!("listing {}", resource.plural), e))?;
            list_rv = list.metadata.resource_version.clone().unwrap_or_default();
            (list.items, false)
        }
    };
    // As kubectl: with -w an empty list prints nothing, the header comes
    // with the first change.
    let table_printed = !objects.is_empty();
    if !(args.watch && objects.is_empty()) {
        show(args, &resource, &ns, &objects, single)?;
    }
    if args.watch {
        let watch = WatchArgs {
            resource: args.resource.clone(),
            all_namespaces: args.all_namespaces,
            selector: args.selector.clone(),
            field_selector: args.field_selector.clone(),
            resource_version: Some(list_rv),
            timeout: None,
            print: match &args.output {
                None => EventPrint::Rows {
                    wide: false,
                    header_printed: table_printed,
                },
                Some(OutputFormat::Wide) => EventPrint::Rows {
                    wide: true,
                    header_printed: table_printed,
                },
                Some(_) => EventPrint::Lines,
            },
        };
        return super::watch::run(global, client, &watch).await;
    }
    Ok(())
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
            if resource.namespaced && !args.all_namespaces {
                eprintln!("No resources found in {ns} namespace.");
            } else {
                eprintln!("No resources found");
            }
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
        Some(format) => print(&output::render(format, resource, objects, single)?),
    }
}
