use kubeset_derive::CustomResource;

#[derive(CustomResource)]
#[kube(group = "example.com", version = "v1", kind = "Widget", namespaced)]
#[kube(validation = Rule::new("self.spec.n > 0").message(,))]
struct WidgetSpec {
    n: i32,
}

fn main() {}
