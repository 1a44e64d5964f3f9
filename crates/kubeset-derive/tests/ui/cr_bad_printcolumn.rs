use kubeset_derive::CustomResource;

#[derive(CustomResource)]
#[kube(group = "example.com", version = "v1", kind = "Widget", namespaced)]
#[kube(printcolumn = r#"{"name":"Size","jsonPath":".spec.size"}"#)]
struct WidgetSpec {
    size: i32,
}

fn main() {}
