//! API server discovery (Patroni's): the `kubernetes` EndpointSlices, else
//! Endpoints, of the `default` namespace, read through the client and
//! handed to the endpoint set ([`failover`](crate::failover)), which holds
//! the pure rules.

use std::time::Duration;

use serde_json::Value;

use crate::{
    client::Inner,
    failover::{
        ENDPOINT_SLICES_PATH, ENDPOINTS_PATH, calculate_timeouts, from_endpoint_slices,
        from_endpoints, shuffle,
    },
};

/// What one discovery GET found.
enum Found {
    Origins(Vec<String>),
    /// 404 or nothing usable: try the other source.
    Nothing,
    Forbidden,
    /// Transport failure or another status: try the next endpoint.
    Failed,
}

async fn discovery_get(
    inner: &Inner,
    origin: &str,
    path: &str,
    limit: Duration,
    slices: bool,
) -> Found {
    let url = format!(
        "{origin}{}{path}",
        inner.base.base_path().trim_end_matches('/')
    );
    // Discovery is not offered to a client over a tower service.
    let crate::client::Sender::Reqwest(http) = &inner.http else {
        return Found::Failed;
    };
    let mut builder = http
        .get(&url)
        .header(http::header::ACCEPT, "application/json");
    if let Some(ua) = &inner.defaults.user_agent {
        builder = builder.header(http::header::USER_AGENT, ua.clone());
    }
    if let Some(auth) = &inner.authenticator {
        match auth.authorization().await {
            Ok(Some(value)) => builder = builder.header(http::header::AUTHORIZATION, value),
            Ok(None) => {}
            Err(_) => return Found::Failed,
        }
    }
    let scheme = inner.endpoints.scheme;
    let fetch = async {
        let resp = builder.send().await.ok()?;
        let status = resp.status().as_u16();
        let body = resp.bytes().await.ok()?;
        Some((status, body))
    };
    let Ok(Some((status, body))) = tokio::time::timeout(limit, fetch).await else {
        return Found::Failed;
    };
    match status {
        200 => {
            let Ok(v) = serde_json::from_slice::<Value>(&body) else {
                return Found::Failed;
            };
            let origins = if slices {
                from_endpoint_slices(&v, scheme)
            } else {
                from_endpoints(&v, scheme)
            };
            if origins.is_empty() {
                Found::Nothing
            } else {
                Found::Origins(origins)
            }
        }
        403 => Found::Forbidden,
        404 => Found::Nothing,
        _ => Found::Failed,
    }
}

/// Refresh the endpoint set if discovery is on and the set is older than
/// the TTL. Only one call refreshes at a time; the others use the current
/// set. A failure keeps the previous set (until the next TTL).
pub(crate) async fn refresh_if_stale(inner: &Inner) {
    let eps = &inner.endpoints;
    if !eps.stale() {
        return;
    }
    let Ok(_guard) = eps.refreshing.try_lock() else {
        return;
    };
    if !eps.stale() {
        return;
    }
    let list = eps.snapshot();
    let (nodes, per_node, _) = calculate_timeouts(list.len(), inner.budget);
    let per_node = if nodes == 0 { inner.budget } else { per_node };
    for ep in list.iter().take(nodes.max(1)) {
        let mut result =
            discovery_get(inner, &ep.origin, ENDPOINT_SLICES_PATH, per_node, true).await;
        if matches!(result, Found::Nothing) {
            result = discovery_get(inner, &ep.origin, ENDPOINTS_PATH, per_node, false).await;
        }
        match result {
            Found::Origins(mut origins) => {
                shuffle(&mut origins);
                tracing::debug!(endpoints = ?origins, "discovered API servers");
                eps.set_discovered(origins);
                return;
            }
            Found::Forbidden => {
                eps.forbid();
                return;
            }
            Found::Nothing | Found::Failed => {}
        }
    }
    tracing::debug!("API server discovery failed; keeping the previous endpoints");
    eps.keep_previous();
}
