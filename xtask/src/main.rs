//! Workspace tasks.
fn main() {}
