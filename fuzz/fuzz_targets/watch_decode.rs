//! The watch-event decoder (`WatchStream`, typed as `Pod`): any body, cut
//! into chunks of any size, yields the same items as the body in one chunk,
//! and never more items than it has lines (plus one final error).
#![no_main]

use kubeset_api::api::core::v1::Pod;
use kubeset_fuzz::watch_items;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&step, body)) = data.split_first() else {
        return;
    };
    let whole = watch_items::<Pod>(vec![body.to_vec()]);
    let chunks = body
        .chunks(usize::from(step % 64).max(1))
        .map(<[u8]>::to_vec)
        .collect();
    let chunked = watch_items::<Pod>(chunks);
    assert_eq!(whole, chunked, "the chunking changed the events");
    let lines = body.split(|b| *b == b'\n').count();
    assert!(
        whole.len() <= lines + 1,
        "{} items from {lines} lines",
        whole.len()
    );
});
