//! CRD conversion webhooks served by `kubeset::runtime::webhook` and
//! called by the real kube-apiserver: a two-version kind (v1 `spec.name`,
//! stored; v2 `spec.first`/`spec.last`) with `conversion.strategy:
//! Webhook` on loopback (`clientConfig.url`, our own CA self-registered
//! with `set_conversion_ca_bundle`). Objects written at one version are
//! read at the other and back, equal; a list at v2 converts every object;
//! a refused conversion reaches the client naming why.
//!
//! The scenarios shared with the embedded server
//! (`crates/kubeset-runtime/tests/conversion_scenarios/mod.rs`) run here
//! one after the other on their own group's CRD.
//!
//! CRDs are cluster-scoped and the suite runs in parallel: each test has
//! its own group (its own CRD) and deletes it at the end. Before the first
//! conversion kube-apiserver must see the CRD established and its
//! caBundle; each test polls until a read at v2 comes back converted.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use kubeset::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, WebhookClientConfig,
};
use kubeset::crd::with_conversion_webhook;
use kubeset::params::{DeleteParams, ListParams, PostParams};
use kubeset::runtime::webhook::{
    CertFiles, Conversion, Reviewed, SelfSignedCa, Webhook, set_conversion_ca_bundle,
};
use kubeset::{Api, Client, CustomResourceExt, Error, Resource, merge_crds};
use kubeset_tests::{TestContext, eventually};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::common::{connect, ok};

const WAIT: Duration = Duration::from_secs(90);

/// A `Person` kind in `$group`: v1 (hub, stored) with one name, v2 with
/// first and last; v2 → v1 refuses an empty first name.
macro_rules! people {
    ($module:ident, $group:tt) => {
        mod $module {
            use kubeset::{CustomResource, JsonSchema};
            use serde::{Deserialize, Serialize};

            pub mod v1 {
                use super::*;
                /// A person with one name.
                #[derive(
                    CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq,
                )]
                #[kube(group = $group, version = "v1", kind = "Person", namespaced)]
                pub struct PersonSpec {
                    pub name: String,
                }
            }

            pub mod v2 {
                use super::*;
                /// A person with a first and a last name.
                #[derive(
                    CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq,
                )]
                #[kube(group = $group, version = "v2", kind = "Person", namespaced)]
                pub struct PersonSpec {
                    pub first: String,
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
        }
    };
}

people!(round_trip, "roundtrip.conversion.suite.kubeset.dev");
people!(listed, "listed.conversion.suite.kubeset.dev");
people!(refused, "refused.conversion.suite.kubeset.dev");

/// Reviews and objects the webhook answered.
#[derive(Default)]
struct Counts {
    reviews: AtomicUsize,
    objects: AtomicUsize,
    largest: AtomicUsize,
}

/// The webhook serving `Conversion::<H>::new().spoke::<S>()` and the CRD
/// that calls it, established and converting.
struct Converting {
    crd_name: &'static str,
    counts: Arc<Counts>,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
    _dir: tempfile::TempDir,
}

impl Converting {
    async fn start<H, S>(ctx: &TestContext) -> Converting
    where
        H: CustomResourceExt + Resource + Serialize + DeserializeOwned + TryFrom<S> + 'static,
        S: CustomResourceExt + Resource + Serialize + DeserializeOwned + TryFrom<H> + 'static,
        <H as TryFrom<S>>::Error: std::fmt::Display,
        <S as TryFrom<H>>::Error: std::fmt::Display,
    {
        let dir = tempfile::tempdir().expect("temp dir");
        let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
        let ca = SelfSignedCa::generate("kubeset-suite-conversion-ca").expect("CA");
        ca.issue(&["127.0.0.1"])
            .expect("leaf")
            .write(&cert, &key)
            .expect("leaf written");
        let counts = Arc::new(Counts::default());
        let seen = counts.clone();
        let conversion = Conversion::<H>::new()
            .spoke::<S>()
            .observe(move |r: Reviewed<'_>| {
                seen.reviews.fetch_add(1, Ordering::SeqCst);
                seen.objects.fetch_add(r.objects, Ordering::SeqCst);
                seen.largest.fetch_max(r.objects, Ordering::SeqCst);
            });
        let server = Webhook::new()
            .convert("/convert", conversion)
            .bind("127.0.0.1:0", CertFiles::new(&cert, &key))
            .await
            .expect("webhook binds");
        let url = format!("https://{}/convert", server.local_addr());
        let stop = CancellationToken::new();
        let task = tokio::spawn(server.run(stop.clone().cancelled_owned()));

        // The CRD without caBundle, then self-registered.
        let merged = merge_crds(vec![H::crd(), S::crd()], H::VERSION).expect("versions merge");
        let crd = with_conversion_webhook(
            merged,
            WebhookClientConfig {
                url: Some(url),
                ..WebhookClientConfig::default()
            },
        );
        let crds: Api<CustomResourceDefinition> = Api::all(ctx.client.clone());
        create_fresh(&crds, &crd).await;
        let stored = set_conversion_ca_bundle(&ctx.client, H::crd_name(), ca.cert_pem())
            .await
            .expect("conversion caBundle set");
        let bundle = stored
            .spec
            .conversion
            .and_then(|c| c.webhook)
            .and_then(|w| w.client_config)
            .and_then(|c| c.ca_bundle);
        assert_eq!(bundle.map(|b| b.0), Some(ca.cert_pem().as_bytes().to_vec()));
        eventually(WAIT, "the CRD to be established", || async {
            crds.get(H::crd_name())
                .await
                .ok()
                .filter(crate::crd::established)
        })
        .await;
        Converting {
            crd_name: H::crd_name(),
            counts,
            stop,
            task,
            _dir: dir,
        }
    }

    async fn stop(self, client: &Client) {
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        ok(
            "delete the CRD",
            crds.delete(self.crd_name, &DeleteParams::default()).await,
        );
        eventually(WAIT, "the CRD to be gone", || async {
            match crds.get(self.crd_name).await {
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
async fn create_fresh(crds: &Api<CustomResourceDefinition>, crd: &CustomResourceDefinition) {
    let name = crd.metadata.name.clone().expect("CRD name");
    eventually(WAIT, "the CRD to be created", || async {
        match crds.create(&PostParams::default(), crd).await {
            Ok(_) => Some(()),
            Err(e) if e.is_already_exists() => {
                let _ = crds.delete(&name, &DeleteParams::default()).await;
                None
            }
            Err(e) => panic!("creating {name}: {}", kubeset_tests::error_chain(&e)),
        }
    })
    .await;
}

/// Reads `name` at `S` until kube-apiserver converts it (the CRD served,
/// the caBundle in use).
async fn first_conversion<
    S: Resource + Clone + Serialize + DeserializeOwned + std::fmt::Debug + Send + 'static,
>(
    api: &Api<S>,
    name: &str,
) -> S {
    let last = std::sync::Mutex::new(String::new());
    let read = tokio::time::timeout(
        WAIT,
        eventually(
            WAIT * 2,
            "a read through the conversion webhook",
            || async {
                match api.get(name).await {
                    Ok(object) => Some(object),
                    Err(e) => {
                        *last.lock().unwrap_or_else(|p| p.into_inner()) =
                            kubeset_tests::error_chain(&e);
                        None
                    }
                }
            },
        ),
    )
    .await;
    read.unwrap_or_else(|_| {
        let last = last.lock().unwrap_or_else(|p| p.into_inner());
        panic!("no read of {name} through the conversion webhook within {WAIT:?}; the last error: {last}")
    })
}

#[tokio::test]
async fn objects_convert_both_ways_and_round_trip_equal() {
    use round_trip::{v1, v2};
    let ctx = connect!("conversion-round-trip");
    let converting = Converting::start::<v1::Person, v2::Person>(&ctx).await;
    let at_v1: Api<v1::Person> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    let at_v2: Api<v2::Person> = Api::namespaced(ctx.client.clone(), &ctx.ns);

    // Written at v1 (stored as is), read at v2 through the webhook.
    let ada = eventually(WAIT, "the v1 kind to be served", || async {
        let p = v1::Person::new(
            "ada",
            v1::PersonSpec {
                name: "Ada Lovelace".into(),
            },
        );
        at_v1.create(&PostParams::default(), &p).await.ok()
    })
    .await;
    let ada_v2 = first_conversion(&at_v2, "ada").await;
    assert_eq!(
        ada_v2.spec,
        v2::PersonSpec {
            first: "Ada".into(),
            last: "Lovelace".into()
        }
    );
    assert_eq!(ada_v2.metadata.uid, ada.metadata.uid);
    assert_eq!(
        ada_v2.metadata.resource_version,
        ada.metadata.resource_version
    );

    // Written back at v2 (converted to v1 to be stored), read at v1: equal.
    let replaced = ok(
        "replace at v2",
        at_v2.replace("ada", &PostParams::default(), &ada_v2).await,
    );
    assert_eq!(replaced.spec, ada_v2.spec);
    let ada_again = ok("get at v1", at_v1.get("ada").await);
    assert_eq!(ada_again.spec, ada.spec);
    assert_eq!(ada_again.metadata.uid, ada.metadata.uid);

    // Written at v2, read at v1, and back at v2: equal.
    let grace = v2::Person::new(
        "grace",
        v2::PersonSpec {
            first: "Grace".into(),
            last: "Brewster Hopper".into(),
        },
    );
    let created = ok(
        "create at v2",
        at_v2.create(&PostParams::default(), &grace).await,
    );
    assert_eq!(created.spec, grace.spec);
    let grace_v1 = ok("get at v1", at_v1.get("grace").await);
    assert_eq!(grace_v1.spec.name, "Grace Brewster Hopper");
    let replaced = ok(
        "replace at v1",
        at_v1
            .replace("grace", &PostParams::default(), &grace_v1)
            .await,
    );
    assert_eq!(replaced.spec, grace_v1.spec);
    let grace_v2 = ok("get at v2", at_v2.get("grace").await);
    assert_eq!(grace_v2.spec, grace.spec);
    assert_eq!(grace_v2.metadata.uid, created.metadata.uid);
    assert!(converting.counts.reviews.load(Ordering::SeqCst) >= 4);

    converting.stop(&ctx.client).await;
}

#[tokio::test]
async fn a_list_at_the_other_version_converts_every_object() {
    use listed::{v1, v2};
    let ctx = connect!("conversion-list");
    let converting = Converting::start::<v1::Person, v2::Person>(&ctx).await;
    let at_v1: Api<v1::Person> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    let at_v2: Api<v2::Person> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    const COUNT: usize = 40;
    let counts = &converting.counts;
    let (reviews, objects) = (
        counts.reviews.load(Ordering::SeqCst),
        counts.objects.load(Ordering::SeqCst),
    );
    for i in 0..COUNT {
        let p = v1::Person::new(
            &format!("p-{i:02}"),
            v1::PersonSpec {
                name: format!("Person Number{i}"),
            },
        );
        eventually(WAIT, "a create at v1", || async {
            at_v1.create(&PostParams::default(), &p).await.ok()
        })
        .await;
    }
    first_conversion(&at_v2, "p-00").await;

    let list = ok("list at v2", at_v2.list(&ListParams::default()).await);
    assert_eq!(list.items.len(), COUNT);
    for (i, p) in list.items.iter().enumerate() {
        assert_eq!(
            p.metadata.name.as_deref(),
            Some(format!("p-{i:02}").as_str())
        );
        assert_eq!(
            p.spec,
            v2::PersonSpec {
                first: "Person".into(),
                last: format!("Number{i}")
            }
        );
    }
    // Every object went through the webhook: kube-apiserver v1.35's watch
    // cache of v2 converts each object as it is written, one per review,
    // and serves the list from there (several objects in one review are
    // the runtime's own test, tests/conversion.rs, over a socket).
    let reviews = counts.reviews.load(Ordering::SeqCst) - reviews;
    let objects = counts.objects.load(Ordering::SeqCst) - objects;
    println!(
        "list of {COUNT} at v2: {reviews} reviews, {objects} objects, largest review {}",
        counts.largest.load(Ordering::SeqCst)
    );
    assert!(objects >= COUNT, "{objects} objects converted for the list");

    converting.stop(&ctx.client).await;
}

#[tokio::test]
async fn a_refused_conversion_reaches_the_client_naming_why() {
    use refused::{v1, v2};
    let ctx = connect!("conversion-refused");
    let converting = Converting::start::<v1::Person, v2::Person>(&ctx).await;
    let at_v1: Api<v1::Person> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    let at_v2: Api<v2::Person> = Api::namespaced(ctx.client.clone(), &ctx.ns);
    eventually(WAIT, "the v1 kind to be served", || async {
        let p = v1::Person::new(
            "probe",
            v1::PersonSpec {
                name: "Pro Be".into(),
            },
        );
        at_v1.create(&PostParams::default(), &p).await.ok()
    })
    .await;
    first_conversion(&at_v2, "probe").await;

    // v2 → v1 (the storage version) refuses an empty first name.
    let nameless = v2::Person::new(
        "nameless",
        v2::PersonSpec {
            first: String::new(),
            last: "Smith".into(),
        },
    );
    let err = at_v2
        .create(&PostParams::default(), &nameless)
        .await
        .expect_err("the conversion refuses");
    let Error::Api(api) = &err else {
        panic!("not an API error: {}", kubeset_tests::error_chain(&err));
    };
    assert!(
        api.message.contains("conversion webhook")
            && api.message.contains(
                "converting refused.conversion.suite.kubeset.dev/v2 to \
                 refused.conversion.suite.kubeset.dev/v1: spec.first must not be empty"
            ),
        "{api:?}"
    );
    assert!(
        at_v1.get("nameless").await.is_err_and(|e| e.is_not_found()),
        "nothing was stored"
    );

    converting.stop(&ctx.client).await;
}

#[path = "../../../crates/kubeset-runtime/tests/conversion_scenarios/mod.rs"]
mod scenarios;

use kubeset as k;
use kubeset::runtime as rt;

/// The scenarios shared with the embedded server
/// (`crates/kubeset-runtime/tests/conversion_embedded.rs`), one after the
/// other on one CRD (CRDs are cluster-scoped; the scenarios' group is
/// their own).
#[tokio::test]
async fn conversion_scenarios_shared_with_the_embedded_server() {
    let ctx = connect!("conversion-scenarios");
    let c = scenarios::Converting::start(ctx.client.clone(), &ctx.ns).await;
    scenarios::written_in_one_version_read_in_the_other(&c, false).await;
    scenarios::a_list_converts_objects_written_in_both_versions(&c, false).await;
    scenarios::a_watch_sees_an_update_written_in_the_other_version(&c).await;
    scenarios::a_merge_patch_to_the_other_version(&c, false).await;
    scenarios::a_server_side_apply_to_the_other_version(&c, false).await;
    scenarios::failed_conversions_answer_as_the_real_server(&c).await;
    scenarios::hostile_answers_fail_the_read(&c).await;
    c.stop().await;
}
