//! A description's path and URL as text: escaped, as a template (for
//! metrics), with its query.

use super::{RequestDesc, Spec};
use crate::collection::CollectionInner;
use crate::url::{go_duration, join, path_escape};

impl Spec {
    /// prefix / `namespaces/<ns>` / resource / name / subresource / suffix,
    /// as one Go `path.Join` (the same result as joining step by step:
    /// cleaning is a left-to-right pass, so cleaning early changes nothing).
    pub(super) fn path(&self) -> String {
        let name = self.resource_name.as_str();
        self.path_with(&self.namespace, name, |c| &c.path)
    }

    /// [`path`](Self::path) with `{namespace}` and `{name}` for the
    /// namespace and the name (for metrics).
    pub(super) fn template_path(&self) -> String {
        let name = if self.resource_name.is_empty() {
            ""
        } else {
            "{name}"
        };
        self.path_with("{namespace}", name, |c| &c.template)
    }

    /// The path with these words for the namespace and the name, and this
    /// form of a shared collection's path.
    fn path_with(
        &self,
        namespace: &str,
        name: &str,
        collection: fn(&CollectionInner) -> &String,
    ) -> String {
        if let Some(c) = &self.collection {
            let collection = collection(&c.inner);
            return join([collection.as_str(), name, &self.subresource, &self.sub_path]);
        }
        let namespaced = self.namespace_set && !self.namespace.is_empty();
        let named = !self.resource_name.is_empty()
            || !self.sub_path.is_empty()
            || !self.subresource.is_empty();
        if !namespaced && self.resource.is_empty() && !named {
            return self.path_prefix.to_string();
        }
        let resource: std::borrow::Cow<'_, str> = if self
            .resource
            .bytes()
            .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
        {
            self.resource.as_str().into()
        } else {
            self.resource.to_lowercase().into()
        };
        let mut elems = [&*self.path_prefix, "", "", &resource, "", "", ""];
        if namespaced {
            elems[1] = "namespaces";
            elems[2] = namespace;
        }
        if named {
            elems[4] = name;
            elems[5] = &self.subresource;
            elems[6] = &self.sub_path;
        }
        join(elems)
    }

    /// The escaped path.
    pub(super) fn escaped_path(&self) -> String {
        let mut out;
        match &self.collection {
            // The collection is clean and escaped, name and subresource
            // parts are valid segments: joining is appending.
            Some(c) if self.sub_path.is_empty() => {
                let c = &*c.inner;
                out = String::with_capacity(
                    c.escaped.len() + self.resource_name.len() + self.subresource.len() + 2,
                );
                out.push_str(&c.escaped);
                for segment in [self.resource_name.as_str(), &self.subresource] {
                    if !segment.is_empty() {
                        out.push('/');
                        path_escape(segment, &mut out);
                    }
                }
            }
            _ => {
                let path = self.path();
                out = String::with_capacity(path.len() + 16);
                path_escape(&path, &mut out);
            }
        }
        out
    }

    /// [`RequestDesc::path_and_query`].
    fn path_and_query(&self) -> String {
        let mut out = self.escaped_path();
        let query = match self.timeout {
            Some(t) => {
                let mut params = self.params.clone();
                params.set("timeout", &go_duration(t));
                params.encode()
            }
            None => self.params.encode(),
        };
        if !query.is_empty() {
            out.push('?');
            out.push_str(&query);
        }
        out
    }
}

impl<C> RequestDesc<C> {
    /// Escaped path and query, independent of the server (so an attempt
    /// can be sent to any base URL).
    pub fn path_and_query(&self) -> String {
        self.spec.path_and_query()
    }

    /// The full URL at the base URL's origin.
    pub fn url(&self) -> String {
        format!("{}{}", self.spec.base.0.origin, self.spec.path_and_query())
    }

    /// The path with namespace and name replaced by `{namespace}` and
    /// `{name}` (for metrics).
    pub fn url_template(&self) -> String {
        self.spec.template_path()
    }
}
