use kubeset_derive::CustomResource;

#[derive(CustomResource)]
#[kube(group = "example.com", version = "v1", kind = "Widget", namespaced)]
#[kube(scale = r#"{"specReplicasPath":".spec.n","statusReplicasPath":".status.n"}"#)]
#[kube(scale(spec_replicas_path = ".spec.n", status_replicas_path = ".status.n"))]
struct WidgetSpec {
    n: i32,
}

fn main() {}
