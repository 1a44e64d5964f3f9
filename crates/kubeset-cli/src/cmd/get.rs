//! `kubeset get <resource> [name]`.

use kubeset::Client;
use kubeset::params::ListParams;

use super::{describe, dynamic_api, namespace, print, resolve};
use crate::cli::{GetArgs, Global, OutputFormat};
use crate::error::CliError;
use crate::output;

/// Lists or reads objects and prints them.
pub async fn run(global: &Global, client: &Client, args: &GetArgs) -> Result<(), CliError> {
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
            (list.items, false)
        }
    };
    match args.output {
        None | Some(OutputFormat::Wide) if objects.is_empty() => {
            if resource.namespaced && !args.all_namespaces {
                eprintln!("No resources found in {ns} namespace.");
            } else {
                eprintln!("No resources found");
            }
            Ok(())
        }
        None => print(&output::table(
            &resource,
            &objects,
            args.all_namespaces,
            false,
        )),
        Some(OutputFormat::Wide) => print(&output::table(
            &resource,
            &objects,
            args.all_namespaces,
            true,
        )),
        Some(format) => print(&output::render(format, &resource, &objects, single)?),
    }
}
