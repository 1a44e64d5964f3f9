//! Service cluster IPs and node ports, allocated on create as
//! kube-apiserver's allocators do, in its default ranges
//! (`--service-cluster-ip-range=10.0.0.0/24`, `10.0.0.1` being the
//! `kubernetes` Service's; `--service-node-port-range=30000-32767`), and
//! the requested cluster IP refused with upstream's 422 when it is not an
//! IP, outside the range or taken. IPv4 single-stack only.

use std::borrow::Borrow;
use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use rand::Rng;
use serde_json::{Value, json};

use crate::resources::Resource;
use crate::status::ApiError;

/// The service network: `10.0.0.0/24`.
const NETWORK: [u8; 3] = [10, 0, 0];
/// Node ports.
const NODE_PORTS: std::ops::RangeInclusive<u16> = 30_000..=32_767;

/// What the stored Services hold already.
#[derive(Debug, Default)]
pub(crate) struct Used {
    ips: BTreeSet<Ipv4Addr>,
    node_ports: BTreeSet<u16>,
}

impl Used {
    /// The cluster IPs and node ports of `services`.
    pub(crate) fn of(services: impl Iterator<Item = impl Borrow<Value>>) -> Self {
        let mut used = Self::default();
        for s in services {
            let s = s.borrow();
            used.ips.extend(
                s.pointer("/spec/clusterIP")
                    .and_then(Value::as_str)
                    .and_then(|ip| ip.parse::<Ipv4Addr>().ok()),
            );
            used.node_ports.extend(
                s.pointer("/spec/ports")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p["nodePort"].as_u64())
                    .filter_map(|p| u16::try_from(p).ok()),
            );
        }
        used
    }
}

fn in_range(ip: Ipv4Addr) -> bool {
    ip.octets()[..3] == NETWORK
}

/// Fills in the new Service `obj`'s `clusterIP`/`clusterIPs` (unless
/// headless or `ExternalName`) and the node ports of a `NodePort` or
/// `LoadBalancer` Service, avoiding `used`.
pub(crate) fn allocate(
    res: &Resource,
    name: &str,
    obj: &mut Value,
    used: &Used,
) -> Result<(), ApiError> {
    let ty = obj
        .pointer("/spec/type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP")
        .to_owned();
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    if ty == "ExternalName" {
        return Ok(());
    }
    let asked = spec
        .get("clusterIPs")
        .and_then(|v| v.get(0))
        .or_else(|| spec.get("clusterIP"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let ip = match asked.as_str() {
        "None" => "None".to_owned(),
        "" => free_ip(used)
            .ok_or_else(|| ApiError::internal("failed to allocate a serviceIP: range is full"))?,
        text => check_ip(res, name, text, used)?,
    };
    spec.insert("clusterIP".into(), json!(ip));
    spec.insert("clusterIPs".into(), json!([ip]));
    // `nodePort` is a plain int32 in Go, so 0 means unset whatever the
    // encoding (a JSON `0`, or the zero kubectl's protobuf bodies carry):
    // upstream's allocator treats it so, and Go omits it from JSON.
    for p in spec
        .get_mut("ports")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if let Some(port) = p.as_object_mut()
            && port.get("nodePort").and_then(Value::as_i64) == Some(0)
        {
            port.remove("nodePort");
        }
    }
    if ty == "NodePort" || ty == "LoadBalancer" {
        let mut taken = used.node_ports.clone();
        for p in spec
            .get_mut("ports")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if p.get("nodePort").is_none_or(Value::is_null) {
                let port = free_node_port(&taken).ok_or_else(|| {
                    ApiError::internal("failed to allocate a nodePort: range is full")
                })?;
                taken.insert(port);
                p["nodePort"] = json!(port);
            }
        }
    }
    Ok(())
}

/// A requested cluster IP, checked.
fn check_ip(res: &Resource, name: &str, text: &str, used: &Used) -> Result<String, ApiError> {
    let shown = serde_json::to_string(&[text]).unwrap_or_default();
    let fail = |field: &str, message: String| {
        ApiError::invalid(res, name, &[(field, "FieldValueInvalid", message)])
    };
    let Ok(ip) = text.parse::<Ipv4Addr>() else {
        return Err(fail(
            "spec.clusterIPs[0]",
            format!(
                "Invalid value: {}: must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                serde_json::to_string(text).unwrap_or_default()
            ),
        ));
    };
    let why = if !in_range(ip) {
        "the provided network does not match the current range"
    } else if used.ips.contains(&ip) {
        "provided IP is already allocated"
    } else {
        return Ok(text.to_owned());
    };
    Err(fail(
        "spec.clusterIPs",
        format!("Invalid value: {shown}: failed to allocate IP {text}: {why}"),
    ))
}

/// A random free address of the network (not the network or broadcast
/// address).
/// The addresses kube-apiserver keeps for Services that ask for one
/// (KEP-3070, `ServiceIPStaticSubrange`): the range's first
/// `clamp(size / 16, 16, 256)` addresses, 16 for a `/24`. A Service that
/// asks for none is given one above them while any is free.
const STATIC_BAND: u8 = 16;

/// A free address at random: above the static band first, as upstream's
/// allocator, then in it.
fn free_ip(used: &Used) -> Option<String> {
    let [a, b, c] = NETWORK;
    let pick = |range: std::ops::RangeInclusive<u8>| {
        let free: Vec<Ipv4Addr> = range
            .map(|d| Ipv4Addr::new(a, b, c, d))
            .filter(|ip| !used.ips.contains(ip))
            .collect();
        (!free.is_empty()).then(|| free[rand::rng().random_range(0..free.len())])
    };
    pick(STATIC_BAND + 1..=254)
        .or_else(|| pick(1..=STATIC_BAND))
        .map(|ip| ip.to_string())
}

fn free_node_port(taken: &BTreeSet<u16>) -> Option<u16> {
    let free: Vec<u16> = NODE_PORTS.filter(|p| !taken.contains(p)).collect();
    if free.is_empty() {
        return None;
    }
    Some(free[rand::rng().random_range(0..free.len())])
}

/// An update to `ExternalName` drops what only IP Services have (the
/// addresses are released with them), as upstream's `dropTypeDependentFields`.
pub(crate) fn drop_type_dependent(live: &Value, new: &mut Value) {
    let was = live.pointer("/spec/type").and_then(Value::as_str);
    let is = new.pointer("/spec/type").and_then(Value::as_str);
    if is != Some("ExternalName") || was == Some("ExternalName") {
        return;
    }
    if let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) {
        for k in [
            "clusterIP",
            "clusterIPs",
            "ipFamilies",
            "ipFamilyPolicy",
            "internalTrafficPolicy",
            "externalTrafficPolicy",
        ] {
            spec.remove(k);
        }
    }
}
