//! PodList decode and encode in protobuf
//! (`application/vnd.kubernetes.protobuf`): kubeset's generated codecs on
//! the bytes Go's encoder wrote (`kubeset-bench-go to-protobuf`), so
//! kubeset decodes what kube-apiserver sends. kube-rs and k8s-openapi have
//! no protobuf.

use kubeset_api::List;
use kubeset_api::api::core::v1::Pod;
use kubeset_api::protobuf::{self, DecodeError, dynamic};

use crate::stats::time_runs;
use crate::{Error, Record};

fn decode_error(peer: &'static str) -> impl Fn(DecodeError) -> Error {
    move |source| Error::Protobuf { peer, source }
}

/// Decode `k8s\0` + envelope + PodList with the typed codec found by
/// `TypeId` ([`dynamic::Typed<Pod>`]), the decode a client generic over
/// `K` uses for a list of built-in objects.
pub fn decode_typed(bytes: &[u8]) -> Result<List<Pod>, Error> {
    let typed = dynamic::typed::<Pod>().ok_or(Error::NoCodec { kind: "Pod" })?;
    typed.decode_list(bytes).map_err(decode_error("kubeset"))
}

/// Decode with the statically typed codec of `List<Pod>`
/// ([`protobuf::decode_typed`]): no lookup, no type erasure.
pub fn decode_static(bytes: &[u8]) -> Result<List<Pod>, Error> {
    protobuf::decode_typed::<List<Pod>>(bytes, "v1", "PodList")
        .map_err(decode_error("kubeset (static)"))
}

/// `list` as kube-apiserver writes a PodList: `k8s\0` + envelope.
pub fn encode(list: &List<Pod>) -> Vec<u8> {
    protobuf::encode_with_type(list, "v1", "PodList")
}

/// Checks that kubeset reads Go's bytes (`go_bytes`) alike by both
/// decodes, and that its own encoding of what it read decodes to the same
/// list and is no longer than Go's: kubeset writes what Go writes
/// (fields by number, Go's zero for the meta types' value fields), except
/// a zero `metav1.Time` value field (`PodCondition.lastProbeTime`), which
/// Go writes as an empty message and kubeset reads as unset (the spec does
/// not say which Go fields are pointers). Returns kubeset's encoding, for
/// the Go side, which decodes it and must re-encode Go's bytes exactly.
pub fn agree(go_bytes: &[u8]) -> Result<Vec<u8>, Error> {
    let list = decode_typed(go_bytes)?;
    if decode_static(go_bytes)? != list {
        return Err(Error::Disagree {
            what: "the static and the typed decode of the same bytes",
        });
    }
    let ours = encode(&list);
    if ours.len() > go_bytes.len() {
        return Err(Error::Size {
            ours: ours.len(),
            theirs: go_bytes.len(),
        });
    }
    if decode_typed(&ours)? != list {
        return Err(Error::Disagree {
            what: "kubeset's decode of its own encoding",
        });
    }
    Ok(ours)
}

/// Time `runs` protobuf decodes and encodes of `go_bytes` by kubeset; as
/// in [`crate::codec::run`], each decode runs with no other list alive.
/// Records: `decode-podlist-protobuf` (`kubeset`: [`decode_typed`];
/// `kubeset (static)`: [`decode_static`]), `clone-podlist` (the floor of
/// any decode into the owned model: `List<Pod>::clone` and its drop make
/// the same allocations and copy the same bytes, with nothing to read) and
/// `encode-podlist-protobuf`.
pub fn run(go_bytes: &[u8], runs: usize) -> Result<Vec<Record>, Error> {
    let bytes = go_bytes.len() as u64;
    let items = decode_typed(go_bytes)?.items.len() as u64;
    let mut out = Vec::new();
    let s = time_runs(runs, || decode_typed(go_bytes).map(drop))?;
    out.push(Record::timed("decode-podlist-protobuf", "kubeset", items, s).with_bytes(bytes));
    let s = time_runs(runs, || decode_static(go_bytes).map(drop))?;
    out.push(
        Record::timed("decode-podlist-protobuf", "kubeset (static)", items, s).with_bytes(bytes),
    );
    let list = decode_typed(go_bytes)?;
    let s = time_runs(runs, || {
        drop(std::hint::black_box(list.clone()));
        Ok::<(), Error>(())
    })?;
    out.push(Record::timed("clone-podlist", "kubeset", items, s).with_bytes(bytes));
    let len = encode(&list).len() as u64;
    let s = time_runs(runs, || {
        drop(encode(&list));
        Ok::<(), Error>(())
    })?;
    out.push(Record::timed("encode-podlist-protobuf", "kubeset", items, s).with_bytes(len));
    Ok(out)
}
