use kubeset_derive::JsonSchema;
use serde::Serialize;

#[derive(JsonSchema, Serialize)]
#[schema(crate = "kubeset_api")]
#[serde(tag = "type", untagged)]
enum Choice {
    A { x: i32 },
}

fn main() {}
