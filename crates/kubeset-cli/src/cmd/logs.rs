//! `kubeset logs <pod> [-f]`: the `pods/log` subresource, streamed.

use std::io::Write as _;

use futures::StreamExt as _;
use kubeset::Client;

use super::namespace;
use crate::cli::{Global, LogsArgs};
use crate::error::CliError;

/// Streams the pod's log to stdout. `--request-timeout` bounds the whole
/// command, the stream included (as kubectl's, whose HTTP client timeout
/// covers the body): a log still streaming then is an error.
pub async fn run(global: &Global, client: &Client, args: &LogsArgs) -> Result<(), CliError> {
    let ns = namespace(global, client);
    if let Some(c) = &args.container {
        super::container::check(client, &ns, &args.pod, c).await?;
    }
    // A followed log may be quiet for hours: no read timeout, only
    // `--request-timeout` (below).
    let follow_client;
    let client = if args.follow {
        let mut config = global.config()?;
        config.read_timeout = None;
        follow_client = crate::cli::client_for(&config)?;
        &follow_client
    } else {
        client
    };
    let action = format!("reading the log of pod {:?}", args.pod);
    let mut req = client
        .rest()
        .get()
        .namespace(&ns)
        .resource("pods")
        .name(&args.pod)
        .sub_resource(["log"]);
    if let Some(c) = &args.container {
        req = req.param("container", c);
    }
    if args.follow {
        req = req.param("follow", "true");
    }
    let stream = req.stream().await.map_err(|e| {
        if e.is_not_found() && e.api_error().is_some_and(|a| !a.from_status) {
            // A 404 without a Status body: the path itself is not served.
            CliError::Unsupported {
                message: "this server does not serve pod logs (pods/log)".to_owned(),
            }
        } else {
            CliError::api(action.clone(), e)
        }
    })?;
    let mut stream = std::pin::pin!(stream);
    let mut out = std::io::stdout();
    let limit = global.request_timeout.filter(|t| !t.is_zero());
    let deadline = limit.and_then(|t| tokio::time::Instant::now().checked_add(t));
    loop {
        let next = match deadline {
            None => stream.next().await,
            Some(at) => match tokio::time::timeout_at(at, stream.next()).await {
                Ok(next) => next,
                Err(_) => Some(Err(kubeset::Error::StreamDeadline {
                    deadline: limit.unwrap_or_default(),
                })),
            },
        };
        let Some(chunk) = next else { break };
        let chunk = chunk.map_err(|e| CliError::api(action.clone(), e))?;
        if let Err(e) = out.write_all(&chunk).and_then(|()| out.flush()) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return Ok(());
            }
            return Err(CliError::io("writing to stdout", e));
        }
    }
    Ok(())
}
