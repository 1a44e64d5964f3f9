//! Server-side apply, strategic merge, JSON patch, dryRun and strict field
//! validation, as the real server does them.

use kubeset::api::apps::v1::Deployment;
use kubeset::api::core::v1::ConfigMap;
use kubeset::dynamic::{ApiResource, DynamicObject};
use kubeset::params::{DeleteParams, FieldValidation, PatchParams, PostParams};
use kubeset::{Api, Deleted, Patch};
use serde_json::json;

use crate::common::{connect, ok, typed};

fn data(cm: &ConfigMap) -> Vec<(String, String)> {
    cm.data
        .clone()
        .unwrap_or_default()
        .into_iter()
        .collect::<Vec<_>>()
}

fn pair(k: &str, v: &str) -> (String, String) {
    (k.to_owned(), v.to_owned())
}

#[tokio::test]
async fn server_side_apply_two_managers_conflict_and_force() {
    let ctx = connect!("ssa");
    let cms: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ctx.ns);

    // apiVersion and kind are filled in by the client.
    let alpha = Patch::Apply(json!({"metadata": {"name": "shared"}, "data": {"a": "1"}}));
    let cm = ok(
        "alpha applies",
        cms.patch("shared", &PatchParams::apply("alpha"), &alpha)
            .await,
    );
    assert_eq!(data(&cm), vec![pair("a", "1")]);

    let beta = Patch::Apply(json!({"metadata": {"name": "shared"}, "data": {"b": "2"}}));
    let cm = ok(
        "beta applies",
        cms.patch("shared", &PatchParams::apply("beta"), &beta)
            .await,
    );
    assert_eq!(data(&cm), vec![pair("a", "1"), pair("b", "2")]);
    let managers: Vec<String> = cm
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|m| m.manager)
        .collect();
    assert!(
        managers.contains(&"alpha".to_owned()) && managers.contains(&"beta".to_owned()),
        "{managers:?}"
    );

    // beta now claims alpha's field: a conflict, typed.
    let grab = Patch::Apply(json!({"metadata": {"name": "shared"}, "data": {"a": "9", "b": "2"}}));
    let err = cms
        .patch("shared", &PatchParams::apply("beta"), &grab)
        .await
        .expect_err("conflicting apply must fail");
    assert!(err.is_conflict(), "{err}");
    let api = err.api_error().expect("an API error");
    assert_eq!(api.code, 409);
    assert!(
        api.message.contains("alpha") && api.message.contains(".data.a"),
        "{}",
        api.message
    );
    assert_eq!(
        data(&ok("get", cms.get("shared").await)),
        vec![pair("a", "1"), pair("b", "2")]
    );

    // With force, beta takes it over.
    let cm = ok(
        "forced apply",
        cms.patch("shared", &PatchParams::apply("beta").force(), &grab)
            .await,
    );
    assert_eq!(data(&cm), vec![pair("a", "9"), pair("b", "2")]);

    // alpha no longer owns anything: applying without "a" keeps it (beta's).
    let cm = ok(
        "alpha re-applies",
        cms.patch(
            "shared",
            &PatchParams::apply("alpha"),
            &Patch::Apply(json!({"metadata": {"name": "shared"}, "data": {"c": "3"}})),
        )
        .await,
    );
    assert_eq!(
        data(&cm),
        vec![pair("a", "9"), pair("b", "2"), pair("c", "3")]
    );
}

fn two_container_deployment(name: &str) -> Deployment {
    typed(json!({
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [
                    {"name": "app", "image": "registry.invalid/app:1"},
                    {"name": "sidecar", "image": "registry.invalid/sidecar:1"}
                ]}
            }
        }
    }))
}

fn images(d: &Deployment) -> Vec<(String, String)> {
    d.spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .map(|p| {
            p.containers
                .iter()
                .map(|c| (c.name.clone(), c.image.clone().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn strategic_merge_patches_containers_by_name() {
    let ctx = connect!("smp");
    let deploys: Api<Deployment> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    ok(
        "create",
        deploys
            .create(&PostParams::default(), &two_container_deployment("web"))
            .await,
    );

    let smp = Patch::Strategic(json!({"spec": {"template": {"spec": {"containers": [
        {"name": "sidecar", "image": "registry.invalid/sidecar:2"}
    ]}}}}));
    let d = ok(
        "strategic",
        deploys.patch("web", &PatchParams::default(), &smp).await,
    );
    assert_eq!(
        images(&d),
        vec![
            pair("app", "registry.invalid/app:1"),
            pair("sidecar", "registry.invalid/sidecar:2")
        ],
        "strategic merge keys containers by name"
    );

    // $patch: delete removes one element by its key.
    let remove = Patch::Strategic(json!({"spec": {"template": {"spec": {"containers": [
        {"name": "sidecar", "$patch": "delete"}
    ]}}}}));
    let d = ok(
        "strategic delete",
        deploys.patch("web", &PatchParams::default(), &remove).await,
    );
    assert_eq!(images(&d), vec![pair("app", "registry.invalid/app:1")]);

    // A JSON merge patch replaces the whole list instead.
    ok(
        "recreate sidecar",
        deploys.patch("web", &PatchParams::default(), &smp).await,
    );
    let merge = Patch::Merge(json!({"spec": {"template": {"spec": {"containers": [
        {"name": "only", "image": "registry.invalid/only:1"}
    ]}}}}));
    let d = ok(
        "merge",
        deploys.patch("web", &PatchParams::default(), &merge).await,
    );
    assert_eq!(images(&d), vec![pair("only", "registry.invalid/only:1")]);
}

#[tokio::test]
async fn json_patch_with_test_operations() {
    let ctx = connect!("jsonpatch");
    let cms: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    let cm: ConfigMap = typed(json!({"metadata": {"name": "jp"}, "data": {"a": "1", "b": "2"}}));
    ok("create", cms.create(&PostParams::default(), &cm).await);

    let ops = Patch::Json(json!([
        {"op": "test", "path": "/data/a", "value": "1"},
        {"op": "replace", "path": "/data/a", "value": "10"},
        {"op": "remove", "path": "/data/b"},
        {"op": "add", "path": "/metadata/labels", "value": {"patched": "yes"}}
    ]));
    let cm = ok(
        "json patch",
        cms.patch("jp", &PatchParams::default(), &ops).await,
    );
    assert_eq!(data(&cm), vec![pair("a", "10")]);
    assert_eq!(
        cm.metadata
            .labels
            .unwrap_or_default()
            .get("patched")
            .map(String::as_str),
        Some("yes")
    );

    // A failing test operation rejects the whole patch.
    let failing = Patch::Json(json!([
        {"op": "test", "path": "/data/a", "value": "1"},
        {"op": "replace", "path": "/data/a", "value": "11"}
    ]));
    let err = cms
        .patch("jp", &PatchParams::default(), &failing)
        .await
        .expect_err("a failed test op must reject the patch");
    let api = err.api_error().expect("an API error");
    println!(
        "JSON patch with a failing test op: {} {:?}: {}",
        api.code, api.status_reason, api.message
    );
    assert!((400..500).contains(&api.code), "{err}");
    assert_eq!(data(&ok("get", cms.get("jp").await)), vec![pair("a", "10")]);
}

#[tokio::test]
async fn dry_run_all_persists_nothing() {
    let ctx = connect!("dryrun");
    let cms: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    let cm: ConfigMap = typed(json!({"metadata": {"name": "dry"}, "data": {"a": "1"}}));

    let answered = ok(
        "dry-run create",
        cms.create(&PostParams::default().dry_run(), &cm).await,
    );
    assert_eq!(answered.metadata.name.as_deref(), Some("dry"));
    assert!(
        answered.metadata.uid.is_some(),
        "dry run still answers a uid"
    );
    assert!(ok("get", cms.get_opt("dry").await).is_none());

    ok("create", cms.create(&PostParams::default(), &cm).await);
    let patched = ok(
        "dry-run patch",
        cms.patch(
            "dry",
            &PatchParams::default().dry_run(),
            &Patch::Merge(json!({"data": {"a": "2"}})),
        )
        .await,
    );
    assert_eq!(data(&patched), vec![pair("a", "2")]);
    assert_eq!(data(&ok("get", cms.get("dry").await)), vec![pair("a", "1")]);

    let deleted = ok(
        "dry-run delete",
        cms.delete("dry", &DeleteParams::default().dry_run()).await,
    );
    assert!(matches!(deleted, Deleted::Gone(_) | Deleted::Pending(_)));
    assert!(ok("get", cms.get_opt("dry").await).is_some());

    // dryRun on apply too.
    let applied = ok(
        "dry-run apply",
        cms.patch(
            "dry",
            &PatchParams::apply("dry").dry_run(),
            &Patch::Apply(json!({"metadata": {"name": "dry"}, "data": {"z": "9"}})),
        )
        .await,
    );
    assert!(data(&applied).contains(&pair("z", "9")));
    assert!(!data(&ok("get", cms.get("dry").await)).contains(&pair("z", "9")));
}

#[tokio::test]
async fn strict_field_validation_rejects_unknown_fields() {
    let ctx = connect!("strict");
    let resource = ApiResource::of::<ConfigMap>();
    let dynamic: Api<DynamicObject> = Api::dynamic(ctx.client.clone(), &resource, Some(&ctx.ns));
    let bogus = DynamicObject::new("strict", &resource)
        .with("data", json!({"a": "1"}))
        .with("bogusField", json!(1));

    let err = dynamic
        .create(
            &PostParams::default().validation(FieldValidation::Strict),
            &bogus,
        )
        .await
        .expect_err("strict validation must reject an unknown field");
    assert!(err.is_bad_request(), "{err}");
    let api = err.api_error().expect("an API error");
    assert_eq!(api.code, 400);
    assert!(api.message.contains("bogusField"), "{}", api.message);

    // Ignore drops it silently; the object is created without it.
    let created = ok(
        "ignore",
        dynamic
            .create(
                &PostParams::default().validation(FieldValidation::Ignore),
                &bogus,
            )
            .await,
    );
    assert!(!created.data.contains_key("bogusField"));

    // The typed API rejects an unknown field in a patch the same way.
    let cms: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    let err = cms
        .patch(
            "strict",
            &PatchParams::default().validation(FieldValidation::Strict),
            &Patch::Merge(json!({"spec": {"replicas": 1}})),
        )
        .await
        .expect_err("strict patch must fail");
    // Unlike a create (400 BadRequest), a patch is refused as 422 Invalid.
    assert!(err.is_invalid(), "{err}");
    assert_eq!(err.api_error().map(|e| e.code), Some(422));
    assert!(
        err.to_string()
            .contains(r#"strict decoding error: unknown field "spec""#),
        "{err}"
    );
}
