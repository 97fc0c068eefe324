//! Decoded views of a text, for the redactor to search: each view undoes one layer of the
//! escapes a text from outside may wrap a secret in (JSON `\uXXXX` and `\/`, a backslash before
//! any ASCII punctuation as JSON and Markdown write it, `%XX`, and HTML/XML character references),
//! in any mix, and remembers for each of its bytes the span of the text it came from, so that a
//! secret found in a view is redacted in the text as it was.

use std::ops::Range;

/// How many layers are undone at most (a JSON body quoting an HTML page quoting a URL).
const MAX_LAYERS: usize = 3;

/// A decoded view: its bytes and, for each, the span of the original text it stands for.
pub(super) struct View {
    pub(super) bytes: Vec<u8>,
    origin: Vec<Range<usize>>,
}

impl View {
    /// The span of the original text that view bytes `range` stand for.
    pub(super) fn source(&self, range: Range<usize>) -> Range<usize> {
        self.origin[range.start].start..self.origin[range.end - 1].end
    }
}

/// The decoded views of `text`, one per layer undone, while a layer changes anything.
pub(super) fn decoded_views(text: &str) -> Vec<View> {
    let mut views: Vec<View> = Vec::new();
    for _ in 0..MAX_LAYERS {
        let source = views.last().map_or(text.as_bytes(), |view| &view.bytes);
        if !source.iter().any(|b| matches!(b, b'\\' | b'%' | b'&')) {
            break;
        }
        let Some(mut next) = decode_layer(source) else {
            break;
        };
        if let Some(previous) = views.last() {
            for span in &mut next.origin {
                *span = previous.source(span.clone());
            }
        }
        views.push(next);
    }
    views
}

/// `text` with its `%XX` escapes decoded (invalid UTF-8 replaced).
pub(super) fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        match percent_escape(&bytes[at..]) {
            Some((decoded, used)) => {
                out.extend_from_slice(decoded.as_slice());
                at += used;
            }
            None => {
                out.push(bytes[at]);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `bytes` with one layer of escapes undone; None when it holds none.
fn decode_layer(bytes: &[u8]) -> Option<View> {
    let mut view = View {
        bytes: Vec::with_capacity(bytes.len()),
        origin: Vec::with_capacity(bytes.len()),
    };
    let mut changed = false;
    let mut at = 0;
    while at < bytes.len() {
        let decoded = match bytes[at] {
            b'\\' => backslash_escape(&bytes[at..]),
            b'%' => percent_escape(&bytes[at..]),
            b'&' => character_reference(&bytes[at..]),
            _ => None,
        };
        match decoded {
            Some((char_bytes, used)) => {
                for byte in char_bytes.as_slice() {
                    view.bytes.push(*byte);
                    view.origin.push(at..at + used);
                }
                at += used;
                changed = true;
            }
            None => {
                view.bytes.push(bytes[at]);
                view.origin.push(at..at + 1);
                at += 1;
            }
        }
    }
    changed.then_some(view)
}

/// The bytes one escape stands for (at most four, a UTF-8 character or a single byte).
struct Decoded {
    bytes: [u8; 4],
    len: usize,
}

impl Decoded {
    fn char(c: char) -> Self {
        let mut bytes = [0; 4];
        let len = c.encode_utf8(&mut bytes).len();
        Decoded { bytes, len }
    }

    fn byte(byte: u8) -> Self {
        Decoded {
            bytes: [byte, 0, 0, 0],
            len: 1,
        }
    }

    fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// `\uXXXX` (a surrogate pair as `\uD83D\uDE00`) or a backslash before ASCII punctuation.
fn backslash_escape(bytes: &[u8]) -> Option<(Decoded, usize)> {
    match bytes.get(1)? {
        b'u' => {
            let unit = hex_number(bytes.get(2..6)?)?;
            if (0xD800..0xDC00).contains(&unit) {
                let low = bytes
                    .get(6..8)
                    .filter(|escape| escape == b"\\u")
                    .and_then(|_| hex_number(bytes.get(8..12)?))
                    .filter(|low| (0xDC00..0xE000).contains(low))?;
                let c = char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))?;
                return Some((Decoded::char(c), 12));
            }
            Some((Decoded::char(char::from_u32(unit)?), 6))
        }
        punctuation if punctuation.is_ascii_punctuation() => Some((Decoded::byte(*punctuation), 2)),
        _ => None,
    }
}

/// `%XX`.
fn percent_escape(bytes: &[u8]) -> Option<(Decoded, usize)> {
    if bytes.first() != Some(&b'%') {
        return None;
    }
    let byte = hex_number(bytes.get(1..3)?)?;
    Some((Decoded::byte(u8::try_from(byte).ok()?), 3))
}

/// `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;`, `&#39;`, `&#x27;` and every other numeric
/// reference.
fn character_reference(bytes: &[u8]) -> Option<(Decoded, usize)> {
    let end = bytes.iter().take(12).position(|&b| b == b';')?;
    let name = &bytes[1..end];
    let c = match name {
        b"amp" => '&',
        b"lt" => '<',
        b"gt" => '>',
        b"quot" => '"',
        b"apos" => '\'',
        [b'#', b'x' | b'X', hex @ ..] => char::from_u32(hex_number(hex)?)?,
        [b'#', decimal @ ..] => {
            let text = std::str::from_utf8(decimal).ok()?;
            char::from_u32(text.parse().ok()?)?
        }
        _ => return None,
    };
    Some((Decoded::char(c), end + 1))
}

/// The value of 1 to 6 hex digits.
fn hex_number(digits: &[u8]) -> Option<u32> {
    if digits.is_empty() || digits.len() > 6 {
        return None;
    }
    let text = std::str::from_utf8(digits).ok()?;
    u32::from_str_radix(text, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last_view(text: &str) -> String {
        let views = decoded_views(text);
        String::from_utf8_lossy(&views.last().expect("a view").bytes).into_owned()
    }

    #[test]
    fn each_kind_of_escape_is_undone() {
        assert_eq!(last_view(r#"sk\/a\u002db\"c\-d"#), "sk/a-b\"c-d");
        assert_eq!(last_view("a%2Fb%3d"), "a/b=");
        assert_eq!(last_view("a&amp;b&#39;c&#x27;d&quot;e"), "a&b'c'd\"e");
        assert_eq!(last_view(r"\ud83d\ude00!"), "\u{1f600}!");
    }

    #[test]
    fn layers_are_undone_in_turn_and_map_back_to_the_text() {
        // A JSON-escaped HTML reference to a percent-encoded byte.
        let text = r"x \u0026#37;41 y";
        let views = decoded_views(text);
        assert_eq!(views.len(), 3);
        let last = views.last().unwrap();
        assert_eq!(String::from_utf8_lossy(&last.bytes), "x A y");
        let at = last.bytes.iter().position(|&b| b == b'A').unwrap();
        assert_eq!(&text[last.source(at..at + 1)], r"\u0026#37;41");
    }

    #[test]
    fn text_without_escapes_has_no_view() {
        assert!(decoded_views("plain text, 100 % sure & fine \\ ok").is_empty());
    }
}
