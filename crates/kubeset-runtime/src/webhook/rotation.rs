//! The rotator's rules, apart from I/O: given the CAs in the bundle, the
//! served leaf and the clock, what to do next ([`next_step`]), and which
//! lifetimes make sense ([`Lifetimes::check`]).

use std::time::{Duration, SystemTime};

use super::WebhookError;

/// The longest lifetime accepted: 100 years.
const MAX_LIFETIME: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
/// The shortest duration accepted for any setting: 1 s (X.509 times have
/// second precision).
const MIN_DURATION: Duration = Duration::from_secs(1);

/// How long certificates live and when they are renewed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Lifetimes {
    pub(crate) ca: Duration,
    pub(crate) ca_renew_before: Duration,
    pub(crate) leaf: Duration,
    pub(crate) leaf_renew_before: Duration,
    pub(crate) bundle_settle: Duration,
}

const DAY: Duration = Duration::from_secs(24 * 3600);

impl Default for Lifetimes {
    /// cert-controller's: a CA of 10 years, a leaf of 1 year, each renewed
    /// 90 days before it expires; a new CA is in the bundle 1 minute
    /// before a leaf it issued is served.
    fn default() -> Self {
        Lifetimes {
            ca: 3650 * DAY,
            ca_renew_before: 90 * DAY,
            leaf: 365 * DAY,
            leaf_renew_before: 90 * DAY,
            bundle_settle: Duration::from_secs(60),
        }
    }
}

fn lifetime_error(
    name: &'static str,
    value: Duration,
    rule: &'static str,
    bound_name: &'static str,
    bound: Duration,
) -> WebhookError {
    WebhookError::Lifetime {
        name,
        value,
        rule,
        bound_name,
        bound,
    }
}

impl Lifetimes {
    /// Each setting within 1 s ..= 100 years; a renewal at most half a
    /// lifetime before expiry; a bundle settling in less time than the CA
    /// is renewed before it expires (else the old CA expires first).
    pub(crate) fn check(&self) -> Result<(), WebhookError> {
        let settings = [
            ("ca_lifetime", self.ca),
            ("ca_renew_before", self.ca_renew_before),
            ("leaf_lifetime", self.leaf),
            ("leaf_renew_before", self.leaf_renew_before),
            ("bundle_settle", self.bundle_settle),
        ];
        for (name, value) in settings {
            if value < MIN_DURATION {
                return Err(lifetime_error(
                    name,
                    value,
                    "must be at least",
                    "1 s",
                    MIN_DURATION,
                ));
            }
            if value > MAX_LIFETIME {
                let rule = "must be at most";
                return Err(lifetime_error(name, value, rule, "100 years", MAX_LIFETIME));
            }
        }
        let half = "must be at most half of";
        if self.ca_renew_before > self.ca / 2 {
            let (v, b) = (self.ca_renew_before, self.ca);
            return Err(lifetime_error("ca_renew_before", v, half, "ca_lifetime", b));
        }
        if self.leaf_renew_before > self.leaf / 2 {
            let (v, b) = (self.leaf_renew_before, self.leaf);
            return Err(lifetime_error(
                "leaf_renew_before",
                v,
                half,
                "leaf_lifetime",
                b,
            ));
        }
        if self.bundle_settle >= self.ca_renew_before {
            let (v, b) = (self.bundle_settle, self.ca_renew_before);
            return Err(lifetime_error(
                "bundle_settle",
                v,
                "must be shorter than",
                "ca_renew_before",
                b,
            ));
        }
        Ok(())
    }
}

/// A certificate as the rules see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cert {
    /// Which CA: each new CA gets the next number.
    pub(crate) ca: u64,
    /// When it was made (its `notBefore` is earlier, for skewed clocks).
    pub(crate) issued: SystemTime,
    pub(crate) not_after: SystemTime,
}

impl Cert {
    /// When it is renewed: `renew_before` its expiry, but not before half
    /// its life (a leaf cut short by its CA's expiry is not renewed at once).
    pub(crate) fn refresh_at(&self, renew_before: Duration) -> SystemTime {
        let life = self
            .not_after
            .duration_since(self.issued)
            .unwrap_or_default();
        let by_lead = self
            .not_after
            .checked_sub(renew_before)
            .unwrap_or(self.issued);
        by_lead.max(self.issued + (life / 2).max(MIN_DURATION))
    }
}

/// The CA a leaf due now is issued by: the newest once its bundle has
/// settled; before that the served leaf's own CA (registered), unless that
/// one has expired (then the newest: nothing else can work).
fn signer(facts: &Facts, newest: &Cert, settled: bool, now: SystemTime) -> u64 {
    let own_alive = facts
        .cas
        .iter()
        .find(|c| c.ca == facts.leaf.ca)
        .is_some_and(|c| c.not_after > now + MIN_DURATION);
    if settled || !own_alive {
        newest.ca
    } else {
        facts.leaf.ca
    }
}

/// What the rotator knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Facts {
    /// The CAs of the bundle, oldest first (two during an overlap).
    pub(crate) cas: Vec<Cert>,
    /// The served leaf (`ca` is its issuer).
    pub(crate) leaf: Cert,
    /// When the bundle as it is now was last registered in every target;
    /// `None` while it changed and is not yet registered.
    pub(crate) registered: Option<SystemTime>,
}

/// What to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Patch the bundle into every target.
    Register,
    /// Make a new CA and add it to the bundle (the old one stays).
    NewCa,
    /// Issue and serve a new leaf from CA `ca`.
    IssueLeaf { ca: u64 },
    /// Leave only the newest CA in the bundle.
    DropOldCas,
    /// Nothing to do before this time.
    Wait(SystemTime),
}

/// The next step. A new CA is registered before any leaf it issues is
/// served, and `bundle_settle` after that registration (time for API
/// servers to load it); the old CA leaves the bundle once the served leaf
/// is the new CA's.
pub(crate) fn next_step(facts: &Facts, lifetimes: &Lifetimes, now: SystemTime) -> Step {
    let Some(newest) = facts.cas.last() else {
        return Step::NewCa;
    };
    let leaf_due = facts.leaf.refresh_at(lifetimes.leaf_renew_before);
    let Some(registered) = facts.registered else {
        // A leaf due is renewed by its own CA (registered) even while
        // registering the bundle fails.
        if now >= leaf_due {
            return Step::IssueLeaf {
                ca: signer(facts, newest, false, now),
            };
        }
        return Step::Register;
    };
    let overlap = facts.cas.len() > 1;
    let ca_due = newest.refresh_at(lifetimes.ca_renew_before);
    if !overlap && now >= ca_due {
        return Step::NewCa;
    }
    let settled_at = registered + lifetimes.bundle_settle;
    let settled = now >= settled_at;
    if facts.leaf.ca != newest.ca && settled {
        return Step::IssueLeaf { ca: newest.ca };
    }
    if now >= leaf_due {
        return Step::IssueLeaf {
            ca: signer(facts, newest, settled, now),
        };
    }
    if overlap && facts.leaf.ca == newest.ca {
        return Step::DropOldCas;
    }
    let mut wake = leaf_due;
    if overlap {
        wake = wake.min(settled_at);
    } else {
        wake = wake.min(ca_due);
    }
    Step::Wait(wake)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    fn short() -> Lifetimes {
        Lifetimes {
            ca: secs(60),
            ca_renew_before: secs(25),
            leaf: secs(20),
            leaf_renew_before: secs(8),
            bundle_settle: secs(5),
        }
    }

    fn at(t0: SystemTime, s: u64) -> SystemTime {
        t0 + secs(s)
    }

    fn cert(t0: SystemTime, ca: u64, issued: u64, life: u64) -> Cert {
        Cert {
            ca,
            issued: at(t0, issued),
            not_after: at(t0, issued + life),
        }
    }

    #[test]
    fn defaults_are_cert_controllers_and_valid() {
        let d = Lifetimes::default();
        assert_eq!(d.ca, secs(10 * 365 * 86400));
        assert_eq!(d.leaf, secs(365 * 86400));
        assert_eq!(d.leaf_renew_before, secs(90 * 86400));
        d.check().expect("the defaults are valid");
        short().check().expect("the test's lifetimes are valid");
    }

    #[test]
    fn a_lead_over_half_the_lifetime_names_both() {
        let bad = Lifetimes {
            leaf_renew_before: secs(15),
            ..short()
        };
        let e = bad
            .check()
            .expect_err("15 s before a 20 s lifetime")
            .to_string();
        assert_eq!(
            e,
            "the webhook certificate setting leaf_renew_before (15s) must be at most half of leaf_lifetime (20s)"
        );
        let bad = Lifetimes {
            bundle_settle: secs(30),
            ..short()
        };
        let e = bad
            .check()
            .expect_err("settle over the CA lead")
            .to_string();
        assert!(
            e.contains("bundle_settle (30s)") && e.contains("ca_renew_before (25s)"),
            "{e}"
        );
        let bad = Lifetimes {
            ca: Duration::from_millis(10),
            ..short()
        };
        assert!(
            bad.check()
                .expect_err("10 ms")
                .to_string()
                .contains("ca_lifetime (10ms) must be at least 1 s")
        );
    }

    #[test]
    fn a_leaf_is_renewed_its_lead_before_expiry_or_at_half_life() {
        let t0 = SystemTime::UNIX_EPOCH + secs(1_000_000);
        assert_eq!(cert(t0, 0, 0, 20).refresh_at(secs(8)), at(t0, 12));
        // Cut short by its CA (10 s): renewed at half its life, not at once.
        assert_eq!(cert(t0, 0, 0, 10).refresh_at(secs(8)), at(t0, 5));
    }

    #[test]
    fn registration_failing_past_the_old_cas_expiry_does_not_spin() {
        let (t0, l) = (SystemTime::UNIX_EPOCH + secs(1_000_000), short());
        let mut facts = Facts {
            cas: vec![cert(t0, 0, 0, 60), cert(t0, 1, 35, 60)],
            leaf: cert(t0, 0, 50, 10),
            registered: None,
        };
        // The old CA is gone: the leaf due comes from the new one.
        assert_eq!(next_step(&facts, &l, at(t0, 61)), Step::IssueLeaf { ca: 1 });
        // A leaf with no life left is renewed at most once a second.
        facts.leaf = cert(t0, 0, 61, 0);
        assert_eq!(facts.leaf.refresh_at(secs(8)), at(t0, 62));
        assert_eq!(next_step(&facts, &l, at(t0, 61)), Step::Register);
    }

    #[test]
    fn a_ca_rotation_overlaps_then_drops_the_old_ca() {
        let (t0, l) = (SystemTime::UNIX_EPOCH + secs(1_000_000), short());
        let mut facts = Facts {
            cas: vec![cert(t0, 0, 0, 60)],
            leaf: cert(t0, 0, 0, 20),
            registered: Some(t0),
        };
        assert_eq!(next_step(&facts, &l, at(t0, 1)), Step::Wait(at(t0, 12)));
        assert_eq!(next_step(&facts, &l, at(t0, 12)), Step::IssueLeaf { ca: 0 });
        facts.leaf = cert(t0, 0, 24, 20);
        // The CA is due at 35 (60 - 25) before the leaf (24 + 12 = 36).
        assert_eq!(next_step(&facts, &l, at(t0, 30)), Step::Wait(at(t0, 35)));
        assert_eq!(next_step(&facts, &l, at(t0, 35)), Step::NewCa);
        facts.cas.push(cert(t0, 1, 35, 60));
        facts.registered = None;
        assert_eq!(next_step(&facts, &l, at(t0, 35)), Step::Register);
        // Registering keeps failing: the leaf due is renewed by its own CA.
        assert_eq!(next_step(&facts, &l, at(t0, 36)), Step::IssueLeaf { ca: 0 });
        facts.registered = Some(at(t0, 36));
        // The leaf is due at 36 but the new CA has not settled: the old CA issues it.
        assert_eq!(next_step(&facts, &l, at(t0, 36)), Step::IssueLeaf { ca: 0 });
        facts.leaf = cert(t0, 0, 36, 20);
        assert_eq!(next_step(&facts, &l, at(t0, 37)), Step::Wait(at(t0, 41)));
        assert_eq!(next_step(&facts, &l, at(t0, 41)), Step::IssueLeaf { ca: 1 });
        facts.leaf = cert(t0, 1, 41, 20);
        assert_eq!(next_step(&facts, &l, at(t0, 41)), Step::DropOldCas);
        facts.cas.remove(0);
        facts.registered = None;
        assert_eq!(next_step(&facts, &l, at(t0, 41)), Step::Register);
        facts.registered = Some(at(t0, 42));
        assert_eq!(next_step(&facts, &l, at(t0, 42)), Step::Wait(at(t0, 53)));
    }
}
