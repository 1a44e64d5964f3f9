use kubeset_derive::Resource;

#[derive(Resource)]
#[resource(crate = "kubeset_api", group = "example.com", version = "v1", kind = "Widget", plural = "widgets", cluster)]
struct Widget {
    metadata: String,
}

fn main() {}
