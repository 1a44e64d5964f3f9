//! Where a resource lives: the one place that turns group, version, plural
//! and namespace into a request, shared by the typed and dynamic APIs.

use kubeset_rest::{CollectionPath, PatchType, Request, RestClient, Verb};

/// The URL coordinates of a resource collection, with its path for one
/// client worked out once (validated, joined, escaped: a
/// [`CollectionPath`]), so a request costs one allocation for its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourceUrl {
    /// `None`: cluster-scoped, or every namespace.
    pub(crate) namespace: Option<String>,
    collection: CollectionPath,
}

impl ResourceUrl {
    /// `/api/<version>` (core group) or `/apis/<group>/<version>`, then
    /// `namespaces/<namespace>` when given, then `plural`, under `rest`'s
    /// base URL path.
    pub(crate) fn new(
        rest: &RestClient,
        group: &str,
        version: &str,
        plural: &str,
        namespace: Option<&str>,
    ) -> Self {
        let collection = if group.is_empty() {
            rest.collection(&["api", version], namespace, plural)
        } else {
            rest.collection(&["apis", group, version], namespace, plural)
        };
        ResourceUrl {
            namespace: namespace.map(str::to_owned),
            collection,
        }
    }

    /// A request for the collection (`name = None`) or one object.
    pub(crate) fn request(&self, rest: &RestClient, verb: Verb, name: Option<&str>) -> Request {
        self.start(rest.verb(verb), name)
    }

    /// A PATCH request of one object.
    pub(crate) fn patch(&self, rest: &RestClient, patch: PatchType, name: &str) -> Request {
        self.start(rest.patch(patch), Some(name))
    }

    fn start(&self, req: Request, name: Option<&str>) -> Request {
        let req = req.collection(&self.collection);
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
        let rest = rest();
        let core = ResourceUrl::new(&rest, "", "v1", "pods", Some("ns1"));
        assert_eq!(
            core.request(&rest, Verb::Get, Some("web-0")).url(),
            "http://127.0.0.1:1/base/api/v1/namespaces/ns1/pods/web-0"
        );
        let apps = ResourceUrl::new(&rest, "apps", "v1", "deployments", None);
        assert_eq!(
            apps.request(&rest, Verb::Get, None).url(),
            "http://127.0.0.1:1/base/apis/apps/v1/deployments"
        );
        assert_eq!(
            apps.request(&rest, Verb::Get, Some("x"))
                .sub_resource(["scale"])
                .url(),
            "http://127.0.0.1:1/base/apis/apps/v1/deployments/x/scale"
        );
    }

    #[test]
    fn same_requests_as_the_builder_calls() {
        // Another client (other base path) takes the builder calls.
        for other in [
            rest(),
            RestClient::new(RestConfig::new("http://h:2/p/")).expect("client"),
        ] {
            let rest = rest();
            for (group, ns, plural, name) in [
                ("", Some("ns1"), "Pods", Some("a b")),
                ("apps", None, "deployments", None),
                ("", Some(""), "pods", Some("x")),
                ("", Some("a/b"), "pods", Some("x")),
                ("", Some("ns"), "..", None),
                ("", Some("ns"), "pods", Some("")),
            ] {
                let url = ResourceUrl::new(&rest, group, "v1", plural, ns);
                let by_hand = |req: Request| {
                    let req = if group.is_empty() {
                        req.abs_path(["api", "v1"])
                    } else {
                        req.abs_path(["apis", group, "v1"])
                    };
                    let req = match ns {
                        Some(ns) => req.namespace(ns),
                        None => req,
                    };
                    let req = req.resource(plural);
                    match name {
                        Some(name) => req.name(name),
                        None => req,
                    }
                };
                let show = |r: &Request| {
                    (
                        format!("{r:?}"),
                        r.path_and_query(),
                        r.url_template(),
                        r.error().map(ToString::to_string),
                    )
                };
                let ours = url
                    .request(&other, Verb::Get, name)
                    .sub_resource(["status"]);
                let want = by_hand(other.get()).sub_resource(["status"]);
                assert_eq!(show(&ours), show(&want), "{group} {ns:?} {plural} {name:?}");
                // Later builder calls see the namespace and resource as set.
                let ours = url
                    .request(&other, Verb::Get, name)
                    .namespace("z")
                    .resource("q");
                let want = by_hand(other.get()).namespace("z").resource("q");
                assert_eq!(show(&ours), show(&want), "{group} {ns:?} {plural} {name:?}");
                let ours = url
                    .request(&other, Verb::Get, name)
                    .prefix(["pre"])
                    .suffix(["..", "s"]);
                let want = by_hand(other.get()).prefix(["pre"]).suffix(["..", "s"]);
                assert_eq!(show(&ours), show(&want), "{group} {ns:?} {plural} {name:?}");
            }
        }
    }
}
