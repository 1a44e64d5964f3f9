//! `format: byte` strings: base64 on the wire, bytes in memory.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Bytes written as standard base64 with padding (Secret `data`,
/// ConfigMap `binaryData`, CSR `request`, …).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ByteString(pub Vec<u8>);

/// A `format: byte` string that is not valid base64.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid base64 at byte {offset}")]
pub struct InvalidBase64 {
    /// Byte offset of the first bad character, or the length for a bad end.
    pub offset: usize,
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn decode_char(c: u8) -> Option<u32> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    } as u32)
}

impl ByteString {
    /// Standard base64 with padding.
    pub fn to_base64(&self) -> String {
        let mut out = String::with_capacity(self.0.len().div_ceil(3) * 4);
        for chunk in self.0.chunks(3) {
            let b = [
                chunk[0],
                *chunk.get(1).unwrap_or(&0),
                *chunk.get(2).unwrap_or(&0),
            ];
            let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
            for i in 0..4 {
                if i <= chunk.len() {
                    out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
                } else {
                    out.push('=');
                }
            }
        }
        out
    }

    /// Decodes standard base64; padding is optional, whitespace is not allowed.
    pub fn from_base64(s: &str) -> Result<Self, InvalidBase64> {
        let bytes = s.as_bytes();
        let trimmed = bytes.iter().rposition(|&c| c != b'=').map_or(0, |p| p + 1);
        if bytes.len() - trimmed > 2 || (!bytes.len().is_multiple_of(4) && bytes.len() != trimmed) {
            return Err(InvalidBase64 { offset: trimmed });
        }
        let data = &bytes[..trimmed];
        if data.len() % 4 == 1 {
            return Err(InvalidBase64 { offset: data.len() });
        }
        let mut out = Vec::with_capacity(data.len() / 4 * 3 + 2);
        for (ci, chunk) in data.chunks(4).enumerate() {
            let mut n = 0u32;
            for (i, &c) in chunk.iter().enumerate() {
                let v = decode_char(c).ok_or(InvalidBase64 { offset: ci * 4 + i })?;
                n |= v << (18 - 6 * i);
            }
            let produced = chunk.len() - 1;
            for i in 0..produced {
                out.push((n >> (16 - 8 * i)) as u8);
            }
        }
        Ok(Self(out))
    }
}

impl Serialize for ByteString {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_base64())
    }
}

impl<'de> Deserialize<'de> for ByteString {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = ByteString;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a base64 string")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ByteString, E> {
                ByteString::from_base64(v).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips() {
        for (raw, b64) in [
            (&b""[..], ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"\xff\xfe\x00", "//4A"),
        ] {
            assert_eq!(ByteString(raw.to_vec()).to_base64(), b64);
            assert_eq!(ByteString::from_base64(b64).unwrap().0, raw);
        }
        assert_eq!(ByteString::from_base64("Zg").unwrap().0, b"f");
        assert!(ByteString::from_base64("Z").is_err());
        assert!(ByteString::from_base64("Zm9v!").is_err());
        assert!(ByteString::from_base64("Zg===").is_err());
        let v: ByteString = serde_json::from_str("\"aGVsbG8=\"").unwrap();
        assert_eq!(v.0, b"hello");
        assert_eq!(serde_json::to_string(&v).unwrap(), "\"aGVsbG8=\"");
    }
}
