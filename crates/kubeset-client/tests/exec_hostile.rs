//! exec (and so attach: one reader) against a hostile WebSocket server (a
//! raw loopback server written here, frame by frame): every malformed
//! stream ends the session with an error that names what was wrong, as
//! port-forward's do (`portforward_hostile.rs`); never a silent EOF, a
//! hang or an allocation the server chose.
#![cfg(feature = "ws")]

mod hostile_ws;

use hostile_ws::{GUARD, binary, chain, close, frame, header_of, pods, serve};
use kubeset_client::ws::{AttachParams, exit_code};
use tokio::io::AsyncReadExt;

/// What an exec through a server playing `script` (then cutting the
/// connection) ended with: its stdout, its exit code, and `join`'s error
/// with its whole chain on one line.
async fn exec(script: Vec<u8>) -> (String, Option<i32>, Result<(), String>) {
    let (url, task) = serve("v5.channel.k8s.io", script, true).await;
    let pods = pods(&url);
    let result = tokio::time::timeout(GUARD, async {
        let mut p = pods
            .exec("p", ["true"], &AttachParams::default())
            .await
            .unwrap();
        let mut out = String::new();
        let _ = p.stdout().unwrap().read_to_string(&mut out).await;
        let status = p.take_status().unwrap().await;
        (out, status, p.join().await)
    })
    .await
    .expect("the session must end");
    task.abort();
    let (out, status, end) = result;
    (
        out,
        status.as_ref().and_then(exit_code),
        end.map_err(|e| chain(&e)),
    )
}

/// The error of a session through `script`.
async fn exec_error(script: Vec<u8>) -> String {
    let (_, _, end) = exec(script).await;
    end.expect_err("a hostile server must fail the session")
}

/// The kubelet's first message: an empty one on stdout.
fn opened() -> Vec<u8> {
    binary(&[1])
}

const SUCCESS: &[u8] = br#"{"metadata":{},"status":"Success"}"#;

fn status(json: &[u8]) -> Vec<u8> {
    binary(&[&[3], json].concat())
}

#[tokio::test]
async fn a_well_formed_session_still_ends_with_its_status() {
    let script = [
        opened(),
        binary(b"\x01hi"),
        status(SUCCESS),
        close(1000, ""),
    ]
    .concat();
    let (out, code, end) = exec(script).await;
    assert_eq!((out.as_str(), code, end), ("hi", Some(0), Ok(())));
}

#[tokio::test]
async fn an_unknown_channel_is_named() {
    for ch in [0u8, 4, 7, 255] {
        let e = exec_error([opened(), binary(&[ch, 1, 2, 3])].concat()).await;
        assert!(e.contains(&format!("channel {ch};")), "{e}");
        assert!(e.contains("stdout (1), stderr (2)"), "{e}");
    }
}

#[tokio::test]
async fn text_and_empty_messages_are_named() {
    let e = exec_error([opened(), frame(0x1, b"hello")].concat()).await;
    assert!(
        e.contains("a text message (5 bytes)") && e.contains("v5.channel.k8s.io"),
        "{e}"
    );
    let e = exec_error([opened(), binary(&[])].concat()).await;
    assert!(e.contains("empty message"), "{e}");
}

#[tokio::test]
async fn oversized_frames_are_refused_before_they_are_read() {
    // 8 MiB, over the 4 MiB limit, and 2^63: refused from the header
    // alone (no payload follows), nothing allocated.
    for len in [8u64 << 20, 1 << 63] {
        let e = exec_error([opened(), header_of(len)].concat()).await;
        assert!(e.contains("the stream broke"), "{e}");
        assert!(e.to_lowercase().contains("too long"), "{e}");
    }
}

#[tokio::test]
async fn an_abnormal_close_names_its_code_and_reason() {
    let e = exec_error([opened(), close(1011, "kubelet went\u{202e} away")].concat()).await;
    assert!(e.contains("code 1011") && e.contains("kubelet went"), "{e}");
    // The reason is quoted escaped: no bidi override reaches a terminal.
    assert!(!e.contains('\u{202e}') && e.contains("\\u{202e}"), "{e}");
}

#[tokio::test]
async fn a_connection_cut_mid_stream_is_reported() {
    let (out, code, end) = exec([opened(), binary(b"\x01partial")].concat()).await;
    assert_eq!((out.as_str(), code), ("partial", None));
    let e = end.unwrap_err();
    assert!(e.contains("closed the stream before it ended"), "{e}");
}

#[tokio::test]
async fn a_bad_status_is_quoted() {
    let e = exec_error([opened(), status(b"exit 3\n\x1b[31m"), close(1000, "")].concat()).await;
    assert!(
        e.contains("error channel (3) sent 12 bytes that are not a Status"),
        "{e}"
    );
    // Quoted escaped, so that no control character reaches a terminal.
    assert!(e.contains(r#""exit 3\n\u{1b}[31m""#), "{e}");
    // A long one is cut to a bounded excerpt.
    let long = vec![b'x'; 60_000];
    let e = exec_error([opened(), status(&long), close(1000, "")].concat()).await;
    assert!(e.contains("60000 bytes") && e.len() < 600, "{e}");
}

#[tokio::test]
async fn an_oversized_status_names_its_size() {
    let chunk = vec![b' '; 40 << 10];
    let e = exec_error([opened(), status(&chunk), status(&chunk)].concat()).await;
    assert!(
        e.contains("error channel (3) sent 81920 bytes, over the 65536"),
        "{e}"
    );
}
