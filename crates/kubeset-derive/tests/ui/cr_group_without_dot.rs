use kubeset_derive::CustomResource;

#[derive(CustomResource)]
#[kube(group = "example", version = "v1", kind = "Widget", namespaced)]
struct WidgetSpec {
    size: i32,
}

fn main() {}
