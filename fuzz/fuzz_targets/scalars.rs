//! `Quantity`, `Time`, `MicroTime` and `IntOrString`: no panic; a time
//! prints back as it was written (up to the case of `T`/`Z`) and parses to
//! the same instant; JSON round trips are exact.
#![no_main]

use kubeset_api::types::{IntOrString, MicroTime, Quantity, Time};
use libfuzzer_sys::fuzz_target;
use serde::{Serialize, de::DeserializeOwned};

fn json_round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(data: &[u8]) {
    if let Ok(v) = serde_json::from_slice::<T>(data) {
        let out = serde_json::to_vec(&v).expect("a decoded value encodes");
        let back: T = serde_json::from_slice(&out).expect("our own output decodes");
        assert_eq!(v, back);
    }
}

macro_rules! time_round_trip {
    ($ty:ty, $s:expr) => {
        if let Ok(t) = <$ty>::parse($s) {
            let shown = t.to_string();
            assert!(
                shown.eq_ignore_ascii_case($s),
                "{:?} printed as {shown:?}",
                $s
            );
            let again = <$ty>::parse(&shown).expect("our own output parses");
            assert_eq!(t, again);
            assert_eq!(t.unix_seconds(), again.unix_seconds());
        }
    };
}

fuzz_target!(|data: &[u8]| {
    json_round_trip::<IntOrString>(data);
    json_round_trip::<Quantity>(data);
    json_round_trip::<Time>(data);
    json_round_trip::<MicroTime>(data);
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(v) = Quantity(s.to_owned()).to_f64() {
        assert!(!v.is_nan(), "{s:?} is NaN");
    }
    time_round_trip!(Time, s);
    time_round_trip!(MicroTime, s);
});
