use kubeset_derive::CustomResource;

#[derive(CustomResource)]
#[kube(group = "example.com", version = "v1", kind = "Widget", namespaced)]
#[kube(schema = "disabled", validation = "self.spec.n > 0")]
struct WidgetSpec {
    n: i32,
}

fn main() {}
