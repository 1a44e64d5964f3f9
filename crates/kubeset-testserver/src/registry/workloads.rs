//! The workloads (`pkg/registry/apps/*`, `batch/*`,
//! `core/replicationcontroller`): their printers end with the pod
//! template's containers and images; a Deployment's, ReplicaSet's or
//! DaemonSet's selector may not change and must match its template, a
//! Job's selector, completions and template neither
//! ([`crate::immutable`]). Their defaults are [`crate::defaults`]'s.

use serde_json::Value;

use super::Strategy;
use crate::fields::{FieldSet, JOBS, RCS, Unknown};
use crate::immutable::{self, Cause};
use crate::printers::{self, Printer, Tail, WORKLOAD, named, workload};
use crate::printers::{CRONJOB_COLS, DEPLOY_COLS, DS_COLS, JOB_COLS, RS_COLS};
use crate::resources::Resource;
use crate::validation::NameRule;

/// apps/v1's rule: the selector stays, and matches the template's labels.
fn fixed_selector(live: &Value, new: &Value) -> Vec<Cause> {
    let mut c = immutable::selector_matches_template(new);
    c.extend(immutable::unchanged(
        live,
        new,
        "/spec/selector",
        "spec.selector",
    ));
    c
}

/// Deployments.
pub(crate) struct Deployments;

impl Strategy for Deployments {
    fn validate_update(&self, live: &Value, new: &mut Value) -> Vec<Cause> {
        fixed_selector(live, new)
    }

    fn printer(&self) -> Option<Printer> {
        Some(named(DEPLOY_COLS, printers::deployment, WORKLOAD))
    }
}

/// ReplicaSets.
pub(crate) struct ReplicaSets;

impl Strategy for ReplicaSets {
    fn validate_update(&self, live: &Value, new: &mut Value) -> Vec<Cause> {
        fixed_selector(live, new)
    }

    fn printer(&self) -> Option<Printer> {
        Some(named(RS_COLS, printers::replicaset, WORKLOAD))
    }
}

/// DaemonSets.
pub(crate) struct DaemonSets;

impl Strategy for DaemonSets {
    fn validate_update(&self, live: &Value, new: &mut Value) -> Vec<Cause> {
        fixed_selector(live, new)
    }

    fn printer(&self) -> Option<Printer> {
        Some(named(DS_COLS, printers::daemonset, WORKLOAD))
    }
}

/// StatefulSets: named as DNS labels (their pods' hostnames).
pub(crate) struct StatefulSets;

impl Strategy for StatefulSets {
    fn name_rule(&self) -> NameRule {
        NameRule::Label
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
    fn fields(&self, _: &Resource) -> FieldSet {
        FieldSet::builtin(RCS, Unknown::NotSupported)
    }
}

/// Jobs.
pub(crate) struct Jobs;

impl Strategy for Jobs {
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
    fn printer(&self) -> Option<Printer> {
        let tail = Tail::Workload {
            template: "/spec/jobTemplate/spec/template/spec",
            selector: Some("/spec/jobTemplate/spec/selector"),
        };
        Some(named(CRONJOB_COLS, printers::cronjob, tail))
    }
}
