//! PodList decode and encode: kubeset vs k8s-openapi, both through
//! `serde_json` from one in-memory buffer, each decoded the way its client
//! decodes a response body.

use kubeset_api::List;
use kubeset_api::api::core::v1::Pod;

use crate::stats::time_runs;
use crate::{Error, Record};

/// kubeset's typed list.
pub type KubesetPodList = List<Pod>;
/// k8s-openapi's typed list.
pub type OpenApiPodList = k8s_openapi::List<k8s_openapi::api::core::v1::Pod>;

/// Decode `json` into kubeset's `List<Pod>` as kubeset's client decodes a
/// body ([`kubeset_rest::from_json`]); the number of pods.
pub fn decode_kubeset(json: &[u8]) -> Result<usize, Error> {
    let list: KubesetPodList = kubeset_rest::from_json(json).map_err(|source| Error::Json {
        peer: "kubeset",
        source,
    })?;
    Ok(list.items.len())
}

/// Decode `json` into k8s-openapi's `List<Pod>` as kube-client decodes a
/// body (`String::from_utf8` of a copy, then `serde_json::from_str`); the
/// number of pods.
pub fn decode_k8s_openapi(json: &[u8]) -> Result<usize, Error> {
    let text = String::from_utf8(json.to_vec()).map_err(|_| Error::NotUtf8)?;
    let list: OpenApiPodList = serde_json::from_str(&text).map_err(|source| Error::Json {
        peer: "k8s-openapi",
        source,
    })?;
    Ok(list.items.len())
}

/// Time `runs` decodes and encodes of both Rust peers. Each peer's decodes
/// run with no decoded list of either peer alive (a tree of tens of MB left
/// in the heap changes how the allocator serves the next one); each encode
/// runs with only its own peer's list alive. Records: `decode-podlist` and
/// `encode-podlist`, for `kubeset` and `k8s-openapi`.
pub fn run(json: &[u8], runs: usize) -> Result<Vec<Record>, Error> {
    let mut out = Vec::new();
    let bytes = json.len() as u64;

    let items = decode_kubeset(json)? as u64;
    if decode_k8s_openapi(json)? as u64 != items {
        return Err(Error::NotAList);
    }
    let s = time_runs(runs, || decode_kubeset(json).map(drop))?;
    out.push(Record::timed("decode-podlist", "kubeset", items, s).with_bytes(bytes));
    let s = time_runs(runs, || decode_k8s_openapi(json).map(drop))?;
    out.push(Record::timed("decode-podlist", "k8s-openapi", items, s).with_bytes(bytes));

    {
        let ours: KubesetPodList = kubeset_rest::from_json(json).map_err(|source| Error::Json {
            peer: "kubeset",
            source,
        })?;
        out.push(encode_record("kubeset", &ours, items, runs)?);
    }
    {
        let theirs: OpenApiPodList =
            serde_json::from_slice(json).map_err(|source| Error::Json {
                peer: "k8s-openapi",
                source,
            })?;
        out.push(encode_record("k8s-openapi", &theirs, items, runs)?);
    }
    Ok(out)
}

/// `peer`'s `encode-podlist` record: `runs` encodes of `list` of `items`
/// pods, and the length of one.
fn encode_record<T: serde::Serialize>(
    peer: &'static str,
    list: &T,
    items: u64,
    runs: usize,
) -> Result<Record, Error> {
    let encode = || serde_json::to_vec(list).map_err(|source| Error::Json { peer, source });
    let len = encode()?.len() as u64;
    let s = time_runs(runs, || encode().map(drop))?;
    Ok(Record::timed("encode-podlist", peer, items, s).with_bytes(len))
}
