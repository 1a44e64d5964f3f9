//! [`Recorder`]: Kubernetes Events about the objects a controller
//! manages, in kube-rs's shape (`kube::runtime::events::{Recorder,
//! Reporter, Event, EventType}`) with client-go's `EventRecorder`
//! behaviour (`k8s.io/client-go/tools/events`).
//!
//! - Writes `events.k8s.io/v1` Events: `regarding` (the object),
//!   `related` (the secondary object, if any), `reportingController` and
//!   `reportingInstance` from the [`Reporter`], `eventTime`, `action`,
//!   `reason`, `note` (cut to 1 KiB), `type`.
//! - **Series:** a publish with the same regarding, related, reason,
//!   action and reporting controller as one observed within the last
//!   6 minutes is the next of a series: its Event gets `series.count` and
//!   `series.lastObservedTime` instead of a new Event being created
//!   (client-go's key; the note is not part of it, so a failure whose
//!   message varies is still one series, carrying its first note).
//! - **Spam filter:** per regarding object and controller, 25 writes, then
//!   one per 5 minutes (client-go's defaults). Unlike client-go, an
//!   occurrence held back by the filter is still counted, and the next
//!   write carries the whole count: the server's `series.count` never
//!   under-reports. Unlike client-go (which writes a series' count only
//!   every 30 minutes), each allowed repeat is written at once.
//! - **Fallback:** when `events.k8s.io/v1` is not served (404 on create,
//!   not a missing namespace), the recorder writes `core/v1` Events from
//!   then on (`involvedObject`, `message`, `count`, `firstTimestamp`,
//!   `lastTimestamp`, `source.component`).
//!
//! Writes of one recorder are serialized (one at a time, as client-go's
//! broadcaster does); clones share the series and the filter.
//!
//! ```no_run
//! use kubeset_client::{Client, Resource as _, api::core::v1::Pod};
//! use kubeset_runtime::events::{Event, EventType, Recorder, Reporter};
//!
//! # async fn run(client: Client, pod: Pod) -> Result<(), Box<dyn std::error::Error>> {
//! let recorder = Recorder::new(client, Reporter::new("example.com/web-controller"));
//! recorder
//!     .publish(
//!         &Event {
//!             type_: EventType::Warning,
//!             reason: "ConfigInvalid".into(),
//!             note: Some("spec.port must be below 65536".into()),
//!             action: "Reconcile".into(),
//!             secondary: None,
//!         },
//!         &pod.object_ref(&()),
//!     )
//!     .await?;
//! # Ok(()) }
//! ```

mod rules;

use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use kubeset_client::api::core::v1::{
    Event as CoreEvent, EventSeries as CoreSeries, EventSource, ObjectReference,
};
use kubeset_client::api::events::v1::{Event as EventsV1, EventSeries};
use kubeset_client::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use kubeset_client::params::{PatchParams, PostParams};
use kubeset_client::{Api, Client, Patch};
use serde_json::json;
use tokio::sync::Mutex;

use rules::{Aggregator, Observation, SeriesKey, SpamFilter, truncate};

/// Longest `note` the API server accepts (events.k8s.io/v1: 1 KiB).
pub const NOTE_LIMIT: usize = 1024;
/// Longest `reason`, `action` and `reportingInstance` (128 characters).
pub const FIELD_LIMIT: usize = 128;

/// `Normal` or `Warning`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// Something expected happened.
    Normal,
    /// Something may need attention.
    Warning,
}

impl EventType {
    /// `Normal` or `Warning`, as written.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

/// What to publish (kube-rs's `events::Event`).
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Normal or Warning.
    pub type_: EventType,
    /// Why, in UpperCamelCase (`ConfigInvalid`); at most 128 characters.
    pub reason: String,
    /// A human-readable description (cut to [`NOTE_LIMIT`] bytes).
    pub note: Option<String>,
    /// What was done or failed (`Reconcile`, `Delete`); at most 128.
    pub action: String,
    /// Another object the Event concerns (`related`).
    pub secondary: Option<ObjectReference>,
}

impl Event {
    /// The note as written in either Event API: cut to [`NOTE_LIMIT`] bytes.
    fn written_note(&self) -> Option<String> {
        self.note
            .as_deref()
            .map(|n| truncate(n, NOTE_LIMIT).to_owned())
    }
}

/// Who reports: `reportingController` (`example.com/web-controller`) and
/// `reportingInstance` (kube-rs's `events::Reporter`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reporter {
    /// The controller's name.
    pub controller: String,
    /// This process; `None`: `$POD_NAME`, else `$HOSTNAME`, else the
    /// controller name.
    pub instance: Option<String>,
}

/// kube-rs's `Reporter::from("my-controller")`: [`Reporter::new`].
///
/// ```
/// use kubeset_runtime::events::Reporter;
/// let r: Reporter = "web-controller".into();
/// assert_eq!((r.controller.as_str(), r.instance), ("web-controller", None));
/// ```
impl From<&str> for Reporter {
    fn from(controller: &str) -> Self {
        Reporter::new(controller)
    }
}

/// kube-rs's `Reporter::from(name)` with an owned name.
impl From<String> for Reporter {
    fn from(controller: String) -> Self {
        Reporter {
            controller,
            instance: None,
        }
    }
}

impl Reporter {
    /// A reporter named `controller`, instance from the environment.
    pub fn new(controller: &str) -> Self {
        Reporter {
            controller: controller.to_owned(),
            instance: None,
        }
    }

    fn instance(&self) -> String {
        let from_env = ["POD_NAME", "HOSTNAME"]
            .iter()
            .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()));
        let instance = self
            .instance
            .clone()
            .or(from_env)
            .unwrap_or_else(|| self.controller.clone());
        truncate(&instance, FIELD_LIMIT).to_owned()
    }
}

/// Why a publish failed, before it is told as the client's error (the
/// type kube-rs's `publish` returns).
#[derive(Debug, thiserror::Error)]
enum RecorderError {
    /// A required field is empty or too long.
    #[error("event field {field} must be 1 to {FIELD_LIMIT} characters")]
    Invalid {
        /// `reason` or `action`.
        field: &'static str,
    },
    /// The regarding object has no name.
    #[error("the regarding object has no name")]
    UnnamedObject,
    /// Writing the Event failed.
    #[error("writing the event {name} failed: {source}")]
    Write {
        /// The Event's name.
        name: String,
        /// The request's error.
        #[source]
        source: kubeset_client::Error,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    EventsV1,
    CoreV1,
}

#[derive(Debug)]
struct State {
    series: Aggregator,
    spam: SpamFilter,
    mode: Mode,
}

/// Publishes Events (see the module docs). Cheap to clone.
#[derive(Debug, Clone)]
pub struct Recorder {
    client: Client,
    reporter: Reporter,
    instance: String,
    state: Arc<Mutex<State>>,
}

/// What one publish writes.
enum Write {
    Create,
    Series { name: String, count: i32 },
    Held,
}

impl Recorder {
    /// A recorder writing as `reporter`.
    pub fn new(client: Client, reporter: Reporter) -> Self {
        Recorder {
            instance: reporter.instance(),
            client,
            reporter,
            state: Arc::new(Mutex::new(State {
                series: Aggregator::default(),
                spam: SpamFilter::default(),
                mode: Mode::EventsV1,
            })),
        }
    }

    /// Publishes `ev` about `reference` (from
    /// [`Resource::object_ref`](kubeset_client::Resource::object_ref)
    /// or [`ObjectRef::to_object_reference`](crate::ObjectRef::to_object_reference)).
    /// `Ok` also when the spam filter held the write back.
    ///
    /// The error is the client's, as kube-rs's `publish` returns it (so
    /// `.map_err(Error::KubeError)` ports): the write's own error, or
    /// [`InvalidRequest`](kubeset_client::Error::InvalidRequest) naming
    /// an empty or too long `reason`/`action`, or a reference without a
    /// name.
    pub async fn publish(
        &self,
        ev: &Event,
        reference: &ObjectReference,
    ) -> Result<(), kubeset_client::Error> {
        self.try_publish(ev, reference).await.map_err(|e| match e {
            RecorderError::Write { source, .. } => source,
            invalid => kubeset_client::Error::InvalidRequest {
                message: invalid.to_string(),
            },
        })
    }

    async fn try_publish(
        &self,
        ev: &Event,
        reference: &ObjectReference,
    ) -> Result<(), RecorderError> {
        for (field, value) in [("reason", &ev.reason), ("action", &ev.action)] {
            if value.is_empty() || value.chars().count() > FIELD_LIMIT {
                return Err(RecorderError::Invalid { field });
            }
        }
        let regarding_name = reference.name.clone().ok_or(RecorderError::UnnamedObject)?;
        let key = SeriesKey {
            regarding: describe(reference),
            related: ev.secondary.as_ref().map(describe),
            reason: ev.reason.clone(),
            action: ev.action.clone(),
            reporting_controller: self.reporter.controller.clone(),
        };
        let now = Instant::now();
        let fresh_name = format!("{regarding_name}.{:x}", unix_nanos());
        // One write at a time: the lock is held across the request.
        let mut state = self.state.lock().await;
        let write = match state.series.observe(&key, &fresh_name, now) {
            _ if !state
                .spam
                .allow(&key.reporting_controller, &key.regarding, now) =>
            {
                Write::Held
            }
            Observation::New => Write::Create,
            Observation::Repeat { name, count } => Write::Series { name, count },
        };
        let namespace = reference
            .namespace
            .clone()
            .filter(|ns| !ns.is_empty())
            .unwrap_or_else(|| "default".to_owned());
        match write {
            Write::Held => Ok(()),
            Write::Create => {
                self.create(&mut state, ev, reference, &namespace, &fresh_name, 1)
                    .await
            }
            Write::Series { name, count } => {
                match self
                    .update_series(state.mode, &namespace, &name, count)
                    .await
                {
                    Err(RecorderError::Write { source, .. }) if source.is_not_found() => {
                        // Expired (Events live an hour): start again under
                        // the old name, keeping the count.
                        self.create(&mut state, ev, reference, &namespace, &name, count)
                            .await
                    }
                    other => other,
                }
            }
        }
    }

    async fn create(
        &self,
        state: &mut State,
        ev: &Event,
        reference: &ObjectReference,
        namespace: &str,
        name: &str,
        count: i32,
    ) -> Result<(), RecorderError> {
        if state.mode == Mode::EventsV1 {
            let body = self.events_v1(ev, reference, namespace, name, count);
            let api: Api<EventsV1> = Api::namespaced(self.client.clone(), namespace);
            match api.create(&PostParams::default(), &body).await {
                Ok(_) => return Ok(()),
                Err(e) if not_served(&e) => {
                    tracing::info!("events.k8s.io/v1 is not served; writing core/v1 Events");
                    state.mode = Mode::CoreV1;
                }
                Err(source) => {
                    return Err(RecorderError::Write {
                        name: name.to_owned(),
                        source,
                    });
                }
            }
        }
        let body = self.core_v1(ev, reference, namespace, name, count);
        let api: Api<CoreEvent> = Api::namespaced(self.client.clone(), namespace);
        api.create(&PostParams::default(), &body)
            .await
            .map(drop)
            .map_err(|source| RecorderError::Write {
                name: name.to_owned(),
                source,
            })
    }

    async fn update_series(
        &self,
        mode: Mode,
        namespace: &str,
        name: &str,
        count: i32,
    ) -> Result<(), RecorderError> {
        let now = MicroTime::now();
        let result = match mode {
            Mode::EventsV1 => {
                let patch = json!({"series": {"count": count, "lastObservedTime": now}});
                Api::<EventsV1>::namespaced(self.client.clone(), namespace)
                    .patch(name, &PatchParams::default(), &Patch::Merge(patch))
                    .await
                    .map(drop)
            }
            Mode::CoreV1 => {
                let patch = json!({"count": count, "lastTimestamp": Time::now(),
                    "series": {"count": count, "lastObservedTime": now}});
                Api::<CoreEvent>::namespaced(self.client.clone(), namespace)
                    .patch(name, &PatchParams::default(), &Patch::Merge(patch))
                    .await
                    .map(drop)
            }
        };
        result.map_err(|source| RecorderError::Write {
            name: name.to_owned(),
            source,
        })
    }

    fn events_v1(
        &self,
        ev: &Event,
        reference: &ObjectReference,
        namespace: &str,
        name: &str,
        count: i32,
    ) -> EventsV1 {
        let now = MicroTime::now();
        EventsV1 {
            metadata: meta(namespace, name),
            action: Some(ev.action.clone()),
            reason: Some(ev.reason.clone()),
            note: ev.written_note(),
            type_: Some(ev.type_.as_str().to_owned()),
            regarding: Some(reference.clone()),
            related: ev.secondary.clone(),
            reporting_controller: Some(self.reporter.controller.clone()),
            reporting_instance: Some(self.instance.clone()),
            series: (count > 1).then_some(EventSeries {
                count,
                last_observed_time: Some(now),
            }),
            event_time: Some(now),
            ..EventsV1::default()
        }
    }

    fn core_v1(
        &self,
        ev: &Event,
        reference: &ObjectReference,
        namespace: &str,
        name: &str,
        count: i32,
    ) -> CoreEvent {
        let now = Time::now();
        CoreEvent {
            metadata: meta(namespace, name),
            involved_object: reference.clone(),
            related: ev.secondary.clone(),
            action: Some(ev.action.clone()),
            reason: Some(ev.reason.clone()),
            message: ev.written_note(),
            type_: Some(ev.type_.as_str().to_owned()),
            reporting_component: Some(self.reporter.controller.clone()),
            reporting_instance: Some(self.instance.clone()),
            source: Some(EventSource {
                component: Some(self.reporter.controller.clone()),
                host: None,
            }),
            count: Some(count),
            first_timestamp: Some(now),
            last_timestamp: Some(now),
            series: (count > 1).then(|| CoreSeries {
                count: Some(count),
                last_observed_time: Some(MicroTime::now()),
            }),
            ..CoreEvent::default()
        }
    }
}

fn meta(namespace: &str, name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: Some(namespace.to_owned()),
        ..ObjectMeta::default()
    }
}

/// `kind/namespace/name/uid`: the identity of a reference in the rules.
fn describe(r: &ObjectReference) -> String {
    let part = |s: &Option<String>| s.clone().unwrap_or_default();
    format!(
        "{}/{}/{}/{}/{}",
        part(&r.api_version),
        part(&r.kind),
        part(&r.namespace),
        part(&r.name),
        part(&r.uid)
    )
}

/// A 404 on create that is not a missing namespace: the group is not served.
fn not_served(e: &kubeset_client::Error) -> bool {
    let Some(api) = e.api_error() else {
        return false;
    };
    let namespace_missing = api
        .details
        .as_ref()
        .and_then(|d| d.get("kind"))
        .is_some_and(|k| k == "namespaces");
    api.is_not_found() && !namespace_missing
}

fn unix_nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_written_note_is_cut_to_the_limit() {
        let event = |note: Option<String>| Event {
            type_: EventType::Normal,
            reason: "Tested".into(),
            note,
            action: "Test".into(),
            secondary: None,
        };
        let long = "é".repeat(NOTE_LIMIT);
        let written = event(Some(long.clone())).written_note().unwrap();
        assert_eq!(written, &long[..NOTE_LIMIT]);
        assert_eq!(
            event(Some("short".into())).written_note().as_deref(),
            Some("short")
        );
        assert_eq!(event(None).written_note(), None);
    }
}
