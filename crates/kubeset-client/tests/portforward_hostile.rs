//! Port-forward against a hostile WebSocket server (a raw loopback server
//! written here, frame by frame): every malformed answer ends the forward
//! with an error that names what was wrong, never a silent EOF.
#![cfg(feature = "ws")]

mod hostile_ws;

use hostile_ws::{GUARD, binary, chain, close, frame, header_of, pods, serve};
use tokio::io::AsyncReadExt;

/// Forwards port 80 of pod `p` through a server playing `script`; the
/// error the forward ends with, its whole chain on one line.
async fn forward_error(script: Vec<u8>, close: bool) -> String {
    let (url, task) = serve("v4.channel.k8s.io", script, close).await;
    let pods = pods(&url);
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
    chain(&result.expect_err("a hostile server must fail the forward"))
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
    let e = forward_error([data_open(), header_of(8 << 20)].concat(), false).await;
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
    let e = forward_error(
        [data_open(), close(1011, "kubelet went away")].concat(),
        false,
    )
    .await;
    assert!(e.contains("1011") && e.contains("kubelet went away"), "{e}");
}
