//! Shared pieces of the fuzz targets: feeding a watch body through
//! `WatchStream` in given chunks, and splitting one input into parts.

use bytes::Bytes;
use futures::{StreamExt as _, executor::block_on, stream};
use kubeset_rest::{Error, WatchStream};
use serde::de::DeserializeOwned;

/// Every item `WatchStream` yields for a body arriving in `chunks`, each
/// shown with `Debug` so that runs can be compared.
pub fn watch_items<T: DeserializeOwned + std::fmt::Debug>(chunks: Vec<Vec<u8>>) -> Vec<String> {
    let body = stream::iter(chunks.into_iter().map(|c| Ok::<_, Error>(Bytes::from(c))));
    let watch = WatchStream::<T>::from_bytes(body);
    block_on(watch.map(|item| format!("{item:?}")).collect())
}

/// Splits `data` at the first `0xff` byte (never part of UTF-8 text) into
/// two parts; the second is empty when there is none.
pub fn split2(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|b| *b == 0xff) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[]),
    }
}
