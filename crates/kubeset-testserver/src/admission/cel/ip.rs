//! Kubernetes' CEL IP and CIDR libraries: `ip(s)`, `isIP(s)`, `cidr(s)`,
//! `isCIDR(s)` and the members kube-apiserver declares on them
//! (`family`, `isLoopback`, `isUnspecified`, `isGlobalUnicast`,
//! `isLinkLocalUnicast`, `isLinkLocalMulticast`; `containsIP`,
//! `containsCIDR`, `prefixLength`, `ip`, `masked`). Like Go's `netip`
//! parsing as the library uses it: no zones, no IPv4-mapped IPv6
//! addresses, no leading zeros.

use std::net::IpAddr;
use std::sync::Arc;

use cel::extractors::This;
use cel::objects::Opaque;
use cel::{Context, ExecutionError, FunctionContext, ResolveResult, Value};

/// An `net.IP` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ip(IpAddr);

impl Opaque for Ip {
    fn runtime_type_name(&self) -> &str {
        "net.IP"
    }
}

/// A `net.CIDR` value: its address as written and its prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cidr(IpAddr, u8);

impl Opaque for Cidr {
    fn runtime_type_name(&self) -> &str {
        "net.CIDR"
    }
}

fn parse_ip(s: &str) -> Option<IpAddr> {
    let ip: IpAddr = s.parse().ok()?;
    match ip {
        IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some() => None,
        _ => Some(ip),
    }
}

fn parse_cidr(s: &str) -> Option<Cidr> {
    let (a, p) = s.split_once('/')?;
    let ip = parse_ip(a)?;
    if p.is_empty() || (p.len() > 1 && p.starts_with('0')) {
        return None;
    }
    let len: u8 = p.parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    (len <= max).then_some(Cidr(ip, len))
}

/// Adds the library's functions to `ctx`.
pub(super) fn register(ctx: &mut Context<'_, '_>) {
    let _ = ctx.add_function("ip", ip);
    let _ = ctx.add_function("isIP", |This(s): This<Arc<String>>| parse_ip(&s).is_some());
    let _ = ctx.add_function("cidr", cidr);
    let _ = ctx.add_function("isCIDR", |This(s): This<Arc<String>>| {
        parse_cidr(&s).is_some()
    });
    let _ = ctx.add_function(
        "family",
        |f: &FunctionContext<'_, '_>, This(v): This<Value>| {
            Ok::<_, ExecutionError>(Value::Int(if as_ip(f, &v)?.is_ipv4() { 4 } else { 6 }))
        },
    );
    let _ = ctx.add_function(
        "isLoopback",
        |f: &FunctionContext<'_, '_>, This(v): This<Value>| {
            Ok::<_, ExecutionError>(as_ip(f, &v)?.is_loopback())
        },
    );
    let _ = ctx.add_function(
        "isUnspecified",
        |f: &FunctionContext<'_, '_>, This(v): This<Value>| {
            Ok::<_, ExecutionError>(as_ip(f, &v)?.is_unspecified())
        },
    );
    let _ = ctx.add_function(
        "isGlobalUnicast",
        |f: &FunctionContext<'_, '_>, This(v): This<Value>| {
            Ok::<_, ExecutionError>(global_unicast(as_ip(f, &v)?))
        },
    );
    let _ = ctx.add_function(
        "isLinkLocalUnicast",
        |f: &FunctionContext<'_, '_>, This(v): This<Value>| {
            Ok::<_, ExecutionError>(match as_ip(f, &v)? {
                IpAddr::V4(a) => a.is_link_local(),
                IpAddr::V6(a) => a.segments()[0] & 0xffc0 == 0xfe80,
            })
        },
    );
    let _ = ctx.add_function(
        "isLinkLocalMulticast",
        |f: &FunctionContext<'_, '_>, This(v): This<Value>| {
            Ok::<_, ExecutionError>(match as_ip(f, &v)? {
                IpAddr::V4(a) => a.octets()[..3] == [224, 0, 0],
                IpAddr::V6(a) => a.segments()[0] & 0xff0f == 0xff02,
            })
        },
    );
    let _ = ctx.add_function("containsIP", contains_ip);
    let _ = ctx.add_function("containsCIDR", contains_cidr);
    let _ = ctx.add_function(
        "prefixLength",
        |f: &FunctionContext<'_, '_>, This(v): This<Value>| {
            Ok::<_, ExecutionError>(Value::Int(i64::from(as_cidr(f, &v)?.1)))
        },
    );
    let _ = ctx.add_function(
        "masked",
        |f: &FunctionContext<'_, '_>, This(v): This<Value>| {
            let c = as_cidr(f, &v)?;
            Ok::<_, ExecutionError>(Value::Opaque(Arc::new(Cidr(mask(c.0, c.1), c.1))))
        },
    );
}

fn global_unicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => {
            !(a.is_unspecified()
                || a.is_loopback()
                || a.is_link_local()
                || a.is_multicast()
                || a.is_broadcast())
        }
        IpAddr::V6(a) => {
            !(a.is_unspecified()
                || a.is_loopback()
                || a.is_multicast()
                || a.segments()[0] & 0xffc0 == 0xfe80)
        }
    }
}

fn ip(f: &FunctionContext<'_, '_>, This(v): This<Value>) -> ResolveResult {
    match &v {
        Value::String(s) => parse_ip(s)
            .map(|ip| Value::Opaque(Arc::new(Ip(ip))))
            .ok_or_else(|| f.error(format!("IP Address '{s}' parse error during conversion from string: ParseAddr(\"{s}\"): unable to parse IP"))),
        // `cidr.ip()`: the CIDR's address.
        _ => Ok(Value::Opaque(Arc::new(Ip(as_cidr(f, &v)?.0)))),
    }
}

fn cidr(f: &FunctionContext<'_, '_>, This(s): This<Arc<String>>) -> ResolveResult {
    parse_cidr(&s)
        .map(|c| Value::Opaque(Arc::new(c)))
        .ok_or_else(|| f.error(format!("network address parse error during conversion from string: netip.ParsePrefix(\"{s}\"): invalid prefix")))
}

fn as_ip(f: &FunctionContext<'_, '_>, v: &Value) -> Result<IpAddr, ExecutionError> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<Ip>().map(|i| i.0),
        Value::String(s) => parse_ip(s),
        _ => None,
    }
    .ok_or_else(|| f.error("no such overload: wants an IP"))
}

fn as_cidr(f: &FunctionContext<'_, '_>, v: &Value) -> Result<Cidr, ExecutionError> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<Cidr>().copied(),
        Value::String(s) => parse_cidr(s),
        _ => None,
    }
    .ok_or_else(|| f.error("no such overload: wants a CIDR"))
}

fn bits(ip: IpAddr) -> (u128, u8) {
    match ip {
        IpAddr::V4(a) => (u128::from(u32::from(a)), 32),
        IpAddr::V6(a) => (u128::from(a), 128),
    }
}

fn mask(ip: IpAddr, len: u8) -> IpAddr {
    let (b, width) = bits(ip);
    let keep = if len == 0 {
        0
    } else {
        u128::MAX << (width - len)
    } & if width == 32 {
        u128::from(u32::MAX)
    } else {
        u128::MAX
    };
    match ip {
        IpAddr::V4(_) => IpAddr::V4(std::net::Ipv4Addr::from(
            u32::try_from(b & keep).unwrap_or(0),
        )),
        IpAddr::V6(_) => IpAddr::V6(std::net::Ipv6Addr::from(b & keep)),
    }
}

fn within(c: Cidr, ip: IpAddr) -> bool {
    ip.is_ipv4() == c.0.is_ipv4() && mask(ip, c.1) == mask(c.0, c.1)
}

fn contains_ip(f: &FunctionContext<'_, '_>, This(v): This<Value>, other: Value) -> ResolveResult {
    let c = as_cidr(f, &v)?;
    Ok(Value::Bool(within(c, as_ip(f, &other)?)))
}

fn contains_cidr(f: &FunctionContext<'_, '_>, This(v): This<Value>, other: Value) -> ResolveResult {
    let c = as_cidr(f, &v)?;
    let o = as_cidr(f, &other)?;
    Ok(Value::Bool(o.1 >= c.1 && within(c, o.0)))
}
