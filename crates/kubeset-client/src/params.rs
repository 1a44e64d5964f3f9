//! Typed query parameters of the Kubernetes API verbs.
//!
//! Each parameter struct turns itself into query pairs with
//! [`QueryParams::query_pairs`]; the request layer encodes them. This module
//! does no I/O, so every rule here is checked by plain unit tests.

use std::borrow::Cow;
use std::time::Duration;

/// Something that becomes query parameters of a request.
pub trait QueryParams {
    /// Appends this struct's `(key, value)` pairs to `out`, in a fixed order.
    fn query_pairs(&self, out: &mut Vec<(&'static str, String)>);
}

/// No query parameters.
impl QueryParams for () {
    fn query_pairs(&self, _out: &mut Vec<(&'static str, String)>) {}
}

/// Writes the builders several parameter structs share, each once:
/// `builders!(Type: name, …)` adds the named ones to `Type` (every struct
/// holding them has the fields they set, under the same names and types).
macro_rules! builders {
    ($ty:ident: $($name:ident),+) => {
        impl $ty {
            $(builders!(@$name $ty);)+
        }
    };
    (@labels $ty:ident) => {
        /// Filters by a label selector (`labelSelector`, e.g. `app=web`).
        pub fn labels(mut self, selector: &str) -> Self {
            self.label_selector = Some(selector.to_owned());
            self
        }
    };
    (@fields $ty:ident) => {
        /// Filters by a field selector (`fieldSelector`, e.g. `metadata.name=foo`).
        pub fn fields(mut self, selector: &str) -> Self {
            self.field_selector = Some(selector.to_owned());
            self
        }
    };
    (@timeout $ty:ident) => {
        /// Sets `timeoutSeconds`: the server ends the call (the list, or
        /// the watch) after this long (kube-rs's `timeout`).
        ///
        /// ```
        #[doc = concat!(" use kubeset_client::params::", stringify!($ty), ";")]
        #[doc = concat!(" assert_eq!(", stringify!($ty), "::default().timeout(10).timeout_seconds, Some(10));")]
        /// ```
        pub fn timeout(mut self, seconds: u32) -> Self {
            self.timeout_seconds = Some(seconds);
            self
        }
    };
    (@shards $ty:ident) => {
        /// Filters by a `shardSelector` (see [`ListParams::shard_selector`]).
        ///
        /// ```
        #[doc = concat!(" use kubeset_client::params::", stringify!($ty), ";")]
        /// let sel = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";
        #[doc = concat!(" let params = ", stringify!($ty), "::default().shards(sel);")]
        /// assert_eq!(params.shard_selector.as_deref(), Some(sel));
        /// ```
        pub fn shards(mut self, selector: &str) -> Self {
            self.shard_selector = Some(selector.to_owned());
            self
        }
    };
    (@dry_run $ty:ident) => {
        /// Sets `dryRun=All`: the server validates and answers, and
        /// persists nothing.
        pub fn dry_run(mut self) -> Self {
            self.dry_run = true;
            self
        }
    };
    (@validation $ty:ident) => {
        /// Sets `fieldValidation`.
        pub fn validation(mut self, validation: FieldValidation) -> Self {
            self.field_validation = Some(validation);
            self
        }
    };
    (@force $ty:ident) => {
        /// Takes ownership of the fields other managers own instead of
        /// failing with a conflict (`force=true`; server-side apply only).
        pub fn force(mut self) -> Self {
            self.force = true;
            self
        }
    };
}

/// How `resourceVersion` is interpreted by list calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionMatch {
    /// Any data at least as new as the given version (`NotOlderThan`).
    NotOlderThan,
    /// Data at exactly the given version (`Exact`).
    Exact,
}

impl VersionMatch {
    fn as_str(self) -> &'static str {
        match self {
            VersionMatch::NotOlderThan => "NotOlderThan",
            VersionMatch::Exact => "Exact",
        }
    }
}

/// Parameters of `list` and `deletecollection`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use]
pub struct ListParams {
    /// `labelSelector`, e.g. `app=web,tier in (fe,be)`.
    pub label_selector: Option<String>,
    /// `fieldSelector`, e.g. `metadata.name=foo`.
    pub field_selector: Option<String>,
    /// `limit`: page size; the server returns a `continue` token when more remain.
    pub limit: Option<u32>,
    /// `continue`: the token of the previous page.
    pub continue_token: Option<String>,
    /// `resourceVersion` to serve the list at.
    pub resource_version: Option<String>,
    /// `resourceVersionMatch`.
    pub version_match: Option<VersionMatch>,
    /// `timeoutSeconds` for the call on the server side.
    pub timeout_seconds: Option<u32>,
    /// `shardSelector` (KEP-5866, client-go's `ListOptions.ShardSelector`;
    /// kube-rs has none): `shardRange(object.metadata.uid, '0x…', '0x…')`
    /// terms joined by `||`. Honoured by Kubernetes 1.36+ with the
    /// `ShardedListAndWatch` feature gate on, ignored by other servers.
    pub shard_selector: Option<String>,
}

builders!(ListParams: labels, fields, timeout, shards);

impl ListParams {
    /// Asks for pages of at most `limit` objects.
    pub fn limit(mut self, limit: u32) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Continues a paginated list from a previous page's token.
    pub fn continue_token(mut self, token: &str) -> Self {
        self.continue_token = Some(token.to_owned());
        self
    }

    /// Serves the list at (or, with [`VersionMatch`], relative to) a resourceVersion.
    pub fn at(mut self, resource_version: &str) -> Self {
        self.resource_version = Some(resource_version.to_owned());
        self
    }

    /// Sets `resourceVersionMatch`.
    pub fn matching(mut self, version_match: VersionMatch) -> Self {
        self.version_match = Some(version_match);
        self
    }
}

impl QueryParams for ListParams {
    fn query_pairs(&self, out: &mut Vec<(&'static str, String)>) {
        push_opt(out, "labelSelector", self.label_selector.as_deref());
        push_opt(out, "fieldSelector", self.field_selector.as_deref());
        if let Some(limit) = self.limit {
            out.push(("limit", limit.to_string()));
        }
        push_opt(out, "continue", self.continue_token.as_deref());
        push_opt(out, "resourceVersion", self.resource_version.as_deref());
        if let Some(m) = self.version_match {
            out.push(("resourceVersionMatch", m.as_str().to_owned()));
        }
        if let Some(t) = self.timeout_seconds {
            out.push(("timeoutSeconds", t.to_string()));
        }
        push_opt(out, "shardSelector", self.shard_selector.as_deref());
    }
}

/// Parameters of `watch`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use]
pub struct WatchParams {
    /// `labelSelector`.
    pub label_selector: Option<String>,
    /// `fieldSelector`.
    pub field_selector: Option<String>,
    /// `timeoutSeconds`: the server closes the watch after this long.
    pub timeout_seconds: Option<u32>,
    /// `allowWatchBookmarks`.
    pub bookmarks: bool,
    /// `sendInitialEvents` (streaming list); needs bookmarks and
    /// `resourceVersionMatch=NotOlderThan`, which are then set too.
    pub send_initial_events: bool,
    /// `shardSelector` (see [`ListParams::shard_selector`]).
    pub shard_selector: Option<String>,
}

builders!(WatchParams: labels, fields, timeout, shards);

impl WatchParams {
    /// Asks the server to send BOOKMARK events.
    pub fn bookmarks(mut self) -> Self {
        self.bookmarks = true;
        self
    }

    /// Asks for the current state as synthetic ADDED events first.
    pub fn initial_events(mut self) -> Self {
        self.send_initial_events = true;
        self.bookmarks = true;
        self
    }

    /// These parameters bounded in time as client-go's reflector bounds its
    /// watches: as they are when `timeout_seconds` is set, else with a
    /// timeout drawn in `[300, 600)`
    /// ([`random_watch_timeout_seconds`](kubeset_rest::watch::random_watch_timeout_seconds)).
    pub(crate) fn bounded(&self) -> Cow<'_, Self> {
        if self.timeout_seconds.is_some() {
            Cow::Borrowed(self)
        } else {
            Cow::Owned(
                self.clone()
                    .timeout(kubeset_rest::watch::random_watch_timeout_seconds()),
            )
        }
    }

    /// The query pairs of a watch starting after `resource_version`
    /// (`"0"` or `""` for "any").
    pub fn watch_pairs(&self, resource_version: &str, out: &mut Vec<(&'static str, String)>) {
        out.push(("watch", "true".to_owned()));
        push_opt(out, "labelSelector", self.label_selector.as_deref());
        push_opt(out, "fieldSelector", self.field_selector.as_deref());
        if !resource_version.is_empty() {
            out.push(("resourceVersion", resource_version.to_owned()));
        }
        if let Some(t) = self.timeout_seconds {
            out.push(("timeoutSeconds", t.to_string()));
        }
        if self.bookmarks {
            out.push(("allowWatchBookmarks", "true".to_owned()));
        }
        if self.send_initial_events {
            out.push(("sendInitialEvents", "true".to_owned()));
            out.push(("resourceVersionMatch", "NotOlderThan".to_owned()));
        }
        push_opt(out, "shardSelector", self.shard_selector.as_deref());
    }
}

/// `fieldValidation`: what the server does with unknown or duplicate fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldValidation {
    /// Drop them silently.
    Ignore,
    /// Accept and answer with a warning.
    Warn,
    /// Reject the request.
    Strict,
}

impl FieldValidation {
    fn as_str(self) -> &'static str {
        match self {
            FieldValidation::Ignore => "Ignore",
            FieldValidation::Warn => "Warn",
            FieldValidation::Strict => "Strict",
        }
    }
}

/// Parameters of `create` and `replace`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use]
pub struct PostParams {
    /// `dryRun=All`: validate and answer, persist nothing.
    pub dry_run: bool,
    /// `fieldManager`.
    pub field_manager: Option<String>,
    /// `fieldValidation`.
    pub field_validation: Option<FieldValidation>,
}

builders!(PostParams: dry_run, validation);

impl PostParams {
    /// Sets the field manager.
    pub fn field_manager(mut self, manager: &str) -> Self {
        self.field_manager = Some(manager.to_owned());
        self
    }
}

impl QueryParams for PostParams {
    fn query_pairs(&self, out: &mut Vec<(&'static str, String)>) {
        let manager = self.field_manager.as_deref();
        write_pairs(out, self.dry_run, manager, false, self.field_validation);
    }
}

/// Parameters of `patch`, including server-side apply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use]
pub struct PatchParams {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `fieldManager`; required by server-side apply.
    pub field_manager: Option<String>,
    /// `force`: take ownership of conflicting fields (apply only).
    pub force: bool,
    /// `fieldValidation`.
    pub field_validation: Option<FieldValidation>,
}

impl PatchParams {
    /// Parameters for server-side apply as `manager`.
    pub fn apply(manager: &str) -> Self {
        PatchParams {
            field_manager: Some(manager.to_owned()),
            ..PatchParams::default()
        }
    }
}

builders!(PatchParams: force, dry_run, validation);

impl QueryParams for PatchParams {
    fn query_pairs(&self, out: &mut Vec<(&'static str, String)>) {
        let manager = self.field_manager.as_deref();
        write_pairs(
            out,
            self.dry_run,
            manager,
            self.force,
            self.field_validation,
        );
    }
}

/// The query pairs of a write (`PostParams`, `PatchParams`), in one
/// fixed order: `dryRun`, `fieldManager`, `force`, `fieldValidation`.
fn write_pairs(
    out: &mut Vec<(&'static str, String)>,
    dry_run: bool,
    field_manager: Option<&str>,
    force: bool,
    validation: Option<FieldValidation>,
) {
    if dry_run {
        out.push(("dryRun", "All".to_owned()));
    }
    push_opt(out, "fieldManager", field_manager);
    if force {
        out.push(("force", "true".to_owned()));
    }
    if let Some(v) = validation {
        out.push(("fieldValidation", v.as_str().to_owned()));
    }
}

/// Parameters of server-side apply ([`Api::apply`](crate::Api::apply),
/// [`apply_status`](crate::Api::apply_status),
/// [`apply_scale`](crate::Api::apply_scale)): the field manager is
/// required, so it is the constructor's argument (client-go's
/// `metav1.ApplyOptions`, controller-runtime's `client.FieldOwner` with
/// `client.ForceOwnership`).
///
/// ```
/// use kubeset_client::params::ApplyParams;
/// let params = ApplyParams::new("my-controller").force().dry_run();
/// assert_eq!(params.field_manager, "my-controller");
/// assert!(params.force && params.dry_run);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use]
pub struct ApplyParams {
    /// `fieldManager`: who owns what this apply sets.
    pub field_manager: String,
    /// `force`: take the fields other managers own instead of failing
    /// with a conflict.
    pub force: bool,
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `fieldValidation`.
    pub field_validation: Option<FieldValidation>,
}

impl ApplyParams {
    /// Applies as `field_manager`.
    pub fn new(field_manager: &str) -> Self {
        ApplyParams {
            field_manager: field_manager.to_owned(),
            ..ApplyParams::default()
        }
    }
}

builders!(ApplyParams: force, dry_run, validation);

impl From<&ApplyParams> for PatchParams {
    fn from(p: &ApplyParams) -> Self {
        PatchParams {
            dry_run: p.dry_run,
            field_manager: Some(p.field_manager.clone()),
            force: p.force,
            field_validation: p.field_validation,
        }
    }
}

/// `propagationPolicy` of a delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropagationPolicy {
    /// Dependents are orphaned.
    Orphan,
    /// Dependents are deleted in the background.
    Background,
    /// The object stays until its dependents are deleted.
    Foreground,
}

/// Parameters of `delete` and `deletecollection`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use]
pub struct DeleteParams {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `gracePeriodSeconds`.
    pub grace_period: Option<Duration>,
    /// `propagationPolicy`.
    pub propagation_policy: Option<PropagationPolicy>,
    /// Precondition: only delete if the object still has this uid.
    pub precondition_uid: Option<String>,
    /// Precondition: only delete if the object still has this resourceVersion.
    pub precondition_resource_version: Option<String>,
}

builders!(DeleteParams: dry_run);

impl DeleteParams {
    /// Deletes in the background (the server default for most kinds).
    pub fn background() -> Self {
        DeleteParams {
            propagation_policy: Some(PropagationPolicy::Background),
            ..Self::default()
        }
    }

    /// Deletes in the foreground.
    pub fn foreground() -> Self {
        DeleteParams {
            propagation_policy: Some(PropagationPolicy::Foreground),
            ..Self::default()
        }
    }

    /// Orphans dependents.
    pub fn orphan() -> Self {
        DeleteParams {
            propagation_policy: Some(PropagationPolicy::Orphan),
            ..Self::default()
        }
    }

    /// Sets the grace period (whole seconds are sent).
    pub fn grace_period(mut self, period: Duration) -> Self {
        self.grace_period = Some(period);
        self
    }

    /// The `DeleteOptions` body, when anything in it is set.
    pub fn body(&self) -> Option<serde_json::Value> {
        let mut opts = serde_json::Map::new();
        if self.dry_run {
            opts.insert("dryRun".into(), serde_json::json!(["All"]));
        }
        if let Some(p) = self.grace_period {
            opts.insert("gracePeriodSeconds".into(), p.as_secs().into());
        }
        if let Some(p) = self.propagation_policy {
            let s = match p {
                PropagationPolicy::Orphan => "Orphan",
                PropagationPolicy::Background => "Background",
                PropagationPolicy::Foreground => "Foreground",
            };
            opts.insert("propagationPolicy".into(), s.into());
        }
        let mut pre = serde_json::Map::new();
        if let Some(uid) = &self.precondition_uid {
            pre.insert("uid".into(), uid.clone().into());
        }
        if let Some(rv) = &self.precondition_resource_version {
            pre.insert("resourceVersion".into(), rv.clone().into());
        }
        if !pre.is_empty() {
            opts.insert("preconditions".into(), pre.into());
        }
        if opts.is_empty() {
            return None;
        }
        opts.insert("kind".into(), "DeleteOptions".into());
        opts.insert("apiVersion".into(), "v1".into());
        Some(opts.into())
    }
}

fn push_opt(out: &mut Vec<(&'static str, String)>, key: &'static str, value: Option<&str>) {
    if let Some(v) = value {
        out.push((key, v.to_owned()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pairs as `key=value`, joined by `&` (not escaped).
    fn joined(pairs: &[(&str, String)]) -> String {
        let pairs: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        pairs.join("&")
    }

    /// `p`'s query pairs, [`joined`].
    fn query(p: &impl QueryParams) -> String {
        let mut out = Vec::new();
        p.query_pairs(&mut out);
        joined(&out)
    }

    #[test]
    fn list_params_in_wire_names() {
        let p = ListParams::default()
            .labels("app=web")
            .fields("metadata.name=x")
            .limit(500)
            .continue_token("abc")
            .at("42")
            .matching(VersionMatch::NotOlderThan)
            .shards("shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')");
        assert_eq!(
            query(&p),
            "labelSelector=app=web&fieldSelector=metadata.name=x&limit=500&continue=abc&resourceVersion=42&resourceVersionMatch=NotOlderThan&shardSelector=shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')"
        );
        assert!(query(&ListParams::default()).is_empty());
    }

    #[test]
    fn watch_params_streaming_list_sets_its_companions() {
        let mut out = Vec::new();
        WatchParams::default()
            .initial_events()
            .timeout(290)
            .watch_pairs("", &mut out);
        assert_eq!(
            joined(&out),
            "watch=true&timeoutSeconds=290&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
        );
        let mut out = Vec::new();
        WatchParams::default()
            .shards("shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')")
            .watch_pairs("17", &mut out);
        assert_eq!(
            joined(&out),
            "watch=true&resourceVersion=17&shardSelector=shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
        );
    }

    #[test]
    fn apply_params() {
        let p = PatchParams::apply("ctl")
            .force()
            .dry_run()
            .validation(FieldValidation::Strict);
        assert_eq!(
            query(&p),
            "dryRun=All&fieldManager=ctl&force=true&fieldValidation=Strict"
        );
    }

    #[test]
    fn apply_params_are_the_patch_params_of_an_apply() {
        let p = ApplyParams::new("ctl")
            .force()
            .dry_run()
            .validation(FieldValidation::Warn);
        assert_eq!(
            query(&PatchParams::from(&p)),
            "dryRun=All&fieldManager=ctl&force=true&fieldValidation=Warn"
        );
        assert_eq!(
            PatchParams::from(&ApplyParams::new("m")),
            PatchParams::apply("m")
        );
    }

    #[test]
    fn post_params_in_wire_names() {
        let p = PostParams::default()
            .dry_run()
            .field_manager("ctl")
            .validation(FieldValidation::Ignore);
        assert_eq!(
            query(&p),
            "dryRun=All&fieldManager=ctl&fieldValidation=Ignore"
        );
        assert!(query(&PostParams::default()).is_empty());
        assert!(query(&PatchParams::default()).is_empty());
    }

    #[test]
    fn watch_params_filters_in_wire_names() {
        let mut out = Vec::new();
        WatchParams::default()
            .labels("app=web")
            .fields("metadata.name=x")
            .bookmarks()
            .watch_pairs("0", &mut out);
        assert_eq!(
            joined(&out),
            "watch=true&labelSelector=app=web&fieldSelector=metadata.name=x&resourceVersion=0&allowWatchBookmarks=true"
        );
    }

    #[test]
    fn delete_body_only_when_needed() {
        assert_eq!(DeleteParams::default().body(), None);
        let mut d = DeleteParams::foreground().grace_period(Duration::from_secs(5));
        d.precondition_uid = Some("u1".into());
        assert_eq!(
            d.body(),
            Some(serde_json::json!({
                "kind": "DeleteOptions", "apiVersion": "v1",
                "gracePeriodSeconds": 5, "propagationPolicy": "Foreground",
                "preconditions": {"uid": "u1"}
            }))
        );
    }
}
