//! Small helpers: timestamps, UIDs, generated names.

use std::time::{SystemTime, UNIX_EPOCH};

use kubeset_api::types::Time;
use rand::Rng;

/// Seconds since the epoch now.
pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Current time as RFC 3339 with second precision, as Kubernetes writes it.
pub(crate) fn now_rfc3339() -> String {
    Time::now().to_string()
}

/// Formats seconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ` (empty past
/// year 9999, which no clock here reaches).
pub(crate) fn rfc3339(secs: u64) -> String {
    i64::try_from(secs)
        .ok()
        .and_then(|s| Time::from_unix(s, 0))
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// Seconds since the epoch of an RFC 3339 timestamp.
pub(crate) fn parse_rfc3339(s: &str) -> Option<u64> {
    Time::parse(s)
        .ok()
        .and_then(|t| u64::try_from(t.unix_seconds()).ok())
}

/// A random version-4 UUID.
pub(crate) fn uid() -> String {
    let mut b: [u8; 16] = rand::rng().random();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// The five-character suffix of `generateName`, from the same alphabet as
/// kube-apiserver (no vowels, no ambiguous characters).
pub(crate) fn name_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut rng = rand::rng();
    (0..5)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

/// Kubernetes' short age format: `5s`, `3m`, `2h`, `4d`.
pub(crate) fn age(created: &str) -> String {
    let now = now_secs();
    let Some(then) = parse_rfc3339(created) else {
        return "<unknown>".into();
    };
    let s = now.saturating_sub(then);
    match s {
        0..=119 => format!("{s}s"),
        120..=7199 => format!("{}m", s / 60),
        7200..=172_799 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_round_trip() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_709_251_199), "2024-02-29T23:59:59Z");
        for t in [0, 951_782_400, 1_709_251_199, 4_102_444_800] {
            assert_eq!(parse_rfc3339(&rfc3339(t)), Some(t));
        }
    }

    #[test]
    fn uid_and_suffix_shapes() {
        let u = uid();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert_eq!(name_suffix().len(), 5);
    }
}
