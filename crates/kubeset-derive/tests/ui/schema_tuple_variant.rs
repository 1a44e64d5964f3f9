use kubeset_derive::JsonSchema;

#[derive(JsonSchema)]
#[schema(crate = "kubeset_api")]
enum Shape {
    Point(i32, i32),
}

fn main() {}
