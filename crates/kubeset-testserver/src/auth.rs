//! Bearer-token authentication, shared by the API replicas and the admin
//! endpoint, parsed as kube-apiserver's `bearertoken` authenticator does
//! (k8s.io/apiserver v0.35 `pkg/authentication/request/bearertoken`): the
//! header is trimmed, split at the first two spaces, the scheme compared
//! without regard to case (`bearer` works), the token is the second part.

use http::{HeaderMap, header};

/// Whether `headers` carry `Authorization: Bearer <expected>`.
pub(crate) fn bearer_ok(headers: &HeaderMap, expected: &str) -> bool {
    let Some(auth) = headers
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
    else {
        return false;
    };
    let mut parts = auth.trim().splitn(3, ' ');
    let scheme = parts.next().unwrap_or("");
    let token = parts.next().unwrap_or("");
    scheme.eq_ignore_ascii_case("bearer") && !token.is_empty() && same(token, expected)
}

/// Compares in time independent of where the strings first differ.
fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Creates `path` for writing with mode 0600 from the start (no window in
/// which another user could open it), truncating an existing file. An
/// existing file keeps its mode, so it is set again to 0600 on the open
/// descriptor.
pub(crate) fn write_private(path: &std::path::Path, data: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    f.write_all(data)?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(auth: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, auth.parse().unwrap());
        h
    }

    #[test]
    fn parses_as_kube_apiserver() {
        for ok in [
            "Bearer tok",
            "bearer tok",
            "BEARER tok",
            "  Bearer tok  ",
            "Bearer tok trailing",
        ] {
            assert!(bearer_ok(&with(ok), "tok"), "{ok:?}");
        }
        for bad in [
            "Bearer",
            "Bearer  tok",
            "Basic tok",
            "Bearertok",
            "Bearer tok2",
            "Bearer to",
        ] {
            assert!(!bearer_ok(&with(bad), "tok"), "{bad:?}");
        }
        assert!(!bearer_ok(&HeaderMap::new(), "tok"));
    }
}
