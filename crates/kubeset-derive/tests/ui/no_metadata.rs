use kubeset_derive::Resource;

#[derive(Resource)]
#[resource(group = "example.com", version = "v1", kind = "Widget", plural = "widgets", cluster)]
struct Widget {
    meta: (),
}

fn main() {}
