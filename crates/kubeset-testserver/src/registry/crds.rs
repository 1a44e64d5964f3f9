//! CustomResourceDefinitions and the custom resources they define
//! (`apiextensions-apiserver`'s `customresourcedefinition` and
//! `customresource` strategies): a CRD names its group, kinds and versions
//! or is refused; while it is stored its resources are served, and its
//! deletion drops them with their objects. Custom resources select on
//! their CRD version's `selectableFields`, print its
//! `additionalPrinterColumns` (the default convertor's fallback in
//! [`crate::printers::columns`]), and may not be updated without a
//! `resourceVersion`.

use std::borrow::Cow;

use serde_json::Value;

use super::{Cascade, Strategy};
use crate::fields::FieldSet;
use crate::resources::{self, Resource};
use crate::status::ApiError;

/// CustomResourceDefinitions.
pub(crate) struct Definitions;

impl Strategy for Definitions {
    fn before_insert(
        &self,
        res: &Resource,
        name: &str,
        obj: &mut Value,
        _: &mut dyn Iterator<Item = Cow<'_, Value>>,
    ) -> Result<(), ApiError> {
        if resources::serves_any(obj) {
            return Ok(());
        }
        Err(ApiError::invalid(
            res,
            name,
            &[(
                "spec",
                "FieldValueRequired",
                "Required value: group, names.plural, names.kind and versions".into(),
            )],
        ))
    }

    fn defines_resources(&self) -> bool {
        true
    }

    fn cascade(&self) -> Cascade {
        Cascade::DefinedResources
    }
}

/// The objects of every CRD.
pub(crate) struct CustomResources;

impl Strategy for CustomResources {
    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn fields(&self, res: &Resource) -> FieldSet {
        FieldSet::custom(res.selectable_fields.clone())
    }
}
