//! `kubeset serve`: the embedded API server until Ctrl-C or SIGTERM.

use kubeset_testserver::{TestServer, TestServerBuilder};

use super::print;
use crate::cli::ServeArgs;
use crate::error::CliError;

/// The end of `kubeset serve --help`: how to use it, and what it does not do.
pub const AFTER_HELP: &str = "\
Use: kubeset serve --kubeconfig-out kc.yaml, then kubectl --kubeconfig kc.yaml get ns
(or KUBECONFIG=kc.yaml for a program). The options above under \"Options\" are
client flags and do not affect the server.

Limits (see crates/kubeset-testserver/README.md): no controllers unless --controllers
(and then one-step rollouts, no scheduling; without them foreground/orphan deletes stay
pending, as on kube-apiserver alone), no admission or schema validation beyond object names,
sizes and immutable fields, cluster IPs and node ports on create only, protobuf for built-in kinds
(watches too; custom resources and Table watches in JSON), no RBAC (one optional token),
printer columns for the common kinds only; /openapi/v3 from the compiled-in schemas (kubectl
explain names nested types <Object>) unless --openapi-specs (or $KUBESET_SPECS) gives upstream's.";

/// Starts the server, prints where it listens, waits for a signal.
pub async fn run(args: &ServeArgs) -> Result<(), CliError> {
    if args.replicas == 0 {
        return Err(CliError::usage("--replicas must be at least 1"));
    }
    // Over TLS kubectl wants credentials (with none it asks for a user
    // name): a generated token, handed out only through the 0600 kubeconfig.
    let token = match (&args.require_token, args.tls) {
        (Some(t), _) => Some(t.clone()),
        (None, true) if args.kubeconfig_out.is_none() => {
            return Err(CliError::usage(
                "--tls generates a token and a CA that clients need: pass --kubeconfig-out FILE (or --require-token)",
            ));
        }
        (None, true) => Some(kubeset_testserver::generate_token()),
        (None, false) => None,
    };
    let specs = args.openapi_specs.clone().or_else(|| {
        let dir = std::path::PathBuf::from(std::env::var_os("KUBESET_SPECS")?)
            .join("kubernetes")
            // The documents of the models this binary was built with.
            .join(kubeset::KUBERNETES_VERSION);
        dir.is_dir().then_some(dir)
    });
    let mut builder = bounded(TestServer::builder(), args);
    if let Some(dir) = specs {
        builder = builder.openapi_specs(dir);
    }
    let server = builder
        .controllers(args.controllers)
        .container_runtime(args.container_runtime)
        .replicas(args.replicas)
        .base_port(args.port)
        .tls(args.tls)
        .token(token)
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

/// The connection and watch bounds given on the command line (the
/// library's defaults, kube-apiserver's numbers, otherwise).
fn bounded(mut builder: TestServerBuilder, args: &ServeArgs) -> TestServerBuilder {
    if let Some(d) = args.header_timeout {
        builder = builder.header_timeout(d);
    }
    if let Some(d) = args.idle_timeout {
        builder = builder.idle_timeout(d);
    }
    if let Some(d) = args.body_timeout {
        builder = builder.body_timeout(d);
    }
    if let Some(d) = args.handshake_timeout {
        builder = builder.handshake_timeout(d);
    }
    if let Some(n) = args.max_connections {
        builder = builder.max_connections(n);
    }
    if let Some(d) = args.slow_watcher_timeout {
        builder = builder.slow_watcher_timeout(d);
    }
    builder
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
