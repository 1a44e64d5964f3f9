//! An admission webhook's handler in kube-rs's idiom (kube-rs's
//! `admission` feature): a review in, a review out, as an HTTP framework's
//! route would call it. The server around it is not kube-rs's (it has
//! none); kubeset's is `kubeset::runtime::webhook`.

use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
use serde_json::{Value, json};

fn handle(review: AdmissionReview<DynamicObject>) -> AdmissionReview<DynamicObject> {
    let req: AdmissionRequest<DynamicObject> = match review.try_into() {
        Ok(req) => req,
        Err(e) => return AdmissionResponse::invalid(e.to_string()).into_review(),
    };
    let response = AdmissionResponse::from(&req);
    let Some(object) = &req.object else {
        return response.into_review();
    };
    if object.data["data"].get("password").is_some() {
        return response
            .deny("ConfigMaps must not hold a password")
            .into_review();
    }
    if req.operation != Operation::Create {
        return response.into_review();
    }
    let patch: json_patch::Patch = serde_json::from_value(json!([
        {"op": "add", "path": "/metadata/labels", "value": {"checked": "yes"}}
    ]))
    .expect("a JSON patch");
    match response.clone().with_patch(patch) {
        Ok(patched) => patched.into_review(),
        Err(e) => response.deny(e.to_string()).into_review(),
    }
}

fn review(operation: &str, data: Value) -> AdmissionReview<DynamicObject> {
    serde_json::from_value(json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "3f0c2b1a",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "name": "settings",
            "namespace": "default",
            "operation": operation,
            "userInfo": {"username": "admin", "groups": ["system:masters"]},
            "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": data},
            "dryRun": false
        }
    }))
    .expect("an AdmissionReview")
}

#[test]
fn a_denial_carries_the_uid_and_the_reason() {
    let answer = serde_json::to_value(handle(review("CREATE", json!({"password": "x"})))).unwrap();
    assert_eq!(answer["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(answer["kind"], "AdmissionReview");
    assert_eq!(answer["response"]["uid"], "3f0c2b1a");
    assert_eq!(answer["response"]["allowed"], false);
    assert_eq!(
        answer["response"]["status"]["message"],
        "ConfigMaps must not hold a password"
    );
}

#[test]
fn a_patch_goes_out_as_base64_json_patch() {
    let answer = handle(review("CREATE", json!({"k": "v"})));
    let wire = serde_json::to_value(&answer).unwrap();
    assert_eq!(wire["response"]["allowed"], true);
    assert_eq!(wire["response"]["patchType"], "JSONPatch");
    // The patch's bytes: kube-rs 5 writes them as a JSON array of numbers,
    // kubeset as a base64 string (Go's `[]byte`, what kube-apiserver
    // writes); each reads its own back.
    let back: AdmissionReview<DynamicObject> = serde_json::from_value(wire).unwrap();
    let patch = back.response.expect("a response").patch.expect("a patch");
    assert_eq!(
        serde_json::from_slice::<Value>(&patch).unwrap(),
        json!([{"op": "add", "path": "/metadata/labels", "value": {"checked": "yes"}}])
    );
}

#[test]
fn an_update_is_allowed_unchanged_and_a_review_without_request_is_invalid() {
    let answer = handle(review("UPDATE", json!({})));
    let response = answer.response.expect("a response");
    assert!(response.allowed);
    assert!(response.patch.is_none());

    let empty: AdmissionReview<DynamicObject> = serde_json::from_value(
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}),
    )
    .unwrap();
    let invalid = handle(empty).response.expect("a response");
    assert!(!invalid.allowed);
}
