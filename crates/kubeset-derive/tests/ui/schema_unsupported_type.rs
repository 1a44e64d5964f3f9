use kubeset_derive::JsonSchema;

#[derive(JsonSchema)]
#[schema(crate = "kubeset_api")]
struct Spec {
    timeout: std::time::Duration,
}

fn main() {}
