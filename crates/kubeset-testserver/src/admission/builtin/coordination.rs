//! The coordination group (`pkg/apis/coordination/validation`): a Lease's
//! duration is positive, its transitions not negative. (The
//! `preferredHolder`/`strategy` rules belong to the
//! `CoordinatedLeaderElection` feature, off by default: not checked.)

use serde_json::Value;

use super::{Errs, int};

/// `ValidateLeaseSpec`.
pub(crate) fn lease(e: &mut Errs, obj: &Value) {
    let spec = &obj["spec"];
    if let Some(d) = int(spec, "leaseDurationSeconds").filter(|d| *d <= 0) {
        e.invalid(
            "spec.leaseDurationSeconds",
            &d.into(),
            "must be greater than 0",
        );
    }
    if let Some(t) = int(spec, "leaseTransitions").filter(|t| *t < 0) {
        e.invalid(
            "spec.leaseTransitions",
            &t.into(),
            "must be greater than or equal to 0",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn durations() {
        let mut e = Errs::default();
        lease(
            &mut e,
            &json!({"spec": {"leaseDurationSeconds": 0, "leaseTransitions": -1}}),
        );
        let fields: Vec<_> = e.0.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(
            fields,
            ["spec.leaseDurationSeconds", "spec.leaseTransitions"]
        );
        let mut e = Errs::default();
        lease(&mut e, &json!({"spec": {"leaseDurationSeconds": 15}}));
        assert!(e.0.is_empty());
    }
}
