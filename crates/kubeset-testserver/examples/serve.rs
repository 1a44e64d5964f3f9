//! Runs an embedded API server until Ctrl-C, printing where it listens.
//!
//! `cargo run -p kubeset-testserver --example serve -- [replicas] [tls] [kubeconfig-path]`

use kubeset_testserver::TestServer;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let replicas: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let tls = args.next().is_some_and(|a| a == "tls");
    let kubeconfig = args
        .next()
        .unwrap_or_else(|| "/tmp/kubeset-testserver.kubeconfig".into());
    let server = TestServer::builder()
        .replicas(replicas)
        .tls(tls)
        .admin(true, 0)
        .start()
        .await?;
    server.write_kubeconfig(&kubeconfig)?;
    for (i, url) in server.urls().iter().enumerate() {
        println!("replica {i}: {url}");
    }
    println!("admin: {}", server.admin_url().unwrap_or_default());
    println!("kubeconfig: {kubeconfig}");
    tokio::signal::ctrl_c().await?;
    server.shutdown().await;
    Ok(())
}
