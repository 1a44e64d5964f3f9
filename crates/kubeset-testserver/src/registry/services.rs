//! Services (`pkg/registry/core/service`): named as DNS-1035 labels, no
//! `generation`; cluster IPs and node ports allocated on create
//! ([`crate::services`]) and carried over by updates, which may not change
//! them ([`crate::immutable::service`]).

use std::borrow::Cow;

use serde_json::Value;

use super::Strategy;
use crate::admission::builtin;
use crate::defaults;
use crate::fields::{FieldSet, SERVICES, Unknown};
use crate::immutable::{self, Cause};
use crate::printers::{Printer, SVC_COLS, Tail, named, service};
use crate::resources::Resource;
use crate::services;
use crate::status::ApiError;
use crate::validation::NameRule;

/// Services.
pub(crate) struct Services;

impl Strategy for Services {
    fn name_rule(&self) -> NameRule {
        NameRule::Label1035
    }

    fn tracks_generation(&self, _: &Resource, _: &Value) -> bool {
        false
    }

    fn on_decode(&self, obj: &mut Value) {
        defaults::service::service(obj);
    }

    fn after_record(&self, obj: &mut Value) {
        defaults::service::families(obj);
    }

    fn validate(&self, _: &Resource, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
        builtin::collect(|e| builtin::core::service(e, obj, old))
    }

    fn before_insert(
        &self,
        res: &Resource,
        name: &str,
        obj: &mut Value,
        siblings: &mut dyn Iterator<Item = Cow<'_, Value>>,
    ) -> Result<(), ApiError> {
        let used = services::Used::of(siblings);
        services::allocate(res, name, obj, &used)
    }

    fn validate_update(&self, live: &Value, new: &mut Value) -> Vec<Cause> {
        immutable::service(live, new)
    }

    fn fields(&self, _: &Resource) -> FieldSet {
        FieldSet::builtin(SERVICES, Unknown::NotSupported)
    }

    fn printer(&self) -> Option<Printer> {
        Some(named(SVC_COLS, service, Tail::None))
    }
}
