//! The embedded server calling CRD conversion webhooks
//! ([`crate::conversion`] has the rules; this module the I/O), over the
//! admission webhooks' client ([`crate::webhook_client`]: its TLS configuration,
//! connection pool and 3 MiB bound on the answer), each call bounded by
//! [`conversion::TIMEOUT`].
//!
//! Reads convert what they return ([`read`]): a get its object, a list
//! the objects of its page in one review, a watch each event. A write
//! ([`prefetch`], [`fetch`]) runs with a [`Memo`]: the stored object it
//! reads is converted to the request's version before the write runs; a
//! conversion the store finds missing (the object to store, in the
//! storage version) is fetched and the write run again, with the
//! converted object's way back to the request's version (the write's
//! answer) fetched at once, as upstream's encode then decode.

use std::sync::Arc;

use serde_json::Value;

use crate::admission;
use crate::conversion::{self, Memo, Webhook, api_version, gvk};
use crate::resources::Resource;
use crate::status::ApiError;
use crate::webhook_client as client;

/// `objects` in `desired`: those in another version are sent in one
/// review (none: no call), the answer checked ([`conversion::merge`]).
pub(crate) async fn convert(
    hook: &Webhook,
    objects: Vec<Value>,
    desired: &str,
) -> Result<Vec<Value>, ApiError> {
    let sent: Vec<usize> = (0..objects.len())
        .filter(|&i| api_version(&objects[i]) != desired)
        .collect();
    let Some(&first) = sent.first() else {
        return Ok(objects);
    };
    let source = gvk(&objects[first]);
    let refs: Vec<&Value> = sent.iter().map(|&i| &objects[i]).collect();
    let converted = call(hook, &refs, desired).await.map_err(|why| {
        conversion::failed(&format!("conversion webhook for {source} failed: {why}"))
    })?;
    if converted.len() != sent.len() {
        return Err(conversion::failed(&format!(
            "conversion webhook for {source} returned {} objects, expected {}",
            converted.len(),
            sent.len()
        )));
    }
    let single = objects.len() == 1;
    let mut out = objects;
    for (n, (i, c)) in sent.into_iter().zip(converted).enumerate() {
        let merged = conversion::merge(&out[i], c, desired).map_err(|why| {
            conversion::failed(&if single {
                why.single(&source)
            } else {
                why.in_list(&source, n + 1)
            })
        })?;
        out[i] = merged;
    }
    Ok(out)
}

/// One review of `objects` to `desired`: the converted objects, `Err`
/// why the call or its answer failed.
async fn call(hook: &Webhook, objects: &[&Value], desired: &str) -> Result<Vec<Value>, String> {
    let version = hook
        .review_version
        .ok_or("no supported conversion review versions")?;
    let uid = crate::util::uid();
    let review = conversion::review(version, objects, desired, &uid);
    let body = serde_json::to_vec(&review).map_err(|e| e.to_string())?;
    let url = hook.target()?;
    let ca = hook.ca_pem()?;
    let url = client::with_timeout(url, conversion::TIMEOUT);
    let answer = client::post_to(&url, ca.as_deref(), body, conversion::TIMEOUT).await?;
    conversion::read_answer(&answer, &uid, version)
}

/// Stored objects of `res` as a read returns them: converted to its
/// version (one review for all that need it), then pruned and defaulted
/// by its schema. A resource without a conversion webhook: unchanged
/// (the store converted them).
pub(crate) async fn read(res: &Resource, objects: Vec<Value>) -> Result<Vec<Value>, ApiError> {
    let Some(hook) = &res.conversion else {
        return Ok(objects);
    };
    let want = res.api_version();
    let needed = objects.iter().any(|o| api_version(o) != want);
    let mut out = convert(hook, objects, &want).await?;
    if needed {
        for o in &mut out {
            admission::on_read(res, o);
        }
    }
    Ok(out)
}

/// One stored object of `res` as a read returns it ([`read`]).
pub(crate) async fn read_one(res: &Resource, object: Value) -> Result<Value, ApiError> {
    read(res, vec![object])
        .await?
        .pop()
        .ok_or_else(|| ApiError::internal("the conversion lost the object"))
}

/// Before a write of `name`: its stored object converted to the
/// request's version, in `memo`.
pub(crate) async fn prefetch(
    res: &Resource,
    hook: &Webhook,
    stored: Option<Value>,
    memo: &Arc<Memo>,
) -> Result<(), ApiError> {
    let want = res.api_version();
    if let Some(live) = stored.filter(|l| api_version(l) != want) {
        let converted = convert(hook, vec![live.clone()], &want).await?;
        if let Some(c) = converted.into_iter().next() {
            memo.insert(&live, &want, c);
        }
    }
    Ok(())
}

/// The conversions a write found missing, fetched into `memo` (one review
/// per target version); one to the storage version is followed by its
/// way back to the request's version (the write's answer).
pub(crate) async fn fetch(
    res: &Resource,
    hook: &Webhook,
    memo: &Arc<Memo>,
    missing: Vec<(Value, String)>,
) -> Result<(), ApiError> {
    let mut targets: Vec<String> = missing.iter().map(|(_, t)| t.clone()).collect();
    targets.sort();
    targets.dedup();
    for target in targets {
        let originals: Vec<Value> = missing
            .iter()
            .filter(|(_, t)| *t == target)
            .map(|(o, _)| o.clone())
            .collect();
        let converted = convert(hook, originals.clone(), &target).await?;
        for (o, c) in originals.iter().zip(&converted) {
            memo.insert(o, &target, c.clone());
        }
        if target == hook.storage && target != res.api_version() {
            let want = res.api_version();
            let back = convert(hook, converted.clone(), &want).await?;
            for (o, c) in converted.iter().zip(back) {
                memo.insert(o, &want, c);
            }
        }
    }
    Ok(())
}
