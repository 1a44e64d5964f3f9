//! `Warning` and `Retry-After` headers: no panic on any value; every parsed
//! warning has a 3-digit code and no control characters; a warning we quote
//! ourselves parses back to its text; integer `Retry-After` seconds are
//! read exactly.
#![no_main]

use std::time::{Duration, SystemTime};

use kubeset_rest::{
    fuzz_hooks::retry_after,
    warning::{Warning, parse_warnings},
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for w in parse_warnings(text.split('\n')) {
        assert!((100..=999).contains(&w.code), "code {}", w.code);
        assert!(
            !w.text.chars().any(char::is_control),
            "control in {:?}",
            w.text
        );
    }
    let plain: String = text.chars().filter(|c| !c.is_control()).collect();
    let quoted = format!(
        "299 - \"{}\"",
        plain.replace('\\', "\\\\").replace('"', "\\\"")
    );
    let twice = format!("{quoted}, {quoted}");
    let want = Warning {
        code: 299,
        agent: "-".to_owned(),
        text: plain,
    };
    assert_eq!(parse_warnings([twice.as_str()]), vec![want.clone(), want]);

    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600);
    let parsed = retry_after(data, now);
    // What a header value can carry: visible ASCII, space and tab.
    let header_safe = data.iter().all(|b| *b == b'\t' || (0x20..0x7f).contains(b));
    let value = std::str::from_utf8(data).unwrap_or("").trim();
    if header_safe
        && let Ok(secs) = value.parse::<u64>()
        && !value.starts_with('+')
        && i64::try_from(secs).is_ok()
    {
        assert_eq!(
            parsed,
            Some(Duration::from_secs(secs)),
            "Retry-After: {value}"
        );
    }
});
