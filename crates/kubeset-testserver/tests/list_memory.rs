//! Issue 34: an unpaged list is answered from the objects' stored text,
//! so the heap it takes grows with the answer's bytes, not with the
//! parsed objects (a `serde_json::Value` costs about ten times its JSON:
//! 10,000 generator pods listed at once took the server to 3.9 GB RSS
//! when every item was parsed before answering). The peak of live heap
//! bytes while the list is answered and read, beyond those live before
//! it, is measured by a counting global allocator (its own test binary:
//! the allocator counts every allocation, the server's and this
//! client's).

mod common;

use kubeset_testserver::TestServer;
use peakmem_alloc::{INSTRUMENTED_SYSTEM, PeakMemAlloc, PeakMemAllocTrait};
use serde_json::{Map, Value, json};

#[global_allocator]
static ALLOCATOR: &PeakMemAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

const CONFIGMAPS: usize = 300;
/// Many small members: the shape whose parsed form costs the most per
/// byte of JSON (a map node slot, two `String`s each).
const KEYS: usize = 200;

fn configmap(i: usize) -> Value {
    let data: Map<String, Value> = (0..KEYS)
        .map(|k| (format!("key-{k}"), json!(format!("v{}", i * k))))
        .collect();
    json!({"metadata": {"name": format!("cm-{i}"), "labels": {"app": "x"}}, "data": data})
}

/// Lists the ConfigMaps of `default` in one page, reading the body chunk
/// by chunk (this client keeps none of it); returns its length.
async fn list_len(c: &reqwest::Client, url: &str) -> usize {
    let mut resp = c.get(url).send().await.expect("list");
    assert!(resp.status().is_success(), "{}", resp.status());
    let mut len = 0;
    while let Some(chunk) = resp.chunk().await.expect("body") {
        len += chunk.len();
    }
    len
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unpaged_list_takes_about_its_own_bytes() {
    let s = TestServer::start().await.expect("server");
    let c = common::client();
    let url = format!("{}/api/v1/namespaces/default/configmaps", s.url());
    for i in 0..CONFIGMAPS {
        let r = c
            .post(&url)
            .json(&configmap(i))
            .send()
            .await
            .expect("create");
        assert!(r.status().is_success(), "{}", r.status());
    }
    // Once to warm the connection and the server's lazy state.
    let body = list_len(&c, &url).await;
    ALLOCATOR.reset_peak_memory();
    let again = list_len(&c, &url).await;
    let peak = ALLOCATOR.get_peak_memory();
    assert_eq!(again, body);
    eprintln!(
        "{CONFIGMAPS} ConfigMaps, {body} bytes of list: peak {peak} heap bytes ({:.2}x)",
        peak as f64 / body as f64
    );
    // The answer's bytes, once or twice (hyper's write buffer, the
    // client's chunks), and little else; parsed items alone took about
    // ten times the body before.
    assert!(
        peak < 3 * body,
        "{peak} heap bytes live for a list of {body} bytes"
    );
    s.shutdown().await;
}
