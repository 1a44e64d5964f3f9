//! Setting `metav1.Condition`s in a status, with apimachinery's rules
//! (`k8s.io/apimachinery/pkg/api/meta`: `SetStatusCondition`,
//! `FindStatusCondition`, `IsStatusConditionTrue`,
//! `RemoveStatusCondition`; kube-rs has no equivalent). Waiting on
//! conditions is the `wait` module's job, not this one's.
//!
//! - `lastTransitionTime` changes only when `status` changes (a new
//!   condition gets the given time, or now when it is unset).
//! - `reason`, `message` and `observedGeneration` are updated in place
//!   without touching `lastTransitionTime`.
//! - Set `observedGeneration` to the `metadata.generation` the reconcile
//!   acted on ([`condition`] takes it), so readers can tell a stale
//!   condition from a current one.
//!
//! ```
//! use kubeset_client::apimachinery::pkg::apis::meta::v1::Condition;
//! use kubeset_runtime::status::{condition, is_condition_true, set_condition};
//!
//! let mut conditions: Vec<Condition> = Vec::new();
//! assert!(set_condition(&mut conditions, condition("Ready", true, "Reconciled", "all good", Some(3))));
//! assert!(!set_condition(&mut conditions, condition("Ready", true, "Reconciled", "all good", Some(3))));
//! assert!(is_condition_true(&conditions, "Ready"));
//! ```

use kubeset_client::apimachinery::pkg::apis::meta::v1::{Condition, Time};

/// A condition of `type_` with status `True`/`False`, a reason
/// (UpperCamelCase), a message and the observed generation;
/// `lastTransitionTime` is left unset for [`set_condition`] to fill.
pub fn condition(
    type_: &str,
    status: bool,
    reason: &str,
    message: &str,
    observed_generation: Option<i64>,
) -> Condition {
    Condition {
        type_: type_.to_owned(),
        status: if status { "True" } else { "False" }.to_owned(),
        reason: reason.to_owned(),
        message: message.to_owned(),
        observed_generation,
        last_transition_time: Time::default(),
    }
}

fn is_unset(t: &Time) -> bool {
    t.unix_seconds() == 0 && t.subsec_nanos() == 0
}

/// Sets `new` in `conditions` (see the module docs); returns whether
/// anything changed, i.e. whether the status needs writing.
pub fn set_condition(conditions: &mut Vec<Condition>, mut new: Condition) -> bool {
    let Some(existing) = conditions.iter_mut().find(|c| c.type_ == new.type_) else {
        if is_unset(&new.last_transition_time) {
            new.last_transition_time = Time::now();
        }
        conditions.push(new);
        return true;
    };
    let mut changed = false;
    if existing.status != new.status {
        existing.status = new.status;
        existing.last_transition_time = if is_unset(&new.last_transition_time) {
            Time::now()
        } else {
            new.last_transition_time
        };
        changed = true;
    }
    if existing.reason != new.reason {
        existing.reason = new.reason;
        changed = true;
    }
    if existing.message != new.message {
        existing.message = new.message;
        changed = true;
    }
    if existing.observed_generation != new.observed_generation {
        existing.observed_generation = new.observed_generation;
        changed = true;
    }
    changed
}

/// The condition of `type_`.
pub fn find_condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Whether the condition of `type_` is `True`.
pub fn is_condition_true(conditions: &[Condition], type_: &str) -> bool {
    find_condition(conditions, type_).is_some_and(|c| c.status == "True")
}

/// Removes the condition of `type_`; returns whether it was there.
pub fn remove_condition(conditions: &mut Vec<Condition>, type_: &str) -> bool {
    let before = conditions.len();
    conditions.retain(|c| c.type_ != type_);
    conditions.len() != before
}

#[cfg(test)]
mod tests {
    use super::*;

    /// apimachinery's vectors: the transition time moves with the status
    /// only; other fields update in place.
    #[test]
    fn transition_time_moves_with_the_status_only() {
        let mut cs = Vec::new();
        let t0 = Time::from_unix(1_000, 0).unwrap();
        let mut first = condition("Ready", false, "Pending", "waiting", Some(1));
        first.last_transition_time = t0;
        assert!(set_condition(&mut cs, first));
        assert_eq!(cs[0].last_transition_time, t0, "a given time is kept");

        assert!(set_condition(
            &mut cs,
            condition("Ready", false, "StillPending", "waiting", Some(2))
        ));
        assert_eq!(cs[0].last_transition_time, t0, "same status: time kept");
        assert_eq!(
            (cs[0].reason.as_str(), cs[0].observed_generation),
            ("StillPending", Some(2))
        );

        let t1 = Time::from_unix(2_000, 0).unwrap();
        let mut ready = condition("Ready", true, "Done", "ok", Some(2));
        ready.last_transition_time = t1;
        assert!(set_condition(&mut cs, ready));
        assert_eq!(
            cs[0].last_transition_time, t1,
            "status changed: the given time"
        );

        assert!(set_condition(
            &mut cs,
            condition("Ready", false, "Broke", "no", Some(3))
        ));
        assert!(
            cs[0].last_transition_time > t1,
            "status changed, no time given: now"
        );
        assert!(!set_condition(
            &mut cs,
            condition("Ready", false, "Broke", "no", Some(3))
        ));

        assert!(set_condition(
            &mut cs,
            condition("Synced", true, "Done", "", None)
        ));
        assert!(
            !is_unset(&cs[1].last_transition_time),
            "a new condition gets now"
        );
        assert!(is_condition_true(&cs, "Synced") && !is_condition_true(&cs, "Ready"));
        assert!(remove_condition(&mut cs, "Synced") && !remove_condition(&mut cs, "Synced"));
        assert_eq!(
            find_condition(&cs, "Ready").map(|c| c.reason.as_str()),
            Some("Broke")
        );
    }
}
