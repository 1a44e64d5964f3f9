//! Typed watch-stream decoding: kubeset's [`WatchStream`] vs kube-rs's
//! pipeline (`LinesCodec` → a `String` per line →
//! `serde_json::from_str::<WatchEvent<Pod>>`, as `kube-client` does).

use bytes::Bytes;
use futures::{StreamExt as _, TryStreamExt as _};
use kubeset_api::api::core::v1::Pod;
use kubeset_rest::WatchStream;
use tokio_util::codec::{FramedRead, LinesCodec};
use tokio_util::io::StreamReader;

use crate::stats::time_runs;
use crate::{Error, Record};

/// Size of the chunks a stream is fed in (what one socket read returns).
pub const CHUNK: usize = 16 * 1024;

/// A watch stream of `events` lines built from the pods of a PodList:
/// event `i` carries pod `i % pods` (with `apiVersion` and `kind`, as
/// watch events have them), the first pass `ADDED`, then `MODIFIED`.
pub fn make_stream(podlist: &[u8], events: usize) -> Result<Vec<u8>, Error> {
    let mut list: serde_json::Value =
        serde_json::from_slice(podlist).map_err(|source| Error::Json {
            peer: "stream generator",
            source,
        })?;
    let items = match list.get_mut("items").and_then(|v| v.as_array_mut()) {
        Some(items) if !items.is_empty() => std::mem::take(items),
        _ => return Err(Error::NotAList),
    };
    let mut objects = Vec::with_capacity(items.len());
    for mut item in items {
        if let Some(obj) = item.as_object_mut() {
            obj.insert("apiVersion".into(), "v1".into());
            obj.insert("kind".into(), "Pod".into());
        }
        let text = serde_json::to_vec(&item).map_err(|source| Error::Json {
            peer: "stream generator",
            source,
        })?;
        objects.push(text);
    }
    let mut out = Vec::new();
    for i in 0..events {
        let obj = &objects[i % objects.len()];
        let kind = if i < objects.len() {
            "ADDED"
        } else {
            "MODIFIED"
        };
        out.extend_from_slice(br#"{"type":""#);
        out.extend_from_slice(kind.as_bytes());
        out.extend_from_slice(br#"","object":"#);
        out.extend_from_slice(obj);
        out.extend_from_slice(b"}\n");
    }
    Ok(out)
}

/// `stream` in [`CHUNK`]-sized pieces, as a body arrives from the socket.
pub fn chunks(stream: &Bytes) -> impl Iterator<Item = Bytes> + use<> {
    let stream = stream.clone();
    (0..stream.len().div_ceil(CHUNK))
        .map(move |i| stream.slice(i * CHUNK..((i + 1) * CHUNK).min(stream.len())))
}

/// Decode `stream` with kubeset's `WatchStream<Pod>`; the number of events.
pub fn decode_kubeset(stream: &Bytes) -> Result<usize, Error> {
    let body = futures::stream::iter(chunks(stream).map(Ok));
    let events = WatchStream::<Pod>::from_bytes(body);
    futures::executor::block_on(events.try_fold(0usize, |n, _| async move { Ok(n + 1) }))
        .map_err(|source| Error::Kubeset { source })
}

/// Decode `stream` as kube-client does; the number of events.
pub fn decode_kube(stream: &Bytes) -> Result<usize, Error> {
    let body = futures::stream::iter(chunks(stream).map(Ok::<_, std::io::Error>));
    let mut lines = FramedRead::new(StreamReader::new(body), LinesCodec::new());
    futures::executor::block_on(async {
        let mut n = 0usize;
        while let Some(line) = lines.next().await {
            let line = line.map_err(|source| Error::KubeLines { source })?;
            serde_json::from_str::<kube::core::WatchEvent<k8s_openapi::api::core::v1::Pod>>(&line)
                .map_err(|source| Error::Json {
                    peer: "kube-rs",
                    source,
                })?;
            n += 1;
        }
        Ok(n)
    })
}

/// Time `runs` decodes of `stream` (holding `events` lines) by both Rust
/// peers. Records: `decode-watch` for `kubeset` and `kube-rs`.
pub fn run(stream: &Bytes, events: usize, runs: usize) -> Result<Vec<Record>, Error> {
    let check = |peer: &'static str, got: usize| {
        if got == events {
            Ok(())
        } else {
            Err(Error::ShortStream {
                peer,
                got,
                want: events,
            })
        }
    };
    let bytes = stream.len() as u64;
    let s = time_runs(runs, || check("kubeset", decode_kubeset(stream)?))?;
    let mut out =
        vec![Record::timed("decode-watch", "kubeset", events as u64, s).with_bytes(bytes)];
    let s = time_runs(runs, || check("kube-rs", decode_kube(stream)?))?;
    out.push(Record::timed("decode-watch", "kube-rs", events as u64, s).with_bytes(bytes));
    Ok(out)
}
