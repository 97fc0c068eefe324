//! JSON as ragate writes it (files and `--format json` documents): the one JSON encoder of the
//! output pipeline (DESIGN 8b). Every string, keys included, is redacted on its raw text
//! ([`crate::secrets::redact`]) and then escaped once, by this encoder:
//! - as JSON requires (`"`, `\`, C0 controls);
//! - every other character that could act on a terminal or a runner's log (DEL, C1 controls,
//!   bidi controls, U+2028/U+2029: [`crate::escape::is_hazard`]) as `\uXXXX`;
//! - the second `#` of `##[` as `\u0023`, so that a runner reading the document in a job log
//!   sees no legacy workflow command (`##[error]`), wherever the document is shown.
//!
//! The result is JSON that any parser reads back to the redacted text, and text a terminal
//! can show as it is: it never passes through the terminal's guard (`escape::terminal`).

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{CharEscape, CompactFormatter, Formatter, PrettyFormatter, Serializer};

/// `value` as pretty-printed JSON (two-space indent), with no final newline.
pub(crate) fn pretty<T: Serialize + ?Sized>(value: &T) -> String {
    encode(value, PrettyFormatter::new())
}

/// `value` as a JSON document: pretty-printed, with a final newline (as files and stdout get it).
pub(crate) fn document<T: Serialize + ?Sized>(value: &T) -> String {
    let mut text = pretty(value);
    text.push('\n');
    text
}

/// `value` as compact JSON on one line (a JSON Lines record), with no final newline.
pub(crate) fn compact<T: Serialize + ?Sized>(value: &T) -> String {
    encode(value, CompactFormatter)
}

/// Writes `value` into `out` as [`document`] renders it (pretty, final newline), as it is
/// encoded: a large document (a 20,000-query results file) is never held whole in memory.
pub(crate) fn write_document<T: Serialize + ?Sized>(
    out: &mut dyn Write,
    value: &T,
) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(1 << 16, out);
    write_with(
        &mut out,
        value,
        PrettyFormatter::new(),
        crate::secrets::any(),
    )?;
    out.write_all(b"\n")?;
    out.flush()
}

fn encode<T: Serialize + ?Sized, F: Formatter>(value: &T, formatter: F) -> String {
    encode_with(value, formatter, crate::secrets::any())
}

fn encode_with<T: Serialize + ?Sized, F: Formatter>(
    value: &T,
    formatter: F,
    redacting: bool,
) -> String {
    let mut out = Vec::with_capacity(256);
    // Writing into a Vec cannot fail.
    write_with(&mut out, value, formatter, redacting).expect("ragate's values serialise as JSON");
    String::from_utf8(out).expect("JSON text is UTF-8")
}

/// Encodes `value` into `out`; fails only when `out` does. Every value ragate writes
/// serialises (no map with non-string keys that JSON cannot hold).
fn write_with<W: Write, T: Serialize + ?Sized, F: Formatter>(
    out: W,
    value: &T,
    formatter: F,
    redacting: bool,
) -> io::Result<()> {
    let mut serializer = Serializer::with_formatter(
        out,
        Inert {
            inner: formatter,
            string: String::new(),
            in_string: false,
            redacting,
        },
    );
    value.serialize(&mut serializer).map_err(io::Error::from)
}

/// A formatter that collects each string's raw text and writes it at its end, redacted and
/// escaped; everything else goes to the wrapped formatter (`inner`: compact or pretty).
struct Inert<F> {
    inner: F,
    /// The raw text of the string being written, between `begin_string` and `end_string` (one
    /// buffer for the whole document).
    string: String,
    /// Whether a string is open.
    in_string: bool,
    /// Whether secrets are registered: then each string is collected whole and redacted before
    /// it is escaped (a secret may span serde's fragments); else its fragments are escaped as
    /// they come (no `##[` and no hazard spans two fragments: serde splits only at the
    /// characters JSON escapes).
    redacting: bool,
}

impl<F: Formatter> Inert<F> {
    /// Writes a scalar with the inner formatter, into the open string when one is (a map key
    /// that is a number or a bool is written as a string).
    fn scalar<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        write: impl FnOnce(&mut F, &mut Vec<u8>) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut bytes = Vec::new();
        write(&mut self.inner, &mut bytes)?;
        if self.in_string {
            self.string
                .push_str(std::str::from_utf8(&bytes).map_err(io::Error::other)?);
            Ok(())
        } else {
            writer.write_all(&bytes)
        }
    }
}

/// Whether `text` may be written inside a JSON string as it is: no byte JSON escapes, no `#`
/// (of a `##[`), and no hazard ([`crate::escape::is_hazard`]: DEL, U+0080-U+009F (`C2 80`-`C2
/// 9F` in UTF-8), U+061C (`D8 9C`), and the marks, separators, embeddings and isolates within
/// U+2000-U+207F (`E2 80`, `E2 81`)).
fn verbatim(text: &str) -> bool {
    let bytes = text.as_bytes();
    !bytes.iter().enumerate().any(|(i, &b)| {
        let next = bytes.get(i + 1).copied().unwrap_or(0);
        b < 0x20
            || matches!(b, b'"' | b'\\' | b'#' | 0x7f)
            || (b == 0xc2 && next < 0xa0)
            || (b == 0xd8 && next == 0x9c)
            || (b == 0xe2 && matches!(next, 0x80 | 0x81))
    })
}

/// `raw` redacted, then written escaped as a JSON string's content (see the module doc).
fn write_escaped<W: ?Sized + Write>(writer: &mut W, raw: &str) -> io::Result<()> {
    let text = crate::secrets::redact(raw);
    if verbatim(&text) {
        return writer.write_all(text.as_bytes());
    }
    writer.write_all(escaped(&text).as_bytes())
}

/// `text` (already redacted) escaped as a JSON string's content.
fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    let mut hashes = 0;
    while let Some(c) = chars.next() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            // `##[`: the `#` before the bracket is written as an escape.
            '#' if hashes >= 1 && chars.peek() == Some(&'[') => out.push_str("\\u0023"),
            c if (c as u32) < 0x20 || crate::escape::is_hazard(c) => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
        hashes = if c == '#' { hashes + 1 } else { 0 };
    }
    out
}

impl<F: Formatter> Formatter for Inert<F> {
    fn begin_string<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        if !self.redacting {
            return writer.write_all(b"\"");
        }
        self.string.clear();
        self.in_string = true;
        Ok(())
    }

    fn end_string<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        if !self.redacting {
            return writer.write_all(b"\"");
        }
        self.in_string = false;
        writer.write_all(b"\"")?;
        write_escaped(writer, &self.string)?;
        writer.write_all(b"\"")
    }

    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        if self.in_string {
            self.string.push_str(fragment);
            Ok(())
        } else {
            // Nothing to redact: the fragment escaped as it comes (outside a string, which
            // serde never writes, as it is).
            write_escaped(writer, fragment)
        }
    }

    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        char_escape: CharEscape,
    ) -> io::Result<()> {
        let c = match char_escape {
            CharEscape::Quote => '"',
            CharEscape::ReverseSolidus => '\\',
            CharEscape::Solidus => '/',
            CharEscape::Backspace => '\u{8}',
            CharEscape::FormFeed => '\u{c}',
            CharEscape::LineFeed => '\n',
            CharEscape::CarriageReturn => '\r',
            CharEscape::Tab => '\t',
            CharEscape::AsciiControl(byte) => char::from(byte),
        };
        if self.in_string {
            self.string.push(c);
            Ok(())
        } else {
            write_escaped(writer, c.encode_utf8(&mut [0; 4]))
        }
    }

    fn write_null<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.scalar(writer, |f, w| f.write_null(w))
    }

    fn write_bool<W: ?Sized + Write>(&mut self, writer: &mut W, value: bool) -> io::Result<()> {
        self.scalar(writer, |f, w| f.write_bool(w, value))
    }

    fn write_i8<W: ?Sized + Write>(&mut self, writer: &mut W, value: i8) -> io::Result<()> {
        self.scalar(writer, |f, w| f.write_i8(w, value))
    }

    fn write_i16<W: ?Sized + Write>(&mut self, writer: &mut W, value: i16) -> io::Result<()> {
        self.scalar(writer, |f, w| f.write_i16(w, value))
    }

    fn write_i32<W: ?Sized + Write>(&mut self, writer: &mut W, value: i32) -> io::Result<()> {
        self.scalar(writer, |f, w| f.write_i32(w, value))
    }

    fn write_u8<W: ?Sized + Write>(&mut self, writer: &mut W, value: u8) -> io::Result<()> {
        self.scalar(writer, |f, w| f.write_u8(w, value))
    }

    fn write_u16<W: ?Sized + Write>(&mut self, writer: &mut W, value: u16) -> io::Result<()> {
        self.scalar(writer, |f, w| f.write_u16(w, value))
    }

    fn write_u32<W: ?Sized + Write>(&mut self, writer: &mut W, value: u32) -> io::Result<()> {
        self.scalar(writer, |f, w| f.write_u32(w, value))
    }

    fn write_f32<W: ?Sized + Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        self.scalar(writer, |f, w| f.write_f32(w, value))
    }

    fn write_i64<W: ?Sized + Write>(&mut self, writer: &mut W, value: i64) -> io::Result<()> {
        self.scalar(writer, |f, w| f.write_i64(w, value))
    }

    fn write_i128<W: ?Sized + Write>(&mut self, writer: &mut W, value: i128) -> io::Result<()> {
        self.scalar(writer, |f, w| f.write_i128(w, value))
    }

    fn write_u64<W: ?Sized + Write>(&mut self, writer: &mut W, value: u64) -> io::Result<()> {
        self.scalar(writer, |f, w| f.write_u64(w, value))
    }

    fn write_u128<W: ?Sized + Write>(&mut self, writer: &mut W, value: u128) -> io::Result<()> {
        self.scalar(writer, |f, w| f.write_u128(w, value))
    }

    fn write_f64<W: ?Sized + Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        self.scalar(writer, |f, w| f.write_f64(w, value))
    }

    fn write_number_str<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        value: &str,
    ) -> io::Result<()> {
        self.scalar(writer, |f, w| f.write_number_str(w, value))
    }

    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.inner.begin_array(writer)
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.inner.end_array(writer)
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.inner.begin_array_value(writer, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.inner.end_array_value(writer)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.inner.begin_object(writer)
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.inner.end_object(writer)
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.inner.begin_object_key(writer, first)
    }

    fn end_object_key<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.inner.end_object_key(writer)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.inner.begin_object_value(writer)
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.inner.end_object_value(writer)
    }

    fn write_raw_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        self.inner.write_raw_fragment(writer, fragment)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::{Value, json};

    use super::*;

    #[test]
    fn the_same_document_as_serde_json_for_ordinary_values() {
        let value = json!({
            "a": [1, -2, 3.25, true, null, "text with \"quotes\", a \\ and\nlines\t"],
            "b": {"nested": [], "empty": {}, "u": 18446744073709551615u64},
            "unicode": "é ✅ 𝄞",
        });
        assert_eq!(
            pretty(&value),
            serde_json::to_string_pretty(&value).unwrap()
        );
        assert_eq!(compact(&value), serde_json::to_string(&value).unwrap());
        let keyed: BTreeMap<u32, bool> = [(3, true), (10, false)].into_iter().collect();
        assert_eq!(compact(&keyed), r#"{"3":true,"10":false}"#);
    }

    #[test]
    fn hazards_and_runner_commands_are_escaped_and_the_text_reads_back() {
        let raw = "a\u{1b}[2J\u{7f}\u{9b}\u{202e}\u{2028}b ##[error]x ###[ #[ok] \\##[ \u{1}";
        let text = compact(&json!({ raw: raw }));
        assert_eq!(
            text,
            "{\"a\\u001b[2J\\u007f\\u009b\\u202e\\u2028b #\\u0023[error]x ##\\u0023[ #[ok] \
             \\\\#\\u0023[ \\u0001\":\"a\\u001b[2J\\u007f\\u009b\\u202e\\u2028b #\\u0023[error]x \
             ##\\u0023[ #[ok] \\\\#\\u0023[ \\u0001\"}"
        );
        assert!(!text.contains("##["), "{text}");
        assert!(!text.chars().any(crate::escape::is_hazard), "{text}");
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back[raw], raw);
    }

    #[test]
    fn strings_escaped_as_they_come_equal_strings_collected_whole() {
        let hazards = "a\u{1b}[2J\u{7f}\u{9b}\u{202e}\u{2028}b ##[error]x \"q\" \\##[ \u{1} é ✅";
        let value = json!({ hazards: [hazards, "plain", "#", "##", "[##["], "n": {"1": 2} });
        let keyed: BTreeMap<u32, &str> = [(3, hazards)].into_iter().collect();
        for (streamed, whole) in [
            (
                encode_with(&value, PrettyFormatter::new(), false),
                encode_with(&value, PrettyFormatter::new(), true),
            ),
            (
                encode_with(&keyed, CompactFormatter, false),
                encode_with(&keyed, CompactFormatter, true),
            ),
        ] {
            assert_eq!(streamed, whole);
            assert!(!streamed.contains("##["), "{streamed}");
            let _: Value = serde_json::from_str(&streamed).unwrap();
        }
    }

    #[test]
    fn text_is_written_verbatim_only_where_escaping_would_not_change_it() {
        // Every character of the BMP: one that escaping changes is never written verbatim.
        for code in 0..=0xffff_u32 {
            let Some(c) = char::from_u32(code) else {
                continue;
            };
            let text = format!("a{c}#[b");
            if verbatim(&text) {
                assert_eq!(escaped(&text), text, "U+{code:04X}");
            }
            if crate::escape::is_hazard(c) || (c as u32) < 0x20 || c == '"' || c == '\\' {
                assert!(!verbatim(&text), "U+{code:04X}");
            }
        }
        assert!(!verbatim("##[error]"));
        assert!(verbatim("plain text, é ✅ → ≥"));
    }

    #[test]
    fn secrets_are_redacted_on_the_raw_text_of_values_and_keys() {
        // Unique to this test: the registry is process-wide. The JSON-escaped form of this
        // value differs from its raw form, and a newline before it would leave `\n` in front.
        let secret = "sk-json-unit_\"7f3a9b12cd\"-x";
        crate::secrets::register(secret);
        let value = json!({
            format!("key {secret}"): format!("line\n{secret}\tend"),
            "list": [secret, format!("\\{secret}")],
        });
        let text = pretty(&value);
        assert!(!text.contains("7f3a9b12cd"), "{text}");
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["key [redacted]"], "line\n[redacted]\tend");
        assert_eq!(back["list"], json!(["[redacted]", "\\[redacted]"]));
    }
}
