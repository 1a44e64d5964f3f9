//! Kubeconfig rendering: one cluster and one context per replica; the
//! current context `kubeset` points at replica 0.

use base64::Engine;

/// What the kubeconfig needs to know.
pub(crate) struct KubeconfigInput<'a> {
    pub(crate) urls: &'a [String],
    pub(crate) ca_pem: Option<&'a str>,
    pub(crate) token: Option<&'a str>,
}

/// A YAML double-quoted scalar.
fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// Renders the kubeconfig as YAML.
pub(crate) fn render(input: &KubeconfigInput<'_>) -> String {
    let mut y = String::from("apiVersion: v1\nkind: Config\npreferences: {}\nclusters:\n");
    let ca = input
        .ca_pem
        .map(|pem| base64::engine::general_purpose::STANDARD.encode(pem.as_bytes()));
    for (i, url) in input.urls.iter().enumerate() {
        y.push_str(&format!(
            "- name: {}\n  cluster:\n    server: {}\n",
            q(&format!("kubeset-{i}")),
            q(url)
        ));
        if let Some(ca) = &ca {
            y.push_str(&format!("    certificate-authority-data: {}\n", q(ca)));
        }
    }
    y.push_str("users:\n- name: \"kubeset\"\n  user:");
    match input.token {
        Some(t) => y.push_str(&format!("\n    token: {}\n", q(t))),
        None => y.push_str(" {}\n"),
    }
    y.push_str("contexts:\n");
    y.push_str("- name: \"kubeset\"\n  context:\n    cluster: \"kubeset-0\"\n    user: \"kubeset\"\n    namespace: \"default\"\n");
    for i in 0..input.urls.len() {
        y.push_str(&format!(
            "- name: {}\n  context:\n    cluster: {}\n    user: \"kubeset\"\n    namespace: \"default\"\n",
            q(&format!("kubeset-{i}")),
            q(&format!("kubeset-{i}"))
        ));
    }
    y.push_str("current-context: \"kubeset\"\n");
    y
}
