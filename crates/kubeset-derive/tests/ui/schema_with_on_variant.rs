use kubeset_derive::JsonSchema;
use serde::Serialize;

#[derive(JsonSchema, Serialize)]
#[schema(crate = "kubeset_api")]
#[serde(tag = "type")]
enum Step {
    #[schema(with = "kubeset_api::schema::any_value")]
    Scale { replicas: i32 },
}

fn main() {}
