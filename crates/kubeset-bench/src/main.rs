//! `kubeset-bench`: the Rust side of `cargo xtask bench`, on the system
//! allocator; the commands are in [`kubeset_bench::cli`].

fn main() -> std::process::ExitCode {
    kubeset_bench::cli::main()
}
