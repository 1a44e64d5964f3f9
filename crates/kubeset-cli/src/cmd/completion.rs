//! `kubeset completion bash|zsh|fish`: the shell completion script for
//! every command and flag, generated from the clap definition.

use clap::CommandFactory as _;

use super::print;
use crate::cli::{Cli, CompletionArgs, Shell};
use crate::error::CliError;

/// Prints the script on stdout.
pub fn run(args: &CompletionArgs) -> Result<(), CliError> {
    let shell = match args.shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "kubeset", &mut out);
    print(&String::from_utf8_lossy(&out))
}
