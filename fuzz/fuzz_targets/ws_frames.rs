//! The WebSocket channel readers of exec/attach (`v4`/`v5.channel.k8s.io`)
//! and port-forward (`v4`, ports 80 and 8080), fed a server's bytes after
//! the upgrade through `kubeset_client::ws::fuzz_hooks`. Never a panic or a
//! hang; a frame length of up to 2^63 is refused from its header, never
//! allocated; any chunking of the bytes gives the same outcome; the user
//! gets no more bytes than the server sent; every error names what was
//! wrong, in a bounded message.
#![no_main]

use kubeset_client::ws::fuzz_hooks::{Outcome, exec, portforward};
use libfuzzer_sys::fuzz_target;

/// The one error that names no detail: the input ended without a Close.
const ENDED: &str = "the server closed the stream before it ended";
/// Longest error: a fixed text, a Close reason (at most 123 bytes,
/// escaped) or a status excerpt (128 bytes, escaped).
const MAX_ERROR: usize = 2048;

fn run(mode: u8, chunks: Vec<Vec<u8>>) -> Outcome {
    match mode % 3 {
        0 => exec(chunks, false),
        1 => exec(chunks, true),
        _ => portforward(chunks, &[80, 8080]),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, body)) = data.split_first() else {
        return;
    };
    let whole = run(mode, vec![body.to_vec()]);
    let step = usize::from(mode / 3 % 32).max(1);
    let chunked = run(mode, body.chunks(step).map(<[u8]>::to_vec).collect());
    assert_eq!(whole, chunked, "the chunking changed the outcome");
    let delivered: usize = whole.delivered.iter().map(Vec::len).sum();
    assert!(delivered <= body.len(), "{delivered} bytes from {}", body.len());
    if let Err(e) = &whole.end {
        assert!(e.len() <= MAX_ERROR, "{} bytes of error", e.len());
        // Anything but the bare end of input says what: a reason after
        // the kind of failure.
        let named = e == ENDED
            || e.split_once(": ")
                .is_some_and(|(_, what)| !what.trim().is_empty());
        assert!(named, "an error that names nothing: {e:?}");
    }
});
