//! `kubeset serve`: the embedded API server until Ctrl-C or SIGTERM.

use kubeset_testserver::TestServer;

use super::print;
use crate::cli::ServeArgs;
use crate::error::CliError;

/// Starts the server, prints where it listens, waits for a signal.
pub async fn run(args: &ServeArgs) -> Result<(), CliError> {
    if args.replicas == 0 {
        return Err(CliError::usage("--replicas must be at least 1"));
    }
    let server = TestServer::builder()
        .replicas(args.replicas)
        .base_port(args.port)
        .tls(args.tls)
        .token(args.require_token.clone())
        .admin(args.admin, 0)
        .start()
        .await
        .map_err(|source| CliError::Server { source })?;
    let mut out = String::new();
    for r in server.replicas() {
        out.push_str(&format!("replica {}: {}\n", r.index(), r.url()));
    }
    if let Some(admin) = server.admin_url() {
        out.push_str(&format!("admin: {admin}\n"));
    }
    if let Some(path) = &args.kubeconfig_out {
        server
            .write_kubeconfig(path)
            .map_err(|source| CliError::Server { source })?;
        out.push_str(&format!("kubeconfig: {}\n", path.display()));
    }
    out.push_str("ready: serving until Ctrl-C or SIGTERM\n");
    print(&out)?;
    wait_for_signal().await?;
    eprintln!("kubeset serve: stopping");
    server.shutdown().await;
    Ok(())
}

#[cfg(unix)]
async fn wait_for_signal() -> Result<(), CliError> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term =
        signal(SignalKind::terminate()).map_err(|e| CliError::io("listening for SIGTERM", e))?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r.map_err(|e| CliError::io("listening for Ctrl-C", e)),
        _ = term.recv() => Ok(()),
    }
}

#[cfg(not(unix))]
async fn wait_for_signal() -> Result<(), CliError> {
    tokio::signal::ctrl_c()
        .await
        .map_err(|e| CliError::io("listening for Ctrl-C", e))
}
