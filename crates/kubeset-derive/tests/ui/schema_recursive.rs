use kubeset_derive::JsonSchema;

#[derive(JsonSchema)]
#[schema(crate = "kubeset_api")]
struct Tree {
    name: String,
    children: Vec<Tree>,
}

fn main() {}
