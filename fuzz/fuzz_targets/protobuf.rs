//! The generated protobuf codecs on hostile bytes (a server's body, a
//! client's request to the embedded server): decoding any bytes as a Pod,
//! a PodList, a Deployment or a Status never panics; what decodes encodes
//! to bytes that decode and encode to the same bytes again; and what is
//! written as JSON reads back as JSON to the same protobuf bytes.
#![no_main]

use kubeset_api::List;
use kubeset_api::api::apps::v1::Deployment;
use kubeset_api::api::core::v1::Pod;
use kubeset_api::apimachinery::pkg::apis::meta::v1::Status;
use kubeset_api::protobuf::{self, Message};
use libfuzzer_sys::fuzz_target;
use serde::Serialize;
use serde::de::DeserializeOwned;

fuzz_target!(|data: &[u8]| {
    let Some((&which, body)) = data.split_first() else {
        return;
    };
    match which % 4 {
        0 => check::<Pod>(body),
        1 => check::<List<Pod>>(body),
        2 => check::<Deployment>(body),
        _ => check::<Status>(body),
    }
});

fn check<T: Message + Default + Serialize + DeserializeOwned>(body: &[u8]) {
    let Ok(first) = protobuf::decode::<T>(body) else {
        return;
    };
    let bytes = protobuf::encode(&first);
    let again: T = protobuf::decode(&bytes).expect("kubeset's own encoding decodes");
    assert_eq!(protobuf::encode(&again), bytes, "a second round changed the bytes");
    // A field set (`FieldsV1`) that is not JSON is refused here, as in Go.
    let Ok(json) = serde_json::to_vec(&first) else {
        return;
    };
    let from_json: T = serde_json::from_slice(&json).unwrap_or_else(|e| {
        panic!(
            "kubeset's JSON of a protobuf object does not read back: {e}\n{}",
            String::from_utf8_lossy(&json)
        )
    });
    assert_eq!(
        protobuf::encode(&from_json),
        bytes,
        "the JSON round trip changed the object"
    );
}
