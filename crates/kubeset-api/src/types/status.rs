//! `Status` as an error: the generated struct gets `Display` and `Error`.

use std::fmt;

use crate::apimachinery::pkg::apis::meta::v1::Status;

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = self.message.as_deref().unwrap_or("no message");
        match (&self.reason, self.code) {
            (Some(reason), Some(code)) => write!(f, "{message} ({reason}, {code})"),
            (Some(reason), None) => write!(f, "{message} ({reason})"),
            (None, Some(code)) => write!(f, "{message} ({code})"),
            (None, None) => f.write_str(message),
        }
    }
}

impl std::error::Error for Status {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_reads_and_displays() {
        let s: Status = serde_json::from_str(
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
                "message":"pods \"x\" not found","reason":"NotFound",
                "details":{"name":"x","kind":"pods"},"code":404}"#,
        )
        .unwrap();
        assert_eq!(s.code, Some(404));
        assert_eq!(s.to_string(), "pods \"x\" not found (NotFound, 404)");
        let out = serde_json::to_value(&s).unwrap();
        assert_eq!(out["kind"], "Status");
        assert_eq!(out["apiVersion"], "v1");
    }
}
