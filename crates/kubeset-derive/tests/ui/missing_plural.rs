use kubeset_derive::Resource;

#[derive(Resource)]
#[resource(group = "example.com", version = "v1", kind = "Widget", namespaced)]
struct Widget {
    metadata: (),
}

fn main() {}
