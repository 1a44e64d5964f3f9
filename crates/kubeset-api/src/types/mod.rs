//! Hand-written types: what the spec cannot say. The generated modules
//! re-export them at their definition's path (`Quantity` is also
//! `apimachinery::pkg::api::resource::Quantity`).

mod bytes;
mod fields_v1;
mod int_or_string;
#[cfg(feature = "apiextensions-v1")]
mod json_schema;
mod list;
mod quantity;
mod raw;
mod status;
mod time;
mod watch;

pub use self::bytes::{ByteString, InvalidBase64};
pub use self::fields_v1::FieldsV1;
pub use self::int_or_string::IntOrString;
#[cfg(feature = "apiextensions-v1")]
pub use self::json_schema::{
    JSON, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool, JSONSchemaPropsOrStringArray,
};
pub use self::list::List;
pub use self::quantity::Quantity;
pub use self::raw::{Patch, RawExtension};
pub use self::time::{MicroTime, Time, TimeParseError};
pub use self::watch::WatchEvent;
