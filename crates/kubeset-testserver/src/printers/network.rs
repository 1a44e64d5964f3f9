//! Services, Ingresses and IngressClasses: their columns and cells.

use serde_json::{Value, json};

use super::{AGE, Col, SELECTOR, age, arr, format_labels, i, or_none, s, st};

/// `printIngress`: Class, Hosts (three, then `+ N more...`), Address
/// (load-balancer IPs or host names, sorted, unique), Ports.
pub(crate) fn ingress(o: &Value) -> Vec<Value> {
    let rules = arr(o, "/spec/rules");
    let mut hosts: Vec<&str> = Vec::new();
    let mut more = false;
    for r in rules {
        if hosts.len() == 3 {
            more = true;
        }
        if !more && !s(r, "/host").is_empty() {
            hosts.push(s(r, "/host"));
        }
    }
    let hosts = match (hosts.is_empty(), more) {
        (true, _) => "*".to_owned(),
        (false, false) => hosts.join(","),
        (false, true) => format!("{} + {} more...", hosts.join(","), rules.len() - 3),
    };
    let mut address: Vec<&str> = arr(o, "/status/loadBalancer/ingress")
        .iter()
        .map(|g| match s(g, "/ip") {
            "" => s(g, "/hostname"),
            ip => ip,
        })
        .filter(|a| !a.is_empty())
        .collect();
    address.sort_unstable();
    address.dedup();
    let ports = if arr(o, "/spec/tls").is_empty() {
        "80"
    } else {
        "80, 443"
    };
    vec![
        json!(or_none(s(o, "/spec/ingressClassName"))),
        json!(hosts),
        json!(address.join(",")),
        json!(ports),
        age(o),
    ]
}

/// `printIngressClass`: Controller, Parameters (`Kind.group/name`).
pub(crate) fn ingress_class(o: &Value) -> Vec<Value> {
    let params = match o.pointer("/spec/parameters").filter(|p| p.is_object()) {
        None => "<none>".to_owned(),
        Some(p) => {
            let kind = match s(p, "/apiGroup") {
                "" => s(p, "/kind").to_owned(),
                g => format!("{}.{g}", s(p, "/kind")),
            };
            format!("{kind}/{}", s(p, "/name"))
        }
    };
    vec![json!(s(o, "/spec/controller")), json!(params)]
}

pub(crate) fn service(o: &Value) -> Vec<Value> {
    let ty = s(o, "/spec/type");
    let external = match ty {
        "ExternalName" => s(o, "/spec/externalName").to_owned(),
        "LoadBalancer" => {
            let ips: Vec<&str> = arr(o, "/status/loadBalancer/ingress")
                .iter()
                .map(|g| {
                    if s(g, "/ip").is_empty() {
                        s(g, "/hostname")
                    } else {
                        s(g, "/ip")
                    }
                })
                .collect();
            if ips.is_empty() {
                "<pending>".into()
            } else {
                ips.join(",")
            }
        }
        _ => {
            let ips: Vec<&str> = arr(o, "/spec/externalIPs")
                .iter()
                .filter_map(Value::as_str)
                .collect();
            or_none(&ips.join(","))
        }
    };
    let ports: Vec<String> = arr(o, "/spec/ports")
        .iter()
        .map(|p| {
            let proto = if s(p, "/protocol").is_empty() {
                "TCP"
            } else {
                s(p, "/protocol")
            };
            // As upstream's printer: a node port only when > 0.
            match p["nodePort"].as_i64().filter(|np| *np > 0) {
                Some(np) => format!("{}:{np}/{proto}", i(p, "/port")),
                None => format!("{}/{proto}", i(p, "/port")),
            }
        })
        .collect();
    vec![
        json!(ty),
        json!(or_none(s(o, "/spec/clusterIP"))),
        json!(external),
        json!(or_none(&ports.join(","))),
        age(o),
        json!(format_labels(o.pointer("/spec/selector"))),
    ]
}

pub(crate) const SVC_COLS: &[Col] = &[
    st("Type"),
    st("Cluster-IP"),
    st("External-IP"),
    st("Port(s)"),
    AGE,
    SELECTOR,
];

pub(crate) const INGRESS_COLS: &[Col] =
    &[st("Class"), st("Hosts"), st("Address"), st("Ports"), AGE];

pub(crate) const INGRESS_CLASS_COLS: &[Col] = &[st("Controller"), st("Parameters")];
