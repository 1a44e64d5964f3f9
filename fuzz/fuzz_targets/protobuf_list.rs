//! The protobuf list decoders on hostile bytes, as a server's list body
//! reaches them: a `k8s\0` envelope (built around the input, or the input
//! itself) read by `Typed::decode_list`, `Typed::list_objects` and
//! `dynamic::to_json`. Never a panic; what decodes holds no more items than
//! the body's memory budget allows; the items kept as objects decode to the
//! items decoded at once (or exceed their own, smaller, budget); what
//! decodes encodes to a list that decodes equal.
#![no_main]

use kubeset_api::api::apps::v1::Deployment;
use kubeset_api::api::core::v1::{ConfigMap, Pod};
use kubeset_api::protobuf::{self, MEMORY_FLOOR, MEMORY_PER_BYTE, Message, Unknown, dynamic};
use kubeset_api::{List, Resource};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    // Half the inputs are the list's message, wrapped here; half are the
    // whole body, envelope included.
    let wrapped = which & 0x80 == 0;
    match which % 3 {
        0 => check::<Pod>(rest, wrapped),
        1 => check::<ConfigMap>(rest, wrapped),
        _ => check::<Deployment>(rest, wrapped),
    }
});

fn check<K>(input: &[u8], wrapped: bool)
where
    K: Resource + Message + Default + PartialEq + std::fmt::Debug + 'static,
{
    let list_kind = format!("{}List", K::KIND);
    let body = if wrapped {
        let mut b = Vec::new();
        Unknown {
            api_version: K::API_VERSION.into(),
            kind: list_kind.clone(),
            raw: input,
            ..Default::default()
        }
        .write(&mut b);
        b
    } else {
        input.to_vec()
    };
    let t = dynamic::typed::<K>().expect("a built-in kind");
    let decoded = t.decode_list(&body);
    let objects = t.list_objects(&body);
    let _ = dynamic::to_json(&body);
    let Ok(list) = decoded else {
        return;
    };
    let allowed = MEMORY_PER_BYTE * body.len() + MEMORY_FLOOR;
    assert!(
        list.items.len() * size_of::<K>() <= allowed,
        "{} items of {} bytes from a body of {}",
        list.items.len(),
        size_of::<K>(),
        body.len()
    );
    let (_, objects) = objects.expect("a list that decodes is read as objects too");
    assert_eq!(objects.len(), list.items.len());
    for (object, item) in objects.iter().zip(&list.items) {
        match t.decode(object) {
            Ok(alone) => assert_eq!(&alone, item),
            // An item alone has the budget of its own bytes: one that holds
            // many elements may pass in a list of large cheap items only.
            Err(protobuf::DecodeError::MemoryLimit { .. }) => {}
            Err(e) => panic!("an item of a list that decodes does not decode alone: {e}"),
        }
    }
    let again = protobuf::encode_with_type(&list, K::API_VERSION, &list_kind);
    let back: List<K> = t
        .decode_list(&again)
        .expect("kubeset's own encoding decodes");
    assert_eq!(back, list, "a second round changed the list");
}
