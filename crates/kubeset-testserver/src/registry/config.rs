//! ConfigMaps, Secrets and ServiceAccounts (`pkg/registry/core/configmap`,
//! `core/secret`, `core/serviceaccount`): with `immutable: true` their data
//! may not change ([`crate::immutable::locked_data`]); a Secret's `type`
//! never may.

use serde_json::{Value, json};

use super::{Strategy, Sub};
use crate::defaults;
use crate::fields::{FieldSet, SECRETS, Unknown};
use crate::immutable::{self, Cause};
use crate::printers::{DATA_COLS, Printer, SECRET_COLS, Tail, count, named, s};
use crate::resources::Resource;

/// ConfigMaps.
pub(crate) struct ConfigMaps;

impl Strategy for ConfigMaps {
    fn validate_update(&self, live: &Value, new: &mut Value) -> Vec<Cause> {
        immutable::locked_data(live, new, &["data", "binaryData"])
    }

    fn printer(&self) -> Option<Printer> {
        Some(named(
            DATA_COLS,
            |o| vec![count(o, &["data", "binaryData"])],
            Tail::Age,
        ))
    }
}

/// Secrets.
pub(crate) struct Secrets;

impl Strategy for Secrets {
    fn on_create(&self, _: &Resource, obj: &mut Value) {
        defaults::secret(obj);
    }

    fn on_update(&self, obj: &mut Value) {
        defaults::string_data(obj);
    }

    fn validate_update(&self, live: &Value, new: &mut Value) -> Vec<Cause> {
        let mut c = immutable::unchanged(live, new, "/type", "type");
        c.extend(immutable::locked_data(live, new, &["data"]));
        c.extend(immutable::secret_type_keys(new));
        c
    }

    fn fields(&self, _: &Resource) -> FieldSet {
        FieldSet::builtin(SECRETS, Unknown::NotSupported)
    }

    fn printer(&self) -> Option<Printer> {
        Some(named(
            SECRET_COLS,
            |o| vec![json!(s(o, "/type")), count(o, &["data"])],
            Tail::Age,
        ))
    }
}

/// ServiceAccounts.
pub(crate) struct ServiceAccounts;

impl Strategy for ServiceAccounts {
    fn printer(&self) -> Option<Printer> {
        Some(named(&[], |_| Vec::new(), Tail::Age))
    }

    fn subresource(&self, name: &str) -> Option<Sub> {
        if name == "token" {
            return Some(Sub::Token);
        }
        super::scale(name)
    }
}
