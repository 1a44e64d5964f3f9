//! The channel protocols of `pods/exec` and `pods/attach` over WebSocket
//! (`v4.channel.k8s.io`, `v5.channel.k8s.io`), as the kubelet speaks them:
//! every binary message starts with its channel byte. Pure rules, no I/O.

use serde_json::{Value, json};

/// `v5.channel.k8s.io`: v4 plus the close signal (channel 255).
pub(crate) const V5: &str = "v5.channel.k8s.io";
/// `v4.channel.k8s.io`: the exit status as a `Status` on the error channel.
pub(crate) const V4: &str = "v4.channel.k8s.io";

/// Channel numbers.
pub(crate) const STDIN: u8 = 0;
pub(crate) const STDOUT: u8 = 1;
pub(crate) const STDERR: u8 = 2;
pub(crate) const ERROR: u8 = 3;
pub(crate) const RESIZE: u8 = 4;
/// v5: `[255, n]` closes channel `n` (the client's stdin half-close).
pub(crate) const CLOSE: u8 = 255;

/// The subprotocol to answer: the server's preference (v5, then v4) among
/// the ones the client offered in `Sec-WebSocket-Protocol`.
pub(crate) fn negotiate<'a>(offered: impl Iterator<Item = &'a str>) -> Option<&'static str> {
    let offered: Vec<&str> = offered.flat_map(|h| h.split(',')).map(str::trim).collect();
    [V5, V4].into_iter().find(|p| offered.contains(p))
}

/// One message from the client, classified.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Incoming<'a> {
    Stdin(&'a [u8]),
    /// A terminal size (columns, rows).
    Resize {
        width: u16,
        height: u16,
    },
    /// v5: the client closed channel `n`.
    Close(u8),
    /// An empty message, a channel the client may not write, or a resize
    /// that does not parse: ignored, as the kubelet does.
    Ignored,
}

/// Classifies one binary message (`v5` allows the close signal).
pub(crate) fn classify(msg: &[u8], v5: bool) -> Incoming<'_> {
    match msg.split_first() {
        Some((&STDIN, data)) => Incoming::Stdin(data),
        Some((&RESIZE, data)) => match serde_json::from_slice::<Value>(data) {
            Ok(v) => {
                let dim = |k: &str| {
                    v.get(k)
                        .and_then(Value::as_u64)
                        .and_then(|n| u16::try_from(n).ok())
                };
                match (dim("Width"), dim("Height")) {
                    (Some(width), Some(height)) => Incoming::Resize { width, height },
                    _ => Incoming::Ignored,
                }
            }
            Err(_) => Incoming::Ignored,
        },
        Some((&CLOSE, [n, ..])) if v5 => Incoming::Close(*n),
        _ => Incoming::Ignored,
    }
}

/// A message on `channel`.
pub(crate) fn frame(channel: u8, data: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(data.len() + 1);
    v.push(channel);
    v.extend_from_slice(data);
    v
}

/// The error channel's `Status` for a finished command, as the kubelet
/// writes it: `Success`, or `NonZeroExitCode` with the code as the
/// `ExitCode` cause (which kubectl turns into its own exit code).
pub(crate) fn exit_status(argv: &[String], code: i32) -> Value {
    if code == 0 {
        return json!({"metadata": {}, "status": "Success"});
    }
    json!({
        "metadata": {},
        "status": "Failure",
        "message": format!(
            "command terminated with non-zero exit code: error executing command {argv:?}, exit code {code}"
        ),
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": code.to_string()}]},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_prefers_v5_and_reads_lists() {
        assert_eq!(
            negotiate(["v4.channel.k8s.io, v5.channel.k8s.io"].into_iter()),
            Some(V5)
        );
        assert_eq!(negotiate(["v4.channel.k8s.io"].into_iter()), Some(V4));
        assert_eq!(
            negotiate(["channel.k8s.io", "base64.channel.k8s.io"].into_iter()),
            None
        );
    }

    #[test]
    fn classification() {
        assert_eq!(classify(b"\x00hi", true), Incoming::Stdin(b"hi"));
        assert_eq!(
            classify(b"\x04{\"Width\":80,\"Height\":24}", false),
            Incoming::Resize {
                width: 80,
                height: 24
            }
        );
        assert_eq!(classify(b"\x04{\"Width\":-1}", false), Incoming::Ignored);
        assert_eq!(classify(b"\xff\x00", true), Incoming::Close(0));
        assert_eq!(classify(b"\xff\x00", false), Incoming::Ignored);
        assert_eq!(classify(b"\x01out", true), Incoming::Ignored);
        assert_eq!(classify(b"", true), Incoming::Ignored);
    }

    #[test]
    fn exit_status_shapes() {
        assert_eq!(exit_status(&[], 0)["status"], "Success");
        let s = exit_status(&["sh".into()], 3);
        assert_eq!(s["reason"], "NonZeroExitCode");
        assert_eq!(s["details"]["causes"][0]["message"], "3");
    }
}
