//! [`Api::entry`]: get-or-create and modify-and-commit, in kube-rs's
//! `Entry` shape, plus [`Api::modify`], client-go's
//! `retry.RetryOnConflict` around get → mutate → update.

use kubeset_api::Resource;
use kubeset_rest::Error;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::Api;
use crate::params::PostParams;

/// How many times [`Api::modify`] tries before it gives up on conflicts
/// (client-go's `retry.DefaultRetry` takes 5 steps).
pub const MODIFY_ATTEMPTS: u32 = 5;

/// One object's slot in an [`Api`]: there ([`Entry::Occupied`]) or not
/// ([`Entry::Vacant`]). Changes stay local until
/// [`OccupiedEntry::commit`].
///
/// ```no_run
/// use kubeset_client::{Api, Client, ResourceExt as _, api::core::v1::ConfigMap, params::PostParams};
/// # async fn run(cms: Api<ConfigMap>) -> Result<(), Box<dyn std::error::Error>> {
/// let mut entry = cms
///     .entry("settings")
///     .await?
///     .or_insert(ConfigMap::default)
///     .and_modify(|cm| { cm.labels_mut().insert("tier".into(), "web".into()); });
/// entry.commit(&PostParams::default()).await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub enum Entry<'a, K> {
    /// The object exists (or was inserted locally).
    Occupied(OccupiedEntry<'a, K>),
    /// No object of that name.
    Vacant(VacantEntry<'a, K>),
}

/// An existing (or locally inserted) object; see [`Entry`].
#[derive(Debug)]
#[must_use = "changes are only saved by commit"]
pub struct OccupiedEntry<'a, K> {
    api: &'a Api<K>,
    name: &'a str,
    object: K,
    dirty: Dirty,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dirty {
    Clean,
    Modified,
    New,
}

/// A missing object; see [`Entry`].
#[derive(Debug)]
pub struct VacantEntry<'a, K> {
    api: &'a Api<K>,
    name: &'a str,
}

/// Why [`OccupiedEntry::commit`] or [`Api::modify`] failed.
#[derive(Debug, thiserror::Error)]
pub enum CommitError {
    /// The object's name or namespace no longer matches the entry's.
    #[error("the object's {field} is {found:?}, the entry's is {expected:?}")]
    Validate {
        /// `metadata.name` or `metadata.namespace`.
        field: &'static str,
        /// What the entry addresses.
        expected: Option<String>,
        /// What the object carries.
        found: Option<String>,
    },
    /// The server refused or the request failed (a 409 Conflict means
    /// someone else changed the object first: read it again).
    #[error("saving the object failed")]
    Save {
        /// The request layer's error.
        #[source]
        source: Error,
    },
    /// [`Api::modify`] lost [`MODIFY_ATTEMPTS`] races in a row.
    #[error("the object kept changing: {attempts} conflicts in a row")]
    Conflicts {
        /// How many attempts were made.
        attempts: u32,
        /// The last conflict.
        #[source]
        source: Error,
    },
}

impl<K> Api<K>
where
    K: Resource + Serialize + DeserializeOwned + 'static,
{
    /// The entry of `name`: reads it once ([`Api::get_opt`]).
    pub async fn entry<'a>(&'a self, name: &'a str) -> Result<Entry<'a, K>, Error> {
        Ok(match self.get_opt(name).await? {
            Some(object) => Entry::Occupied(OccupiedEntry {
                api: self,
                name,
                object,
                dirty: Dirty::Clean,
            }),
            None => Entry::Vacant(VacantEntry { api: self, name }),
        })
    }

    /// Reads `name`, applies `f`, and writes it back with its
    /// resourceVersion (a compare-and-swap); on 409 Conflict reads again and
    /// retries, up to [`MODIFY_ATTEMPTS`] times (client-go's
    /// `RetryOnConflict`). No write when `f` changes nothing (compared as
    /// JSON). A missing object is an error (404), not a create: use
    /// [`Api::entry`] with [`Entry::or_insert`] for that.
    pub async fn modify(
        &self,
        name: &str,
        params: &PostParams,
        mut f: impl FnMut(&mut K),
    ) -> Result<K, CommitError> {
        let mut attempts = 0;
        loop {
            attempts += 1;
            let mut obj = self
                .get(name)
                .await
                .map_err(|source| CommitError::Save { source })?;
            let before = serde_json::to_value(&obj).ok();
            f(&mut obj);
            if before.is_some() && before == serde_json::to_value(&obj).ok() {
                return Ok(obj);
            }
            match self.replace(name, params, &obj).await {
                Ok(saved) => return Ok(saved),
                Err(e) if e.is_conflict() && attempts < MODIFY_ATTEMPTS => {}
                Err(source) if source.is_conflict() => {
                    return Err(CommitError::Conflicts { attempts, source });
                }
                Err(source) => return Err(CommitError::Save { source }),
            }
        }
    }
}

impl<'a, K> Entry<'a, K> {
    /// The object, if there is one.
    pub fn get(&self) -> Option<&K> {
        match self {
            Entry::Occupied(e) => Some(e.get()),
            Entry::Vacant(_) => None,
        }
    }

    /// The object mutably, if there is one (marks it modified).
    pub fn get_mut(&mut self) -> Option<&mut K> {
        match self {
            Entry::Occupied(e) => Some(e.get_mut()),
            Entry::Vacant(_) => None,
        }
    }

    /// Applies `f` to the object if there is one.
    #[must_use]
    pub fn and_modify(self, f: impl FnOnce(&mut K)) -> Self {
        match self {
            Entry::Occupied(e) => Entry::Occupied(e.and_modify(f)),
            vacant @ Entry::Vacant(_) => vacant,
        }
    }

    /// The existing object, or `default()` to be created on commit.
    pub fn or_insert(self, default: impl FnOnce() -> K) -> OccupiedEntry<'a, K>
    where
        K: Resource,
    {
        match self {
            Entry::Occupied(e) => e,
            Entry::Vacant(v) => v.insert(default()),
        }
    }
}

impl<'a, K> OccupiedEntry<'a, K> {
    /// The object.
    pub fn get(&self) -> &K {
        &self.object
    }

    /// The object mutably (marks it modified).
    pub fn get_mut(&mut self) -> &mut K {
        if self.dirty == Dirty::Clean {
            self.dirty = Dirty::Modified;
        }
        &mut self.object
    }

    /// Applies `f` to the object (marks it modified).
    pub fn and_modify(mut self, f: impl FnOnce(&mut K)) -> Self {
        f(self.get_mut());
        self
    }

    /// The object, dropping the entry (uncommitted changes are lost).
    pub fn into_object(self) -> K {
        self.object
    }
}

impl<'a, K> OccupiedEntry<'a, K>
where
    K: Resource + Serialize + DeserializeOwned + 'static,
{
    /// Saves the object if it changed: create for an inserted one, replace
    /// (compare-and-swap on its resourceVersion) for a modified one. On
    /// success the entry holds the server's answer. A 409 Conflict is
    /// returned as [`CommitError::Save`]; read the entry again (or use
    /// [`Api::modify`], which retries).
    pub async fn commit(&mut self, params: &PostParams) -> Result<(), CommitError> {
        self.validate()?;
        let saved = match self.dirty {
            Dirty::Clean => return Ok(()),
            Dirty::New => self.api.create(params, &self.object).await,
            Dirty::Modified => self.api.replace(self.name, params, &self.object).await,
        }
        .map_err(|source| CommitError::Save { source })?;
        self.object = saved;
        self.dirty = Dirty::Clean;
        Ok(())
    }

    fn validate(&self) -> Result<(), CommitError> {
        let meta = self.object.meta();
        if meta.name.as_deref() != Some(self.name) {
            return Err(CommitError::Validate {
                field: "metadata.name",
                expected: Some(self.name.to_owned()),
                found: meta.name.clone(),
            });
        }
        let ns = meta.namespace.as_deref().filter(|ns| !ns.is_empty());
        if let (Some(found), Some(expected)) = (ns, self.api.namespace())
            && found != expected
        {
            return Err(CommitError::Validate {
                field: "metadata.namespace",
                expected: Some(expected.to_owned()),
                found: Some(found.to_owned()),
            });
        }
        Ok(())
    }
}

impl<'a, K: Resource> VacantEntry<'a, K> {
    /// Inserts `object` locally (name and namespace filled in from the
    /// entry when unset); [`OccupiedEntry::commit`] creates it.
    pub fn insert(self, mut object: K) -> OccupiedEntry<'a, K> {
        let meta = object.meta_mut();
        if meta.name.is_none() {
            meta.name = Some(self.name.to_owned());
        }
        if meta.namespace.is_none() {
            meta.namespace = self.api.namespace().map(str::to_owned);
        }
        OccupiedEntry {
            api: self.api,
            name: self.name,
            object,
            dirty: Dirty::New,
        }
    }
}
