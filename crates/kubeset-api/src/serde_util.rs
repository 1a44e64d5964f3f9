//! Helpers named by the generated serde attributes.

use serde::{Deserialize, Deserializer};

/// Required fields: `null` reads as the default value.
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

// The float helpers are named by generated code only where a spec has
// `number` fields (today: CRD schemas, feature `apiextensions-v1`).

/// A float written as Go's `encoding/json` writes it: integral values
/// without a fraction (`1`, not `1.0`), so that schema bounds round-trip.
#[allow(dead_code)]
pub(crate) struct GoFloat(pub(crate) f64);

/// Largest integer an `f64` holds exactly.
#[allow(dead_code)]
const EXACT: f64 = 9_007_199_254_740_992.0;

impl serde::Serialize for GoFloat {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let v = self.0;
        if v.fract() == 0.0 && v.abs() <= EXACT {
            // Exact: |v| ≤ 2^53 and integral.
            serializer.serialize_i64(v as i64)
        } else {
            serializer.serialize_f64(v)
        }
    }
}

/// `serialize_with` for required `f64` fields.
#[allow(dead_code)]
pub(crate) fn go_f64<S: serde::Serializer>(v: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&GoFloat(*v), serializer)
}

/// `serialize_with` for optional `f64` fields.
#[allow(dead_code)]
pub(crate) fn go_f64_opt<S: serde::Serializer>(
    v: &Option<f64>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => serializer.serialize_some(&GoFloat(*v)),
        None => serializer.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_written_like_go() {
        let s = |v: f64| serde_json::to_string(&GoFloat(v)).unwrap();
        assert_eq!(s(1.0), "1");
        assert_eq!(s(-10.0), "-10");
        assert_eq!(s(1.5), "1.5");
        assert_eq!(s(1e300), "1e+300");
        assert_eq!(s(0.0), "0");
    }
}
