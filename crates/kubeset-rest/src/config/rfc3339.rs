//! RFC 3339 timestamps (`2026-11-30T03:04:05Z`, `…05.123+02:00`) as
//! [`SystemTime`], the form client-go reads an ExecCredential's
//! `expirationTimestamp` in (Go's `time.RFC3339`, fraction optional).
//!
//! One comparison with "now" is all the config layer needs, so this is a
//! few lines instead of a date-time library in every client build.

use std::time::{Duration, SystemTime};

/// Why a timestamp was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rfc3339Error {
    /// Not `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`.
    Layout,
    /// A field out of range (month 13, February 30, hour 24, …).
    Range,
}

impl std::fmt::Display for Rfc3339Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Rfc3339Error::Layout => "expected YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)",
            Rfc3339Error::Range => "a date or time field is out of range",
        })
    }
}

/// Parses an RFC 3339 date-time with a `T` separator and a `Z` or numeric
/// offset (what Go's `time.RFC3339` accepts).
pub(crate) fn parse(text: &str) -> Result<SystemTime, Rfc3339Error> {
    let b = text.as_bytes();
    let digits = |from: usize, len: usize| -> Result<i64, Rfc3339Error> {
        let part = b.get(from..from + len).ok_or(Rfc3339Error::Layout)?;
        part.iter().try_fold(0i64, |acc, &c| {
            if c.is_ascii_digit() {
                Ok(acc * 10 + i64::from(c - b'0'))
            } else {
                Err(Rfc3339Error::Layout)
            }
        })
    };
    let at = |i: usize, want: u8| -> Result<(), Rfc3339Error> {
        (b.get(i) == Some(&want))
            .then_some(())
            .ok_or(Rfc3339Error::Layout)
    };
    let (year, month, day) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
    at(4, b'-')?;
    at(7, b'-')?;
    at(10, b'T')?;
    let (hour, minute, second) = (digits(11, 2)?, digits(14, 2)?, digits(17, 2)?);
    at(13, b':')?;
    at(16, b':')?;
    let mut i = 19;
    let mut nanos: u32 = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            if i - start < 9 {
                nanos = nanos * 10 + u32::from(b[i] - b'0');
            }
            i += 1;
        }
        if i == start {
            return Err(Rfc3339Error::Layout);
        }
        for _ in (i - start)..9 {
            nanos *= 10;
        }
    }
    let offset_seconds = match b.get(i) {
        Some(b'Z') if i + 1 == b.len() => 0,
        Some(&sign @ (b'+' | b'-')) if i + 6 == b.len() => {
            at(i + 3, b':')?;
            let (oh, om) = (digits(i + 1, 2)?, digits(i + 4, 2)?);
            if oh > 23 || om > 59 {
                return Err(Rfc3339Error::Range);
            }
            let off = oh * 3600 + om * 60;
            if sign == b'-' { -off } else { off }
        }
        _ => return Err(Rfc3339Error::Layout),
    };
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return Err(Rfc3339Error::Range);
    }
    let secs = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
        - offset_seconds;
    let whole = Duration::from_secs(secs.unsigned_abs());
    let time = if secs >= 0 {
        SystemTime::UNIX_EPOCH + whole
    } else {
        SystemTime::UNIX_EPOCH - whole
    };
    Ok(time + Duration::from_nanos(u64::from(nanos)))
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (the era-based
/// algorithm: 400-year cycles of 146,097 days).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unix(text: &str) -> (i64, u32) {
        let t = parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        match t.duration_since(SystemTime::UNIX_EPOCH) {
            Ok(d) => (i64::try_from(d.as_secs()).unwrap(), d.subsec_nanos()),
            Err(e) => {
                let d = e.duration();
                assert_eq!(d.subsec_nanos(), 0, "only whole seconds before 1970 here");
                (-i64::try_from(d.as_secs()).unwrap(), 0)
            }
        }
    }

    #[test]
    fn known_instants() {
        assert_eq!(unix("1970-01-01T00:00:00Z"), (0, 0));
        // `date -u -d 2026-11-30T03:04:05Z +%s`
        assert_eq!(unix("2026-11-30T03:04:05Z"), (1_796_007_845, 0));
        assert_eq!(unix("2000-02-29T23:59:59Z"), (951_868_799, 0));
        assert_eq!(unix("1969-12-31T23:59:59Z"), (-1, 0));
        assert_eq!(unix("2038-01-19T03:14:08Z"), (2_147_483_648, 0));
    }

    #[test]
    fn offsets_and_fractions() {
        assert_eq!(unix("2026-11-30T05:04:05+02:00"), (1_796_007_845, 0));
        assert_eq!(unix("2026-11-29T22:34:05-04:30"), (1_796_007_845, 0));
        assert_eq!(unix("2026-11-30T03:04:05.5Z"), (1_796_007_845, 500_000_000));
        assert_eq!(
            unix("2026-11-30T03:04:05.123456789Z"),
            (1_796_007_845, 123_456_789)
        );
        // Digits past nanoseconds are dropped, as Go does.
        assert_eq!(
            unix("2026-11-30T03:04:05.1234567891Z"),
            (1_796_007_845, 123_456_789)
        );
    }

    #[test]
    fn refusals() {
        for bad in [
            "",
            "tomorrow",
            "2026-11-30",
            "2026-11-30 03:04:05Z",
            "2026-11-30T03:04:05",
            "2026-11-30T03:04:05z1",
            "2026-11-30T03:04:05.Z",
            "2026-11-30T03:04:05+0200",
            "2026-11-30T03:04:05Z ",
            "+2026-11-30T03:04:05Z",
            "2026-1a-30T03:04:05Z",
        ] {
            assert_eq!(parse(bad), Err(Rfc3339Error::Layout), "{bad:?}");
        }
        for bad in [
            "2026-13-01T00:00:00Z",
            "2026-00-01T00:00:00Z",
            "2025-02-29T00:00:00Z",
            "1900-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-11-30T24:00:00Z",
            "2026-11-30T23:60:00Z",
            "2026-11-30T23:59:60Z",
            "2026-11-30T23:59:59+24:00",
        ] {
            assert_eq!(parse(bad), Err(Rfc3339Error::Range), "{bad:?}");
        }
    }
}
