//! Where a client's requests start: origin, base path, API prefix.

use std::{fmt, sync::Arc};

use super::RequestDesc;
use super::prepare::collection_url;
use crate::{
    collection::{CollectionInner, CollectionPath},
    error::Error,
    url::{join, path_escape},
    verb::Verb,
};

/// Where a client's requests start: the server's origin, the base URL's
/// path and the API prefix (base path + API path). Cheap to clone.
#[derive(Clone, PartialEq, Eq)]
pub struct Base(pub(super) Arc<BaseInner>);

#[derive(PartialEq, Eq)]
pub(super) struct BaseInner {
    /// `scheme://host[:port]`, no path.
    pub(super) origin: String,
    /// `host:port` (the per-host backoff key).
    pub(super) host_key: String,
    /// The base URL's path (for `abs_path`).
    pub(super) base_path: Arc<str>,
    /// `join("/", base path, api path)`: every request's starting prefix.
    pub(super) api_prefix: Arc<str>,
}

impl fmt::Debug for Base {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Base")
            .field("origin", &self.0.origin)
            .field("api_prefix", &self.0.api_prefix)
            .finish_non_exhaustive()
    }
}

fn invalid_config(reason: String) -> Error {
    Error::InvalidConfig { reason }
}

impl Base {
    /// The base of `base_url` (`http` or `https`, with a host; its path
    /// prefixes every request) with the versioned `api_path` (`/api/v1`,
    /// `/apis/apps/v1`, or empty).
    pub fn parse(base_url: &str, api_path: &str) -> Result<Self, Error> {
        let url = url::Url::parse(base_url)
            .map_err(|e| invalid_config(format!("base URL {base_url:?}: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid_config(format!(
                "base URL {base_url:?}: scheme must be http or https"
            )));
        }
        let host = url
            .host_str()
            .ok_or_else(|| invalid_config(format!("base URL {base_url:?} has no host")))?;
        let port = url.port_or_known_default().unwrap_or(443);
        let base_path: Arc<str> = url.path().into();
        Ok(Self(Arc::new(BaseInner {
            origin: url.origin().ascii_serialization(),
            host_key: format!("{host}:{port}"),
            api_prefix: join(["/", &*base_path, api_path]).into(),
            base_path,
        })))
    }

    /// `scheme://host[:port]` of the server.
    pub fn origin(&self) -> &str {
        &self.0.origin
    }

    /// The base URL's path.
    pub(crate) fn base_path(&self) -> &str {
        &self.0.base_path
    }

    /// `host:port` of the server.
    pub(crate) fn host_key(&self) -> &str {
        &self.0.host_key
    }

    /// The path every request starts from (base URL path + API path).
    pub fn api_prefix(&self) -> &str {
        &self.0.api_prefix
    }

    /// The collection of `resource` under `abs_path` (`["api", "v1"]`,
    /// `["apis", group, version]`), in `namespace` when given, validated
    /// and joined once for [`RequestDesc::collection`].
    pub fn collection(
        &self,
        abs_path: &[&str],
        namespace: Option<&str>,
        resource: &str,
    ) -> CollectionPath {
        let req = RequestDesc::new(Verb::Get, self).abs_path(abs_path);
        let req = match namespace {
            Some(ns) => req.namespace(ns),
            None => req,
        };
        let req = req.resource(resource).spec;
        let error = req.err.as_deref().map(|e| match e {
            Error::InvalidRequest { message } => message.clone(),
            other => other.to_string(),
        });
        let path = req.path();
        let mut escaped = String::with_capacity(path.len());
        path_escape(&path, &mut escaped);
        let template = req.template_path();
        let url = collection_url(&self.0.origin, &escaped);
        CollectionPath {
            inner: Arc::new(CollectionInner {
                base_path: self.0.base_path.clone(),
                abs: abs_path.iter().map(|s| (*s).to_owned()).collect(),
                namespace_arg: namespace.map(str::to_owned),
                resource_arg: resource.to_owned(),
                prefix: req.path_prefix.clone(),
                namespace: req.namespace_set.then(|| req.namespace.clone()),
                resource: req.resource.clone(),
                error,
                path,
                escaped,
                template,
                url,
            }),
        }
    }
}
