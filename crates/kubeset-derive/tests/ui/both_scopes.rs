use kubeset_derive::Resource;

#[derive(Resource)]
#[resource(group = "example.com", version = "v1", kind = "Widget", plural = "widgets", namespaced, cluster)]
struct Widget {
    metadata: (),
}

fn main() {}
