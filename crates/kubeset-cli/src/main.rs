//! The `kubeset` command line.
fn main() {}
