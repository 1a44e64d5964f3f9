use kubeset_derive::JsonSchema;
use serde::Serialize;

#[derive(JsonSchema, Serialize)]
#[schema(crate = "kubeset_api")]
struct Inner {
    a: String,
}

#[derive(JsonSchema, Serialize)]
#[schema(crate = "kubeset_api")]
struct Spec {
    #[serde(flatten, rename = "x")]
    inner: Inner,
}

fn main() {}
