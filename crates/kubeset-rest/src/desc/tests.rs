//! client-go's URL vectors (REFERENCE-BEHAVIOUR.md 1-10) against the
//! description alone: no client, no socket.
use super::*;

/// The verbs of a client, on a bare [`Base`].
trait Verbs {
    fn get(&self) -> RequestDesc;
    fn post(&self) -> RequestDesc;
    fn put(&self) -> RequestDesc;
    fn delete(&self) -> RequestDesc;
    fn patch(&self, patch: PatchType) -> RequestDesc;
}

impl Verbs for Base {
    fn get(&self) -> RequestDesc {
        RequestDesc::new(Verb::Get, self)
    }
    fn post(&self) -> RequestDesc {
        RequestDesc::new(Verb::Post, self)
    }
    fn put(&self) -> RequestDesc {
        RequestDesc::new(Verb::Put, self)
    }
    fn delete(&self) -> RequestDesc {
        RequestDesc::new(Verb::Delete, self)
    }
    fn patch(&self, patch: PatchType) -> RequestDesc {
        RequestDesc::patch(self, patch)
    }
}

fn client(base: &str, api_path: &str) -> Base {
    Base::parse(base, api_path).unwrap()
}

fn c() -> Base {
    client("https://h:6443", "")
}

fn err(r: RequestDesc) -> String {
    r.error().map(ToString::to_string).unwrap_or_default()
}

#[test]
fn path_order() {
    let r = c()
        .get()
        .prefix(["/test/"])
        .name("bar")
        .resource("baz")
        .namespace("foo");
    assert_eq!(r.path_and_query(), "/test/namespaces/foo/baz/bar");
    let r = c()
        .get()
        .prefix(["/test/"])
        .name("bar")
        .resource("baz")
        .namespace("foo")
        .suffix(["test"])
        .sub_resource(["a", "b"]);
    assert_eq!(r.path_and_query(), "/test/namespaces/foo/baz/bar/a/b/test");
    assert_eq!(
        r.url(),
        "https://h:6443/test/namespaces/foo/baz/bar/a/b/test"
    );
    assert_eq!(
        r.url_template(),
        "/test/namespaces/{namespace}/baz/{name}/a/b/test"
    );
    // Joined once, cleaned like Go's step-by-step joins: a suffix may
    // climb out of the name, an absolute path's trailing slash folds.
    let r = c().get().resource("Pods").name("a").suffix(["..", "b"]);
    assert_eq!(r.path_and_query(), "/pods/b");
    let r = client("https://h/p1/", "")
        .get()
        .abs_path(["/api/"])
        .namespace("ns")
        .resource("pods");
    assert_eq!(r.path_and_query(), "/p1/api/namespaces/ns/pods");
}

#[test]
fn base_path_and_api_path() {
    let r = client("https://h/p", "/api/v1").get().resource("pods");
    assert_eq!(r.path_and_query(), "/p/api/v1/pods");
    let r = client("https://h/p/", "/apis/apps/v1")
        .get()
        .namespace("ns")
        .resource("deployments");
    assert_eq!(
        r.url(),
        "https://h/p/apis/apps/v1/namespaces/ns/deployments"
    );
    assert_eq!(
        client("https://h", "/api/v1").get().path_and_query(),
        "/api/v1"
    );
}

#[test]
fn empty_namespace_leaves_segment_out_and_resource_lowercased() {
    let r = c().get().namespace("").resource("Pods");
    assert_eq!(r.path_and_query(), "/pods");
    let r = c().get().resource("Pods").resource("x");
    assert_eq!(
        err(r),
        r#"resource already set to "Pods", cannot change to "x""#
    );
}

#[test]
fn invalid_segments() {
    let cases: Vec<(RequestDesc, &str)> = vec![
        (
            c().get().namespace("a/b"),
            r#"invalid namespace "a/b": [may not contain '/']"#,
        ),
        (
            c().get().namespace(".."),
            r#"invalid namespace "..": [may not be '..']"#,
        ),
        (
            c().get().resource("."),
            r#"invalid resource ".": [may not be '.']"#,
        ),
        (
            c().get().resource("a%b"),
            r#"invalid resource "a%b": [may not contain '%']"#,
        ),
        (
            c().get().name("a/%"),
            r#"invalid resource name "a/%": [may not contain '/' may not contain '%']"#,
        ),
        (
            c().get().sub_resource(["ok", ".."]),
            r#"invalid subresource "..": [may not be '..']"#,
        ),
        (c().get().name(""), "resource name may not be empty"),
        (
            c().get().name("bar").name("baz"),
            r#"resource name already set to "bar", cannot change to "baz""#,
        ),
        (
            c().get().namespace("bar").namespace("baz"),
            r#"namespace already set to "bar", cannot change to "baz""#,
        ),
        (
            c().get().sub_resource(["bar"]).sub_resource(["baz"]),
            r#"subresource already set to "bar", cannot change to "baz""#,
        ),
    ];
    for (r, want) in cases {
        assert_eq!(err(r), want);
    }
    for ok in ["a.b", "a..b", "..."] {
        let r = c()
            .get()
            .namespace(ok)
            .resource(ok)
            .name(ok)
            .sub_resource([ok]);
        assert!(r.error().is_none(), "{ok}");
    }
}

#[test]
fn first_error_sticks() {
    let r = c()
        .get()
        .name("")
        .namespace("a/b")
        .resource("x")
        .param("a", "b");
    assert_eq!(err(r), "resource name may not be empty");
}

#[test]
fn params_and_timeout() {
    let r = c()
        .get()
        .param("foo", "a b")
        .param("bar", "1")
        .param("bar", "2");
    assert_eq!(r.path_and_query(), "/?bar=1&bar=2&foo=a+b");
    let cases = [
        (Duration::from_secs(1), "1s"),
        (Duration::from_secs(60), "1m0s"),
        (Duration::from_millis(1500), "1.5s"),
        (Duration::from_millis(500), "500ms"),
    ];
    for (d, s) in cases {
        let r = c()
            .get()
            .param("timeout", "9s")
            .param("timeout", "8s")
            .timeout(d);
        assert_eq!(r.path_and_query(), format!("/?timeout={s}"));
    }
    let r = c().get().param("timeout", "9s").timeout(Duration::ZERO);
    assert_eq!(r.path_and_query(), "/?timeout=9s");
}

#[test]
fn abs_path_rules() {
    let r = client("https://h/p1", "/api/v1").get().abs_path(["/"]);
    assert_eq!(r.path_and_query(), "/p1/");
    let r = client("https://h/p1/api/p2", "/api/v1")
        .get()
        .prefix(["/r1"])
        .abs_path(["/api/"]);
    assert_eq!(r.path_and_query(), "/p1/api/p2/api/");
    let r = client("https://h", "/api/v1").get().abs_path(["/healthz"]);
    assert_eq!(r.path_and_query(), "/healthz");
    let r = client("https://h", "/api/v1")
        .get()
        .abs_path(["/apis", "apps/"]);
    assert_eq!(r.path_and_query(), "/apis/apps");
}

#[test]
fn preflight() {
    let post = c().post().namespace("").resource("pods");
    assert_eq!(
        post.preflight().unwrap_err().to_string(),
        "an empty namespace may not be set during creation"
    );
    for r in [
        c().get().namespace("").resource("pods").name("a"),
        c().put().namespace("").resource("pods").name("a"),
        c().delete().namespace("").resource("pods").name("a"),
    ] {
        assert_eq!(
            r.preflight().unwrap_err().to_string(),
            "an empty namespace may not be set when a resource name is provided"
        );
    }
    assert!(c().get().namespace("").resource("pods").preflight().is_ok());
    assert!(
        c().patch(PatchType::Merge)
            .namespace("")
            .resource("pods")
            .name("a")
            .preflight()
            .is_ok()
    );
    assert!(c().post().resource("pods").preflight().is_ok());
}

#[test]
fn patch_types() {
    let cases = [
        (PatchType::Json, "application/json-patch+json"),
        (PatchType::Merge, "application/merge-patch+json"),
        (
            PatchType::StrategicMerge,
            "application/strategic-merge-patch+json",
        ),
    ];
    for (p, ct) in cases {
        assert_eq!(p.content_type(), ct);
    }
    let r = c().patch(PatchType::Apply {
        field_manager: "me".into(),
        force: true,
    });
    assert_eq!(r.path_and_query(), "/?fieldManager=me&force=true");
    let r = c().patch(PatchType::Apply {
        field_manager: "me".into(),
        force: false,
    });
    assert_eq!(r.path_and_query(), "/?fieldManager=me");
}

#[test]
fn collection_is_the_builder_calls() {
    let rest = client("https://h/p/", "/api/v1");
    let pods = rest.collection(&["api", "v1"], Some("ns"), "Pods");
    assert_eq!(pods.path(), "/p/api/v1/namespaces/ns/pods");
    let r = rest.get().collection(&pods).name("a b");
    assert_eq!(r.path_and_query(), "/p/api/v1/namespaces/ns/pods/a%20b");
    assert_eq!(
        r.url_template(),
        "/p/api/v1/namespaces/{namespace}/pods/{name}"
    );
    let r = rest.get().collection(&pods).namespace("x");
    assert_eq!(
        err(r),
        r#"namespace already set to "ns", cannot change to "x""#
    );
    let r = rest.get().collection(&pods).resource("x");
    assert_eq!(
        err(r),
        r#"resource already set to "Pods", cannot change to "x""#
    );
    // An explicitly empty namespace arms the preflight checks.
    let empty = rest.collection(&["api", "v1"], Some(""), "pods");
    let r = rest.get().collection(&empty).name("a");
    assert_eq!(
        r.preflight().unwrap_err().to_string(),
        "an empty namespace may not be set when a resource name is provided"
    );
    assert!(rest.get().collection(&empty).preflight().is_ok());
    let bad = rest.collection(&["api", "v1"], Some("a/b"), "pods");
    let r = rest.get().collection(&bad).name("x");
    assert_eq!(err(r), r#"invalid namespace "a/b": [may not contain '/']"#);
}

#[test]
fn path_is_escaped() {
    let r = c().get().resource("pods").name("a b:c");
    assert_eq!(r.path_and_query(), "/pods/a%20b:c");
}

#[test]
fn to_http_is_the_description() {
    let defaults = Defaults::default();
    let http = |r: RequestDesc| {
        let p = r.prepare(&defaults).unwrap();
        to_http(&p, "https://h:6443", &defaults).unwrap()
    };
    // Vector 1 (path order) and 7 (timeout) through the whole request.
    let req = http(
        c().get()
            .prefix(["/test/"])
            .name("bar")
            .resource("baz")
            .namespace("foo")
            .timeout(Duration::from_millis(1500)),
    );
    assert_eq!(req.method(), http::Method::GET);
    assert_eq!(
        req.uri(),
        "https://h:6443/test/namespaces/foo/baz/bar?timeout=1.5s"
    );
    // Vector 9: the default Accept; no body, no Content-Type.
    assert_eq!(req.headers()["accept"], "application/json, */*");
    assert!(req.headers().get("content-type").is_none());
    assert!(req.body().is_empty());
    // A body gets the default Content-Type; a patch its own; an own
    // Accept wins; repeated default headers are all sent.
    let mut own = HeaderMap::new();
    own.append("impersonate-group", HeaderValue::from_static("a"));
    own.append("impersonate-group", HeaderValue::from_static("b"));
    let with_groups = Defaults::new(
        own,
        HeaderValue::from_static("application/json"),
        HeaderValue::from_static("application/json"),
        3,
    );
    let p = c()
        .post()
        .namespace("ns")
        .resource("configmaps")
        .body(&b"{}"[..])
        .prepare(&with_groups)
        .unwrap();
    assert_eq!(p.max_retries, 3);
    let req = to_http(&p, "http://h", &with_groups).unwrap();
    assert_eq!(req.uri(), "http://h/namespaces/ns/configmaps");
    assert_eq!(req.headers()["content-type"], "application/json");
    assert_eq!(req.headers().get_all("impersonate-group").iter().count(), 2);
    assert_eq!(&req.body()[..], b"{}");
    let req = http(
        c().patch(PatchType::StrategicMerge)
            .resource("pods")
            .name("a")
            .header(http::header::ACCEPT, HeaderValue::from_static("x/y"))
            .body(&b"{}"[..]),
    );
    assert_eq!(req.method(), http::Method::PATCH);
    assert_eq!(
        req.headers()["content-type"],
        "application/strategic-merge-patch+json"
    );
    assert_eq!(req.headers()["accept"], "x/y");
    // The client's User-Agent is in every prepared set, with and
    // without a body; a request's own (or a default header's) wins.
    let ua = Defaults::default().with_user_agent(HeaderValue::from_static("ua/1"));
    let sent = |d: RequestDesc| {
        let p = d.prepare(&ua).unwrap();
        let req = to_http(&p, "http://h", &ua).unwrap();
        req.headers()
            .get_all("user-agent")
            .iter()
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(sent(c().get().resource("pods")), ["ua/1"]);
    assert_eq!(sent(c().post().resource("pods").body(&b"{}"[..])), ["ua/1"]);
    let own = HeaderValue::from_static("own/2");
    assert_eq!(
        sent(
            c().get()
                .resource("pods")
                .header(http::header::USER_AGENT, own)
        ),
        ["own/2"]
    );
    let mut default_ua = HeaderMap::new();
    default_ua.insert("user-agent", HeaderValue::from_static("dflt/3"));
    let d = Defaults::new(
        default_ua,
        defaults.accept.clone(),
        defaults.content_type.clone(),
        1,
    )
    .with_user_agent(HeaderValue::from_static("ua/1"));
    let p = c().get().resource("pods").prepare(&d).unwrap();
    assert_eq!(
        to_http(&p, "http://h", &d).unwrap().headers()["user-agent"],
        "dflt/3"
    );
    // Builder and preflight errors are the description's.
    let bad = c().get().namespace("a/b").prepare(&defaults).unwrap_err();
    assert_eq!(
        bad.to_string(),
        r#"invalid namespace "a/b": [may not contain '/']"#
    );
    let bad = c().post().namespace("").resource("pods").prepare(&defaults);
    assert!(bad.is_err());
}

/// The URL an attempt sends, parsed per attempt from the prepared path
/// and query at `origin` (what an endpoint without a prepared URL does).
fn parsed(p: &Prepared, origin: &str) -> url::Url {
    let mut url = url::Url::parse(origin).unwrap();
    url.set_path(p.path());
    url.set_query((!p.query().is_empty()).then_some(p.query()));
    url
}

#[test]
fn prepared_url_is_the_parsed_path() {
    let base = client("http://127.0.0.1:6443/base/", "/api/v1");
    let origin = base.origin().to_owned();
    let pods = base.collection(&["api", "v1"], Some("ns-1"), "Pods");
    let all = base.collection(&["apis", "apps", "v1"], None, "deployments");
    let cases: [(&CollectionPath, &str, &str, &str, bool); 9] = [
        (&pods, "web-0", "", "", true),
        (&pods, "a.b_c~d-9", "status", "", true),
        (&pods, "UPPER", "", "limit=5", true),
        (&all, "", "", "watch=true&resourceVersion=7", true),
        (&pods, "a:b", "", "", false),
        (&pods, "sp ace", "", "", false),
        (&pods, "caf\u{e9}", "", "", false),
        (&pods, "x", "a/b", "", false),
        (&pods, "q?#", "", "", false),
    ];
    for (collection, name, sub, query, prepared) in cases {
        let mut req = RequestDesc::new(Verb::Get, &base).collection(collection);
        if !name.is_empty() {
            req = req.name(name);
        }
        if !sub.is_empty() {
            req = req.sub_resource(sub.split('/'));
        }
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap();
            req = req.param(k, v);
        }
        // The prepared path (read from the URL when one was built) is
        // the description's escaped path.
        let escaped = req.path_and_query();
        let p = req.prepare(&Defaults::default()).unwrap();
        assert_eq!(p.path_and_query(), escaped, "{name:?} {sub:?}");
        let want = parsed(&p, &origin);
        assert_eq!(p.url_at(&origin).is_some(), prepared, "{name:?} {sub:?}");
        if let Some(url) = p.url_at(&origin) {
            assert_eq!(url.as_str(), want.as_str(), "{name:?} {sub:?}");
        }
        // Another server (a failover endpoint) parses its own.
        assert!(p.url_at("http://127.0.0.1:644").is_none());
        assert!(p.url_at("http://127.0.0.1:64430").is_none());
        assert!(p.url_at("https://127.0.0.1:6443").is_none());
    }
    // A resumable watch's new resourceVersion drops the prepared URL.
    let mut p = RequestDesc::new(Verb::Get, &base)
        .collection(&all)
        .param("watch", "true")
        .prepare(&Defaults::default())
        .unwrap();
    assert!(p.url_at(&origin).is_some());
    p.set_param("resourceVersion", "8");
    assert!(p.url_at(&origin).is_none());
    let url = parsed(&p, &origin);
    assert_eq!(url.path(), "/base/apis/apps/v1/deployments");
    assert!(url.query().unwrap().contains("resourceVersion=8"));
}
