//! The watcher's watches in protobuf (feature `protobuf`): when the
//! client negotiates protobuf ([`WireFormat::Protobuf`]) and the watched
//! type is a built-in model with a codec, watches (the streaming list
//! included) are read as `;stream=watch` frames. Objects stay undecoded
//! bytes until the event's type is known and the watcher takes them; they
//! then decode straight into the model. Paginated lists are read in
//! protobuf too, each item kept as an object of its own. Metadata watches
//! and custom resources stay JSON.

use std::sync::Arc;

use kubeset_client::protobuf::dynamic;
use kubeset_client::rest::Request;
use kubeset_client::rest::content::WireFormat;
use kubeset_client::rest::watch::ObjectDecoder;
use kubeset_client::{Api, List};

use super::{BookmarkMeta, Object, Raw, WatcherError};

/// Whether watches of `T` through `api` are asked in protobuf.
pub(super) fn negotiated<T: 'static>(api: &Api<T>) -> bool {
    api.client().rest().wire_format() == WireFormat::Protobuf && dynamic::typed::<T>().is_some()
}

/// Frames whose objects are kept as bytes.
pub(super) fn decoder<T: 'static>() -> Arc<dyn ObjectDecoder<Object<T>>> {
    kubeset_client::protobuf::watch_decoder_with(|bytes| Ok(Object::Protobuf(bytes.to_vec())))
}

/// A page of a paginated list asked in protobuf (`request`), its items
/// kept as objects of their own (`k8s\0` + envelope, as a watch event
/// carries one) until taken; `json` when the server refuses protobuf.
pub(super) async fn list_page<T: 'static>(
    request: Request,
    json: Request,
) -> Result<List<Raw>, kubeset_client::Error> {
    let Some(codec) = dynamic::typed::<T>() else {
        return json.send_json().await;
    };
    kubeset_client::protobuf::send_with(
        request,
        || Ok(json),
        |bytes| {
            let (metadata, items) =
                codec
                    .list_objects(bytes)
                    .map_err(|e| kubeset_client::Error::DecodeProtobuf {
                        type_name: std::any::type_name::<List<T>>(),
                        source: Box::new(e),
                    })?;
            Ok(List {
                metadata,
                items: items.into_iter().map(Raw::Protobuf).collect(),
            })
        },
    )
    .await
}

/// What a BOOKMARK (or an object that did not decode) says about itself.
pub(super) fn meta(bytes: &[u8]) -> BookmarkMeta {
    let meta = dynamic::object_meta(bytes).unwrap_or_default();
    BookmarkMeta {
        name: meta.name,
        namespace: meta.namespace,
        resource_version: meta.resource_version,
        annotations: meta.annotations,
    }
}

/// Decodes an object's bytes as `T`.
pub(super) fn decode<T: 'static>(bytes: &[u8]) -> Result<T, WatcherError> {
    let failed = |source: Box<dyn std::error::Error + Send + Sync>| {
        let meta = meta(bytes);
        WatcherError::DecodeProtobuf {
            type_name: std::any::type_name::<T>(),
            namespace: meta.namespace,
            name: meta.name,
            resource_version: meta.resource_version,
            source,
        }
    };
    let codec = dynamic::typed::<T>().ok_or_else(|| failed("no protobuf codec".into()))?;
    codec.decode(bytes).map_err(|e| failed(e.into()))
}
