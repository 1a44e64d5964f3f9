//! Events, core/v1 and `events.k8s.io/v1` (`pkg/registry/core/event`,
//! one store: [`crate::events`] converts between the two shapes).

use super::Strategy;
use crate::fields::{CORE_EVENTS, EVENTS_V1, FieldSet, Unknown};
use crate::printers::{EVENT_COLS, Printer, Tail, event, unnamed};
use crate::resources::Resource;

/// core/v1 Events.
pub(crate) struct CoreEvents;

impl Strategy for CoreEvents {
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
