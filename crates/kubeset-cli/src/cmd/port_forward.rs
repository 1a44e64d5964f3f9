//! `kubeset port-forward POD [LOCAL:]REMOTE…`: listens on local ports and
//! forwards each accepted connection over a port-forward stream of its
//! own, until Ctrl-C (kubectl's output lines).

use std::net::{IpAddr, SocketAddr};

use kubeset::api::core::v1::Pod;
use kubeset::{Api, Client};
use tokio::net::{TcpListener, TcpStream};

use super::namespace;
use crate::cli::{Global, PortForwardArgs};
use crate::error::CliError;

/// `LOCAL:REMOTE`, `PORT` or `:REMOTE` → (local, remote); local 0 = any.
pub fn parse_mapping(s: &str) -> Result<(u16, u16), CliError> {
    let port = |p: &str| -> Result<u16, CliError> {
        p.parse::<u16>()
            .map_err(|_| CliError::usage(format!("invalid port {p:?} in {s:?}")))
    };
    let (local, remote) = match s.split_once(':') {
        Some(("", r)) => (0, port(r)?),
        Some((l, r)) => (port(l)?, port(r)?),
        None => (port(s)?, port(s)?),
    };
    if remote == 0 {
        return Err(CliError::usage(format!("remote port must be > 0 in {s:?}")));
    }
    Ok((local, remote))
}

/// Forwards until Ctrl-C.
pub async fn run(global: &Global, client: &Client, args: &PortForwardArgs) -> Result<(), CliError> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), &namespace(global, client));
    let action = format!("forwarding ports of pod {:?}", args.pod);
    pods.get(&args.pod)
        .await
        .map_err(|e| CliError::api(action.clone(), e))?;
    let mut listeners = Vec::new();
    for m in &args.ports {
        let (local, remote) = parse_mapping(m)?;
        let l = bind(args.address, local).await?;
        let addr = l
            .local_addr()
            .map_err(|e| CliError::io("reading the local address", e))?;
        crate::cmd::print(&format!("Forwarding from {addr} -> {remote}\n"))?;
        listeners.push(tokio::spawn(accept(
            l,
            pods.clone(),
            args.pod.clone(),
            remote,
        )));
    }
    let _ = tokio::signal::ctrl_c().await;
    for l in listeners {
        l.abort();
    }
    Ok(())
}

async fn bind(ip: IpAddr, port: u16) -> Result<TcpListener, CliError> {
    TcpListener::bind(SocketAddr::new(ip, port))
        .await
        .map_err(|e| CliError::io(format!("unable to listen on port {port}"), e))
}

async fn accept(listener: TcpListener, pods: Api<Pod>, pod: String, remote: u16) {
    loop {
        let Ok((conn, _)) = listener.accept().await else {
            continue;
        };
        let (pods, pod) = (pods.clone(), pod.clone());
        tokio::spawn(async move {
            crate::cmd::print(&format!("Handling connection for {remote}\n")).ok();
            if let Err(e) = forward(conn, &pods, &pod, remote).await {
                eprintln!("{}", e.one_line());
            }
        });
    }
}

async fn forward(
    mut conn: TcpStream,
    pods: &Api<Pod>,
    pod: &str,
    remote: u16,
) -> Result<(), CliError> {
    let mut pf = pods
        .portforward(pod, &[remote])
        .await
        .map_err(|e| CliError::api(format!("forwarding port {remote} of pod {pod:?}"), e))?;
    let mut stream = pf.take_stream(remote).ok_or_else(|| CliError::Remote {
        message: format!("no stream for port {remote}"),
    })?;
    let error = pf.take_error(remote);
    let copied = tokio::select! {
        r = tokio::io::copy_bidirectional(&mut conn, &mut stream) => r.is_ok(),
        Some(Some(msg)) = async { match error { Some(e) => Some(e.await), None => None } } => {
            return Err(CliError::Remote {
                message: format!("an error occurred forwarding port {remote} of pod {pod:?}: {msg}"),
            });
        }
    };
    if copied {
        // Both directions ended, the pod's side at the forward's end (the
        // stream gets EOF only when its task is done): a server that broke
        // the protocol, sent an oversized frame or cut the connection is
        // reported here, not dropped.
        pf.join()
            .await
            .map_err(|e| CliError::api(format!("forwarding port {remote} of pod {pod:?}"), e))?;
    }
    // A failed local connection: dropping the forwarder closes the stream.
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mappings() {
        assert_eq!(parse_mapping("8080:80").unwrap(), (8080, 80));
        assert_eq!(parse_mapping("80").unwrap(), (80, 80));
        assert_eq!(parse_mapping(":80").unwrap(), (0, 80));
        assert!(parse_mapping("x:80").is_err());
        assert!(parse_mapping("80:0").is_err());
    }
}
