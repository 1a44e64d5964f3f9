//! The HTTP verb and the kinds of PATCH body: the leaf every other module
//! names (no imports from the crate).

use std::fmt;

/// HTTP verb of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Verb {
    /// GET.
    Get,
    /// POST.
    Post,
    /// PUT.
    Put,
    /// PATCH.
    Patch,
    /// DELETE.
    Delete,
    /// HEAD.
    Head,
}

impl Verb {
    /// The method name (`GET`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "GET",
            Verb::Post => "POST",
            Verb::Put => "PUT",
            Verb::Patch => "PATCH",
            Verb::Delete => "DELETE",
            Verb::Head => "HEAD",
        }
    }

    /// The method as an [`http::Method`].
    pub fn method(self) -> http::Method {
        match self {
            Verb::Get => http::Method::GET,
            Verb::Post => http::Method::POST,
            Verb::Put => http::Method::PUT,
            Verb::Patch => http::Method::PATCH,
            Verb::Delete => http::Method::DELETE,
            Verb::Head => http::Method::HEAD,
        }
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The kind of a PATCH body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchType {
    /// RFC 6902 JSON patch.
    Json,
    /// RFC 7386 merge patch.
    Merge,
    /// Kubernetes strategic merge patch.
    StrategicMerge,
    /// Server-side apply.
    Apply {
        /// The `fieldManager` parameter (required by the server).
        field_manager: String,
        /// Take ownership of conflicting fields (`force=true`).
        force: bool,
    },
}

impl PatchType {
    /// The Content-Type of this patch.
    pub fn content_type(&self) -> &'static str {
        self.content_type_header().to_str().unwrap_or_default()
    }

    /// [`content_type`](Self::content_type) as a header value: a static,
    /// so a request holds a reference (8 bytes, not 40) and sends a copy.
    pub(crate) fn content_type_header(&self) -> &'static http::HeaderValue {
        use http::HeaderValue as V;
        static JSON: V = V::from_static("application/json-patch+json");
        static MERGE: V = V::from_static("application/merge-patch+json");
        static STRATEGIC: V = V::from_static("application/strategic-merge-patch+json");
        static APPLY: V = V::from_static("application/apply-patch+yaml");
        match self {
            PatchType::Json => &JSON,
            PatchType::Merge => &MERGE,
            PatchType::StrategicMerge => &STRATEGIC,
            PatchType::Apply { .. } => &APPLY,
        }
    }
}
