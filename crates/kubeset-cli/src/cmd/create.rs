//! `kubeset create -f FILE`, `create namespace NAME` and
//! `create configmap NAME --from-literal k=v --from-file [k=]path`.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::Path;

use kubeset::api::core::v1::{ConfigMap, Namespace};
use kubeset::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset::params::PostParams;
use kubeset::{Api, ByteString};

use super::{namespace, print};
use crate::cli::{CreateArgs, CreateConfigMapArgs, CreateWhat, DryRunArg, Global};
use crate::error::CliError;

/// The largest file `--from-file` reads: a ConfigMap holds at most 1 MiB.
const MAX_FILE: u64 = 1024 * 1024;

/// Dispatches `create`.
pub async fn run(global: &Global, args: &CreateArgs) -> Result<(), CliError> {
    let client = global.client()?;
    match (&args.what, &args.file) {
        (Some(CreateWhat::Namespace(ns)), _) => {
            let obj = Namespace {
                metadata: named(&ns.name),
                ..Namespace::default()
            };
            let api: Api<Namespace> = Api::all(client);
            let created = api
                .create(&post_params(ns.dry_run), &obj)
                .await
                .map_err(|e| CliError::api(format!("creating namespaces {:?}", ns.name), e))?;
            done("namespace", created.metadata.name.as_deref(), ns.dry_run)
        }
        (Some(CreateWhat::Configmap(cm)), _) => {
            let obj = config_map(cm)?;
            let api: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace(global, &client));
            let created = api
                .create(&post_params(cm.dry_run), &obj)
                .await
                .map_err(|e| CliError::api(format!("creating configmaps {:?}", cm.name), e))?;
            done("configmap", created.metadata.name.as_deref(), cm.dry_run)
        }
        (None, Some(file)) => super::apply::create(global, &client, file, args.dry_run).await,
        (None, None) => Err(CliError::usage(
            "create needs -f FILE, or a type: namespace NAME, configmap NAME",
        )),
    }
}

fn named(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        ..ObjectMeta::default()
    }
}

/// kubectl records creates as "kubectl-create"; kubeset as "kubeset-create".
fn post_params(dry_run: DryRunArg) -> PostParams {
    let mut params = PostParams::default().field_manager("kubeset-create");
    params.dry_run = dry_run.on();
    params
}

fn done(kind: &str, name: Option<&str>, dry_run: DryRunArg) -> Result<(), CliError> {
    print(&format!(
        "{kind}/{} created{}\n",
        name.unwrap_or_default(),
        dry_run.dry_run.suffix()
    ))
}

/// The ConfigMap the flags describe: literals and UTF-8 files in `data`,
/// other files in `binaryData`; a key given twice is an error (kubectl's).
pub fn config_map(args: &CreateConfigMapArgs) -> Result<ConfigMap, CliError> {
    let mut data = BTreeMap::new();
    let mut binary = BTreeMap::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut claim = |key: &str| -> Result<(), CliError> {
        if key.is_empty() {
            return Err(CliError::usage("a ConfigMap key must not be empty"));
        }
        if !seen.insert(key.to_owned()) {
            return Err(CliError::usage(format!(
                "cannot add key {key}, another key by that name already exists"
            )));
        }
        Ok(())
    };
    for lit in &args.from_literal {
        let (k, v) = lit
            .split_once('=')
            .ok_or_else(|| CliError::usage(format!("--from-literal {lit:?} is not KEY=VALUE")))?;
        claim(k)?;
        data.insert(k.to_owned(), v.to_owned());
    }
    for spec in &args.from_file {
        let (key, path) = match spec.split_once('=') {
            Some((k, p)) => (k.to_owned(), p),
            None => (base_name(spec)?, spec.as_str()),
        };
        claim(&key)?;
        match String::from_utf8(read_bounded(Path::new(path))?) {
            Ok(text) => {
                data.insert(key, text);
            }
            Err(bytes) => {
                binary.insert(key, ByteString(bytes.into_bytes()));
            }
        }
    }
    Ok(ConfigMap {
        metadata: named(&args.name),
        data: (!data.is_empty()).then_some(data),
        binary_data: (!binary.is_empty()).then_some(binary),
        ..ConfigMap::default()
    })
}

fn base_name(path: &str) -> Result<String, CliError> {
    Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .map(str::to_owned)
        .ok_or_else(|| CliError::usage(format!("--from-file {path:?} has no file name")))
}

fn read_bounded(path: &Path) -> Result<Vec<u8>, CliError> {
    let what = || format!("reading {}", path.display());
    let file = std::fs::File::open(path).map_err(|e| CliError::io(what(), e))?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(CliError::usage(format!(
            "--from-file {}: directories are not supported, name the files",
            path.display()
        )));
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::io(what(), e))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(CliError::usage(format!(
            "--from-file {}: larger than a ConfigMap can hold (1 MiB)",
            path.display()
        )));
    }
    Ok(bytes)
}
