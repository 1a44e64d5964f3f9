use std::sync::Arc;

use bytes::Bytes;
use futures::{StreamExt as _, stream};

use super::*;
use crate::watch::tests::{Obj, assert_all_event_types, obj};

/// Objects are `k8s\0` + `name@rv`; a Status is `k8s\0` + its JSON.
struct Test;

impl ObjectDecoder<Obj> for Test {
    fn object(&self, bytes: &[u8]) -> Result<Obj, BoxError> {
        let text = std::str::from_utf8(bytes.strip_prefix(b"k8s\0").ok_or("no magic")?)?;
        let name = text.split('@').next().unwrap_or_default();
        Ok(obj(name))
    }

    fn status(&self, bytes: &[u8]) -> Result<serde_json::Value, BoxError> {
        Ok(serde_json::from_slice(
            bytes.strip_prefix(b"k8s\0").ok_or("no magic")?,
        )?)
    }

    fn resource_version(&self, bytes: &[u8]) -> Option<String> {
        let text = std::str::from_utf8(bytes).ok()?;
        text.split_once('@').map(|(_, rv)| rv.to_owned())
    }
}

fn len_field(out: &mut Vec<u8>, number: u8, bytes: &[u8]) {
    out.push(number << 3 | 2);
    let mut n = bytes.len();
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
    out.extend_from_slice(bytes);
}

/// A frame as kube-apiserver writes it: length, then a bare `WatchEvent`
/// whose `object` is a RawExtension of the object's own bytes.
fn frame(event_type: &str, object: &[u8]) -> Vec<u8> {
    let mut ext = Vec::new();
    len_field(&mut ext, 1, object);
    let mut event = Vec::new();
    len_field(&mut event, 1, event_type.as_bytes());
    len_field(&mut event, 2, &ext);
    let mut out = (event.len() as u32).to_be_bytes().to_vec();
    out.extend(event);
    out
}

fn object(name_rv: &str) -> Vec<u8> {
    [b"k8s\0".as_slice(), name_rv.as_bytes()].concat()
}

async fn collect(bytes: &[u8], split: usize) -> Vec<Result<WatchEvent<Obj>, Error>> {
    let chunks: Vec<Result<Bytes, Error>> = bytes
        .chunks(split)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    WatchStream::from_protobuf_bytes(stream::iter(chunks), Arc::new(Test))
        .collect()
        .await
}

#[tokio::test]
async fn all_event_types_split_anywhere() {
    let status = br#"{"kind":"Status","status":"Failure","message":"too old","reason":"Expired","code":410}"#;
    let body = [
        frame("ADDED", &object("a@1")),
        frame("MODIFIED", &object("b@2")),
        frame("DELETED", &object("c@3")),
        frame("BOOKMARK", &object("@4")),
        frame("ERROR", &[b"k8s\0".as_slice(), status].concat()),
    ]
    .concat();
    for split in [1usize, 3, 4, 5, 7, 40, 1000] {
        let got: Vec<_> = collect(&body, split)
            .await
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        assert_all_event_types(&got, "", split);
    }
}

#[tokio::test]
async fn an_error_frame_that_is_not_a_status_says_what_it_was() {
    let pod = br#"{"kind":"Pod","metadata":{"name":"x"},"status":{"phase":"Running"}}"#;
    let body = frame("ERROR", &[b"k8s\0".as_slice(), pod].concat());
    let got = collect(&body, 7).await;
    let Some(Ok(WatchEvent::Error(e))) = got.first() else {
        panic!("{got:?}");
    };
    assert_eq!(e.code, 500);
    assert!(e.message.contains(r#"kind "Pod""#), "{}", e.message);
    assert!(e.message.contains(r#""phase":"Running""#), "{}", e.message);
    // A big object is quoted in a bounded excerpt.
    let big = format!(
        r#"{{"kind":"ConfigMap","data":{{"k":"{}"}}}}"#,
        "v".repeat(100_000)
    );
    let body = frame("ERROR", &[b"k8s\0".as_slice(), big.as_bytes()].concat());
    let got = collect(&body, 4096).await;
    let Some(Ok(WatchEvent::Error(e))) = got.first() else {
        panic!("{got:?}");
    };
    assert!(
        e.message.contains("ConfigMap") && e.message.ends_with('…'),
        "{}",
        e.message
    );
    assert!(e.message.len() < 400, "{}", e.message.len());
}

#[test]
fn resource_versions_come_with_the_events_sans_io() {
    let mut d = FrameDecoder::new(Arc::new(Test));
    let body = [
        frame("ADDED", &object("a@7")),
        frame("BOOKMARK", &object("@9")),
    ]
    .concat();
    d.push(&body[..6]);
    assert!(d.next_frame().is_none(), "half a frame is not an event");
    d.push(&body[6..]);
    let (ev, rv) = d.next_frame().unwrap().unwrap();
    assert_eq!(
        (ev, rv.as_deref()),
        (WatchEvent::Added(obj("a")), Some("7"))
    );
    let (_, rv) = d.next_frame().unwrap().unwrap();
    assert_eq!(rv.as_deref(), Some("9"));
    assert!(d.next_frame().is_none());
    assert_eq!(d.buffered(), 0);
    assert!(d.finish().is_ok());
}

#[tokio::test]
async fn an_oversized_frame_is_refused_from_its_header() {
    let mut d = FrameDecoder::new(Arc::new(Test)).with_limit(16);
    d.push(&17u32.to_be_bytes());
    match d.next_event() {
        Some(Err(Error::WatchLineTooLong { limit: 16 })) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(d.buffered(), 0);
    // The default limit, announced by a header alone: no body is awaited.
    let got = collect(&u32::MAX.to_be_bytes(), 4).await;
    assert_eq!(got.len(), 1);
    assert!(
        matches!(got[0], Err(Error::WatchLineTooLong { limit }) if limit == MAX_EVENT_BYTES),
        "{:?}",
        got[0]
    );
    assert!(
        Error::WatchLineTooLong { limit: 16 }
            .to_string()
            .contains("16 bytes")
    );
}

#[tokio::test]
async fn a_stream_cut_inside_a_frame_is_an_error() {
    let one = frame("ADDED", &object("a@1"));
    let body = [one.clone(), one[..one.len() - 2].to_vec()].concat();
    let got = collect(&body, 5).await;
    assert_eq!(got.len(), 2);
    assert!(matches!(got[0], Ok(WatchEvent::Added(_))));
    let want = one.len() - 2;
    assert!(
        matches!(got[1], Err(Error::WatchCut { received }) if received == want),
        "{:?}",
        got[1]
    );
    // Inside the length header.
    let got = collect(&one[..2], 1).await;
    assert!(matches!(got[..], [Err(Error::WatchCut { received: 2 })]));
    assert!(collect(&[], 1).await.is_empty());
}

#[tokio::test]
async fn bad_frames_are_one_typed_error_then_the_end() {
    let after = frame("ADDED", &object("z@1"));
    let wire = |garbage: &[u8]| {
        let mut f = (garbage.len() as u32).to_be_bytes().to_vec();
        f.extend_from_slice(garbage);
        f
    };
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (wire(&[0x0a, 0x7f, b'A']), "wire"),
        (wire(&[0x0a, 0xff, 0xff]), "wire"),
        (wire(&[0x0b]), "wire"),
        (wire(&[0x08, 0x01]), "wire"),
        (wire(&[]), "type"),
        (frame("SNAPSHOT", &object("a")), "invalid"),
        (wire(&[0x0a, 5, b'A', b'D', b'D', b'E', b'D']), "object"),
        (frame("ADDED", b"no magic"), "decoder"),
        (frame("ERROR", b"k8s\0not json"), "decoder"),
    ];
    for (bad, what) in cases {
        let got = collect(&[bad, after.clone()].concat(), 3).await;
        assert_eq!(got.len(), 1, "{what}: {got:?}");
        let err = got.into_iter().next().unwrap().unwrap_err();
        let ok = match (&err, what) {
            (
                Error::WatchFrame {
                    source: FrameError::Wire { .. },
                },
                "wire",
            ) => true,
            (
                Error::WatchFrame {
                    source: FrameError::MissingType,
                },
                "type",
            ) => true,
            (Error::InvalidWatchEventType { event_type }, "invalid") => event_type == "SNAPSHOT",
            (
                Error::WatchFrame {
                    source: FrameError::MissingObject { event_type },
                },
                "object",
            ) => *event_type == "ADDED",
            (
                Error::WatchFrame {
                    source: FrameError::Object { .. },
                },
                "decoder",
            ) => true,
            _ => false,
        };
        assert!(ok, "{what}: {err:?}");
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    for _ in 0..2000 {
        let mut d = FrameDecoder::new(Arc::new(Test)).with_limit(64);
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let len = (seed % 80) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|i| (seed.rotate_left(i as u32 * 5) & 0xff) as u8)
            .collect();
        d.push(&bytes);
        while let Some(item) = d.next_event() {
            if item.is_err() {
                break;
            }
        }
        let _ = d.finish();
    }
}

#[test]
fn content_types() {
    assert!(is_protobuf(Some(
        "application/vnd.kubernetes.protobuf;stream=watch"
    )));
    assert!(is_protobuf(Some("application/vnd.kubernetes.protobuf")));
    assert!(!is_protobuf(Some("application/json")));
    assert!(!is_protobuf(Some("application/json;stream=watch")));
    assert!(!is_protobuf(None));
}
