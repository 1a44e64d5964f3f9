//! Port-forward against a hostile WebSocket server (a raw loopback server
//! written here, frame by frame): every malformed answer ends the forward
//! with an error that names what was wrong, never a silent EOF.
#![cfg(feature = "ws")]

use std::time::Duration;

use kubeset_client::api::core::v1::Pod;
use kubeset_client::{Api, Client};
use kubeset_rest::ws::tungstenite::handshake::derive_accept_key;
use kubeset_rest::{RestClient, RestConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A hang guard: every case ends long before.
const GUARD: Duration = Duration::from_secs(20);

/// An unmasked server frame: FIN, `opcode`, `payload`.
fn frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![0x80 | opcode];
    match payload.len() {
        n if n < 126 => out.push(n as u8),
        n if n <= 0xffff => {
            out.push(126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(payload);
    out
}

fn binary(payload: &[u8]) -> Vec<u8> {
    frame(0x2, payload)
}

/// Reads an HTTP request head; `None` at EOF.
async fn head(sock: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        if sock.read(&mut byte).await.ok()? == 0 {
            return None;
        }
        buf.push(byte[0]);
    }
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// Accepts one upgrade, answers 101 with `v4.channel.k8s.io`, writes
/// `script` and then closes the connection (`close`) or holds it.
async fn serve(script: Vec<u8>, close: bool) -> (String, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let req = head(&mut sock).await.unwrap();
        let key = req
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("sec-websocket-key")
                    .then(|| v.trim().to_owned())
            })
            .unwrap();
        let answer = format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Accept: {}\r\nSec-WebSocket-Protocol: v4.channel.k8s.io\r\n\r\n",
            derive_accept_key(key.as_bytes())
        );
        sock.write_all(answer.as_bytes()).await.unwrap();
        let _ = sock.write_all(&script).await;
        if close {
            let _ = sock.shutdown().await;
            // Drain what the client still sends, then drop.
            let mut sink = [0u8; 1024];
            while matches!(sock.read(&mut sink).await, Ok(n) if n > 0) {}
        } else {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
    });
    (url, task)
}

/// Forwards port 80 of pod `p` through a server playing `script`; the
/// error the forward ends with, its whole chain on one line.
async fn forward_error(script: Vec<u8>, close: bool) -> String {
    let (url, task) = serve(script, close).await;
    let rest = RestClient::new(RestConfig::new(&url)).unwrap();
    let pods: Api<Pod> = Api::namespaced(Client::new(rest, "default"), "default");
    let result = tokio::time::timeout(GUARD, async {
        let mut pf = pods.portforward("p", &[80]).await.unwrap();
        let mut stream = pf.take_stream(80).unwrap();
        // The user's side sees the end of the forward as EOF…
        let mut got = Vec::new();
        let _ = stream.read_to_end(&mut got).await;
        // …and the forward says why.
        pf.join().await
    })
    .await
    .expect("the forward must end");
    task.abort();
    let err = result.expect_err("a hostile server must fail the forward");
    let mut text = err.to_string();
    let mut cur = std::error::Error::source(&err);
    while let Some(e) = cur {
        text = format!("{text}: {e}");
        cur = e.source();
    }
    text
}

/// Channel 0 opened for port 80: `[0, 80, 0]`.
fn data_open() -> Vec<u8> {
    binary(&[0, 80, 0])
}

#[tokio::test]
async fn an_unknown_channel_is_named() {
    let e = forward_error([data_open(), binary(&[7, 1, 2, 3])].concat(), false).await;
    assert!(e.contains("channel 7") && e.contains("1 port(s)"), "{e}");
}

#[tokio::test]
async fn a_malformed_error_channel_is_named() {
    // The error channel of port 80 opened with one byte, not two.
    let e = forward_error([data_open(), binary(&[1, 80])].concat(), false).await;
    assert!(
        e.contains("error channel of port 80") && e.contains("1 byte(s)"),
        "{e}"
    );
}

#[tokio::test]
async fn a_channel_opened_for_another_port_is_named() {
    let e = forward_error(binary(&[0, 0x90, 0x1f]), false).await;
    assert!(
        e.contains("data channel of port 80") && e.contains("for port 8080"),
        "{e}"
    );
}

#[tokio::test]
async fn an_oversized_frame_is_refused_with_its_size() {
    // A frame header announcing 8 MiB, over the 4 MiB limit; no payload.
    let mut header = vec![0x82, 127];
    header.extend_from_slice(&(8u64 << 20).to_be_bytes());
    let e = forward_error([data_open(), header].concat(), false).await;
    assert!(e.contains("the stream broke"), "{e}");
    assert!(e.to_lowercase().contains("too long"), "{e}");
}

#[tokio::test]
async fn a_connection_cut_mid_stream_is_reported() {
    let e = forward_error([data_open(), binary(&[0, b'h', b'i'])].concat(), true).await;
    assert!(e.contains("closed the stream before it ended"), "{e}");
}

#[tokio::test]
async fn text_and_empty_messages_are_named() {
    let e = forward_error([data_open(), frame(0x1, b"hello")].concat(), false).await;
    assert!(e.contains("text message"), "{e}");
    let e = forward_error([data_open(), binary(&[])].concat(), false).await;
    assert!(e.contains("empty message"), "{e}");
}

#[tokio::test]
async fn an_abnormal_close_names_its_code_and_reason() {
    let mut close = 1011u16.to_be_bytes().to_vec();
    close.extend_from_slice(b"kubelet went away");
    let e = forward_error([data_open(), frame(0x8, &close)].concat(), false).await;
    assert!(e.contains("1011") && e.contains("kubelet went away"), "{e}");
}
