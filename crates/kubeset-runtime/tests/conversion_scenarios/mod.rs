//! CRD conversion webhook scenarios written once and run against both
//! servers: the embedded one (kubeset-testserver calling the webhook) by
//! `crates/kubeset-runtime/tests/conversion_embedded.rs`, a real
//! kube-apiserver by `tests/tests/suite/conversion.rs`. The includer
//! names the client crate `k` and the runtime `rt` (as for
//! `webhook_scenarios`) and makes `::kubeset` the client crate (the
//! facade, or `extern crate kubeset_client as kubeset`), which the
//! derives name.
//!
//! The kind is a `Person` of [`GROUP`]: v1 (the hub, the storage version)
//! with one `name`, v2 with `first` and `last` (a real split), served by
//! `rt::webhook`'s `Conversion` over TLS with the scenario's own CA,
//! self-registered with `set_conversion_ca_bundle`. The CRD is
//! cluster-scoped: on the real server the scenarios share one CRD and run
//! one after the other, each with its own object names.
//!
//! Where counting the reviews shows a rule of the embedded server
//! (nothing sent for objects already in the version asked for, a list in
//! one review, a write's conversions), it is checked there only
//! (`embedded`): kube-apiserver's watch cache converts each object when
//! it is written, in the background, so its counts depend on when they
//! are read; they are printed.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{k, rt};
use k::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, WebhookClientConfig,
};
use k::crd::with_conversion_webhook;
use k::params::{DeleteParams, ListParams, PatchParams, PostParams, WatchParams};
use k::{Api, Client, CustomResourceExt, Error, Patch, WatchEvent, merge_crds};
use rt::webhook::{Conversion, Reviewed, Webhook, set_conversion_ca_bundle};

// The realkube suite links this beside `webhook_scenarios`, which has
// the same file as its own module: one copy each, nothing shared.
#[allow(clippy::duplicate_mod)]
#[path = "../webhook_scenarios/certs.rs"]
mod certs;
use certs::TestCerts;

mod hostile;

/// The group of the scenarios' kind.
pub const GROUP: &str = "scenarios.conversion.kubeset.dev";

const WAIT: Duration = Duration::from_secs(90);

/// v1, the hub and storage version: one name.
pub mod v1 {
    use super::k::{CustomResource, JsonSchema};
    use serde::{Deserialize, Serialize};

    /// A person with one name.
    #[derive(CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
    #[kube(
        group = "scenarios.conversion.kubeset.dev",
        version = "v1",
        kind = "Person",
        namespaced
    )]
    pub struct PersonSpec {
        /// First and last name, with a space between.
        pub name: String,
    }
}

/// v2: the name split in two.
pub mod v2 {
    use super::k::{CustomResource, JsonSchema};
    use serde::{Deserialize, Serialize};

    /// A person with a first and a last name.
    #[derive(CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
    #[kube(
        group = "scenarios.conversion.kubeset.dev",
        version = "v2",
        kind = "Person",
        namespaced
    )]
    pub struct PersonSpec {
        /// The first name.
        pub first: String,
        /// The last name.
        pub last: String,
    }
}

impl From<v1::Person> for v2::Person {
    fn from(p: v1::Person) -> Self {
        let (first, last) = p.spec.name.split_once(' ').unwrap_or((&p.spec.name, ""));
        let spec = v2::PersonSpec {
            first: first.to_owned(),
            last: last.to_owned(),
        };
        v2::Person {
            metadata: p.metadata,
            spec,
        }
    }
}

impl TryFrom<v2::Person> for v1::Person {
    type Error = String;
    fn try_from(p: v2::Person) -> Result<Self, String> {
        if p.spec.first.is_empty() {
            return Err("spec.first must not be empty".to_owned());
        }
        let name = format!("{} {}", p.spec.first, p.spec.last)
            .trim()
            .to_owned();
        Ok(v1::Person {
            metadata: p.metadata,
            spec: v1::PersonSpec { name },
        })
    }
}

fn ok<T>(what: &str, r: Result<T, Error>) -> T {
    r.unwrap_or_else(|e| panic!("{what}: {e:?}"))
}

/// Polls `check` until it answers `Some`, failing after `within`.
async fn eventually<T, F, Fut>(within: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {within:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn person1(name: &str, full: &str) -> v1::Person {
    v1::Person::new(
        name,
        v1::PersonSpec {
            name: full.to_owned(),
        },
    )
}

fn person2(name: &str, first: &str, last: &str) -> v2::Person {
    v2::Person::new(
        name,
        v2::PersonSpec {
            first: first.to_owned(),
            last: last.to_owned(),
        },
    )
}

/// The reviews the webhook answered: desired version and object count,
/// in order.
#[derive(Default)]
pub struct Reviews {
    seen: Mutex<Vec<(String, usize)>>,
    count: AtomicUsize,
}

impl Reviews {
    fn record(&self, r: &Reviewed<'_>) {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        seen.push((r.desired_api_version.to_owned(), r.objects));
        self.count.fetch_add(1, Ordering::SeqCst);
    }

    /// How many reviews were answered so far.
    pub fn mark(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// The reviews answered since `mark` (desired version without the
    /// group, objects).
    pub fn since(&self, mark: usize) -> Vec<(String, usize)> {
        let seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        seen.iter()
            .skip(mark)
            .map(|(v, n)| (v.rsplit('/').next().unwrap_or_default().to_owned(), *n))
            .collect()
    }
}

/// The webhook, the CRD calling it, and APIs of both versions in the
/// scenario's namespace.
pub struct Converting {
    client: Client,
    ns: String,
    /// The reviews the webhook answered.
    pub reviews: Arc<Reviews>,
    url: String,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
    certs: TestCerts,
}

impl Converting {
    /// Serves the webhook, creates the CRD (an earlier run's is deleted
    /// first), self-registers the CA and waits until a read at v2 comes
    /// back converted.
    pub async fn start(client: Client, ns: &str) -> Converting {
        let certs = TestCerts::new("kubeset-conversion-scenarios-ca", &["127.0.0.1"]);
        let reviews = Arc::new(Reviews::default());
        let seen = reviews.clone();
        let conversion = Conversion::<v1::Person>::new()
            .spoke::<v2::Person>()
            .observe(move |r: Reviewed<'_>| seen.record(&r));
        let server = Webhook::new()
            .convert("/convert", conversion)
            .bind("127.0.0.1:0", certs.files())
            .await
            .expect("webhook binds");
        let url = format!("https://{}/convert", server.local_addr());
        let stop = CancellationToken::new();
        let task = tokio::spawn(server.run(stop.clone().cancelled_owned()));
        let merged =
            merge_crds(vec![v1::Person::crd(), v2::Person::crd()], "v1").expect("versions merge");
        let crd = with_conversion_webhook(
            merged,
            WebhookClientConfig {
                url: Some(url.clone()),
                ..WebhookClientConfig::default()
            },
        );
        create_fresh(&client, &crd).await;
        set_conversion_ca_bundle(&client, v1::Person::crd_name(), certs.ca.cert_pem())
            .await
            .expect("the conversion caBundle set");
        let c = Converting {
            client,
            ns: ns.to_owned(),
            reviews,
            url,
            stop,
            task,
            certs,
        };
        eventually(WAIT, "the v1 kind to be served", || async {
            c.v1()
                .create(&PostParams::default(), &person1("probe", "Pro Be"))
                .await
                .ok()
        })
        .await;
        eventually(WAIT, "a read through the conversion webhook", || async {
            c.v2().get("probe").await.ok()
        })
        .await;
        c
    }

    /// Persons at v1 in the scenario's namespace.
    pub fn v1(&self) -> Api<v1::Person> {
        Api::namespaced(self.client.clone(), &self.ns)
    }

    /// Persons at v2 in the scenario's namespace.
    pub fn v2(&self) -> Api<v2::Person> {
        Api::namespaced(self.client.clone(), &self.ns)
    }

    /// Points the CRD's webhook at `url`.
    async fn call_at(&self, url: &str) {
        let crds: Api<CustomResourceDefinition> = Api::all(self.client.clone());
        let patch = json!({"spec": {"conversion": {"webhook": {"clientConfig": {"url": url}}}}});
        ok(
            "the CRD's webhook URL changed",
            crds.patch(
                v1::Person::crd_name(),
                &PatchParams::default(),
                &Patch::Merge(patch),
            )
            .await,
        );
    }

    /// Deletes the CRD and stops the webhook.
    pub async fn stop(self) {
        let crds: Api<CustomResourceDefinition> = Api::all(self.client.clone());
        ok(
            "delete the CRD",
            crds.delete(v1::Person::crd_name(), &DeleteParams::default())
                .await
                .map(|_| ()),
        );
        eventually(WAIT, "the CRD to be gone", || async {
            match crds.get(v1::Person::crd_name()).await {
                Err(e) if e.is_not_found() => Some(()),
                _ => None,
            }
        })
        .await;
        self.stop.cancel();
        self.task.await.expect("webhook server task");
    }
}

/// Creates `crd`; one left by an earlier, interrupted run is deleted first.
async fn create_fresh(client: &Client, crd: &CustomResourceDefinition) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let name = crd.metadata.name.clone().expect("CRD name");
    eventually(WAIT, "the CRD to be created", || async {
        match crds.create(&PostParams::default(), crd).await {
            Ok(_) => Some(()),
            Err(e) if e.is_already_exists() => {
                let _ = crds.delete(&name, &DeleteParams::default()).await;
                None
            }
            Err(e) => panic!("creating {name}: {e:?}"),
        }
    })
    .await;
}

/// Written at v1 (stored as is) and read at v2, written at v2 (stored
/// converted to v1) and read at v1: the same object both ways.
pub async fn written_in_one_version_read_in_the_other(c: &Converting, embedded: bool) {
    let (at_v1, at_v2) = (c.v1(), c.v2());
    let mark = c.reviews.mark();
    let ada = ok(
        "create at v1",
        at_v1
            .create(&PostParams::default(), &person1("ada", "Ada Lovelace"))
            .await,
    );
    if embedded {
        assert_eq!(c.reviews.since(mark), [], "a write in the storage version");
    }
    let mark = c.reviews.mark();
    let ada2 = ok("get at v2", at_v2.get("ada").await);
    assert_eq!(ada2.spec, person2("", "Ada", "Lovelace").spec);
    assert_eq!(ada2.metadata.uid, ada.metadata.uid);
    assert_eq!(
        ada2.metadata.resource_version,
        ada.metadata.resource_version
    );
    if embedded {
        assert_eq!(c.reviews.since(mark), [("v2".to_owned(), 1)]);
    }

    let mark = c.reviews.mark();
    let grace = person2("grace", "Grace", "Brewster Hopper");
    let created = ok(
        "create at v2",
        at_v2.create(&PostParams::default(), &grace).await,
    );
    assert_eq!(created.spec, grace.spec);
    if embedded {
        // To the storage version, and back for the answer.
        assert_eq!(
            c.reviews.since(mark),
            [("v1".to_owned(), 1), ("v2".to_owned(), 1)]
        );
    }
    let mark = c.reviews.mark();
    let grace1 = ok("get at v1", at_v1.get("grace").await);
    assert_eq!(grace1.spec.name, "Grace Brewster Hopper");
    assert_eq!(grace1.metadata.uid, created.metadata.uid);
    assert_eq!(
        grace1.metadata.resource_version,
        created.metadata.resource_version
    );
    if embedded {
        assert_eq!(
            c.reviews.since(mark),
            [],
            "stored in v1: nothing to convert"
        );
    }
    // Replaced at v1 with what was read, and read back at v2: equal.
    ok(
        "replace at v1",
        at_v1
            .replace("grace", &PostParams::default(), &grace1)
            .await,
    );
    let again = ok("get at v2", at_v2.get("grace").await);
    assert_eq!(again.spec, grace.spec);
}

/// A list at v2 of objects written at v1 and at v2 converts every one;
/// the embedded server sends them in one review, and nothing for a list
/// in the storage version.
pub async fn a_list_converts_objects_written_in_both_versions(c: &Converting, embedded: bool) {
    let (at_v1, at_v2) = (c.v1(), c.v2());
    for i in 0..3 {
        let mut p = person1(&format!("one-{i}"), &format!("One Number{i}"));
        p.metadata.labels = Some([("set".to_owned(), "listed".to_owned())].into());
        ok(
            "create at v1",
            at_v1.create(&PostParams::default(), &p).await,
        );
    }
    for i in 0..2 {
        let mut p = person2(&format!("two-{i}"), "Two", &format!("Number{i}"));
        p.metadata.labels = Some([("set".to_owned(), "listed".to_owned())].into());
        ok(
            "create at v2",
            at_v2.create(&PostParams::default(), &p).await,
        );
    }
    let mark = c.reviews.mark();
    let list = ok(
        "list at v2",
        at_v2
            .list(&ListParams::default().labels("set=listed"))
            .await,
    );
    let got: Vec<(String, String, String)> = list
        .items
        .iter()
        .map(|p| {
            (
                p.metadata.name.clone().unwrap_or_default(),
                p.spec.first.clone(),
                p.spec.last.clone(),
            )
        })
        .collect();
    let want: Vec<(String, String, String)> = (0..3)
        .map(|i| (format!("one-{i}"), "One".to_owned(), format!("Number{i}")))
        .chain((0..2).map(|i| (format!("two-{i}"), "Two".to_owned(), format!("Number{i}"))))
        .collect();
    assert_eq!(got, want);
    println!("list of 5 at v2: reviews {:?}", c.reviews.since(mark));
    if embedded {
        assert_eq!(c.reviews.since(mark), [("v2".to_owned(), 5)], "one review");
    }
    let mark = c.reviews.mark();
    let list = ok(
        "list at v1",
        at_v1
            .list(&ListParams::default().labels("set=listed"))
            .await,
    );
    assert_eq!(list.items.len(), 5);
    assert_eq!(list.items[3].spec.name, "Two Number0");
    if embedded {
        assert_eq!(
            c.reviews.since(mark),
            [],
            "stored in v1: nothing to convert"
        );
    }
}

/// A watch at v2 sees an update written at v1, converted.
pub async fn a_watch_sees_an_update_written_in_the_other_version(c: &Converting) {
    let (at_v1, at_v2) = (c.v1(), c.v2());
    let created = ok(
        "create at v1",
        at_v1
            .create(&PostParams::default(), &person1("watched", "Alan Turing"))
            .await,
    );
    let rv = created.metadata.resource_version.clone().expect("rv");
    let params = WatchParams::default()
        .fields("metadata.name=watched")
        .timeout(60);
    let mut events = ok("watch at v2", at_v2.watch(&params, &rv).await);
    let mut renamed = created.clone();
    renamed.spec.name = "Alan Mathison".to_owned();
    let replaced = ok(
        "replace at v1",
        at_v1
            .replace("watched", &PostParams::default(), &renamed)
            .await,
    );
    let seen = tokio::time::timeout(WAIT, async {
        loop {
            match events.next().await {
                Some(Ok(WatchEvent::Modified(p))) => return p,
                Some(Ok(WatchEvent::Bookmark(_))) => {}
                other => panic!("a MODIFIED event, not {other:?}"),
            }
        }
    })
    .await
    .expect("the event within the deadline");
    assert_eq!(seen.spec, person2("", "Alan", "Mathison").spec);
    assert_eq!(
        seen.metadata.resource_version,
        replaced.metadata.resource_version
    );
}

/// A merge patch sent to v2 applies to the object at v2 and is stored
/// converted back.
pub async fn a_merge_patch_to_the_other_version(c: &Converting, embedded: bool) {
    let (at_v1, at_v2) = (c.v1(), c.v2());
    ok(
        "create at v1",
        at_v1
            .create(&PostParams::default(), &person1("byron", "Ada Lovelace"))
            .await,
    );
    let mark = c.reviews.mark();
    let patched = ok(
        "merge patch at v2",
        at_v2
            .patch(
                "byron",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"last": "Byron"}})),
            )
            .await,
    );
    assert_eq!(patched.spec, person2("", "Ada", "Byron").spec);
    if embedded {
        // The stored object to v2, the patched one to v1, back for the
        // answer.
        assert_eq!(
            c.reviews.since(mark),
            [
                ("v2".to_owned(), 1),
                ("v1".to_owned(), 1),
                ("v2".to_owned(), 1)
            ]
        );
    }
    let stored = ok("get at v1", at_v1.get("byron").await);
    assert_eq!(stored.spec.name, "Ada Byron");
}

/// A server-side apply sent to v2 creates the object (stored converted
/// to v1), then changes it, each read back at v1.
pub async fn a_server_side_apply_to_the_other_version(c: &Converting, embedded: bool) {
    let (at_v1, at_v2) = (c.v1(), c.v2());
    let config = |last: &str| {
        json!({"apiVersion": format!("{GROUP}/v2"), "kind": "Person",
               "metadata": {"name": "applied"}, "spec": {"first": "Mary", "last": last}})
    };
    let params = PatchParams::apply("conversion-scenarios");
    let mark = c.reviews.mark();
    let created = ok(
        "apply at v2 (create)",
        at_v2
            .patch("applied", &params, &Patch::Apply(config("Shelley")))
            .await,
    );
    assert_eq!(created.spec, person2("", "Mary", "Shelley").spec);
    if embedded {
        assert_eq!(
            c.reviews.since(mark),
            [("v1".to_owned(), 1), ("v2".to_owned(), 1)]
        );
    }
    assert_eq!(
        ok("get at v1", at_v1.get("applied").await).spec.name,
        "Mary Shelley"
    );
    let mark = c.reviews.mark();
    let changed = ok(
        "apply at v2 (update)",
        at_v2
            .patch("applied", &params, &Patch::Apply(config("Wollstonecraft")))
            .await,
    );
    assert_eq!(changed.spec, person2("", "Mary", "Wollstonecraft").spec);
    if embedded {
        assert_eq!(
            c.reviews.since(mark),
            [
                ("v2".to_owned(), 1),
                ("v1".to_owned(), 1),
                ("v2".to_owned(), 1)
            ]
        );
    }
    assert_eq!(
        ok("get at v1", at_v1.get("applied").await).spec.name,
        "Mary Wollstonecraft"
    );
}

/// The client's view of a failed request: code, reason, message.
fn failure<T: std::fmt::Debug>(what: &str, r: Result<T, Error>) -> (u16, String, String) {
    match r {
        Err(Error::Api(e)) => (e.code, format!("{:?}", e.status_reason), e.message),
        other => panic!("{what}: an API error, not {other:?}"),
    }
}

/// A conversion the webhook refuses, and a webhook that cannot be
/// reached, answer the client as kube-apiserver answers them.
pub async fn failed_conversions_answer_as_the_real_server(c: &Converting) {
    let at_v2 = c.v2();
    // v2 → v1 refuses an empty first name: the create stores nothing.
    let nameless = person2("nameless", "", "Smith");
    let (code, reason, message) = failure(
        "a refused create",
        at_v2.create(&PostParams::default(), &nameless).await,
    );
    println!("refused create: {code} {reason} {message}");
    assert_eq!((code, reason.as_str()), (500, "Unknown(\"\")"));
    assert_eq!(
        message,
        format!(
            "conversion webhook for {GROUP}/v2, Kind=Person failed: \
             object 0 ({}/nameless): converting {GROUP}/v2 to {GROUP}/v1: \
             spec.first must not be empty",
            c.ns
        )
    );
    assert!(
        c.v1()
            .get("nameless")
            .await
            .is_err_and(|e| e.is_not_found())
    );

    // A watch open while the CRD changes ends (kube-apiserver replaces
    // the resource's storage), with no error: a client watches again.
    let mut open = ok(
        "watch at v2",
        at_v2.watch(&WatchParams::default().timeout(60), "").await,
    );
    // A webhook nothing listens for: a port held by a socket that is bound
    // but never listens, so a connection is refused and no other socket
    // is given the port meanwhile (a port freed after `bind` was taken by
    // another test's server once, and answered the TLS hello in plain text).
    let closed = tokio::net::TcpSocket::new_v4().expect("a socket");
    closed
        .bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
        .expect("a free port");
    let port = closed.local_addr().expect("its address").port();
    let gone = format!("https://127.0.0.1:{port}/convert");
    c.call_at(&gone).await;
    let (code, reason, message) = eventually(WAIT, "a get to fail", || async {
        match at_v2.get("probe").await {
            Err(Error::Api(e)) => Some((e.code, format!("{:?}", e.status_reason), e.message)),
            _ => None,
        }
    })
    .await;
    println!("unreachable get: {code} {reason} {message}");
    assert_eq!((code, reason.as_str()), (500, "Unknown(\"\")"));
    assert_eq!(
        message,
        format!(
            "conversion webhook for {GROUP}/v1, Kind=Person failed: \
             Post \"{gone}?timeout=30s\": dial tcp 127.0.0.1:{port}: connect: connection refused"
        )
    );
    let ended = tokio::time::timeout(WAIT, async {
        loop {
            match open.next().await {
                None => return,
                Some(Ok(WatchEvent::Added(_) | WatchEvent::Bookmark(_))) => {}
                other => panic!("the watch to end, not {other:?}"),
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the watch ended when the CRD changed");
    let (code, reason, message) = failure(
        "an unreachable create",
        at_v2
            .create(&PostParams::default(), &person2("late", "La", "Te"))
            .await,
    );
    println!("unreachable create: {code} {reason} {message}");
    assert_eq!((code, reason.as_str()), (500, "Unknown(\"\")"));
    assert_eq!(
        message,
        format!(
            "conversion webhook for {GROUP}/v2, Kind=Person failed: \
             Post \"{gone}?timeout=30s\": dial tcp 127.0.0.1:{port}: connect: connection refused"
        )
    );
    // A list, and a watch, in another version than the stored objects':
    // kube-apiserver's watch cache of that version cannot hold them.
    let unready = format!(
        "storage is (re)initializing: failed to list {GROUP}/v2, Kind=Person: \
         conversion webhook for {GROUP}/v1, Kind=Person failed: \
         Post \"{gone}?timeout=30s\": dial tcp 127.0.0.1:{port}: connect: connection refused"
    );
    let (code, reason, message) = failure(
        "an unreachable list",
        at_v2.list(&ListParams::default()).await,
    );
    assert_eq!(
        (code, reason.as_str(), message.as_str()),
        (429, "TooManyRequests", unready.as_str())
    );
    // kube-apiserver refuses the watch; the embedded server ends it with
    // that error as its first event.
    let params = WatchParams::default().timeout(30);
    let watched = match at_v2.watch(&params, "").await {
        Err(Error::Api(e)) => *e,
        Ok(mut events) => match events.next().await {
            Some(Ok(WatchEvent::Error(e))) => e,
            other => panic!("a failed watch, not {other:?}"),
        },
        Err(e) => panic!("an API error, not {e:?}"),
    };
    assert_eq!(
        (watched.code, watched.message.as_str()),
        (429, unready.as_str())
    );
    c.call_at(&c.url).await;
}

/// Answers a conversion webhook must not give (too few objects, another
/// version or kind, a renamed object, another uid, a failure without a
/// message, not JSON, past 3 MiB) fail the read, as kube-apiserver fails
/// it: 500 without reason, upstream's message (the words of a JSON or
/// size error are each server's own: only their start is compared).
pub async fn hostile_answers_fail_the_read(c: &Converting) {
    let hostile = hostile::Hostile::start(&c.certs).await;
    let at_v2 = c.v2();
    let source = format!("conversion webhook for {GROUP}/v1, Kind=Person");
    let exact = [
        ("/count", format!("{source} returned 0 objects, expected 1")),
        (
            "/version",
            format!(
                "{source} returned invalid object at index 0: invalid groupVersion \
                 (expected {GROUP}/v2, received {GROUP}/v9)"
            ),
        ),
        (
            "/kind",
            format!(
                "{source} returned invalid object at index 0: invalid kind \
                 (expected Person, received Robot)"
            ),
        ),
        (
            "/rename",
            format!("{source} returned invalid object: must have the same name: probe != other"),
        ),
        (
            "/failure",
            format!("{source} failed: response.result.status was 'Failure', not 'Success'"),
        ),
    ];
    for (path, want) in &exact {
        let (code, reason, message) = failing_get(c, &at_v2, &hostile, path).await;
        assert_eq!(
            (code, reason.as_str(), message.as_str()),
            (500, "Unknown(\"\")", want.as_str()),
            "{path}"
        );
    }
    for path in ["/uid", "/garbage", "/huge"] {
        let (code, reason, message) = failing_get(c, &at_v2, &hostile, path).await;
        println!("{path}: {code} {reason} {message}");
        assert_eq!((code, reason.as_str()), (500, "Unknown(\"\")"), "{path}");
        assert!(
            message.starts_with(&format!("{source} failed: ")),
            "{path}: {message}"
        );
        if path == "/uid" {
            assert!(
                message.ends_with(", got \"not-the-request-uid\""),
                "{path}: {message}"
            );
        }
    }
    c.call_at(&c.url).await;
    eventually(WAIT, "reads through the good webhook again", || async {
        at_v2.get("probe").await.ok()
    })
    .await;
}

/// Points the CRD at `path` of `hostile` and gets `probe` at v2 until a
/// get that reached it fails: its code, reason and message.
async fn failing_get(
    c: &Converting,
    at_v2: &Api<v2::Person>,
    hostile: &hostile::Hostile,
    path: &str,
) -> (u16, String, String) {
    c.call_at(&format!("{}{path}", hostile.base)).await;
    eventually(WAIT, &format!("a get through {path}"), || async {
        let before = hostile.calls(path);
        let r = at_v2.get("probe").await;
        if hostile.calls(path) == before {
            return None;
        }
        Some(failure(path, r))
    })
    .await
}
