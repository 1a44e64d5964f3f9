use kubeset_derive::CustomResource;

#[derive(CustomResource)]
#[kube(group = "example.com", version = "v1", kind = "Widget", namespaced)]
enum WidgetSpec {
    A,
}

fn main() {}
