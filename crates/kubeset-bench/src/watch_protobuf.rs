//! The watch stream in protobuf (`application/vnd.kubernetes.protobuf;stream=watch`),
//! as kube-apiserver frames it: per event a 4-byte big-endian length,
//! then a `metav1.WatchEvent` message (no `k8s\0` envelope) whose
//! `object.raw` is the object with its envelope. The input is the JSON
//! stream of [`crate::watch::make_stream`] converted by the Go peer's
//! encoder (`kubeset-bench-go watch-to-protobuf`), which uses the
//! serializers kube-apiserver's watch handler uses.
//!
//! kubeset's side is [`run_kubeset`], given the protobuf watch decoder to
//! time (a function from the stream to the number of events it decoded).

use bytes::Bytes;
use futures::TryStreamExt as _;
use kubeset::api::core::v1::Pod;
use kubeset_rest::WatchStream;

use crate::stats::time_runs;
use crate::{Error, Record};

/// Decode `stream` with kubeset's protobuf `WatchStream<Pod>` (the frames
/// and the generated codec `Api::watch` uses); the number of events.
pub fn decode_kubeset(stream: &Bytes) -> Result<usize, Error> {
    let decoder =
        kubeset::protobuf::watch_decoder::<Pod>().ok_or(Error::NoCodec { kind: "Pod" })?;
    let body = futures::stream::iter(crate::watch::chunks(stream).map(Ok));
    let events = WatchStream::<Pod>::from_protobuf_bytes(body, decoder);
    futures::executor::block_on(events.try_fold(0usize, |n, _| async move { Ok(n + 1) }))
        .map_err(|source| Error::Kubeset { source })
}

/// The number of length-delimited frames in `stream`; an error if the
/// last one is cut short.
pub fn count_frames(stream: &[u8]) -> Result<usize, Error> {
    let mut at = 0usize;
    let mut n = 0usize;
    while at < stream.len() {
        let header = stream.get(at..at + 4).ok_or(Error::ShortStream {
            peer: "frame count",
            got: n,
            want: n + 1,
        })?;
        let len = u32::from_be_bytes([header[0], header[1], header[2], header[3]]) as usize;
        at = at + 4 + len;
        if at > stream.len() {
            return Err(Error::ShortStream {
                peer: "frame count",
                got: n,
                want: n + 1,
            });
        }
        n += 1;
    }
    Ok(n)
}

/// Time `runs` decodes of the protobuf watch `stream` by `decode`, which
/// reads the whole stream (fed in [`crate::watch::CHUNK`]-sized pieces,
/// see [`crate::watch::chunks`]) into typed `Pod` events and returns how
/// many it decoded; every run must decode every frame. Record:
/// `decode-watch-protobuf` for `kubeset`.
pub fn run_kubeset(
    stream: &Bytes,
    runs: usize,
    mut decode: impl FnMut(&Bytes) -> Result<usize, Error>,
) -> Result<Vec<Record>, Error> {
    let events = count_frames(stream)?;
    let s = time_runs(runs, || {
        let got = decode(stream)?;
        if got == events {
            Ok(())
        } else {
            Err(Error::ShortStream {
                peer: "kubeset",
                got,
                want: events,
            })
        }
    })?;
    Ok(vec![
        Record::timed("decode-watch-protobuf", "kubeset", events as u64, s)
            .with_bytes(stream.len() as u64),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_counted_and_a_short_one_is_an_error() {
        let mut s = Vec::new();
        for body in [&b"ab"[..], b"", b"xyz"] {
            s.extend_from_slice(&(body.len() as u32).to_be_bytes());
            s.extend_from_slice(body);
        }
        assert_eq!(count_frames(&s).unwrap(), 3);
        assert!(count_frames(&s[..s.len() - 1]).is_err());
        assert!(count_frames(&s[..2]).is_err());
        let stream = Bytes::from(s);
        let records = run_kubeset(&stream, 2, |b| count_frames(b)).unwrap();
        assert_eq!(records[0].items, 3);
        assert_eq!(records[0].samples_s.len(), 2);
        assert!(run_kubeset(&stream, 1, |_| Ok(2)).is_err());
    }
}
