//! Events, core/v1 and `events.k8s.io/v1` (`pkg/registry/core/event`,
//! one store: [`crate::events`] converts between the two shapes).

use serde_json::Value;

use super::Strategy;
use crate::admission::builtin;
use crate::fields::{CORE_EVENTS, EVENTS_V1, FieldSet, Unknown};
use crate::printers::{EVENT_COLS, Printer, Tail, event, unnamed};
use crate::resources::Resource;
use crate::validation::Cause;

/// core/v1 Events, validated as `ValidateEvent` does.
pub(crate) struct CoreEvents;

impl Strategy for CoreEvents {
    fn validate(&self, _: &Resource, obj: &Value, _: Option<&Value>) -> Vec<Cause> {
        builtin::collect(|e| builtin::core::event(e, obj))
    }

    fn fields(&self, _: &Resource) -> FieldSet {
        FieldSet::builtin(CORE_EVENTS, Unknown::NotSupported)
    }

    fn printer(&self) -> Option<Printer> {
        Some(unnamed(EVENT_COLS, event, Tail::None))
    }
}

/// `events.k8s.io/v1` Events: their labels read the stored core shape.
pub(crate) struct EventsV1;

impl Strategy for EventsV1 {
    fn fields(&self, _: &Resource) -> FieldSet {
        FieldSet::builtin(EVENTS_V1, Unknown::NotSupported)
    }

    fn printer(&self) -> Option<Printer> {
        Some(unnamed(EVENT_COLS, event, Tail::None))
    }
}
