//! `kubeset-bench` with mimalloc as the global allocator: `cargo xtask
//! bench` runs the codec rows with it too, to show how much of a decode is
//! the allocator's (a Rust controller picks its allocator; Go has its own).

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    kubeset_bench::cli::main()
}
