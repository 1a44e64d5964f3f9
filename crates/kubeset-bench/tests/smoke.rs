//! Smoke test: on a small generated PodList, kubeset and the peers agree
//! on the pod count, and the watch decoders agree on the event count.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use kubeset_bench::{codec, codec_protobuf, watch};

/// Writes a PodList of `n` pods with the shared generator and reads it back.
/// Each call has its own directory: tests run in parallel, and two asking for
/// the same `n` must not remove each other's file.
fn generated(n: usize) -> Vec<u8> {
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "kubeset-bench-smoke-{}-{call}-{n}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("pods.json");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench/gen_podlist.py");
    let status = Command::new("python3")
        .arg(&script)
        .arg(n.to_string())
        .arg(&file)
        .status()
        .expect("python3 runs");
    assert!(status.success(), "{} failed", script.display());
    let bytes = std::fs::read(&file).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    bytes
}

#[test]
fn decoders_agree_on_a_small_list() {
    let json = generated(7);
    assert_eq!(codec::decode_kubeset(&json).unwrap(), 7);
    assert_eq!(codec::decode_k8s_openapi(&json).unwrap(), 7);

    let records = codec::run(&json, 1).unwrap();
    assert_eq!(records.len(), 4);
    assert!(records.iter().all(|r| r.items == 7 && r.median_s > 0.0));

    let stream = Bytes::from(watch::make_stream(&json, 20).unwrap());
    assert_eq!(watch::decode_kubeset(&stream).unwrap(), 20);
    assert_eq!(watch::decode_kube(&stream).unwrap(), 20);
}

#[test]
fn protobuf_rows_on_a_small_list() {
    let json = generated(7);
    let list: codec::KubesetPodList = kubeset_rest::from_json(&json).unwrap();
    let bytes = codec_protobuf::encode(&list);
    assert!(bytes.starts_with(b"k8s\0"));
    // Bytes kubeset wrote are read back to the same list, by both decodes,
    // and written again to the same bytes.
    assert_eq!(codec_protobuf::decode_typed(&bytes).unwrap(), list);
    assert_eq!(codec_protobuf::agree(&bytes).unwrap(), bytes);
    let records = codec_protobuf::run(&bytes, 1).unwrap();
    let names: Vec<_> = records
        .iter()
        .map(|r| (r.bench.as_str(), r.implementation.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("decode-podlist-protobuf", "kubeset"),
            ("decode-podlist-protobuf", "kubeset (static)"),
            ("clone-podlist", "kubeset"),
            ("encode-podlist-protobuf", "kubeset"),
        ]
    );
    assert!(records.iter().all(|r| r.items == 7 && r.median_s > 0.0));
    assert!(codec_protobuf::agree(&bytes[..bytes.len() - 3]).is_err());
}

#[test]
fn decoders_reject_a_truncated_list() {
    let json = generated(2);
    let cut = &json[..json.len() / 2];
    assert!(codec::decode_kubeset(cut).is_err());
    assert!(codec::decode_k8s_openapi(cut).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_clients_read_the_configmap_from_the_embedded_server() {
    use kubeset_bench::roundtrip::{self, Peer, Plan};
    let server = roundtrip::serve(0).await.unwrap();
    let plan = Plan {
        sequential: 5,
        concurrency: 4,
        total: 20,
    };
    for peer in [Peer::Kubeset, Peer::KubeRs] {
        let records = roundtrip::run(&server.url(), peer, plan).await.unwrap();
        let names: Vec<(&str, &str)> = records
            .iter()
            .map(|r| (r.bench.as_str(), r.implementation.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("get-sequential", peer.name()),
                ("get-concurrent", peer.name())
            ]
        );
        for r in &records {
            assert!(r.median_s > 0.0, "{r:?}");
            assert!(r.cpu_s.is_some_and(|c| c >= 0.0), "{r:?}");
        }
    }
    // Warm-up (5) + sequential (5) + concurrent (20) per client.
    let served = server.faults(0).unwrap().requests_served();
    assert!(served >= 2 * 30, "served {served}");
    server.shutdown().await;
}

/// The memory rows' protocol end to end, as `cargo xtask bench` drives it,
/// for the two-controller rows: the seeded server process, a cache process
/// that prints `synced`, the server's `update N`, and the cache's record
/// once both controllers saw every update. (At most one update per pod: a
/// second patch of a pod in one round sets the same annotation, a no-op
/// with no event.)
#[test]
fn the_two_controller_and_kube_rs_memory_rows_run_as_xtask_runs_them() {
    use std::io::{BufRead as _, BufReader, Write as _};
    use std::process::Stdio;

    let bin = env!("CARGO_BIN_EXE_kubeset-bench");
    let dir = std::env::temp_dir().join(format!("kubeset-bench-rows-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pods = dir.join("pods.json");
    std::fs::write(&pods, generated(30)).unwrap();
    let mut server = Command::new(bin)
        .arg("serve-pods")
        .arg(&pods)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut server_in = server.stdin.take().unwrap();
    let mut server_out = BufReader::new(server.stdout.take().unwrap());
    let mut url = String::new();
    server_out.read_line(&mut url).unwrap();
    let url = url.trim().to_owned();
    assert!(url.starts_with("http://"), "{url}");
    for (peer, variant) in [
        ("kubeset", "two-caches"),
        ("kubeset", "shared"),
        ("kube-rs", "full"),
    ] {
        let mut cache = Command::new(bin)
            .args(["cache", &url, peer, variant, "20"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(cache.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "synced", "{variant}");
        writeln!(server_in, "update 20").unwrap();
        let mut answer = String::new();
        server_out.read_line(&mut answer).unwrap();
        assert_eq!(answer.trim(), "updated 20");
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
        let done = cache.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert!(done.status.success(), "{variant}: {stderr}");
        if peer == "kubeset" {
            let watches = if variant == "shared" {
                "1 watch(es)"
            } else {
                "2 watch(es)"
            };
            assert!(
                stderr.contains(&format!("two controllers over {watches}")),
                "{variant}: {stderr}"
            );
        }
        let records: serde_json::Value = serde_json::from_str(&rest).unwrap();
        let r = &records[0];
        assert_eq!(r["bench"], "cache-memory");
        assert_eq!(r["impl"], peer);
        assert_eq!(r["variant"], variant);
        assert_eq!(r["items"], 30, "{r}");
        assert!(r["peak_rss_kib"].as_f64().is_some_and(|k| k > 0.0), "{r}");
    }
    drop(server_in);
    assert!(server.wait().unwrap().success());
    std::fs::remove_dir_all(&dir).unwrap();
}
