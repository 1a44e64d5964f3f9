//! `cargo xtask fetch-specs`.

use std::path::PathBuf;

pub fn run(version: &str, dest: PathBuf) -> Result<(), crate::Error> {
    let _ = (version, dest);
    Err("fetch-specs is not implemented yet".into())
}
