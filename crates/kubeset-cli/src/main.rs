//! The `kubeset` command line: kubectl-like verbs on the kubeset client,
//! `kubeset serve` (the embedded API server) and `kubeset demo`.
//!
//! Exit codes: 0 success, 1 API and runtime errors, 2 usage and
//! configuration errors; failures print one line on stderr.

mod cli;
mod cmd;
mod error;
mod gonum;
mod jsonpath;
mod output;
mod table;
mod yaml;

use std::process::ExitCode;

use clap::Parser as _;
use clap::error::ErrorKind;

use crate::cli::{Cli, Command};
use crate::error::{CliError, flatten};

fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_owned());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!(
            "error: internal error (a bug in kubeset){at}: {}",
            flatten(&msg)
        );
    }));

    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_error(&e),
    };
    init_logging(cli.global.verbosity.unwrap_or(0));
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: starting the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", e.one_line());
            ExitCode::from(e.exit_code())
        }
    }
}

/// Help and version go to stdout with exit 0; anything else is one line
/// on stderr with exit 2.
fn clap_error(e: &clap::Error) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            }
        }
        _ => {
            let text = e.to_string();
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid arguments");
            let first = first.strip_prefix("error: ").unwrap_or(first);
            eprintln!("error: {} (see 'kubeset --help')", flatten(first));
            ExitCode::from(2)
        }
    }
}

/// `-v` levels to a tracing filter on stderr: none → errors only (stderr
/// stays one line per failure), 1 warnings, 2–3 info, 4–5 debug, 6+ trace.
fn init_logging(level: u8) {
    let max = match level {
        0 => tracing::Level::ERROR,
        1 => tracing::Level::WARN,
        2 | 3 => tracing::Level::INFO,
        4 | 5 => tracing::Level::DEBUG,
        _ => tracing::Level::TRACE,
    };
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(max)
        .with_target(level >= 4)
        .try_init();
}

async fn run(cli: Cli) -> Result<(), CliError> {
    let g = &cli.global;
    match &cli.command {
        Command::Serve(args) => cmd::serve::run(args).await,
        Command::Demo => cmd::demo::run().await,
        Command::Get(args) => cmd::get::run(g, &g.client()?, args).await,
        Command::Create(args) => cmd::create::run(g, args).await,
        Command::Apply(args) => cmd::apply::apply(g, &g.client()?, args).await,
        Command::Patch(args) => cmd::patch::run(g, &g.client()?, args).await,
        Command::Delete(args) => cmd::delete::run(g, &g.client()?, args).await,
        Command::Watch(args) => cmd::watch::run(g, &g.client()?, args).await,
        Command::Logs(args) => cmd::logs::run(g, &g.client()?, args).await,
        Command::Exec(args) => cmd::exec::exec(g, &g.client()?, args).await,
        Command::Attach(args) => cmd::exec::attach(g, &g.client()?, args).await,
        Command::PortForward(args) => cmd::port_forward::run(g, &g.client()?, args).await,
        Command::Cp(args) => cmd::cp::run(g, &g.client()?, args).await,
        Command::ApiResources(args) => cmd::api_resources::run(&g.client()?, args).await,
        Command::Completion(args) => cmd::completion::run(args),
    }
}
