//! A hostile WebSocket server for the stream tests: a raw loopback server
//! written here, frame by frame, that upgrades one connection and plays a
//! script of bytes.
// Each test file uses a part of it.
#![allow(dead_code)]

use std::time::Duration;

use kubeset_client::api::core::v1::Pod;
use kubeset_client::{Api, Client};
use kubeset_rest::ws::tungstenite::handshake::derive_accept_key;
use kubeset_rest::{RestClient, RestConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A hang guard: every case ends long before.
pub const GUARD: Duration = Duration::from_secs(20);

/// An unmasked server frame: FIN, `opcode`, `payload`.
pub fn frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
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

/// A binary message.
pub fn binary(payload: &[u8]) -> Vec<u8> {
    frame(0x2, payload)
}

/// A Close frame with `code` and `reason`.
pub fn close(code: u16, reason: &str) -> Vec<u8> {
    let mut payload = code.to_be_bytes().to_vec();
    payload.extend_from_slice(reason.as_bytes());
    frame(0x8, &payload)
}

/// A binary frame's header announcing `len` bytes, with no payload.
pub fn header_of(len: u64) -> Vec<u8> {
    let mut header = vec![0x82, 127];
    header.extend_from_slice(&len.to_be_bytes());
    header
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

/// Accepts one upgrade, answers 101 with `protocol`, writes `script` and
/// then closes the connection (`close`) or holds it.
pub async fn serve(
    protocol: &'static str,
    script: Vec<u8>,
    close: bool,
) -> (String, tokio::task::JoinHandle<()>) {
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
             Sec-WebSocket-Accept: {}\r\nSec-WebSocket-Protocol: {protocol}\r\n\r\n",
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

/// `Api<Pod>` in namespace `default` of the server at `url`.
pub fn pods(url: &str) -> Api<Pod> {
    let rest = RestClient::new(RestConfig::new(url)).unwrap();
    Api::namespaced(Client::new(rest, "default"), "default")
}

/// An error and its whole chain on one line.
pub fn chain(err: &kubeset_client::Error) -> String {
    let mut text = err.to_string();
    let mut cur = std::error::Error::source(err);
    while let Some(e) = cur {
        text = format!("{text}: {e}");
        cur = e.source();
    }
    text
}
