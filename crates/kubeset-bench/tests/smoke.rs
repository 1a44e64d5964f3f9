//! Smoke test: on a small generated PodList, kubeset and the peers agree
//! on the pod count, and the watch decoders agree on the event count.

use std::path::Path;
use std::process::Command;

use bytes::Bytes;
use kubeset_bench::{codec, watch};

fn generated(n: usize) -> Vec<u8> {
    let dir = std::env::temp_dir().join(format!("kubeset-bench-smoke-{}-{n}", std::process::id()));
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
