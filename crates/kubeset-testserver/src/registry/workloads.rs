//! The workloads (`pkg/registry/apps/*`, `batch/*`,
//! `core/replicationcontroller`): their printers end with the pod
//! template's containers and images; a Deployment's, ReplicaSet's or
//! DaemonSet's selector may not change and must match its template, a
//! Job's selector, completions and template neither
//! ([`crate::immutable`]). The rules of their defaults are
//! [`crate::defaults`]'s (`workloads`, `batch`, `zero`), of their
//! validation [`crate::admission::builtin`]'s (`apps`, `batch`).

use serde_json::Value;

use super::Strategy;
use crate::admission::builtin::{self, Errs};
use crate::defaults;
use crate::fields::{FieldSet, JOBS, RCS, Unknown};
use crate::immutable::{self, Cause};
use crate::printers::{self, Printer, Tail, WORKLOAD, named, workload};
use crate::printers::{CRONJOB_COLS, DEPLOY_COLS, DS_COLS, JOB_COLS, RS_COLS};
use crate::resources::Resource;
use crate::validation::NameRule;

/// Deployments, ReplicaSets and DaemonSets (apps/v1): one strategy, each
/// kind naming its own rules. The selector stays, and matches the
/// template's labels.
pub(crate) struct SelectedWorkload {
    /// `SetDefaults_*`.
    defaults: fn(&mut Value),
    /// The Go zero value.
    zero: fn(&mut Value),
    /// `Validate*`.
    validate: fn(&mut Errs, &Value, Option<&Value>),
    printer: Printer,
    /// DaemonSets: `spec.templateGeneration` starts at 1 and counts
    /// template changes.
    template_generation: bool,
}

/// Deployments.
pub(crate) static DEPLOYMENTS: SelectedWorkload = SelectedWorkload {
    defaults: defaults::workloads::deployment,
    zero: defaults::zero::deployment,
    validate: builtin::apps::deployment,
    printer: named(DEPLOY_COLS, printers::deployment, WORKLOAD),
    template_generation: false,
};

/// ReplicaSets.
pub(crate) static REPLICA_SETS: SelectedWorkload = SelectedWorkload {
    defaults: |obj| defaults::workloads::replica_set(obj, false),
    zero: defaults::zero::replica_set,
    validate: builtin::apps::replicaset,
    printer: named(RS_COLS, printers::replicaset, WORKLOAD),
    template_generation: false,
};

/// DaemonSets.
pub(crate) static DAEMON_SETS: SelectedWorkload = SelectedWorkload {
    defaults: defaults::workloads::daemon_set,
    zero: defaults::zero::daemon_set,
    validate: builtin::apps::daemonset,
    printer: named(DS_COLS, printers::daemonset, WORKLOAD),
    template_generation: true,
};

impl Strategy for SelectedWorkload {
    fn on_decode(&self, obj: &mut Value) {
        (self.defaults)(obj);
    }

    fn go_zero(&self, zero: &mut Value) {
        (self.zero)(zero);
    }

    fn on_create(&self, res: &Resource, obj: &mut Value) {
        if self.template_generation {
            defaults::workloads::template_generation(obj);
        }
        defaults::workloads::new_status(obj, &res.plural);
    }

    fn prepare_for_update(&self, live: &Value, new: &mut Value) {
        if self.template_generation {
            defaults::workloads::next_template_generation(live, new);
        }
    }

    fn validate(&self, _: &Resource, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
        builtin::collect(|e| (self.validate)(e, obj, old))
    }

    fn validate_update(&self, live: &Value, new: &mut Value) -> Vec<Cause> {
        let mut c = immutable::selector_matches_template(new);
        c.extend(immutable::unchanged(
            live,
            new,
            "/spec/selector",
            "spec.selector",
        ));
        c
    }

    fn printer(&self) -> Option<Printer> {
        Some(self.printer)
    }
}

/// StatefulSets: named as DNS labels (their pods' hostnames).
pub(crate) struct StatefulSets;

impl Strategy for StatefulSets {
    fn name_rule(&self) -> NameRule {
        NameRule::Label
    }

    fn on_decode(&self, obj: &mut Value) {
        defaults::workloads::stateful_set(obj);
    }

    fn go_zero(&self, zero: &mut Value) {
        defaults::zero::stateful_set(zero);
    }

    fn on_create(&self, res: &Resource, obj: &mut Value) {
        defaults::workloads::new_status(obj, &res.plural);
    }

    fn validate(&self, _: &Resource, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
        builtin::collect(|e| builtin::apps::statefulset(e, obj, old))
    }

    fn printer(&self) -> Option<Printer> {
        Some(named(
            &DEPLOY_COLS[..1],
            |o| vec![printers::ready_of(o)],
            workload(None),
        ))
    }
}

/// ReplicationControllers.
pub(crate) struct ReplicationControllers;

impl Strategy for ReplicationControllers {
    fn on_decode(&self, obj: &mut Value) {
        defaults::workloads::replica_set(obj, true);
    }

    fn on_create(&self, res: &Resource, obj: &mut Value) {
        defaults::workloads::new_status(obj, &res.plural);
    }

    fn fields(&self, _: &Resource) -> FieldSet {
        FieldSet::builtin(RCS, Unknown::NotSupported)
    }
}

/// Jobs.
pub(crate) struct Jobs;

impl Strategy for Jobs {
    fn on_decode(&self, obj: &mut Value) {
        defaults::batch::job(obj);
    }

    fn go_zero(&self, zero: &mut Value) {
        defaults::zero::job(zero);
    }

    fn on_create(&self, res: &Resource, obj: &mut Value) {
        defaults::workloads::new_status(obj, &res.plural);
    }

    fn after_record(&self, obj: &mut Value) {
        defaults::batch::generate_selector(obj);
    }

    fn validate(&self, _: &Resource, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
        builtin::collect(|e| builtin::batch::job(e, obj, old))
    }

    fn validate_update(&self, live: &Value, new: &mut Value) -> Vec<Cause> {
        immutable::job(live, new)
    }

    fn fields(&self, _: &Resource) -> FieldSet {
        FieldSet::builtin(JOBS, Unknown::Job)
    }

    fn printer(&self) -> Option<Printer> {
        Some(named(JOB_COLS, printers::job, WORKLOAD))
    }
}

/// CronJobs: the tail reads the job template's pod template and selector.
pub(crate) struct CronJobs;

impl Strategy for CronJobs {
    fn on_decode(&self, obj: &mut Value) {
        defaults::batch::cron_job(obj);
    }

    fn go_zero(&self, zero: &mut Value) {
        defaults::zero::cron_job(zero);
    }

    fn on_create(&self, res: &Resource, obj: &mut Value) {
        defaults::workloads::new_status(obj, &res.plural);
    }

    fn validate(&self, _: &Resource, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
        builtin::collect(|e| builtin::batch::cronjob(e, obj, old))
    }

    fn printer(&self) -> Option<Printer> {
        let tail = Tail::Workload {
            template: "/spec/jobTemplate/spec/template/spec",
            selector: Some("/spec/jobTemplate/spec/selector"),
        };
        Some(named(CRONJOB_COLS, printers::cronjob, tail))
    }
}
