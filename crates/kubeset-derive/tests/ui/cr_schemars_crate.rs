use kubeset_derive::CustomResource;

#[derive(CustomResource)]
#[kube(group = "example.com", version = "v1", kind = "Widget", namespaced)]
#[kube(crates(schemars = "::schemars"))]
struct WidgetSpec {
    n: i32,
}

fn main() {}
