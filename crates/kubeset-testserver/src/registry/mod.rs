//! The registry: one [`Strategy`] per kind (or family of kinds), as
//! kube-apiserver's `pkg/registry/<group>/<resource>/strategy.go`, looked
//! up once per request from one table ([`of`]). A strategy owns its kind's
//! rules or names the shared module that holds them (a printer's cells in
//! [`crate::printers`], a field set in [`crate::fields`], an immutability
//! check in [`crate::immutable`], defaults in [`crate::defaults`], the
//! validation of its own fields in [`crate::admission::builtin`]), so
//! adding a kind means one file here and one row in [`lookup`].
//!
//! The generic store ([`crate::store::Store`]) calls the hooks in
//! kube-apiserver's order (`rest.BeforeCreate`, `rest.BeforeUpdate`, the
//! generic registry's `Create`/`Update`/`Delete`):
//!
//! - **decode:** every written object of a built-in kind, as it is
//!   decoded and again after a mutating policy changed it, gets its
//!   `SetDefaults_*` ([`Strategy::on_decode`]).
//! - **create:** the name ([`Strategy::name_rule`]); `PrepareForCreate`
//!   (status dropped unless [`Strategy::keeps_status_on_create`]);
//!   admission (metadata's rules and the kind's own,
//!   [`Strategy::validate`]); identity and `generation` where
//!   [`Strategy::tracks_generation`], `PrepareForCreate`'s values
//!   ([`Strategy::on_create`]); the field manager (comparing against the
//!   kind's Go zero value, [`Strategy::go_zero`]); what is owned by no one
//!   ([`Strategy::after_record`]); then, under the store's lock,
//!   [`Strategy::before_insert`] (a CRD's names, a Service's cluster IPs)
//!   and the write ([`Strategy::defines_resources`]: a CRD serves its
//!   resources from then on).
//! - **update:** identity kept; `PrepareForUpdate` (the status/spec split
//!   of [`crate::apply::Scope`]); admission ([`Strategy::validate`] with
//!   the stored object, for a client's write); for a whole-object write
//!   the conversion ([`Strategy::on_update`]) and
//!   [`Strategy::validate_update`] (immutable fields, values carried
//!   over); the field manager; `generation` bumped on a spec change;
//!   `PrepareForUpdate`'s values for a client's write of the main
//!   resource ([`Strategy::prepare_for_update`]);
//!   [`Strategy::allow_unconditional_update`] is read by the verbs before
//!   (an update without `resourceVersion`).
//! - **delete:** preconditions, policies; [`Strategy::held_by_spec`] (a
//!   namespace's `spec.finalizers` make it `Terminating`), metadata
//!   finalizers; once gone, [`Strategy::cascade`] (a namespace's objects,
//!   a CRD's resources).
//! - **read:** [`Strategy::fields`] (`GetAttrs`: field selectors),
//!   [`Strategy::printer`] (the table convertor).
//! - **routing:** [`Strategy::subresource`], the subresources that write
//!   one part of an object ([`crate::subresource`]).
//!
//! Defaults (`SetDefaults_*`, `PrepareForCreate`'s and
//! `PrepareForUpdate`'s values, the default admission plugins') and
//! built-in validation are dispatched here too, by the hooks above: their
//! rule bodies stay in [`crate::defaults`] and [`crate::admission::builtin`]
//! (as kube-apiserver keeps `pkg/apis/<group>/v1/defaults.go` and
//! `validation/validation.go` apart from its strategies), and a kind's
//! strategy names those of its kind. Custom resources
//! ([`crds::CustomResources`]) get none of them: their defaults and
//! validation are their CRD's schema's ([`crate::admission`]).

use std::borrow::Cow;

use http::Method;
use serde_json::Value;

use crate::fields::FieldSet;
use crate::immutable::Cause;
use crate::printers::Printer;
use crate::resources::Resource;
use crate::status::ApiError;
use crate::validation::NameRule;

mod config;
mod crds;
mod events;
mod misc;
mod namespaces;
mod nodes;
mod pods;
mod services;
mod storage;
mod workloads;

/// What the deletion of an object takes along, once it is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cascade {
    /// Nothing.
    Nothing,
    /// Every namespaced object in the namespace of that name.
    NamespaceContents,
    /// The resources a CRD defines, and their objects.
    DefinedResources,
}

/// A kind's rules, with kube-apiserver's defaults: a strategy overrides
/// only what its kind does differently.
pub(crate) trait Strategy: Sync {
    /// The rule for the kind's names (`ValidateObjectMeta`'s name
    /// function): a DNS subdomain unless the kind says otherwise.
    fn name_rule(&self) -> NameRule {
        NameRule::Subdomain
    }

    /// `PrepareForCreate`: whether a create keeps the body's `status`
    /// although the kind has a status subresource.
    fn keeps_status_on_create(&self) -> bool {
        false
    }

    /// Whether `metadata.generation` is tracked on `obj`: by default where
    /// it has a spec or the kind a status subresource.
    fn tracks_generation(&self, res: &Resource, obj: &Value) -> bool {
        obj.get("spec").is_some() || res.has_status()
    }

    /// The kind's `SetDefaults_*` (`pkg/apis/<group>/v1/defaults.go`) on
    /// an object as it is decoded: every write of a built-in kind (create,
    /// update, each patch's result, an apply's merged object), so that the
    /// writer owns them in `managedFields`. The rules are
    /// [`crate::defaults`]'.
    fn on_decode(&self, obj: &mut Value) {
        let _ = obj;
    }

    /// Go's zero value of the kind beyond its empty `spec` and `status`
    /// (the structs and lists its Go type never omits), which the field
    /// manager compares a create against ([`crate::defaults::zero`]).
    fn go_zero(&self, zero: &mut Value) {
        let _ = zero;
    }

    /// `PrepareForCreate`'s values for a new object of `res` (which has its
    /// `uid` already: a Job's generated selector names it), written before
    /// the field manager records the create.
    fn on_create(&self, res: &Resource, obj: &mut Value) {
        let _ = (res, obj);
    }

    /// What is written on a new object after the field manager has recorded
    /// the create, so owned by no one: the registry's `PrepareForCreate`
    /// values of that kind and what kube-apiserver's default admission
    /// plugins add (a Pod's priority and tolerations, a storage object's
    /// protection finalizer, a Node's `not-ready` taint).
    fn after_record(&self, obj: &mut Value) {
        let _ = obj;
    }

    /// `PrepareForUpdate`'s values: what a client's update `new` keeps or
    /// derives from the live object `live`, after the field manager has
    /// recorded the write.
    fn prepare_for_update(&self, live: &Value, new: &mut Value) {
        let _ = (live, new);
    }

    /// The v1 to internal conversion of a whole-object update of the kind
    /// (a Secret's `stringData` moved into `data`).
    fn on_update(&self, obj: &mut Value) {
        let _ = obj;
    }

    /// `Validate` (`old` `None`) and `ValidateUpdate` of the kind's own
    /// fields, as `pkg/apis/<group>/validation` checks them (the rules in
    /// [`crate::admission::builtin`]): the causes of `obj`, a write of
    /// `res`, in the real server's order; empty for a kind validated
    /// beyond its metadata by nothing.
    fn validate(&self, res: &Resource, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
        let _ = (res, obj, old);
        Vec::new()
    }

    /// The create's last step under the store's lock (`BeforeCreate`'s
    /// validation of what needs the stored objects, allocations):
    /// `siblings` are the stored objects of the same resource.
    fn before_insert(
        &self,
        res: &Resource,
        name: &str,
        obj: &mut Value,
        siblings: &mut dyn Iterator<Item = Cow<'_, Value>>,
    ) -> Result<(), ApiError> {
        let _ = (res, name, obj, siblings);
        Ok(())
    }

    /// `ValidateUpdate`'s immutable fields of a whole-object update of
    /// `live` to `new`, which may carry values over (a Service's cluster
    /// IPs). Causes in the real server's order.
    fn validate_update(&self, live: &Value, new: &mut Value) -> Vec<Cause> {
        let _ = (live, new);
        Vec::new()
    }

    /// `AllowUnconditionalUpdate`: whether an update may omit
    /// `resourceVersion`.
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// Whether `obj`'s own `spec.finalizers` hold its deletion (a
    /// namespace's `kubernetes`), marking it `Terminating`.
    fn held_by_spec(&self, obj: &Value) -> bool {
        let _ = obj;
        false
    }

    /// What the deletion of an object takes along.
    fn cascade(&self) -> Cascade {
        Cascade::Nothing
    }

    /// Whether objects of this kind define resources (CRDs): the store
    /// serves or drops them as such an object is written.
    fn defines_resources(&self) -> bool {
        false
    }

    /// `GetAttrs`: the labels a field selector may name, with their paths.
    fn fields(&self, res: &Resource) -> FieldSet {
        let _ = res;
        FieldSet::default()
    }

    /// The table convertor: the kind's columns and cells (`None`: the
    /// default convertor, Name and Created At).
    fn printer(&self) -> Option<Printer> {
        None
    }

    /// The subresource `name` that writes one part of an object of the
    /// kind, if the kind has it: `scale` for every kind (answered 404 where
    /// the kind declares no scale paths).
    fn subresource(&self, name: &str) -> Option<Sub> {
        scale(name)
    }
}

/// The subresources that write one part of their parent, served by
/// [`crate::subresource`]; a kind names its own ([`Strategy::subresource`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sub {
    Scale,
    Binding,
    EphemeralContainers,
    Resize,
    Token,
    Finalize,
    Approval,
}

impl Sub {
    /// The subresource's path segment.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Scale => "scale",
            Self::Binding => "binding",
            Self::EphemeralContainers => "ephemeralcontainers",
            Self::Resize => "resize",
            Self::Token => "token",
            Self::Finalize => "finalize",
            Self::Approval => "approval",
        }
    }

    /// Whether the subresource answers `method`.
    pub(crate) fn allows(self, method: &Method) -> bool {
        match self {
            Self::Binding | Self::Token => method == Method::POST,
            Self::Finalize => method == Method::PUT,
            Self::Scale | Self::EphemeralContainers | Self::Resize | Self::Approval => {
                method == Method::GET || method == Method::PUT || method == Method::PATCH
            }
        }
    }
}

/// `scale`, which every kind answers (404 where it has no scale paths).
fn scale(name: &str) -> Option<Sub> {
    (name == "scale").then_some(Sub::Scale)
}

/// A kind with kube-apiserver's defaults for every rule.
struct Plain;

impl Strategy for Plain {}

/// The strategy of `res`.
pub(crate) fn of(res: &Resource) -> &'static dyn Strategy {
    if res.custom {
        return &crds::CustomResources;
    }
    lookup(&res.group, &res.plural)
}

/// The strategy of the built-in kind `plural` of `group`: the table, one
/// row per kind with a rule of its own.
pub(crate) fn lookup(group: &str, plural: &str) -> &'static dyn Strategy {
    match (group, plural) {
        ("", "pods") => &pods::Pods,
        ("", "podtemplates") => &pods::PodTemplates,
        ("", "nodes") => &nodes::Nodes,
        ("", "namespaces") => &namespaces::Namespaces,
        ("", "services") => &services::Services,
        ("", "configmaps") => &config::ConfigMaps,
        ("", "secrets") => &config::Secrets,
        ("", "serviceaccounts") => &config::ServiceAccounts,
        ("", "persistentvolumeclaims") => &storage::Claims,
        ("", "persistentvolumes") => &storage::Volumes,
        ("storage.k8s.io", "storageclasses") => &storage::Classes,
        ("", "events") => &events::CoreEvents,
        ("events.k8s.io", "events") => &events::EventsV1,
        ("", "replicationcontrollers") => &workloads::ReplicationControllers,
        ("apps", "deployments") => &workloads::DEPLOYMENTS,
        ("apps", "replicasets") => &workloads::REPLICA_SETS,
        ("apps", "statefulsets") => &workloads::StatefulSets,
        ("apps", "daemonsets") => &workloads::DAEMON_SETS,
        ("batch", "jobs") => &workloads::Jobs,
        ("batch", "cronjobs") => &workloads::CronJobs,
        ("apiextensions.k8s.io", "customresourcedefinitions") => &crds::Definitions,
        ("coordination.k8s.io", "leases") => &misc::Leases,
        ("networking.k8s.io", "ingresses") => &misc::INGRESSES,
        ("networking.k8s.io", "ingressclasses") => &misc::INGRESS_CLASSES,
        ("policy", "poddisruptionbudgets") => &misc::DISRUPTION_BUDGETS,
        ("autoscaling", "horizontalpodautoscalers") => &misc::Autoscalers,
        ("certificates.k8s.io", "certificatesigningrequests") => &misc::SigningRequests,
        ("resource.k8s.io", "resourceslices") => &misc::ResourceSlices,
        ("rbac.authorization.k8s.io", "roles" | "clusterroles") => &misc::Roles,
        ("rbac.authorization.k8s.io", "rolebindings" | "clusterrolebindings") => {
            &misc::RoleBindings
        }
        _ => &Plain,
    }
}
