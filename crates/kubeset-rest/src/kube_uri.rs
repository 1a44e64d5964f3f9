//! The path and query of a request as kube-rs writes them, for requests
//! sent through a tower service with no base URL (kube-rs's
//! `Client::new(service, ns)`): a kube-rs test that asserts
//! `request.uri().to_string()` on a `tower_test` mock then passes unchanged.
//!
//! kube-rs (kube-core's `Request`) starts every URI but a plain `get` with
//! `path?` and appends each parameter with a leading `&`
//! (`…/status?&force=true&fieldManager=cntrlr`; `form_urlencoded`'s
//! serializer started at 0 on a non-empty target), in the order its
//! `populate_qp`s write them, escaped as `application/x-www-form-urlencoded`.
//! Servers read both forms the same; only the text differs from the sorted
//! query (Go's `url.Values.Encode`) sent to a real server.

use crate::{desc::Prepared, url::form_escape};

/// kube-rs's parameter order: `watch`'s own first, then its
/// `ListParams`/`WatchParams`, `PostParams` and `PatchParams` orders
/// merged (no two of them order a pair differently but the
/// resourceVersion pair, see [`rank`]).
const ORDER: &[&str] = &[
    "watch",
    "timeoutSeconds",
    "dryRun",
    "force",
    "fieldSelector",
    "labelSelector",
    "limit",
    "continue",
    "allowWatchBookmarks",
    "sendInitialEvents",
    "fieldManager",
    "fieldValidation",
];

/// Where `key` goes: a list writes `resourceVersion` before
/// `resourceVersionMatch`, a watch after it (kube-rs appends the watch's
/// version last); parameters kube-rs never writes go at the end, sorted.
fn rank(key: &str, watch: bool) -> usize {
    if let Some(i) = ORDER.iter().position(|k| *k == key) {
        return i;
    }
    match (key, watch) {
        ("resourceVersion", false) | ("resourceVersionMatch", true) => ORDER.len(),
        ("resourceVersionMatch", false) | ("resourceVersion", true) => ORDER.len() + 1,
        _ => ORDER.len() + 2,
    }
}

/// `p`'s path and query in kube-rs's form.
pub(crate) fn path_and_query(p: &Prepared) -> String {
    let mut pairs: Vec<(&str, &str)> = p.params.pairs().collect();
    let mut out = p.path().to_owned();
    if p.bare_get && pairs.is_empty() {
        return out;
    }
    let watch = p.params.get("watch") == Some("true");
    // Stable: values of one key keep their order.
    pairs.sort_by_key(|(k, _)| (rank(k, watch), *k));
    out.push('?');
    for (k, v) in pairs {
        out.push('&');
        form_escape(k, &mut out);
        out.push('=');
        form_escape(v, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        Verb,
        desc::{Base, Defaults, RequestDesc},
    };

    fn uri(desc: RequestDesc) -> String {
        path_and_query(&desc.prepare(&Defaults::default()).unwrap())
    }

    fn base() -> Base {
        Base::parse("http://kubernetes.invalid", "/apis/kube.rs/v1").unwrap()
    }

    // The URIs controller-rs's tower-mock tests assert, and kube-core's own.
    #[test]
    fn kube_rs_uris() {
        let b = base();
        let docs = |verb| {
            RequestDesc::new(verb, &b)
                .namespace("default")
                .resource("documents")
        };
        assert_eq!(
            uri(docs(Verb::Patch).name("test")),
            "/apis/kube.rs/v1/namespaces/default/documents/test?"
        );
        assert_eq!(
            uri(docs(Verb::Patch)
                .name("test")
                .sub_resource(["status"])
                .param("fieldManager", "cntrlr")
                .param("force", "true")),
            "/apis/kube.rs/v1/namespaces/default/documents/test/status?&force=true&fieldManager=cntrlr"
        );
        assert_eq!(
            uri(docs(Verb::Get).name("a")),
            "/apis/kube.rs/v1/namespaces/default/documents/a"
        );
        assert_eq!(
            uri(docs(Verb::Get).name("a").param("resourceVersion", "5")),
            "/apis/kube.rs/v1/namespaces/default/documents/a?&resourceVersion=5"
        );
        assert_eq!(
            uri(docs(Verb::Get)),
            "/apis/kube.rs/v1/namespaces/default/documents?"
        );
        assert_eq!(
            uri(docs(Verb::Get)
                .param("resourceVersion", "0")
                .param("resourceVersionMatch", "NotOlderThan")
                .param("labelSelector", "app=a b")
                .param("limit", "5")),
            "/apis/kube.rs/v1/namespaces/default/documents?&labelSelector=app%3Da+b&limit=5&resourceVersion=0&resourceVersionMatch=NotOlderThan"
        );
        assert_eq!(
            uri(docs(Verb::Get)
                .param("watch", "true")
                .param("resourceVersion", "7")
                .param("timeoutSeconds", "290")
                .param("allowWatchBookmarks", "true")),
            "/apis/kube.rs/v1/namespaces/default/documents?&watch=true&timeoutSeconds=290&allowWatchBookmarks=true&resourceVersion=7"
        );
        assert_eq!(
            uri(docs(Verb::Post)),
            "/apis/kube.rs/v1/namespaces/default/documents?"
        );
    }
}
