//! The real server's `/openapi/v3`, fetched through the client and fed to
//! our generator (`kubeset-codegen`).

use std::path::Path;

use kubeset_codegen::InputFormat;
use serde_json::Value;

use kubeset::Api;
use kubeset::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kubeset::params::{DeleteParams, PostParams};

use crate::common::{connect, ok};

/// `api/v1` and `apis/<group>/<version>`: the group-version documents.
fn is_group_version(key: &str) -> bool {
    let parts: Vec<&str> = key.split('/').collect();
    matches!(parts.as_slice(), ["api", _] | ["apis", _, _])
}

/// Writes the server's group-version documents to `<dir>/openapi-v3/`
/// (`api/v1.json`, `apis/<group>/<version>.json`). Other tests create and
/// delete CRDs (groups `*.kubeset.dev`) at any moment, so their documents
/// are left out, except the group `own_group` when given; with
/// `built_in_only`, documents with schemas outside `io.k8s.` are left out
/// too. Answers how many were written.
pub(crate) async fn fetch_openapi_v3(
    client: &kubeset::Client,
    dir: &Path,
    built_in_only: bool,
    own_group: Option<&str>,
) -> usize {
    let rest = client.rest();
    let index: Value = ok(
        "GET /openapi/v3",
        rest.get().abs_path(["openapi", "v3"]).send_json().await,
    );
    let paths = index["paths"].as_object().expect("an object of paths");
    let mut fetched = 0;
    for (key, entry) in paths {
        if !is_group_version(key) {
            continue;
        }
        let group = key.split('/').nth(1).unwrap_or("");
        if group.ends_with(".kubeset.dev") && Some(group) != own_group {
            continue;
        }
        let url = entry["serverRelativeURL"]
            .as_str()
            .expect("serverRelativeURL");
        let (path, query) = url.split_once('?').unwrap_or((url, ""));
        let mut req = rest.get().abs_path(path.trim_start_matches('/').split('/'));
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            req = req.param(k, v);
        }
        let doc = match req.send().await {
            Ok(doc) => doc,
            // A CRD deleted since the index was read.
            Err(e) if e.is_not_found() && built_in_only => continue,
            Err(e) => panic!("{key}: {}", kubeset_tests::error_chain(&e)),
        };
        if built_in_only {
            let parsed: Value = serde_json::from_slice(&doc.body)
                .unwrap_or_else(|e| panic!("{key}: not a JSON document: {e}"));
            let custom = parsed["components"]["schemas"]
                .as_object()
                .is_some_and(|s| s.keys().any(|k| !k.starts_with("io.k8s.")));
            if custom {
                continue;
            }
        }
        let file = dir.join("openapi-v3").join(format!("{key}.json"));
        std::fs::create_dir_all(file.parent().unwrap_or(Path::new("."))).expect("mkdir");
        std::fs::write(&file, &doc.body).expect("write the document");
        fetched += 1;
    }
    fetched
}

pub(crate) async fn generate(
    dir: &Path,
) -> Result<kubeset_codegen::Output, kubeset_codegen::CodegenError> {
    let dir = dir.to_owned();
    tokio::task::spawn_blocking(move || {
        let input = kubeset_codegen::load(&dir, InputFormat::V3)?;
        // The same label as the committed code: the preambles then match too.
        kubeset_codegen::generate(input, "kubernetes/v1.35")
    })
    .await
    .expect("the generator does not panic")
}

#[tokio::test]
async fn generator_accepts_the_servers_openapi_v3() {
    let ctx = connect!("openapi");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let fetched = fetch_openapi_v3(&ctx.client, dir.path(), true, None).await;
    println!("fetched {fetched} built-in group-version documents from /openapi/v3");
    assert!(fetched >= 20, "only {fetched} group-versions served");

    let started = std::time::Instant::now();
    let generated = generate(dir.path()).await.unwrap_or_else(|e| {
        panic!(
            "the generator refused the server's OpenAPI: {}",
            kubeset_tests::error_chain(&e)
        )
    });
    println!(
        "generated {} files from the live server's OpenAPI in {:?}",
        generated.files.len(),
        started.elapsed()
    );

    // The live server's spec gives the very code the stored v1.35 spec
    // gives (the committed models are the union of v1.33–v1.37, gated by
    // version, so they are not this server's alone).
    let stored = std::env::var_os("KUBESET_SPECS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| kubeset_tests::env::workspace_root().join("../shared/specs"))
        .join("kubernetes/v1.35");
    let from_stored = generate(&stored)
        .await
        .unwrap_or_else(|e| panic!("the stored v1.35 spec: {}", kubeset_tests::error_chain(&e)));
    for (file, ty) in [
        ("src/api/core/v1/pod.rs", "pub struct Pod {"),
        ("src/api/apps/v1/deployment.rs", "pub struct Deployment {"),
    ] {
        let text = generated
            .files
            .get(file)
            .unwrap_or_else(|| panic!("no {file} generated"));
        assert!(text.contains(ty), "{file} lacks `{ty}`");
        assert!(
            Some(text) == from_stored.files.get(file),
            "{file} generated from the live server differs from the stored v1.35 spec's"
        );
    }
}

#[tokio::test]
async fn generator_accepts_a_live_openapi_v3_with_crds() {
    let ctx = connect!("openapi-crd");
    let crds: Api<CustomResourceDefinition> = Api::cluster(ctx.client.clone());
    let group = format!("{}.kubeset.dev", kubeset_tests::unique_name("oa"));
    let crd: CustomResourceDefinition = crate::common::typed(serde_json::json!({
        "metadata": {"name": format!("things.{group}")},
        "spec": {
            "group": group,
            "names": {"kind": "Thing", "plural": "things"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object"}}}]
        }
    }));
    ok(
        "create CRD",
        crds.create(&PostParams::default(), &crd).await,
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    kubeset_tests::eventually(
        std::time::Duration::from_secs(60),
        "the CRD in /openapi/v3",
        || async {
            let index: Value = ok(
                "GET /openapi/v3",
                ctx.client
                    .rest()
                    .get()
                    .abs_path(["openapi", "v3"])
                    .send_json()
                    .await,
            );
            index["paths"].get(format!("apis/{group}/v1")).map(|_| ())
        },
    )
    .await;
    fetch_openapi_v3(&ctx.client, dir.path(), false, Some(&group)).await;
    let result = generate(dir.path()).await;
    ok(
        "delete CRD",
        crds.delete(&format!("things.{group}"), &DeleteParams::default())
            .await,
    );
    let generated = match result {
        Ok(generated) => generated,
        Err(e) => panic!(
            "the generator refused a live /openapi/v3 with a CRD: {}",
            kubeset_tests::error_chain(&e)
        ),
    };
    // The custom kind generates under its group, behind its own feature.
    let module = group.replace(['.', '-'], "_");
    let file = format!("src/api/{module}/v1/thing.rs");
    let thing = generated
        .files
        .get(&file)
        .unwrap_or_else(|| panic!("no {file} generated"));
    assert!(thing.contains("pub struct Thing"), "{thing}");
    let feature = format!("{}-v1 = [", module.replace('_', "-"));
    assert!(
        generated.features.contains(&feature),
        "{}",
        generated.features
    );
}
