//! `kubeset delete <resource> <name>...`.

use kubeset::params::DeleteParams;
use kubeset::{Client, Deleted};

use super::{describe, dynamic_api, namespace, print, resolve};
use crate::cli::{DeleteArgs, Global};
use crate::error::CliError;

/// Deletes the named objects; stops at the first failure.
pub async fn run(global: &Global, client: &Client, args: &DeleteArgs) -> Result<(), CliError> {
    let resource = resolve(client, &args.resource).await?;
    let ns = namespace(global, client);
    let api = dynamic_api(client, &resource, Some(&ns));
    let kind = resource.kind.to_ascii_lowercase();
    let kind = if resource.group.is_empty() {
        kind
    } else {
        format!("{kind}.{}", resource.group)
    };
    let params = DeleteParams {
        dry_run: args.dry_run.on(),
        ..DeleteParams::default()
    };
    let dry = args.dry_run.dry_run.suffix();
    for name in &args.names {
        match api.delete(name, &params).await {
            // Servers answer the deleted object or a Status; either way it
            // is gone unless finalizers hold it.
            Ok(Deleted::Pending(obj))
                if obj.metadata.deletion_timestamp.is_some()
                    && obj
                        .metadata
                        .finalizers
                        .as_ref()
                        .is_some_and(|f| !f.is_empty()) =>
            {
                print(&format!(
                    "{kind} {name:?} deleted (waiting for finalizers){dry}\n"
                ))?;
            }
            Ok(_) => print(&format!("{kind} {name:?} deleted{dry}\n"))?,
            Err(e) if args.ignore_not_found && e.is_not_found() => {}
            Err(e) => {
                return Err(CliError::api(
                    format!("deleting {}", describe(&resource, name)),
                    e,
                ));
            }
        }
    }
    Ok(())
}
