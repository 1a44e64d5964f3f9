//! `#[kube(validation = …)]`, kube 5's top-level CEL rules: a `Rule`
//! built with `Rule`, `Message` and `Reason` (which the derive brings into
//! scope: no `use` needed) and a plain string, in the generated CRD's
//! `x-kubernetes-validations` in the order written, serialised as
//! `kube::core::Rule` serialises, and enforced by the server: an object
//! breaking a rule is refused with the rule's message.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use kube::core::{Message as CoreMessage, Reason as CoreReason, Rule as CoreRule};
use kube::runtime::wait::{await_condition, conditions};
use kube::{CustomResource, CustomResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::support::{BoxError, server, within};

/// An account with a spending limit, checked by three top-level rules.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "porting.example.com",
    version = "v1",
    kind = "Account",
    namespaced,
    validation = Rule::new("self.spec.limit <= 100").message("limit is at most 100"),
    validation = "self.spec.owner != ''",
    validation = Rule::new("self.spec.limit % 5 == 0")
        .message(Message::Expression("'the limit is not a multiple of ' + '5'".into()))
        .reason(Reason::FieldValueForbidden)
        .field_path(".spec.limit")
)]
pub struct AccountSpec {
    /// Who owns it.
    pub owner: String,
    /// The most it may spend.
    pub limit: i64,
}

#[test]
fn the_rules_are_in_the_crd_in_order() -> Result<(), BoxError> {
    // The schema through k8s-openapi's field names (`open_api_v3_schema`).
    let crd = Account::crd();
    let schema = crd.spec.versions[0]
        .schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.as_ref())
        .ok_or("the CRD has no schema")?;
    let schema = serde_json::to_value(schema)?;
    let rules = &schema["x-kubernetes-validations"];
    // The same entries from `kube::core`'s types, built outside the derive.
    let built = [
        CoreRule::new("self.spec.limit <= 100").message("limit is at most 100"),
        CoreRule::from("self.spec.owner != ''"),
        CoreRule::new("self.spec.limit % 5 == 0")
            .message(CoreMessage::Expression(
                "'the limit is not a multiple of ' + '5'".into(),
            ))
            .reason(CoreReason::FieldValueForbidden)
            .field_path(".spec.limit"),
    ];
    assert_eq!(*rules, serde_json::to_value(&built)?);
    assert_eq!(
        *rules,
        json!([
            {"rule": "self.spec.limit <= 100", "message": "limit is at most 100"},
            {"rule": "self.spec.owner != ''"},
            {
                "rule": "self.spec.limit % 5 == 0",
                "messageExpression": "'the limit is not a multiple of ' + '5'",
                "reason": "FieldValueForbidden",
                "fieldPath": ".spec.limit"
            }
        ])
    );
    Ok(())
}

#[tokio::test]
async fn the_server_refuses_what_a_rule_forbids_with_its_message() -> Result<(), BoxError> {
    let (_server, client) = server().await?;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Account::crd()).await?;
    let established = await_condition(
        crds,
        "accounts.porting.example.com",
        conditions::is_crd_established(),
    );
    within("the CRD's Established condition", established).await??;

    let accounts: Api<Account> = Api::namespaced(client, "default");
    let ok = Account::new(
        "fine",
        AccountSpec {
            owner: "ann".to_owned(),
            limit: 50,
        },
    );
    accounts.create(&PostParams::default(), &ok).await?;

    let cases = [
        (150, "ann", "limit is at most 100"),
        (
            7,
            "ann",
            "spec.limit: Forbidden: the limit is not a multiple of 5",
        ),
        (10, "", "failed rule: self.spec.owner != ''"),
    ];
    for (limit, owner, message) in cases {
        let bad = Account::new(
            "bad",
            AccountSpec {
                owner: owner.to_owned(),
                limit,
            },
        );
        let Err(err) = accounts.create(&PostParams::default(), &bad).await else {
            return Err(format!("an account breaking {message:?} was accepted").into());
        };
        let text = err.to_string();
        assert!(text.contains(message), "{message:?} not in {text}");
    }
    Ok(())
}
