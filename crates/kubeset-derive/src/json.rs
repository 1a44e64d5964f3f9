//! Just enough JSON for kube-rs's `printcolumn = r#"{...}"#` and
//! `scale = r#"{...}"#` attributes: one flat object of string and integer
//! values. Our own, so that the proc macro builds no serde for the host.

/// A value of the flat object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scalar {
    /// A JSON string.
    Str(String),
    /// A JSON integer.
    Int(i64),
}

struct Parser<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.chars.next_if(|c| c.is_whitespace()).is_some() {}
    }

    fn expect(&mut self, want: char) -> Result<(), String> {
        self.ws();
        match self.chars.next() {
            Some(c) if c == want => Ok(()),
            Some(c) => Err(format!("expected `{want}`, found `{c}`")),
            None => Err(format!("expected `{want}`, found the end")),
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect('"')?;
        let mut out = String::new();
        loop {
            match self.chars.next().ok_or("an unterminated string")? {
                '"' => return Ok(out),
                '\\' => out.push(self.escape()?),
                c => out.push(c),
            }
        }
    }

    fn escape(&mut self) -> Result<char, String> {
        Ok(match self.chars.next().ok_or("an unterminated escape")? {
            '"' => '"',
            '\\' => '\\',
            '/' => '/',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'u' => {
                let hex: String = (0..4).filter_map(|_| self.chars.next()).collect();
                u32::from_str_radix(&hex, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| format!("a bad \\u escape `{hex}`"))?
            }
            c => return Err(format!("an unknown escape `\\{c}`")),
        })
    }

    fn value(&mut self) -> Result<Scalar, String> {
        self.ws();
        match self.chars.peek() {
            Some('"') => self.string().map(Scalar::Str),
            Some(c) if *c == '-' || c.is_ascii_digit() => {
                let mut digits = String::new();
                while let Some(c) = self.chars.next_if(|c| *c == '-' || c.is_ascii_digit()) {
                    digits.push(c);
                }
                digits
                    .parse()
                    .map(Scalar::Int)
                    .map_err(|_| format!("a bad integer `{digits}`"))
            }
            _ => Err("values are strings or integers".to_owned()),
        }
    }
}

/// Parses `{"key": "text", "n": 1, ...}`.
pub fn flat_object(text: &str) -> Result<Vec<(String, Scalar)>, String> {
    let mut p = Parser {
        chars: text.chars().peekable(),
    };
    p.expect('{')?;
    let mut out = Vec::new();
    p.ws();
    if p.chars.next_if_eq(&'}').is_none() {
        loop {
            let key = p.string()?;
            p.expect(':')?;
            let value = p.value()?;
            if out.iter().any(|(k, _)| *k == key) {
                return Err(format!("duplicate key {key:?}"));
            }
            out.push((key, value));
            p.ws();
            match p.chars.next() {
                Some(',') => {}
                Some('}') => break,
                _ => return Err("expected `,` or `}`".to_owned()),
            }
        }
    }
    p.ws();
    match p.chars.next() {
        None => Ok(out),
        Some(c) => Err(format!("text after the object: `{c}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_objects() {
        let got = flat_object(r#" {"name":"A \"b\"\u0041", "priority": -1 , "x":"\n"} "#).unwrap();
        assert_eq!(
            got,
            vec![
                ("name".to_owned(), Scalar::Str("A \"b\"A".to_owned())),
                ("priority".to_owned(), Scalar::Int(-1)),
                ("x".to_owned(), Scalar::Str("\n".to_owned())),
            ]
        );
        assert_eq!(flat_object("{}").unwrap(), vec![]);
        for bad in [
            "",
            "{",
            r#"{"a"}"#,
            r#"{"a":true}"#,
            r#"{"a":1}x"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a":"\q"}"#,
        ] {
            assert!(flat_object(bad).is_err(), "{bad:?}");
        }
    }
}
