use kubeset_derive::JsonSchema;

// A generated model outside apimachinery has its schema only with the
// `schemas` feature (off here).
#[derive(JsonSchema)]
#[schema(crate = "kubeset_api")]
struct Spec {
    column: kubeset_api::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceColumnDefinition,
}

fn main() {}
