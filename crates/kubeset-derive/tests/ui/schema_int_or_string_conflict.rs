use kubeset_derive::JsonSchema;

#[derive(JsonSchema)]
#[schema(crate = "kubeset_api")]
struct Spec {
    #[schema(int_or_string, pattern = "^[0-9]+%?$")]
    port: String,
}

fn main() {}
