//! The plural of a kind, as Kubernetes' code generators (gengo's
//! `namer.NewAllLowercasePluralNamer`, which client-gen and the built-in
//! resources follow) write it.
//!
//! kubectl's `meta.UnsafeGuessKindToResource` guesses more crudely (only
//! `s` → `ses`, any `y` → `ies`); a CRD always states its plural, so the
//! guess never runs for one built here.

/// Kinds whose plural is irregular (gengo's exceptions, and kinds that are
/// already plural).
const EXCEPTIONS: &[(&str, &str)] = &[("endpoints", "endpoints")];

/// The lowercase plural of `kind`: `Ingress` → `ingresses`, `Policy` →
/// `policies`, `Gateway` → `gateways`, `Endpoints` → `endpoints`.
pub fn plural(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if let Some((_, p)) = EXCEPTIONS.iter().find(|(k, _)| *k == lower) {
        return (*p).to_owned();
    }
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|e| lower.ends_with(e))
    {
        return format!("{lower}es");
    }
    if let Some(stem) = lower.strip_suffix('y')
        && stem
            .chars()
            .last()
            .is_some_and(|c| !matches!(c, 'a' | 'e' | 'i' | 'o' | 'u'))
    {
        return format!("{stem}ies");
    }
    format!("{lower}s")
}

#[cfg(test)]
mod tests {
    use super::plural;

    #[test]
    fn kubernetes_plurals() {
        for (kind, want) in [
            ("Pod", "pods"),
            ("Ingress", "ingresses"),
            ("NetworkPolicy", "networkpolicies"),
            ("Gateway", "gateways"),
            ("Endpoints", "endpoints"),
            ("Box", "boxes"),
            ("Batch", "batches"),
            ("Mesh", "meshes"),
            ("Quiz", "quizes"),
            ("Key", "keys"),
            ("Y", "ys"),
        ] {
            assert_eq!(plural(kind), want, "{kind}");
        }
    }
}
