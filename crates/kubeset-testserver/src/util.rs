//! Small helpers: timestamps, UIDs, generated names.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use kubeset_api::types::Time;
use rand::Rng;
use serde_json::Value;

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

/// The strings of a JSON array (`shortNames`, `finalizers`, a webhook's
/// `warnings`), other elements skipped; none when `v` is not an array.
pub(crate) fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
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

/// The age of a timestamp as the Table printers write it
/// (`translateTimestampSince`): `<unknown>` when unreadable.
pub(crate) fn age(created: &str) -> String {
    match parse_rfc3339(created) {
        Some(then) => human_duration(now_secs().saturating_sub(then)),
        None => "<unknown>".into(),
    }
}

/// apimachinery's `duration.HumanDuration` of `secs` seconds: `90s`,
/// `3m20s`, `15m`, `2h30m`, `20h`, `3d4h`, `30d`, `2y15d`, `9y`. The
/// server's tables write ages with it, and so does `kubeset get`.
///
/// ```
/// assert_eq!(kubeset_testserver::human_duration(200), "3m20s");
/// assert_eq!(kubeset_testserver::human_duration(76 * 3600), "3d4h");
/// ```
pub fn human_duration(secs: u64) -> String {
    let (minutes, hours) = (secs / 60, secs / 3600);
    let days = hours / 24;
    let with = |big: u64, unit: &str, small: u64, small_unit: &str| {
        if small == 0 {
            format!("{big}{unit}")
        } else {
            format!("{big}{unit}{small}{small_unit}")
        }
    };
    match () {
        () if secs < 120 => format!("{secs}s"),
        () if minutes < 10 => with(minutes, "m", secs % 60, "s"),
        () if minutes < 180 => format!("{minutes}m"),
        () if hours < 8 => with(hours, "h", minutes % 60, "m"),
        () if hours < 48 => format!("{hours}h"),
        () if hours < 24 * 8 => with(days, "d", hours % 24, "h"),
        () if hours < 24 * 365 * 2 => format!("{days}d"),
        () if hours < 24 * 365 * 8 => with(days / 365, "y", days % 365, "d"),
        () => format!("{}y", days / 365),
    }
}

/// Values built from a text (a CEL program, a schema pattern), kept for
/// every server of the process, since test suites register the same CRDs
/// again and again. Bounded: emptied when full.
pub(crate) struct TextCache<V> {
    entries: LazyLock<Mutex<HashMap<String, V>>>,
    max: usize,
}

impl<V: Clone> TextCache<V> {
    /// An empty cache of at most `max` entries.
    pub(crate) const fn new(max: usize) -> Self {
        Self {
            entries: LazyLock::new(Mutex::default),
            max,
        }
    }

    /// The value of `text`, if built before.
    pub(crate) fn get(&self, text: &str) -> Option<V> {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(text)
            .cloned()
    }

    /// The value of `text`, built by `build` unless built before (an
    /// error is not kept).
    pub(crate) fn get_or_build<E>(
        &self,
        text: &str,
        build: impl FnOnce() -> Result<V, E>,
    ) -> Result<V, E> {
        if let Some(v) = self.get(text) {
            return Ok(v);
        }
        let v = build()?;
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= self.max {
            entries.clear();
        }
        entries.insert(text.to_owned(), v.clone());
        Ok(v)
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
    fn human_durations_as_apimachinery() {
        let cases = [
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (200, "3m20s"),
            (600, "10m"),
            (10_799, "179m"),
            (10_800, "3h"),
            (10_860, "3h1m"),
            (9_000 + 10_800, "5h30m"),
            (8 * 3600, "8h"),
            (47 * 3600, "47h"),
            (48 * 3600, "2d"),
            (76 * 3600, "3d4h"),
            (8 * 86_400, "8d"),
            (729 * 86_400, "729d"),
            (730 * 86_400, "2y"),
            (745 * 86_400, "2y15d"),
            (3000 * 86_400, "8y"),
            (9 * 365 * 86_400, "9y"),
        ];
        for (secs, want) in cases {
            assert_eq!(human_duration(secs), want, "{secs} s");
        }
    }

    #[test]
    fn a_text_cache_keeps_what_it_built_and_empties_when_full() {
        let cache: TextCache<usize> = TextCache::new(2);
        assert_eq!(cache.get_or_build("a", || Ok::<_, ()>(1)), Ok(1));
        assert_eq!(cache.get_or_build("a", || Err("not built again")), Ok(1));
        assert_eq!(cache.get_or_build("b", || Err("kept out")), Err("kept out"));
        assert_eq!(cache.get("b"), None);
        assert_eq!(cache.get_or_build("b", || Ok::<_, ()>(2)), Ok(2));
        assert_eq!(cache.get_or_build("c", || Ok::<_, ()>(3)), Ok(3));
        assert_eq!((cache.get("a"), cache.get("c")), (None, Some(3)));
    }

    #[test]
    fn uid_and_suffix_shapes() {
        let u = uid();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert_eq!(name_suffix().len(), 5);
    }
}
