//! The spec's `x-kubernetes-action`s and the discovery verbs they stand
//! for, as enums instead of strings.

/// A discovery verb (`kubectl api-resources -o wide`'s `VERBS`).
///
/// Declared in name order, so the derived `Ord` sorts verbs as their names
/// sort: the generated `verbs: &[…]` tables list them that way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verb {
    /// `connect` (exec, attach, port-forward, proxy).
    Connect,
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
    /// Every verb a custom resource serves (all but `connect`).
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
            Verb::Connect => "connect",
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

    /// The discovery verb the action stands for.
    pub fn verb(self) -> Verb {
        match self {
            Action::Get => Verb::Get,
            Action::List => Verb::List,
            Action::Post => Verb::Create,
            Action::Put => Verb::Update,
            Action::Patch => Verb::Patch,
            Action::Delete => Verb::Delete,
            Action::Deletecollection => Verb::Deletecollection,
            Action::Watch | Action::Watchlist => Verb::Watch,
            Action::Connect => Verb::Connect,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_sort_as_their_names() {
        let mut verbs = Verb::CUSTOM_RESOURCE.to_vec();
        verbs.push(Verb::Connect);
        verbs.sort();
        let names: Vec<_> = verbs.iter().map(|v| v.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
    }

    #[test]
    fn actions_map_to_verbs() {
        assert_eq!(Action::parse("post").map(Action::verb), Some(Verb::Create));
        assert_eq!(Action::parse("put").map(Action::verb), Some(Verb::Update));
        assert_eq!(
            Action::parse("watchlist").map(Action::verb),
            Some(Verb::Watch)
        );
        assert_eq!(Action::parse("proxy"), None);
    }
}
