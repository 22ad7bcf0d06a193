//! The `--json` output: a small writer, since the report is a handful of
//! strings, numbers and lists.

use std::fmt::Write;

/// A JSON object written field by field.
#[derive(Debug)]
pub(crate) struct Object {
    out: String,
    /// How byte strings are written: as text, or as hex when any of them
    /// is not UTF-8 (`--bytes` input cut inside characters).
    hex: bool,
}

impl Object {
    pub(crate) fn new(hex: bool) -> Self {
        Object {
            out: String::from("{"),
            hex,
        }
    }

    fn key(&mut self, key: &str) {
        if self.out.len() > 1 {
            self.out.push(',');
        }
        string(&mut self.out, key);
        self.out.push(':');
    }

    pub(crate) fn str(&mut self, key: &str, value: &str) {
        self.key(key);
        string(&mut self.out, value);
    }

    pub(crate) fn bytes(&mut self, key: &str, value: &[u8]) {
        self.key(key);
        self.byte_string(value);
    }

    fn byte_string(&mut self, value: &[u8]) {
        match (self.hex, std::str::from_utf8(value)) {
            (false, Ok(text)) => string(&mut self.out, text),
            _ => {
                self.out.push('"');
                for b in value {
                    let _ = write!(self.out, "{b:02x}");
                }
                self.out.push('"');
            }
        }
    }

    pub(crate) fn byte_list(&mut self, key: &str, values: &[&[u8]]) {
        self.key(key);
        self.out.push('[');
        for (i, value) in values.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.byte_string(value);
        }
        self.out.push(']');
    }

    pub(crate) fn number(&mut self, key: &str, value: usize) {
        self.key(key);
        let _ = write!(self.out, "{value}");
    }

    pub(crate) fn bool(&mut self, key: &str, value: bool) {
        self.key(key);
        self.out.push_str(if value { "true" } else { "false" });
    }

    pub(crate) fn null(&mut self, key: &str) {
        self.key(key);
        self.out.push_str("null");
    }

    pub(crate) fn numbers(&mut self, key: &str, values: &[usize]) {
        self.key(key);
        self.out.push('[');
        for (i, value) in values.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            let _ = write!(self.out, "{value}");
        }
        self.out.push(']');
    }

    pub(crate) fn finish(mut self) -> String {
        self.out.push('}');
        self.out
    }
}

/// Writes `s` as a JSON string.
fn string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_strings_and_hexes_bytes_when_asked() {
        let mut o = Object::new(false);
        o.str("a", "q\"\\\n\u{1}é");
        o.numbers("n", &[1, 2]);
        o.byte_list("c", &[b"x", b"y"]);
        o.null("z");
        assert_eq!(
            o.finish(),
            r#"{"a":"q\"\\\n\u0001é","n":[1,2],"c":["x","y"],"z":null}"#
        );
        let mut o = Object::new(true);
        o.bytes("b", b"\xc3");
        o.bool("ok", false);
        assert_eq!(o.finish(), r#"{"b":"c3","ok":false}"#);
    }
}
