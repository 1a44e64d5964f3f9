use kubeset_derive::JsonSchema;
use serde::Serialize;

mod as_text {
    pub fn serialize<S: serde::Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.to_string())
    }
}

#[derive(JsonSchema, Serialize)]
#[schema(crate = "kubeset_api")]
struct Spec {
    #[serde(serialize_with = "as_text::serialize")]
    size: u64,
}

fn main() {}
