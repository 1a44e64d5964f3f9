//! `Time` and `MicroTime`: RFC 3339 timestamps that round-trip exactly.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A timestamp that is not RFC 3339 (`2006-01-02T15:04:05Z07:00`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid RFC 3339 timestamp {input:?}: {reason}")]
pub struct TimeParseError {
    /// The text.
    pub input: String,
    /// What is wrong.
    pub reason: &'static str,
}

/// An instant and the way it was written (fraction digits, offset), so
/// that text read from the server is written back unchanged.
#[derive(Clone, Copy, Debug)]
struct Stamp {
    /// Seconds since the Unix epoch (UTC).
    secs: i64,
    /// Nanoseconds within the second.
    nanos: u32,
    /// Digits of the fraction as written (0–9).
    frac_digits: u8,
    /// Offset east of UTC in minutes; `None` for `Z`.
    offset_minutes: Option<i16>,
    /// The offset was written `-00:00` (RFC 3339's "local offset unknown"),
    /// kept so that it prints back as written.
    minus_zero: bool,
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Smallest and largest instants that print as four-digit years.
const MIN_SECS: i64 = -62_135_596_800; // 0001-01-01T00:00:00Z
const MAX_SECS: i64 = 253_402_300_799; // 9999-12-31T23:59:59Z

impl Stamp {
    fn parse(s: &str) -> Result<Self, TimeParseError> {
        let err = |reason| TimeParseError {
            input: s.to_owned(),
            reason,
        };
        let b = s.as_bytes();
        let num = |from: usize, len: usize| -> Result<i64, TimeParseError> {
            let part = b.get(from..from + len).ok_or(err("too short"))?;
            if !part.iter().all(u8::is_ascii_digit) {
                return Err(err("expected digits"));
            }
            Ok(part.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
        };
        let sep = |at: usize, want: &[u8]| -> Result<(), TimeParseError> {
            match b.get(at) {
                Some(c) if want.contains(c) => Ok(()),
                _ => Err(err("bad separator")),
            }
        };
        let (y, mo, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
        sep(4, b"-")?;
        sep(7, b"-")?;
        // Upper case only, as Go's time.Parse(RFC3339) (golang/go#20869):
        // a lowercase `t`/`z` would not print back the same.
        sep(10, b"T")?;
        let (h, mi, se) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
        sep(13, b":")?;
        sep(16, b":")?;
        if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) {
            return Err(err("date out of range"));
        }
        if h > 23 || mi > 59 || se > 59 {
            return Err(err("time out of range"));
        }
        let mut i = 19;
        let mut nanos = 0u32;
        let mut frac_digits = 0u8;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            let digits = i - start;
            if digits == 0 || digits > 9 {
                return Err(err("fraction must have 1 to 9 digits"));
            }
            let n = num(start, digits)?;
            nanos = u32::try_from(n * 10i64.pow(9 - digits as u32)).map_err(|_| err("fraction"))?;
            frac_digits = digits as u8;
        }
        let minus_zero = b.get(i) == Some(&b'-') && b.get(i + 1..) == Some(&b"00:00"[..]);
        let offset_minutes = match b.get(i) {
            Some(b'Z') if b.len() == i + 1 => None,
            Some(sign @ (b'+' | b'-')) if b.len() == i + 6 => {
                sep(i + 3, b":")?;
                let (oh, om) = (num(i + 1, 2)?, num(i + 4, 2)?);
                if oh > 23 || om > 59 {
                    return Err(err("offset out of range"));
                }
                let total = (oh * 60 + om) as i16;
                Some(if *sign == b'-' { -total } else { total })
            }
            _ => return Err(err("expected Z or an offset ±hh:mm at the end")),
        };
        let local = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + se;
        let secs = local - i64::from(offset_minutes.unwrap_or(0)) * 60;
        Ok(Self {
            secs,
            nanos,
            frac_digits,
            offset_minutes,
            minus_zero,
        })
    }

    fn write(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let local = self.secs + i64::from(self.offset_minutes.unwrap_or(0)) * 60;
        let (days, rem) = (local.div_euclid(86_400), local.rem_euclid(86_400));
        let (y, m, d) = civil_from_days(days);
        write!(
            f,
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
            rem / 3600,
            rem % 3600 / 60,
            rem % 60
        )?;
        if self.frac_digits > 0 {
            let digits = u32::from(self.frac_digits.min(9));
            let frac = self.nanos / 10u32.pow(9 - digits);
            write!(f, ".{frac:0width$}", width = digits as usize)?;
        }
        match self.offset_minutes {
            None => f.write_str("Z"),
            Some(o) => {
                let sign = if o < 0 || self.minus_zero { '-' } else { '+' };
                let o = o.unsigned_abs();
                write!(f, "{sign}{:02}:{:02}", o / 60, o % 60)
            }
        }
    }

    fn from_system_time(t: SystemTime, frac_digits: u8) -> Self {
        let (secs, nanos) = match t.duration_since(UNIX_EPOCH) {
            Ok(d) => (
                i64::try_from(d.as_secs()).unwrap_or(MAX_SECS),
                d.subsec_nanos(),
            ),
            Err(e) => {
                let d = e.duration();
                let secs = -i64::try_from(d.as_secs()).unwrap_or(-MIN_SECS);
                match d.subsec_nanos() {
                    0 => (secs, 0),
                    n => (secs - 1, 1_000_000_000 - n),
                }
            }
        };
        let secs = secs.clamp(MIN_SECS, MAX_SECS);
        let keep = 10u32.pow(9 - u32::from(frac_digits));
        Self {
            secs,
            nanos: nanos / keep * keep,
            frac_digits,
            offset_minutes: None,
            minus_zero: false,
        }
    }

    fn to_system_time(self) -> SystemTime {
        if self.secs >= 0 {
            UNIX_EPOCH + Duration::new(self.secs.unsigned_abs(), self.nanos)
        } else {
            UNIX_EPOCH - Duration::from_secs(self.secs.unsigned_abs())
                + Duration::from_nanos(u64::from(self.nanos))
        }
    }
}

macro_rules! timestamp_type {
    ($(#[$doc:meta])* $name:ident, $digits:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy)]
        pub struct $name(Stamp);

        impl $name {
            /// Parses RFC 3339 text, remembering how it was written.
            pub fn parse(s: &str) -> Result<Self, TimeParseError> {
                Stamp::parse(s).map(Self)
            }

            /// The current time, in UTC.
            pub fn now() -> Self {
                Self::from(SystemTime::now())
            }

            /// From seconds since the Unix epoch, written in UTC; `None`
            /// outside years 1–9999 or for `nanos` ≥ 10⁹.
            pub fn from_unix(secs: i64, nanos: u32) -> Option<Self> {
                if !(MIN_SECS..=MAX_SECS).contains(&secs) || nanos >= 1_000_000_000 {
                    return None;
                }
                let keep = 10u32.pow(9 - $digits);
                Some(Self(Stamp {
                    secs,
                    nanos: nanos / keep * keep,
                    frac_digits: $digits,
                    offset_minutes: None,
            minus_zero: false,
                }))
            }

            /// Seconds since the Unix epoch.
            pub fn unix_seconds(&self) -> i64 {
                self.0.secs
            }

            /// Nanoseconds within the second.
            pub fn subsec_nanos(&self) -> u32 {
                self.0.nanos
            }

            /// As a `SystemTime`.
            pub fn to_system_time(&self) -> SystemTime {
                self.0.to_system_time()
            }
        }

        /// From a `jiff::Timestamp` (k8s-openapi's `Time(Timestamp)`; cargo
        /// feature `jiff`), written in UTC; instants outside years
        /// 1–9999, which the API server cannot hold, are clamped to them.
        #[cfg(feature = "jiff")]
        impl From<jiff::Timestamp> for $name {
            fn from(t: jiff::Timestamp) -> Self {
                let (secs, nanos) = (t.as_second(), t.subsec_nanosecond());
                // jiff's fraction has the sign of the instant.
                let (secs, nanos) = if nanos < 0 {
                    (secs - 1, (nanos + 1_000_000_000).unsigned_abs())
                } else {
                    (secs, nanos.unsigned_abs())
                };
                let clamped = secs.clamp(MIN_SECS, MAX_SECS);
                let nanos = if clamped == secs { nanos } else { 0 };
                Self::from_unix(clamped, nanos).unwrap_or_default()
            }
        }

        /// To a `jiff::Timestamp` (cargo feature `jiff`).
        #[cfg(feature = "jiff")]
        impl From<$name> for jiff::Timestamp {
            fn from(t: $name) -> Self {
                // Years 1–9999 are inside jiff's range: never the fallback.
                jiff::Timestamp::new(t.0.secs, t.0.nanos.cast_signed())
                    .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
            }
        }

        impl From<SystemTime> for $name {
            fn from(t: SystemTime) -> Self {
                Self(Stamp::from_system_time(t, $digits))
            }
        }

        impl Default for $name {
            /// The Unix epoch.
            fn default() -> Self {
                Self(Stamp {
                    secs: 0,
                    nanos: 0,
                    frac_digits: $digits,
                    offset_minutes: None,
            minus_zero: false,
                })
            }
        }

        /// Equal when they name the same instant, however written.
        impl PartialEq for $name {
            fn eq(&self, other: &Self) -> bool {
                (self.0.secs, self.0.nanos) == (other.0.secs, other.0.nanos)
            }
        }

        impl Eq for $name {}

        impl PartialOrd for $name {
            fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
                Some(self.cmp(other))
            }
        }

        impl Ord for $name {
            fn cmp(&self, other: &Self) -> Ordering {
                (self.0.secs, self.0.nanos).cmp(&(other.0.secs, other.0.nanos))
            }
        }

        impl Hash for $name {
            fn hash<H: Hasher>(&self, state: &mut H) {
                (self.0.secs, self.0.nanos).hash(state);
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.write(f)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({self})", stringify!($name))
            }
        }

        impl FromStr for $name {
            type Err = TimeParseError;
            fn from_str(s: &str) -> Result<Self, TimeParseError> {
                Self::parse(s)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("an RFC 3339 timestamp")
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        $name::parse(v).map_err(E::custom)
                    }
                }
                deserializer.deserialize_str(V)
            }
        }
    };
}

timestamp_type!(
    /// A timestamp with second precision (`2024-05-01T10:00:00Z`), as
    /// `metadata.creationTimestamp`. Text read from the server is written
    /// back unchanged; new values are written in UTC without a fraction.
    Time,
    0
);

timestamp_type!(
    /// A timestamp with microsecond precision
    /// (`2024-05-01T10:00:00.123456Z`), as `Lease.spec.renewTime`. Text
    /// read from the server is written back unchanged; new values are
    /// written in UTC with six fraction digits.
    MicroTime,
    6
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_exactly() {
        for s in [
            "2024-05-01T10:00:00Z",
            "1970-01-01T00:00:00Z",
            "2000-02-29T23:59:59Z",
            "2024-05-01T10:00:00.123456Z",
            "2024-05-01T10:00:00.5Z",
            "2024-05-01T10:00:00.000000Z",
            "2024-05-01T12:00:00+02:00",
            "2024-05-01T05:30:00-04:30",
            "0001-01-01T00:00:00Z",
            "9999-12-31T23:59:59.999999999Z",
            "1969-12-31T23:59:59.5Z",
            // RFC 3339's unknown local offset keeps its sign (found by
            // the `scalars` fuzz target).
            "2026-01-01T00:00:00.12111116-00:00",
            "2026-01-01T00:00:00+00:00",
        ] {
            let t = Time::parse(s).unwrap();
            assert_eq!(t.to_string(), s);
            let json = format!("\"{s}\"");
            let m: MicroTime = serde_json::from_str(&json).unwrap();
            assert_eq!(serde_json::to_string(&m).unwrap(), json);
        }
    }

    #[test]
    fn instants_compare_across_offsets() {
        let a = Time::parse("2024-05-01T12:00:00+02:00").unwrap();
        let b = Time::parse("2024-05-01T10:00:00Z").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.unix_seconds(), 1_714_557_600);
        let c = Time::parse("1969-12-31T23:59:59.5Z").unwrap();
        assert_eq!((c.unix_seconds(), c.subsec_nanos()), (-1, 500_000_000));
        assert!(c < Time::default());
    }

    #[test]
    fn new_values_use_kubernetes_precision() {
        let t = Time::from_unix(1_714_557_600, 999_999_999).unwrap();
        assert_eq!(t.to_string(), "2024-05-01T10:00:00Z");
        let m = MicroTime::from_unix(1_714_557_600, 123_456_789).unwrap();
        assert_eq!(m.to_string(), "2024-05-01T10:00:00.123456Z");
        assert_eq!(
            MicroTime::default().to_string(),
            "1970-01-01T00:00:00.000000Z"
        );
        assert!(Time::from_unix(MAX_SECS + 1, 0).is_none());
        let now = Time::now();
        assert!(now.unix_seconds() > 1_700_000_000);
        let st = SystemTime::UNIX_EPOCH + Duration::from_secs(1_714_557_600);
        assert_eq!(Time::from(st).to_system_time(), st);
        let before = SystemTime::UNIX_EPOCH - Duration::from_millis(500);
        let m = MicroTime::from(before);
        assert_eq!(m.to_string(), "1969-12-31T23:59:59.500000Z");
        assert_eq!(m.to_system_time(), before);
    }

    #[test]
    fn rejects_bad_text() {
        for s in [
            "",
            "2024-05-01",
            "2024-05-01T10:00:00",
            "2024-13-01T10:00:00Z",
            "2023-02-29T10:00:00Z",
            "2024-05-01T24:00:00Z",
            "2024-05-01T10:00:60Z",
            "2024-05-01T10:00:00.Z",
            "2024-05-01T10:00:00.1234567890Z",
            "2024-05-01T10:00:00+2:00",
            "2024-05-01T10:00:00Zjunk",
            "2024-05-01 10:00:00Z",
            "２０２４-05-01T10:00:00Z",
            "2024-05-01t10:00:00Z",
            "2024-05-01T10:00:00z",
            "2024-05-01t10:00:00.5z",
        ] {
            assert!(Time::parse(s).is_err(), "{s}");
        }
        assert!(serde_json::from_str::<Time>("12").is_err());
    }
}
