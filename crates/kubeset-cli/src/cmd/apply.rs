//! `kubeset create -f` and `kubeset apply -f` (server-side apply).

use kubeset::params::{PatchParams, PostParams};
use kubeset::{Client, Patch};

use super::manifest::{self, Item};
use super::{describe, discover, dynamic_api, namespace, print};
use crate::cli::{ApplyArgs, DryRunArg, Global};
use crate::error::CliError;
use crate::output::object_ref;

async fn load(global: &Global, client: &Client, path: &str) -> Result<Vec<Item>, CliError> {
    let text = manifest::read(path)?;
    let values = manifest::parse(path, &text)?;
    let discovery = discover(client).await?;
    let ns = namespace(global, client);
    manifest::resolve(path, &discovery, values, &ns, global.namespace.is_some())
}

/// Collects failures: with one object its error is the command's error;
/// with several each is printed as it happens and a summary ends the run.
struct Failures {
    total: usize,
    failed: usize,
    only: Option<CliError>,
}

impl Failures {
    fn new(total: usize) -> Self {
        Failures {
            total,
            failed: 0,
            only: None,
        }
    }

    fn add(&mut self, err: CliError) {
        self.failed += 1;
        if self.total == 1 {
            self.only = Some(err);
        } else {
            eprintln!("{}", err.one_line());
        }
    }

    fn finish(self) -> Result<(), CliError> {
        match (self.only, self.failed) {
            (Some(err), _) => Err(err),
            (None, 0) => Ok(()),
            (None, failed) => Err(CliError::Partial {
                failed,
                total: self.total,
            }),
        }
    }
}

/// Creates every object of the manifest; the others are still tried when
/// one fails.
pub async fn create(
    global: &Global,
    client: &Client,
    file: &str,
    dry_run: DryRunArg,
) -> Result<(), CliError> {
    let items = load(global, client, file).await?;
    let mut failures = Failures::new(items.len());
    for item in items {
        let api = dynamic_api(client, &item.resource, item.object.namespace());
        // kubectl records creates as "kubectl-create"; the same split keeps
        // a later `apply` (manager "kubeset") from owning these fields silently.
        let mut params = PostParams::default().field_manager("kubeset-create");
        params.dry_run = dry_run.on();
        match api.create(&params, &item.object).await {
            Ok(created) => print(&format!(
                "{} created{}\n",
                object_ref(&item.resource, created.name()),
                dry_run.dry_run.suffix()
            ))?,
            Err(e) => failures.add(CliError::api(
                format!("creating {}", describe(&item.resource, item.object.name())),
                e,
            )),
        }
    }
    failures.finish()
}

/// Server-side applies every object of the manifest as `--field-manager`.
pub async fn apply(global: &Global, client: &Client, args: &ApplyArgs) -> Result<(), CliError> {
    let items = load(global, client, &args.file.file).await?;
    let mut failures = Failures::new(items.len());
    let mut params = PatchParams::apply(&args.field_manager);
    if args.force_conflicts {
        params = params.force();
    }
    params.dry_run = args.dry_run.on();
    for item in items {
        let name = item.object.name().to_owned();
        if name.is_empty() {
            failures.add(CliError::usage(format!(
                "a {} to apply needs metadata.name (generateName is not enough)",
                item.object.kind
            )));
            continue;
        }
        let api = dynamic_api(client, &item.resource, item.object.namespace());
        match api.patch(&name, &params, &Patch::Apply(&item.object)).await {
            Ok(_) => print(&format!(
                "{} serverside-applied{}\n",
                object_ref(&item.resource, &name),
                args.dry_run.dry_run.suffix()
            ))?,
            Err(e) => failures.add(CliError::api(
                format!("applying {}", describe(&item.resource, &name)),
                e,
            )),
        }
    }
    failures.finish()
}
