//! Where a resource lives: the one place that turns group, version, plural
//! and namespace into a request, shared by the typed and dynamic APIs.

use kubeset_rest::{PatchType, Request, RestClient, Verb};

/// The URL coordinates of a resource collection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourceUrl {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) plural: String,
    /// `None`: cluster-scoped, or every namespace.
    pub(crate) namespace: Option<String>,
}

impl ResourceUrl {
    /// A request for the collection (`name = None`) or one object.
    pub(crate) fn request(&self, rest: &RestClient, verb: Verb, name: Option<&str>) -> Request {
        self.start(rest.verb(verb), name)
    }

    /// A PATCH request of one object.
    pub(crate) fn patch(&self, rest: &RestClient, patch: PatchType, name: &str) -> Request {
        self.start(rest.patch(patch), Some(name))
    }

    fn start(&self, req: Request, name: Option<&str>) -> Request {
        let req = if self.group.is_empty() {
            req.abs_path(["api", self.version.as_str()])
        } else {
            req.abs_path(["apis", self.group.as_str(), self.version.as_str()])
        };
        let req = match &self.namespace {
            Some(ns) => req.namespace(ns),
            None => req,
        };
        let req = req.resource(&self.plural);
        match name {
            Some(name) => req.name(name),
            None => req,
        }
    }
}

/// Adds typed query parameters to a request.
pub(crate) fn with_params(mut req: Request, params: &impl crate::params::QueryParams) -> Request {
    let mut pairs = Vec::new();
    params.query_pairs(&mut pairs);
    for (k, v) in pairs {
        req = req.param(k, v);
    }
    req
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubeset_rest::RestConfig;

    fn rest() -> RestClient {
        RestClient::new(RestConfig::new("http://127.0.0.1:1/base")).expect("client")
    }

    #[test]
    fn core_and_grouped_paths() {
        let core = ResourceUrl {
            group: String::new(),
            version: "v1".into(),
            plural: "pods".into(),
            namespace: Some("ns1".into()),
        };
        assert_eq!(
            core.request(&rest(), Verb::Get, Some("web-0")).url(),
            "http://127.0.0.1:1/base/api/v1/namespaces/ns1/pods/web-0"
        );
        let apps = ResourceUrl {
            group: "apps".into(),
            version: "v1".into(),
            plural: "deployments".into(),
            namespace: None,
        };
        assert_eq!(
            apps.request(&rest(), Verb::Get, None).url(),
            "http://127.0.0.1:1/base/apis/apps/v1/deployments"
        );
        assert_eq!(
            apps.request(&rest(), Verb::Get, Some("x"))
                .sub_resource(["scale"])
                .url(),
            "http://127.0.0.1:1/base/apis/apps/v1/deployments/x/scale"
        );
    }
}
