//! The field a failed decode stopped at, for errors a user can act on.

use serde::de::{DeserializeOwned, Error as _};

/// `first`, the error of decoding `body` as `T`, with the path of the
/// field it failed at in front (`field spec.replicas: invalid type:
/// floating point `1.8446744073709552e19`, expected i64 at line 1 column
/// 80`). The path is found by decoding once more with it tracked
/// (serde_path_to_error), only after a failure: a successful decode costs
/// nothing more. Syntax errors keep their line and column alone.
///
/// The case this is for: kube-apiserver keeps a custom resource's integers
/// beyond int64 as float64 (`18446744073709551617` comes back as
/// `18446744073709552000`); a Rust integer field refuses such a number,
/// and the error must say which field.
pub(crate) fn name_the_field<T: DeserializeOwned>(
    body: &[u8],
    first: serde_json::Error,
) -> serde_json::Error {
    if !first.is_data() {
        return first;
    }
    let mut de = serde_json::Deserializer::from_slice(body);
    match serde_path_to_error::deserialize::<_, T>(&mut de) {
        Err(e) => {
            let path = e.path().to_string();
            serde_json::Error::custom(format_args!("field {path}: {}", e.into_inner()))
        }
        Ok(_) => first,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Obj {
        spec: Spec,
    }

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Spec {
        replicas: i64,
        list: Vec<i32>,
    }

    fn error(body: &str) -> String {
        let first = serde_json::from_slice::<Obj>(body.as_bytes()).unwrap_err();
        name_the_field::<Obj>(body.as_bytes(), first).to_string()
    }

    #[test]
    fn a_too_large_integer_names_its_field() {
        assert_eq!(
            error(r#"{"spec":{"replicas":18446744073709552000,"list":[]}}"#),
            "field spec.replicas: invalid type: floating point `1.8446744073709552e+19`, expected i64 at line 1 column 40"
        );
        assert_eq!(
            error(r#"{"spec":{"replicas":1,"list":[1,9223372036854776000]}}"#),
            "field spec.list[1]: invalid value: integer `9223372036854776000`, expected i32 at line 1 column 51"
        );
        // Syntax errors already say where.
        assert_eq!(
            error(r#"{"spec":"#),
            "EOF while parsing a value at line 1 column 8"
        );
    }
}
