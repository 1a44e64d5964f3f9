//! The generated model decoders (`Pod`, `PodList`, `Deployment`) as the
//! client decodes bodies: no panic; whatever decodes encodes, and decodes
//! back to an equal value.
#![no_main]

use kubeset_api::{
    api::{apps::v1::Deployment, core::v1::Pod},
    types::List,
};
use kubeset_rest::from_json;
use libfuzzer_sys::fuzz_target;
use serde::{Serialize, de::DeserializeOwned};

fn round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(data: &[u8]) {
    if let Ok(v) = from_json::<T>(data) {
        let out = serde_json::to_vec(&v).expect("a decoded model encodes");
        let back: T = from_json(&out).expect("our own output decodes");
        assert_eq!(
            v,
            back,
            "round trip through {}",
            String::from_utf8_lossy(&out)
        );
    }
}

fuzz_target!(|data: &[u8]| {
    round_trip::<Pod>(data);
    round_trip::<Deployment>(data);
    round_trip::<List<Pod>>(data);
});
