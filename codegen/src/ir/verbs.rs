//! The spec's `x-kubernetes-action`s and the discovery verbs they stand
//! for, as enums instead of strings.

/// A discovery verb (`kubectl api-resources -o wide`'s `VERBS`).
///
/// Declared in name order, so the derived `Ord` sorts verbs as their names
/// sort: the generated `verbs: &[…]` tables list them that way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verb {
    /// `create`.
    Create,
    /// `delete`.
    Delete,
    /// `deletecollection`.
    Deletecollection,
    /// `get`.
    Get,
    /// `list`.
    List,
    /// `patch`.
    Patch,
    /// `update`.
    Update,
    /// `watch`.
    Watch,
}

impl Verb {
    /// Every verb a custom resource serves.
    pub const CUSTOM_RESOURCE: [Verb; 8] = [
        Verb::Create,
        Verb::Delete,
        Verb::Deletecollection,
        Verb::Get,
        Verb::List,
        Verb::Patch,
        Verb::Update,
        Verb::Watch,
    ];

    /// The verb as discovery spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Create => "create",
            Verb::Delete => "delete",
            Verb::Deletecollection => "deletecollection",
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Patch => "patch",
            Verb::Update => "update",
            Verb::Watch => "watch",
        }
    }
}

/// An operation's `x-kubernetes-action`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// `get`: read one object.
    Get,
    /// `list`.
    List,
    /// `post`: create.
    Post,
    /// `put`: replace.
    Put,
    /// `patch`.
    Patch,
    /// `delete`.
    Delete,
    /// `deletecollection`.
    Deletecollection,
    /// `watch`: watch one object (`/watch/…/{name}`, deprecated).
    Watch,
    /// `watchlist`: watch a collection (`/watch/…`, deprecated).
    Watchlist,
    /// `connect`: a protocol upgrade or a proxy.
    Connect,
}

impl Action {
    /// The action named `name`; `None` for one this generator does not
    /// know (its operation is then left out).
    pub fn parse(name: &str) -> Option<Action> {
        Some(match name {
            "get" => Action::Get,
            "list" => Action::List,
            "post" => Action::Post,
            "put" => Action::Put,
            "patch" => Action::Patch,
            "delete" => Action::Delete,
            "deletecollection" => Action::Deletecollection,
            "watch" => Action::Watch,
            "watchlist" => Action::Watchlist,
            "connect" => Action::Connect,
            _ => return None,
        })
    }

    /// The discovery verb of an operation with this action and the HTTP
    /// `method` (`GET`, …). A `connect` operation (exec, attach,
    /// port-forward, proxy) stands for its method, as kube-apiserver's
    /// installer maps a connecter's methods (`toDiscoveryKubeVerb`):
    /// `GET` → get, `POST` → create, `PUT` → update, `PATCH` → patch,
    /// `DELETE` → delete, and `HEAD` and `OPTIONS` → none (`None`).
    pub fn verb(self, method: &str) -> Option<Verb> {
        Some(match self {
            Action::Get => Verb::Get,
            Action::List => Verb::List,
            Action::Post => Verb::Create,
            Action::Put => Verb::Update,
            Action::Patch => Verb::Patch,
            Action::Delete => Verb::Delete,
            Action::Deletecollection => Verb::Deletecollection,
            Action::Watch | Action::Watchlist => Verb::Watch,
            Action::Connect => match method {
                "GET" => Verb::Get,
                "POST" => Verb::Create,
                "PUT" => Verb::Update,
                "PATCH" => Verb::Patch,
                "DELETE" => Verb::Delete,
                _ => return None,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_sort_as_their_names() {
        let mut verbs = Verb::CUSTOM_RESOURCE.to_vec();
        verbs.reverse();
        verbs.sort();
        let names: Vec<_> = verbs.iter().map(|v| v.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
    }

    #[test]
    fn actions_map_to_verbs() {
        let verb = |action: &str, method: &str| Action::parse(action)?.verb(method);
        assert_eq!(verb("post", "POST"), Some(Verb::Create));
        assert_eq!(verb("put", "PUT"), Some(Verb::Update));
        assert_eq!(verb("watchlist", "GET"), Some(Verb::Watch));
        assert_eq!(Action::parse("proxy"), None);
    }

    #[test]
    fn a_connect_operation_stands_for_its_method() {
        // As kube-apiserver 1.35 lists pods/exec (GET, POST) and pods/proxy
        // (every method): create, delete, get, patch, update.
        let connect = |m: &str| Action::Connect.verb(m);
        let exec: Vec<_> = ["GET", "POST"].into_iter().filter_map(connect).collect();
        assert_eq!(exec, [Verb::Get, Verb::Create]);
        let proxy: std::collections::BTreeSet<_> =
            ["GET", "PUT", "POST", "DELETE", "PATCH", "HEAD", "OPTIONS"]
                .into_iter()
                .filter_map(connect)
                .collect();
        let names: Vec<_> = proxy.iter().map(|v| v.as_str()).collect();
        assert_eq!(names, ["create", "delete", "get", "patch", "update"]);
    }
}
