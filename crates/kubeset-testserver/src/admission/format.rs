//! The string formats kube-apiserver checks in custom resources
//! (kube-openapi's `strfmt.Default` registry: go-openapi's checkers and
//! govalidator's), each a pure function of the string.
//!
//! Approximations kept: `email` accepts `local@domain` and
//! `Name <local@domain>` (Go's `mail.ParseAddress` knows more of RFC 5322);
//! `uri` is Go's `url.ParseRequestURI` reduced to its rules (an absolute
//! path, or a scheme; no control characters; no space in the host).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

use regex::Regex;

use super::schema::Format;

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("a fixed pattern compiles"))
}

macro_rules! matcher {
    ($name:ident, $pattern:expr) => {
        fn $name(s: &str) -> bool {
            static CELL: OnceLock<Regex> = OnceLock::new();
            re(&CELL, $pattern).is_match(s)
        }
    };
}

matcher!(
    hostname_shape,
    r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z0-9\p{S}\p{L}])(-?[a-zA-Z0-9\p{S}\p{L}]){1,62})$"
);
matcher!(
    uuid,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"
);
matcher!(
    uuid3,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$"
);
matcher!(
    uuid4,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"
);
matcher!(
    uuid5,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"
);
matcher!(hexcolor, r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$");
matcher!(
    rgbcolor,
    r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$"
);
matcher!(
    base64,
    r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$"
);
matcher!(bson, r"^[0-9a-fA-F]{24}$");
matcher!(
    time_of_day,
    r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$"
);
matcher!(
    go_duration,
    r"^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$"
);
matcher!(
    word_duration,
    r"^(-\s?)?[0-9]+\s*(ns|us|µs|ms|s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hr|hrs|hour|hours|d|day|days|w|wk|wks|week|weeks)$"
);
matcher!(
    email_addr,
    r"^(?:[^<>@\s]+@[^<>@\s]+|[^<>]*<[^<>@\s]+@[^<>@\s]+>)$"
);
matcher!(
    mac_addr,
    r"^(?:[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){5}|[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){7}|[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){19}|[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4}){2}|[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4}){3}|[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4}){9})$"
);

/// Whether `s` is of format `f`.
pub(crate) fn check(f: Format, s: &str) -> bool {
    match f {
        Format::Byte => base64(s),
        Format::Date => date(s),
        Format::DateTime => date_time(s),
        Format::Duration => go_duration(s) || word_duration(s),
        Format::Email => email_addr(s),
        Format::Hostname => hostname(s),
        Format::Ipv4 => parse_ip(s).is_some() && s.contains('.'),
        Format::Ipv6 => parse_ip(s).is_some() && s.contains(':'),
        Format::Cidr => cidr(s),
        Format::Mac => mac_addr(s),
        Format::Uri => request_uri(s),
        Format::Uuid => uuid(s),
        Format::Uuid3 => uuid3(s),
        Format::Uuid4 => uuid4(s),
        Format::Uuid5 => uuid5(s),
        Format::HexColor => hexcolor(s),
        Format::RgbColor => rgbcolor(s),
        Format::BsonObjectId => bson(s),
    }
}

/// Go's `net.ParseIP`: dotted IPv4 (no leading zeros) or IPv6, also with
/// an embedded IPv4 tail.
fn parse_ip(s: &str) -> Option<IpAddr> {
    if let Ok(v4) = s.parse::<Ipv4Addr>() {
        return Some(IpAddr::V4(v4));
    }
    s.parse::<Ipv6Addr>().ok().map(IpAddr::V6)
}

fn cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let max = match parse_ip(ip) {
        Some(IpAddr::V4(_)) => 32,
        Some(IpAddr::V6(_)) => 128,
        None => return false,
    };
    !bits.is_empty()
        && bits.len() <= 3
        && bits.bytes().all(|b| b.is_ascii_digit())
        && bits.parse::<u32>().is_ok_and(|b| b <= max)
}

fn hostname(s: &str) -> bool {
    hostname_shape(s) && s.len() <= 255 && s.split('.').all(|p| p.len() <= 63)
}

/// Go's `time.Parse("2006-01-02", s)`: a real calendar day.
fn date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())
            .flatten()
    };
    let (Some(y), Some(m), Some(d)) = (num(0..4), num(5..7), num(8..10)) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// strfmt's `IsDateTime`: a date, `T`, a time of day with a zone.
fn date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let mut parts = lower.split('t');
    let (Some(d), Some(t)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !date(d) || !time_of_day(t) {
        return false;
    }
    t.get(0..2).is_some_and(|h| h <= "23")
        && t.get(3..5).is_some_and(|m| m <= "59")
        && t.get(6..8).is_some_and(|x| x <= "59")
}

fn request_uri(s: &str) -> bool {
    if s.is_empty() || s.chars().any(|c| c.is_control()) {
        return false;
    }
    if s.starts_with('/') {
        return true;
    }
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    let scheme_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    let host_ok = match rest.strip_prefix("//") {
        Some(r) => !r.split(['/', '?', '#']).next().unwrap_or("").contains(' '),
        None => true,
    };
    scheme_ok && host_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_as_kube_apiserver_checks_them() {
        let yes = [
            (Format::Uri, "https://example.com/x"),
            (Format::Uri, "/abs/path"),
            (Format::Ipv4, "10.0.0.1"),
            (Format::Ipv6, "::1"),
            (Format::Cidr, "10.0.0.0/8"),
            (Format::DateTime, "2024-02-29T23:59:59.5Z"),
            (Format::DateTime, "2024-01-01t10:00:00+02:00"),
            (Format::Date, "2024-02-29"),
            (Format::Duration, "1h30m"),
            (Format::Duration, "3 days"),
            (Format::Hostname, "a.example.com"),
            (Format::Byte, "aGVsbG8="),
            (Format::Uuid, "123e4567-e89b-12d3-a456-426614174000"),
            (Format::Mac, "00:11:22:33:44:55"),
            (Format::Email, "a@b.c"),
        ];
        for (f, s) in yes {
            assert!(check(f, s), "{f:?} {s:?} should pass");
        }
        let no = [
            (Format::Uri, "::not a uri"),
            (Format::Uri, "relative/path"),
            (Format::Ipv4, "1.2.3"),
            (Format::Ipv4, "::1"),
            (Format::Ipv6, "1.2.3.4"),
            (Format::Cidr, "10.0.0.0/33"),
            (Format::DateTime, "yesterday"),
            (Format::DateTime, "2023-02-29T00:00:00Z"),
            (Format::DateTime, "2024-01-01T24:00:00Z"),
            (Format::Date, "2024-13-01"),
            (Format::Duration, "soon"),
            (Format::Hostname, "-bad-.com"),
            (Format::Byte, ""),
            (Format::Byte, "a"),
            (Format::Uuid, "xyz"),
            (Format::Mac, "00:11:22"),
            (Format::Email, "nobody"),
        ];
        for (f, s) in no {
            assert!(!check(f, s), "{f:?} {s:?} should fail");
        }
    }
}
