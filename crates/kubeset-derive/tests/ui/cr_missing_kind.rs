use kubeset_derive::CustomResource;

#[derive(CustomResource)]
#[kube(group = "example.com", version = "v1", namespaced)]
struct WidgetSpec {
    size: i32,
}

fn main() {}
