use kubeset_derive::JsonSchema;

#[derive(JsonSchema)]
#[schema(crate = "kubeset_api")]
struct Spec {
    #[schema(unique_items)]
    ids: Vec<String>,
}

fn main() {}
