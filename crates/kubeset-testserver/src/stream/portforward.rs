//! `pods/portforward` over WebSocket with the channel protocol
//! (`v4.channel.k8s.io`, also offered as `portforward.k8s.io`): for the
//! i-th requested port, channel `2i` carries data and `2i + 1` errors;
//! the server first writes the port number (2 bytes, little-endian) on
//! both, as the kubelet does. Behind each declared container port runs a
//! built-in server: an HTTP hello when the port's name starts with
//! `http`, else a TCP echo. An undeclared port gets the kubelet's
//! connection-refused error on its error channel.

use bytes::{Bytes, BytesMut};
use futures::{SinkExt, StreamExt};
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

use super::session::Ws;
use crate::status::ApiError;

/// The channel protocol for port-forward.
pub(crate) const CHANNEL_V4: &str = "v4.channel.k8s.io";
/// The same protocol under the name client-go's tunnel offers first.
pub(crate) const PORTFORWARD: &str = "portforward.k8s.io";
/// client-go's tunnel: SPDY/3.1 frames inside WebSocket binary messages.
pub(crate) const SPDY_TUNNEL: &str = "SPDY/3.1+portforward.k8s.io";
/// Ports of one request.
const MAX_PORTS: usize = 64;
/// Longest HTTP request head the hello server reads.
const MAX_HEAD: usize = 64 << 10;

/// The subprotocol to answer.
pub(crate) fn negotiate<'a>(offered: impl Iterator<Item = &'a str>) -> Option<&'static str> {
    let offered: Vec<&str> = offered.flat_map(|h| h.split(',')).map(str::trim).collect();
    [SPDY_TUNNEL, CHANNEL_V4, PORTFORWARD]
        .into_iter()
        .find(|p| offered.contains(p))
}

/// A declared container port and what serves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Service {
    Echo,
    HttpHello,
}

/// Every declared container port of the pod.
pub(crate) fn ports_of(pod: &Value) -> Vec<(u16, Service)> {
    let mut out = Vec::new();
    for c in pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for p in c
            .get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(port) = p
                .get("containerPort")
                .and_then(Value::as_u64)
                .and_then(|n| u16::try_from(n).ok())
            else {
                continue;
            };
            let http = p
                .get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| n.starts_with("http"));
            out.push((
                port,
                if http {
                    Service::HttpHello
                } else {
                    Service::Echo
                },
            ));
        }
    }
    out
}

/// The `ports` query parameter(s): `ports=80,443` or repeated.
pub(crate) fn requested_ports(q: &[(String, String)]) -> Result<Vec<u16>, ApiError> {
    let mut ports = Vec::new();
    for (_, v) in q.iter().filter(|(k, _)| k == "ports") {
        for p in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match p.parse::<u16>() {
                Ok(n) if n > 0 => ports.push(n),
                _ => {
                    return Err(ApiError::bad_request(format!(
                        "unable to parse \"{p}\" as a port: must be in the range 1 - 65535"
                    )));
                }
            }
        }
    }
    if ports.len() > MAX_PORTS {
        return Err(ApiError::bad_request("too many ports"));
    }
    Ok(ports)
}

/// One connection to a built-in server: bytes in, bytes out.
#[derive(Debug)]
pub(crate) enum Conn {
    Echo,
    Http {
        head: BytesMut,
        greeting: String,
    },
    /// A head too large: nothing more is answered.
    Closed,
}

impl Conn {
    pub(crate) fn new(service: Service, greeting: String) -> Self {
        match service {
            Service::Echo => Self::Echo,
            Service::HttpHello => Self::Http {
                head: BytesMut::new(),
                greeting,
            },
        }
    }

    /// What the server answers to `data` (an HTTP answer per complete
    /// request head).
    pub(crate) fn feed(&mut self, data: &[u8]) -> Vec<Bytes> {
        match self {
            Self::Echo => vec![Bytes::copy_from_slice(data)],
            Self::Closed => Vec::new(),
            Self::Http { head, greeting } => {
                head.extend_from_slice(data);
                let mut out = Vec::new();
                while let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
                    let _ = head.split_to(end + 4);
                    let body = format!("{greeting}\n");
                    out.push(Bytes::from(format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n\
                         Content-Length: {}\r\n\r\n{body}",
                        body.len()
                    )));
                }
                if head.len() > MAX_HEAD {
                    *self = Self::Closed;
                }
                out
            }
        }
    }
}

/// The kubelet's message for a port nothing listens on.
pub(crate) fn refused(port: u16) -> String {
    format!(
        "error forwarding port {port} to pod: failed to connect to localhost:{port} \
         inside the pod's network namespace: connection refused"
    )
}

/// Runs a port-forward session until the client closes.
pub(crate) async fn run(
    ws: Ws,
    protocol: &'static str,
    wanted: &[u16],
    declared: &[(u16, Service)],
) {
    if protocol == SPDY_TUNNEL {
        return super::spdy_session::run(ws, declared).await;
    }
    let (mut sink, mut source) = ws.split();
    let mut conns: Vec<Option<Conn>> = Vec::with_capacity(wanted.len());
    for (i, &port) in wanted.iter().enumerate() {
        let Ok(data_ch) = u8::try_from(2 * i) else {
            return;
        };
        let le = port.to_le_bytes();
        for ch in [data_ch, data_ch + 1] {
            if sink
                .send(Message::Binary(Bytes::from(vec![ch, le[0], le[1]])))
                .await
                .is_err()
            {
                return;
            }
        }
        conns.push(
            declared
                .iter()
                .find(|(p, _)| *p == port)
                .map(|(p, s)| Conn::new(*s, format!("hello from port {p}"))),
        );
    }
    while let Some(Ok(msg)) = source.next().await {
        let data = match msg {
            Message::Binary(b) => b,
            Message::Close(_) => break,
            _ => continue,
        };
        let Some((&ch, payload)) = data.split_first() else {
            continue;
        };
        let i = usize::from(ch / 2);
        if ch % 2 != 0 || i >= conns.len() {
            continue;
        }
        let replies = match &mut conns[i] {
            Some(conn) => conn
                .feed(payload)
                .into_iter()
                .map(|b| [&[ch][..], &b].concat())
                .collect::<Vec<_>>(),
            None => {
                let msg = refused(wanted[i]);
                vec![[&[ch + 1][..], msg.as_bytes()].concat()]
            }
        };
        for r in replies {
            if sink.send(Message::Binary(Bytes::from(r))).await.is_err() {
                return;
            }
        }
    }
    let _ = sink.close().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_hello_answers_each_request_head() {
        let mut c = Conn::new(Service::HttpHello, "hello".into());
        assert!(c.feed(b"GET / HTTP/1.1\r\nHost: x\r\n").is_empty());
        let out = c.feed(b"\r\nGET /again HTTP/1.1\r\n\r\n");
        assert_eq!(out.len(), 2);
        assert!(out[0].starts_with(b"HTTP/1.1 200 OK\r\n"));
        assert!(out[0].ends_with(b"\r\n\r\nhello\n"));
        let mut e = Conn::new(Service::Echo, String::new());
        assert_eq!(e.feed(b"abc"), vec![Bytes::from_static(b"abc")]);
    }

    #[test]
    fn ports_query() {
        let q = vec![
            ("ports".to_owned(), "80, 8080".to_owned()),
            ("ports".into(), "9".into()),
        ];
        assert_eq!(requested_ports(&q).unwrap(), vec![80, 8080, 9]);
        assert!(requested_ports(&[("ports".into(), "0".into())]).is_err());
        assert!(requested_ports(&[("ports".into(), "x".into())]).is_err());
    }
}
