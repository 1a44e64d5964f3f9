//! `Quantity`.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A resource quantity (`"100m"`, `"1Gi"`, `"1e3"`), kept as the string the
/// server sent so that it round-trips exactly. [`Quantity::to_f64`] reads
/// its value.
///
/// A JSON number is read too, as its decimal text (`1` → `"1"`): a custom
/// resource's quantity is `x-kubernetes-int-or-string` and the server
/// stores a number as it was sent, where the built-in server would have
/// written the string.
///
/// ```
/// use kubeset_api::types::Quantity;
/// let q: Quantity = serde_json::from_str("2").unwrap();
/// assert_eq!(q, Quantity("2".into()));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Quantity(pub String);

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Quantity;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a quantity (a string or a number)")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Quantity, E> {
                Ok(Quantity(v.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Quantity, E> {
                Ok(Quantity(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Quantity, E> {
                Ok(Quantity(v.to_string()))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Quantity, E> {
                Ok(Quantity(v.to_string()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Quantity, E> {
                Ok(Quantity(v.to_string()))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl Quantity {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The numeric value, with binary (`Ki` … `Ei`), decimal (`n` … `E`) or
    /// exponent (`e3`) suffixes applied; `None` if the text is not a
    /// quantity.
    pub fn to_f64(&self) -> Option<f64> {
        let s = self.0.trim();
        let split = s
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
            .unwrap_or(s.len());
        let (number, suffix) = s.split_at(split);
        if number.is_empty() || number == "+" || number == "-" {
            return None;
        }
        let n: f64 = number.parse().ok()?;
        let factor = match suffix {
            "" => 1.0,
            "Ki" => 1024f64,
            "Mi" => 1024f64.powi(2),
            "Gi" => 1024f64.powi(3),
            "Ti" => 1024f64.powi(4),
            "Pi" => 1024f64.powi(5),
            "Ei" => 1024f64.powi(6),
            "n" => 1e-9,
            "u" => 1e-6,
            "m" => 1e-3,
            "k" => 1e3,
            "M" => 1e6,
            "G" => 1e9,
            "T" => 1e12,
            "P" => 1e15,
            "E" => 1e18,
            exp if exp.starts_with(['e', 'E']) => {
                // As one float literal: `0e400` is 0 (0 × 10⁴⁰⁰ as two
                // floats is 0 × ∞ = NaN), `1e400` is ∞, `1e-400` is 0.
                let e: i32 = exp[1..].parse().ok()?;
                return format!("{number}e{e}").parse().ok();
            }
            _ => return None,
        };
        Some(n * factor)
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Quantity {
    fn from(s: &str) -> Self {
        Self(s.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_parse() {
        let q = |s: &str| Quantity::from(s).to_f64();
        assert_eq!(q("100m"), Some(0.1));
        assert_eq!(q("1Gi"), Some(1073741824.0));
        assert_eq!(q("2k"), Some(2000.0));
        assert_eq!(q("1e3"), Some(1000.0));
        assert_eq!(q("1.5"), Some(1.5));
        assert_eq!(q("-2"), Some(-2.0));
        assert_eq!(q("1Xi"), None);
        assert_eq!(q(""), None);
        assert_eq!(q("Gi"), None);
        // Found by the `scalars` fuzz target: a zero with a huge exponent
        // was NaN.
        assert_eq!(q("0e88883"), Some(0.0));
        assert_eq!(q("1e-400"), Some(0.0));
        assert_eq!(q("2e400"), Some(f64::INFINITY));
        assert_eq!(q("1.5e3"), Some(1500.0));
        let v: Quantity = serde_json::from_str("\"500Mi\"").unwrap();
        assert_eq!(serde_json::to_string(&v).unwrap(), "\"500Mi\"");
    }
}
