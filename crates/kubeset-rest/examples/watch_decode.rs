//! Measures watch decoding: `WatchStream` (one pass from the byte buffer)
//! against the common approach of a `String` per line, a generic envelope
//! and a second conversion of the object.
//!
//! `cargo run --release -p kubeset-rest --example watch_decode`

use std::time::Instant;

use bytes::Bytes;
use futures::StreamExt;
use kubeset_rest::{Error, WatchEvent, WatchStream};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Pod {
    metadata: Meta,
    spec: serde_json::Value,
    status: serde_json::Value,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Meta {
    name: String,
    namespace: String,
    #[serde(rename = "resourceVersion")]
    resource_version: String,
    labels: std::collections::BTreeMap<String, String>,
}

fn event(i: usize) -> String {
    format!(
        concat!(
            r#"{{"type":"MODIFIED","object":{{"kind":"Pod","apiVersion":"v1","metadata":{{"name":"web-{i}","namespace":"default","resourceVersion":"{i}","#,
            r#""labels":{{"app":"web","tier":"frontend","pod-template-hash":"5d8f9c7b6d"}}}},"#,
            r#""spec":{{"containers":[{{"name":"nginx","image":"nginx:1.27","ports":[{{"containerPort":80,"protocol":"TCP"}}],"#,
            r#""resources":{{"requests":{{"cpu":"100m","memory":"128Mi"}}}}}}],"nodeName":"node-{n}","restartPolicy":"Always"}},"#,
            r#""status":{{"phase":"Running","podIP":"10.1.{n}.{m}","conditions":[{{"type":"Ready","status":"True","lastTransitionTime":"2026-11-29T23:00:00Z"}}]}}}}}}"#,
            "\n"
        ),
        i = i,
        n = i % 50,
        m = i % 250
    )
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(rename = "type")]
    type_: String,
    object: serde_json::Value,
}

fn main() {
    let n = 100_000;
    let text: String = (0..n).map(event).collect();
    let bytes = Bytes::from(text.into_bytes());
    let mb = bytes.len() as f64 / 1e6;
    let chunks: Vec<Bytes> = (0..bytes.len())
        .step_by(16 * 1024)
        .map(|at| bytes.slice(at..(at + 16 * 1024).min(bytes.len())))
        .collect();

    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap_or_else(|e| {
            eprintln!("runtime: {e}");
            std::process::exit(1)
        });
    for round in 0..3 {
        let input = chunks.clone();
        let start = Instant::now();
        let count = rt.block_on(async move {
            let s = futures::stream::iter(input.into_iter().map(Ok::<_, Error>));
            WatchStream::<Pod>::from_bytes(s)
                .filter(|e| std::future::ready(matches!(e, Ok(WatchEvent::Modified(_)))))
                .count()
                .await
        });
        let ours = start.elapsed();
        assert_eq!(count, n);

        let start = Instant::now();
        let mut count = 0;
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let line = String::from_utf8(line.to_vec()).unwrap_or_default();
            let env: Envelope = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}"));
            if env.type_ == "MODIFIED" {
                let _pod: Pod =
                    serde_json::from_value(env.object).unwrap_or_else(|e| panic!("{e}"));
                count += 1;
            }
        }
        let naive = start.elapsed();
        assert_eq!(count, n);
        println!(
            "round {round}: {mb:.1} MB, {n} events: WatchStream {:.0} MB/s, String+Value+from_value {:.0} MB/s",
            mb / ours.as_secs_f64(),
            mb / naive.as_secs_f64()
        );
    }
}
