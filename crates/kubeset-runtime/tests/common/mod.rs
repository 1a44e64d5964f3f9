//! Helpers shared by the runtime's tests against the embedded API server.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use kubeset_client::api::core::v1::ConfigMap;
use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubeset_client::rest::{RestClient, RestConfig};
use kubeset_client::{Client, Resource};
use kubeset_runtime::ObjectKey;

/// A client over every URL (the first is the base, the rest failover
/// endpoints), without client-side rate limiting.
pub fn client(urls: &[String]) -> Client {
    let mut config = RestConfig::new(urls[0].clone())
        .with_qps_burst(-1.0, 0)
        .with_request_deadline(Duration::from_secs(10));
    if urls.len() > 1 {
        config = config.with_endpoints(urls[1..].iter().cloned());
    }
    Client::new(RestClient::new(config).expect("client builds"), "default")
}

pub fn cm(ns: &str, name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            namespace: Some(ns.to_owned()),
            name: Some(name.to_owned()),
            labels: Some([("app".to_owned(), value.to_owned())].into()),
            ..ObjectMeta::default()
        },
        data: Some([("v".to_owned(), value.to_owned())].into()),
        ..ConfigMap::default()
    }
}

/// key → resourceVersion of a set of objects.
pub fn versions<'a, K: Resource + 'a>(
    objs: impl IntoIterator<Item = &'a K>,
) -> BTreeMap<ObjectKey, String> {
    objs.into_iter()
        .map(|o| {
            (
                ObjectKey::of(o),
                o.metadata().resource_version.clone().unwrap_or_default(),
            )
        })
        .collect()
}

/// Polls `f` until it returns true or `limit` passes; returns whether it did.
pub async fn eventually(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = tokio::time::Instant::now() + limit;
    loop {
        if f() {
            return true;
        }
        if tokio::time::Instant::now() >= end {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A client from the realkube instance's kubeconfig, without client-side
/// rate limiting.
pub async fn kubeconfig_client(path: &str) -> Client {
    let kubeconfig =
        kubeset_client::rest::config::Kubeconfig::read_from(path).expect("the kubeconfig reads");
    let config = kubeset_client::Config::from_custom_kubeconfig(
        kubeconfig,
        &kubeset_client::KubeConfigOptions::default(),
    )
    .await
    .expect("the kubeconfig loads");
    let rest = config
        .rest_config()
        .expect("a REST config")
        .with_qps_burst(-1.0, 0)
        .with_request_deadline(Duration::from_secs(10));
    Client::new(
        kubeset_client::rest::RestClient::new(rest).expect("client builds"),
        "default",
    )
}

/// The `KUBESET_REALKUBE_*` settings of the instance named by
/// `KUBESET_REALKUBE_ENV` (the env file `realkube.sh start` writes, read
/// as bash reads it), `None` when it is not set, as the other realkube
/// tests do.
pub fn realkube_env() -> Option<BTreeMap<String, String>> {
    let path = std::env::var_os("KUBESET_REALKUBE_ENV")?;
    let out = Command::new("bash")
        .args(["-c", ". \"$1\" && env -0", "realkube-env"])
        .arg(&path)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .output()
        .expect("bash");
    assert!(
        out.status.success(),
        "sourcing {}: {}",
        Path::new(&path).display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let vars: BTreeMap<String, String> = out
        .stdout
        .split(|b| *b == 0)
        .filter_map(|kv| std::str::from_utf8(kv).ok()?.split_once('='))
        .filter(|(k, _)| k.starts_with("KUBESET_REALKUBE_"))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    assert!(
        vars.contains_key("KUBESET_REALKUBE_KUBECONFIG"),
        "{} names no KUBESET_REALKUBE_KUBECONFIG",
        Path::new(&path).display()
    );
    Some(vars)
}
