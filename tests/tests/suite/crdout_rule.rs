//! `#[kube(validation = Rule::new(…))]` (kube-rs's top-level CEL rules)
//! against the real kube-apiserver: the CRD with a `Rule` carrying a
//! message, a message expression, a reason and a field path, beside a
//! string rule, is accepted, and each rule refuses what it forbids with
//! its message, reason and field. `Rule`, `Message` and `Reason` need
//! no `use`: the derive brings them into scope, as kube-rs's does (an
//! import of `kubeset::core::{Rule, …}` is then reported unused, as
//! kube 5 reports `kube::core::{Rule, …}`).

use std::time::Duration;

use kubeset::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kubeset::params::PostParams;
use kubeset::runtime::wait::{await_condition, conditions};
use kubeset::{Api, CustomResource, CustomResourceExt, JsonSchema};
use serde::{Deserialize, Serialize};

use crate::common::{connect, ok};

/// A quota with three top-level rules (its own group: the `crdout`
/// group's discovery document is compared with its generated kinds).
#[derive(CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug)]
#[kube(
    group = "crdrule.kubeset.dev",
    version = "v1",
    kind = "Quota",
    namespaced
)]
#[kube(validation = Rule::new("self.spec.max <= 100").message("max is at most 100"))]
#[kube(validation = "self.spec.name != ''")]
#[kube(validation = Rule::new("self.spec.max % 5 == 0")
    .message(Message::Expression("'max must be a multiple of ' + '5'".into()))
    .reason(Reason::FieldValueForbidden)
    .field_path(".spec.max"))]
struct QuotaSpec {
    name: String,
    max: i64,
}

fn quota(name: &str, who: &str, max: i64) -> Quota {
    Quota::new(
        name,
        QuotaSpec {
            name: who.to_owned(),
            max,
        },
    )
}

#[tokio::test]
async fn crdout_rule_expressions_are_enforced_by_the_real_server() {
    let ctx = connect!("crdout-rule");
    let crds: Api<CustomResourceDefinition> = Api::cluster(ctx.client.clone());
    match crds.create(&PostParams::default(), &Quota::crd()).await {
        Ok(_) => {}
        // A previous run's (the same schema: the CRD is fixed here).
        Err(e) if e.is_already_exists() => {}
        Err(e) => panic!("create CRD: {}", kubeset_tests::error_chain(&e)),
    }
    let established = await_condition(crds, Quota::crd_name(), conditions::is_crd_established());
    match tokio::time::timeout(Duration::from_secs(90), established).await {
        Ok(Ok(Some(_))) => {}
        other => panic!("the CRD not Established within 90 s: {other:?}"),
    }

    let api: Api<Quota> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    ok(
        "a quota every rule allows",
        api.create(&PostParams::default(), &quota("fine", "ann", 50))
            .await,
    );
    let cases = [
        (quota("big", "ann", 150), "max is at most 100"),
        (
            quota("odd", "ann", 7),
            "spec.max: Forbidden: max must be a multiple of 5",
        ),
        (quota("anon", "", 10), "failed rule: self.spec.name != ''"),
    ];
    for (bad, want) in cases {
        match api.create(&PostParams::default(), &bad).await {
            Ok(_) => panic!("a quota breaking {want:?} was accepted"),
            Err(e) => {
                let msg = e.to_string();
                assert!(e.is_invalid(), "not 422 Invalid: {msg}");
                assert!(msg.contains(want), "{want:?} not in {msg}");
            }
        }
    }
}
