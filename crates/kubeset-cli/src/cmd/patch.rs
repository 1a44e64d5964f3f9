//! `kubeset patch <resource> <name> --type json|merge|strategic -p <patch>`.

use kubeset::params::PatchParams;
use kubeset::{Client, Patch};
use serde_json::Value;

use super::{describe, dynamic_api, namespace, print, resolve};
use crate::cli::{Global, PatchArgs, PatchKind};
use crate::error::CliError;
use crate::output::object_ref;

/// Parses the `-p` text: JSON, or YAML as kubectl also accepts.
pub fn parse_patch(text: &str, kind: PatchKind) -> Result<Value, CliError> {
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(json_err) => serde_norway::from_str(text).map_err(|_| {
            CliError::usage(format!("the patch is not valid JSON or YAML: {json_err}"))
        })?,
    };
    match (kind, &value) {
        (PatchKind::Json, Value::Array(_)) => Ok(value),
        (PatchKind::Json, _) => Err(CliError::usage(
            "a JSON patch (--type json) must be an array of operations",
        )),
        (_, Value::Object(_)) => Ok(value),
        _ => Err(CliError::usage(
            "a merge or strategic merge patch must be a JSON object",
        )),
    }
}

/// Patches one object.
pub async fn run(global: &Global, client: &Client, args: &PatchArgs) -> Result<(), CliError> {
    let body = parse_patch(&args.patch, args.kind)?;
    let resource = resolve(client, &args.resource).await?;
    let ns = namespace(global, client);
    let api = dynamic_api(client, &resource, Some(&ns));
    let patch = match args.kind {
        PatchKind::Json => Patch::Json(body),
        PatchKind::Merge => Patch::Merge(body),
        PatchKind::Strategic => Patch::Strategic(body),
    };
    let params = PatchParams {
        field_manager: Some("kubeset-patch".to_owned()),
        dry_run: args.dry_run.on(),
        ..PatchParams::default()
    };
    api.patch(&args.name, &params, &patch)
        .await
        .map_err(|e| CliError::api(format!("patching {}", describe(&resource, &args.name)), e))?;
    print(&format!(
        "{} patched{}\n",
        object_ref(&resource, &args.name),
        args.dry_run.dry_run.suffix()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_shapes() {
        assert!(parse_patch(r#"[{"op":"add","path":"/a","value":1}]"#, PatchKind::Json).is_ok());
        assert!(parse_patch(r#"{"a":1}"#, PatchKind::Json).is_err());
        assert!(parse_patch(r#"{"a":1}"#, PatchKind::Merge).is_ok());
        assert!(parse_patch("spec: {replicas: 3}", PatchKind::Strategic).is_ok());
        assert!(parse_patch("[1]", PatchKind::Strategic).is_err());
        assert_eq!(
            parse_patch("{", PatchKind::Merge).unwrap_err().exit_code(),
            2
        );
    }
}
