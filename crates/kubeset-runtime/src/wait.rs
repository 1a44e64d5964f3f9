//! Waiting for one object to reach a condition: [`await_condition`] and
//! the [`conditions`] (kube-rs's `kube::runtime::wait` names and shapes,
//! so code ports by changing imports).
//!
//! With the `conditions` feature (kubeset's `conditions`), [`conditions`]
//! also has the typed conditions of kube-rs (`is_crd_established`,
//! `is_pod_running`, …), which need the models of core, apps, batch,
//! networking and apiextensions v1.
//!
//! Unlike kube-rs, a watch failure that can pass (a broken stream, a
//! retryable server status) does not end the wait: the watcher resumes and
//! the wait goes on; only a failure that cannot pass (the object does not
//! decode as `K`, a 403) ends it with [`Error::ProbeFailed`]. Bound the
//! total time with `tokio::time::timeout`.

use futures::StreamExt as _;
use kubeset_client::{Api, Resource};
use serde::de::DeserializeOwned;

use crate::watcher::{Event, WatcherConfig, WatcherError, watcher};

/// Why [`await_condition`] stopped without an answer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Watching the object failed in a way retrying cannot fix.
    #[error("watching {name} failed: {source}")]
    ProbeFailed {
        /// The object's name.
        name: String,
        /// The watcher's error.
        #[source]
        source: WatcherError,
    },
}

/// A test on the current state of one object (`None`: it does not exist).
/// Any `Fn(Option<&K>) -> bool` is one.
pub trait Condition<K> {
    /// Whether `obj` (the object's current state, `None` once it is gone)
    /// satisfies the condition.
    fn matches_object(&self, obj: Option<&K>) -> bool;

    /// The negation of this condition.
    fn not(self) -> conditions::Not<Self>
    where
        Self: Sized,
    {
        conditions::Not(self)
    }

    /// Both this condition and `other`.
    fn and<Other: Condition<K>>(self, other: Other) -> conditions::And<Self, Other>
    where
        Self: Sized,
    {
        conditions::And(self, other)
    }

    /// Either this condition or `other`.
    fn or<Other: Condition<K>>(self, other: Other) -> conditions::Or<Self, Other>
    where
        Self: Sized,
    {
        conditions::Or(self, other)
    }
}

impl<K, F: Fn(Option<&K>) -> bool> Condition<K> for F {
    fn matches_object(&self, obj: Option<&K>) -> bool {
        self(obj)
    }
}

/// Whether a watcher error may pass on its own (the watcher retries it).
fn transient(err: &WatcherError) -> bool {
    match err {
        WatcherError::InitialList { source }
        | WatcherError::WatchOpen { source }
        | WatcherError::WatchStream { source } => {
            source.is_retryable() || matches!(err, WatcherError::WatchStream { .. })
        }
        WatcherError::WatchEvent { source } => source.is_retryable(),
        WatcherError::Decode { .. } | WatcherError::DecodeProtobuf { .. } => false,
        _ => true,
    }
}

/// Waits until the object `name` of `api` satisfies `cond`, and returns its
/// state then (`None` if the condition held for an absent object). Checks
/// the current state first (an initial list by `metadata.name`), then every
/// change. Waits without limit: bound it with `tokio::time::timeout`.
pub async fn await_condition<K>(
    api: Api<K>,
    name: &str,
    cond: impl Condition<K>,
) -> Result<Option<K>, Error>
where
    K: Resource + DeserializeOwned + Clone + Send + 'static,
{
    let config = WatcherConfig::default().fields(&format!("metadata.name={name}"));
    let mut events = std::pin::pin!(watcher(api, config));
    // The object as last seen; `None` until it appears or after deletion.
    let mut current: Option<K> = None;
    // During a relist, the object reappears by InitApply before InitDone.
    let mut relist: Option<Option<K>> = None;
    while let Some(item) = events.next().await {
        let event = match item {
            Ok(event) => event,
            Err(source) if transient(&source) => continue,
            Err(source) => {
                return Err(Error::ProbeFailed {
                    name: name.to_owned(),
                    source,
                });
            }
        };
        match event {
            Event::Init => {
                relist = Some(None);
                continue;
            }
            Event::InitApply(obj) => {
                if let Some(seen) = relist.as_mut() {
                    *seen = Some(obj);
                }
                continue;
            }
            Event::InitDone => current = relist.take().flatten(),
            Event::Apply(obj) => current = Some(obj),
            Event::Delete(_) => current = None,
        }
        if cond.matches_object(current.as_ref()) {
            return Ok(current);
        }
    }
    // The watcher never ends; a closed stream is a dropped runtime.
    Ok(current.filter(|c| cond.matches_object(Some(c))))
}

/// The conditions kube-rs ships, and combinators.
pub mod conditions {
    use kubeset_client::Resource;
    #[cfg(feature = "conditions")]
    use kubeset_client::api::apps::v1::Deployment;
    #[cfg(feature = "conditions")]
    use kubeset_client::api::batch::v1::Job;
    #[cfg(feature = "conditions")]
    use kubeset_client::api::core::v1::{Pod, Service};
    #[cfg(feature = "conditions")]
    use kubeset_client::api::networking::v1::Ingress;
    #[cfg(feature = "conditions")]
    use kubeset_client::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

    use super::Condition;

    /// The object is gone, or was replaced by one with another UID.
    #[must_use]
    pub fn is_deleted<K: Resource>(uid: &str) -> impl Condition<K> + '_ {
        move |obj: Option<&K>| obj.is_none_or(|o| o.metadata().uid.as_deref() != Some(uid))
    }

    /// The CRD's `Established` condition is `True`: its kind is served.
    ///
    /// ```no_run
    /// use kubeset_client::{Api, Client, CustomResourceExt};
    /// use kubeset_client::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    /// use kubeset_runtime::wait::{await_condition, conditions};
    /// # async fn run<K: CustomResourceExt>(client: Client) -> Result<(), Box<dyn std::error::Error>> {
    /// let crds: Api<CustomResourceDefinition> = Api::cluster(client);
    /// let established = await_condition(crds, K::crd_name(), conditions::is_crd_established());
    /// // Bound the wait: await_condition itself waits as long as it takes.
    /// tokio::time::timeout(std::time::Duration::from_secs(30), established).await??;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "conditions")]
    #[must_use]
    pub fn is_crd_established() -> impl Condition<CustomResourceDefinition> {
        |obj: Option<&CustomResourceDefinition>| {
            obj.and_then(|crd| crd.status.as_ref())
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|cs| {
                    cs.iter()
                        .any(|c| c.type_ == "Established" && c.status == "True")
                })
        }
    }

    /// The pod's phase is `Running`.
    #[cfg(feature = "conditions")]
    #[must_use]
    pub fn is_pod_running() -> impl Condition<Pod> {
        |obj: Option<&Pod>| {
            obj.and_then(|p| p.status.as_ref())
                .and_then(|s| s.phase.as_deref())
                == Some("Running")
        }
    }

    /// The job has a `Complete` condition that is `True`.
    #[cfg(feature = "conditions")]
    #[must_use]
    pub fn is_job_completed() -> impl Condition<Job> {
        |obj: Option<&Job>| {
            obj.and_then(|j| j.status.as_ref())
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|cs| {
                    cs.iter()
                        .any(|c| c.type_ == "Complete" && c.status == "True")
                })
        }
    }

    /// The deployment's rollout is complete: its `Progressing` condition
    /// has reason `NewReplicaSetAvailable` (kubectl rollout status's test).
    #[cfg(feature = "conditions")]
    #[must_use]
    pub fn is_deployment_completed() -> impl Condition<Deployment> {
        |obj: Option<&Deployment>| {
            obj.and_then(|d| d.status.as_ref())
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|cs| {
                    // `type` and `status` are required until v1.36 (a
                    // `String`) and optional from v1.37 (`Option<String>`):
                    // `Option::from` reads either form.
                    cs.iter().any(|c| {
                        Option::<&String>::from(&c.type_).is_some_and(|t| t == "Progressing")
                            && Option::<&String>::from(&c.status).is_some_and(|s| s == "True")
                            && c.reason.as_deref() == Some("NewReplicaSetAvailable")
                    })
                })
        }
    }

    /// A `LoadBalancer` service has an address (an IP or a hostname on every
    /// ingress point); services of other types match at once.
    #[cfg(feature = "conditions")]
    #[must_use]
    pub fn is_service_loadbalancer_provisioned() -> impl Condition<Service> {
        |obj: Option<&Service>| {
            let Some(svc) = obj else { return false };
            let lb = svc.spec.as_ref().and_then(|s| s.type_.as_deref()) == Some("LoadBalancer");
            if !lb {
                return true;
            }
            svc.status
                .as_ref()
                .and_then(|s| s.load_balancer.as_ref())
                .and_then(|lb| lb.ingress.as_ref())
                .is_some_and(|ing| {
                    !ing.is_empty() && ing.iter().all(|i| i.ip.is_some() || i.hostname.is_some())
                })
        }
    }

    /// The ingress has an address (an IP or a hostname on every ingress
    /// point).
    #[cfg(feature = "conditions")]
    #[must_use]
    pub fn is_ingress_provisioned() -> impl Condition<Ingress> {
        |obj: Option<&Ingress>| {
            obj.and_then(|i| i.status.as_ref())
                .and_then(|s| s.load_balancer.as_ref())
                .and_then(|lb| lb.ingress.as_ref())
                .is_some_and(|ing| {
                    !ing.is_empty() && ing.iter().all(|i| i.ip.is_some() || i.hostname.is_some())
                })
        }
    }

    /// See [`Condition::not`].
    #[derive(Debug, Clone, Copy)]
    pub struct Not<A>(pub(super) A);

    impl<K, A: Condition<K>> Condition<K> for Not<A> {
        fn matches_object(&self, obj: Option<&K>) -> bool {
            !self.0.matches_object(obj)
        }
    }

    /// See [`Condition::and`].
    #[derive(Debug, Clone, Copy)]
    pub struct And<A, B>(pub(super) A, pub(super) B);

    impl<K, A: Condition<K>, B: Condition<K>> Condition<K> for And<A, B> {
        fn matches_object(&self, obj: Option<&K>) -> bool {
            self.0.matches_object(obj) && self.1.matches_object(obj)
        }
    }

    /// See [`Condition::or`].
    #[derive(Debug, Clone, Copy)]
    pub struct Or<A, B>(pub(super) A, pub(super) B);

    impl<K, A: Condition<K>, B: Condition<K>> Condition<K> for Or<A, B> {
        fn matches_object(&self, obj: Option<&K>) -> bool {
            self.0.matches_object(obj) || self.1.matches_object(obj)
        }
    }
}

#[cfg(all(test, feature = "conditions"))]
mod tests {
    use kubeset_client::api::core::v1::{Pod, PodStatus};
    use kubeset_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::Condition as _;
    use super::conditions::*;

    fn pod(uid: &str, phase: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                uid: Some(uid.to_owned()),
                ..ObjectMeta::default()
            },
            status: Some(PodStatus {
                phase: Some(phase.to_owned()),
                ..PodStatus::default()
            }),
            ..Pod::default()
        }
    }

    #[test]
    fn service_and_ingress_conditions() {
        use kubeset_client::api::core::v1::{
            LoadBalancerIngress, LoadBalancerStatus, Service, ServiceSpec, ServiceStatus,
        };
        let svc = |type_: &str, ip: Option<&str>| Service {
            spec: Some(ServiceSpec {
                type_: Some(type_.to_owned()),
                ..ServiceSpec::default()
            }),
            status: ip.map(|ip| ServiceStatus {
                load_balancer: Some(LoadBalancerStatus {
                    ingress: Some(vec![LoadBalancerIngress {
                        ip: Some(ip.to_owned()),
                        ..LoadBalancerIngress::default()
                    }]),
                }),
                ..ServiceStatus::default()
            }),
            ..Service::default()
        };
        let c = is_service_loadbalancer_provisioned();
        assert!(c.matches_object(Some(&svc("ClusterIP", None))));
        assert!(!c.matches_object(Some(&svc("LoadBalancer", None))));
        assert!(c.matches_object(Some(&svc("LoadBalancer", Some("10.0.0.1")))));
        assert!(!c.matches_object(None));
        assert!(!is_ingress_provisioned().matches_object(None));
    }

    #[test]
    fn pod_conditions_and_combinators() {
        let running = pod("a", "Running");
        let pending = pod("a", "Pending");
        assert!(is_pod_running().matches_object(Some(&running)));
        assert!(!is_pod_running().matches_object(Some(&pending)));
        assert!(!is_pod_running().matches_object(None));
        assert!(is_pod_running().not().matches_object(Some(&pending)));
        assert!(is_deleted::<Pod>("a").matches_object(None));
        assert!(is_deleted::<Pod>("b").matches_object(Some(&running)));
        assert!(!is_deleted::<Pod>("a").matches_object(Some(&running)));
        let either = is_pod_running().or(is_deleted::<Pod>("a"));
        assert!(either.matches_object(None));
        assert!(
            !is_pod_running()
                .and(is_deleted::<Pod>("b"))
                .matches_object(Some(&pending))
        );
    }
}
