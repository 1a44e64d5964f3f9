//! What a client adds to every request it prepares.

use http::{HeaderMap, HeaderValue};

use super::{DEFAULT_ACCEPT, DEFAULT_CONTENT_TYPE, DEFAULT_MAX_RETRIES};

/// What a client adds to every request it prepares: default headers,
/// `Accept`, the body's default Content-Type, the retry limit.
#[derive(Debug, Clone)]
pub struct Defaults {
    /// Sent with every request unless the request sets the same name; all
    /// values of a name are kept.
    pub(crate) default_headers: HeaderMap,
    pub(crate) accept: HeaderValue,
    pub(crate) content_type: HeaderValue,
    /// The headers of a request that sets none and has no body: the
    /// default headers and `Accept`, built once.
    pub(crate) request_headers: HeaderMap,
    pub(crate) max_retries: u32,
    /// Whether prepared requests carry their URL template (only a metrics
    /// hook reads it).
    pub(crate) url_templates: bool,
    /// The client's `User-Agent`, sent unless the request or the default
    /// headers set one (added last, where reqwest added it before).
    pub(crate) user_agent: Option<HeaderValue>,
}

impl Default for Defaults {
    /// No default headers, client-go's `Accept` and Content-Type, 10
    /// retries.
    fn default() -> Self {
        Self::new(
            HeaderMap::new(),
            HeaderValue::from_static(DEFAULT_ACCEPT),
            HeaderValue::from_static(DEFAULT_CONTENT_TYPE),
            DEFAULT_MAX_RETRIES,
        )
    }
}

impl Defaults {
    /// These defaults (headers of a repeated name all sent).
    pub fn new(
        default_headers: HeaderMap,
        accept: HeaderValue,
        content_type: HeaderValue,
        max_retries: u32,
    ) -> Self {
        let request_headers = with_defaults(HeaderMap::new(), &default_headers, &accept);
        Self {
            default_headers,
            accept,
            content_type,
            request_headers,
            max_retries,
            url_templates: false,
            user_agent: None,
        }
    }

    /// These defaults with the client's `User-Agent` in every request's
    /// headers (sent with the prepared ones: no per-request insertion by
    /// reqwest).
    pub(crate) fn with_user_agent(mut self, user_agent: HeaderValue) -> Self {
        add_user_agent(&mut self.request_headers, Some(&user_agent));
        self.user_agent = Some(user_agent);
        self
    }
}

/// `user_agent` unless `headers` has one.
pub(super) fn add_user_agent(headers: &mut HeaderMap, user_agent: Option<&HeaderValue>) {
    if let Some(ua) = user_agent
        && !headers.contains_key(http::header::USER_AGENT)
    {
        headers.insert(http::header::USER_AGENT, ua.clone());
    }
}

/// A request's own `headers` with the client's defaults for the names it
/// does not set (all values of each), and `accept` unless it has one.
pub(super) fn with_defaults(
    mut headers: HeaderMap,
    defaults: &HeaderMap,
    accept: &HeaderValue,
) -> HeaderMap {
    // Default header names are distinct, so checking the map being filled
    // is checking the request's own headers.
    for name in defaults.keys() {
        if !headers.contains_key(name) {
            for value in defaults.get_all(name) {
                headers.append(name.clone(), value.clone());
            }
        }
    }
    if !headers.contains_key(http::header::ACCEPT) {
        headers.insert(http::header::ACCEPT, accept.clone());
    }
    headers
}
