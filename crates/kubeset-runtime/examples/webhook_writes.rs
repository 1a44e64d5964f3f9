//! A measurement, not a test: creates per second through one validating
//! webhook (served by `kubeset_runtime::webhook` on loopback TLS) that the
//! embedded API server (kubeset-testserver) calls, and how many TLS
//! handshakes the webhook server counted for them.
//!
//! ```text
//! cargo run -p kubeset-runtime --features webhook --example webhook_writes -- [CREATES] [--baseline]
//! ```
//!
//! `--baseline`: the same creates with no webhook configured.
//!
//! The creates are sent one after another from one client; the number
//! printed depends on the machine and the build (debug or release).

use std::time::Instant;

use kubeset_client::admission::{AdmissionRequest, Operation};
use kubeset_client::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use kubeset_client::api::core::v1::{ConfigMap, Namespace};
use kubeset_client::params::PostParams;
use kubeset_client::rest::{RestClient, RestConfig};
use kubeset_client::{Api, Client};
use kubeset_runtime::webhook::{CertFiles, Denied, SelfSignedCa, Webhook};
use kubeset_testserver::TestServer;
use serde_json::json;
use tokio_util::sync::CancellationToken;

type Failure = Box<dyn std::error::Error>;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Failure> {
    let creates: usize = match std::env::args().nth(1) {
        Some(n) => n.parse()?,
        None => 500,
    };
    let baseline = std::env::args().any(|a| a == "--baseline");
    let dir = tempfile::tempdir()?;
    let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    let ca = SelfSignedCa::generate("kubeset-webhook-writes-ca")?;
    ca.issue(&["127.0.0.1"])?.write(&cert, &key)?;
    let webhook = Webhook::new().validate_for::<ConfigMap, _>(
        "/validate",
        &[Operation::Create],
        |_req: AdmissionRequest<ConfigMap>| async move { Ok::<_, Denied>(vec![]) },
    );
    let served = webhook
        .bind("127.0.0.1:0", CertFiles::new(&cert, &key))
        .await?;
    let url = format!("https://{}/validate", served.local_addr());
    let stats = served.tls_stats();
    let stop = CancellationToken::new();
    let task = tokio::spawn(served.run(stop.clone().cancelled_owned()));

    let server = TestServer::start().await?;
    // No client-side rate limit (client-go's 5/s would be measured).
    let config = RestConfig::new(server.url()).with_qps_burst(-1.0, 0);
    let client = Client::new(RestClient::new(config)?, "bench");
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "bench"}}))?;
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await?;
    let config: ValidatingWebhookConfiguration = serde_json::from_value(json!({
        "metadata": {"name": "bench"},
        "webhooks": [{
            "name": "bench.kubeset.dev",
            "clientConfig": {"url": url, "caBundle": base64(ca.cert_pem().as_bytes())},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
            "failurePolicy": "Fail",
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"]
        }]
    }))?;
    if !baseline {
        Api::<ValidatingWebhookConfiguration>::all(client.clone())
            .create(&PostParams::default(), &config)
            .await?;
    }
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "bench");
    let before = stats.handshakes_per_generation().iter().sum::<u64>();
    let start = Instant::now();
    for i in 0..creates {
        let cm: ConfigMap =
            serde_json::from_value(json!({"metadata": {"name": format!("cm-{i}")}}))?;
        cms.create(&PostParams::default(), &cm).await?;
    }
    let elapsed = start.elapsed();
    let handshakes = stats.handshakes_per_generation().iter().sum::<u64>() - before;
    println!(
        "{creates} creates through one validating webhook in {:.2} s: {:.0} creates/s, {handshakes} TLS handshakes at the webhook, {} writes through webhook admission",
        elapsed.as_secs_f64(),
        creates as f64 / elapsed.as_secs_f64(),
        server.webhook_writes()
    );
    stop.cancel();
    task.await?;
    Ok(())
}

/// Standard base64 with padding (the `caBundle` on the wire).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}
