//! The forms a secret takes on its way out of ragate, and the pieces of them that still give it
//! away: the value as it is, its base64 and base64url encodings at each of the three alignments
//! it can have inside a longer encoded string, and every run of [`PIECE_LEN`] characters of any
//! of those. Escaped forms (JSON, HTML, Markdown, percent) are not listed here: the redactor
//! decodes the text instead (`super::views`), which catches every mix of escapes.

use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};

/// A run of this many consecutive characters of a registered value, in any of its forms, is
/// redacted (a shorter value is redacted whole).
pub(crate) const PIECE_LEN: usize = 12;

/// The whole forms of `value`: itself, and the base64 and base64url characters that depend on
/// its bytes alone when it starts at byte offset 0, 1 or 2 (mod 3) of the encoded input.
pub(super) fn whole_forms(value: &str) -> Vec<String> {
    let mut forms = vec![value.to_string()];
    for alignment in 0..3 {
        for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
            let core = aligned_core(value.as_bytes(), alignment, engine);
            if !core.is_empty() {
                forms.push(core);
            }
            forms.push(aligned_ending(value.as_bytes(), alignment, engine));
        }
    }
    forms.sort();
    forms.dedup();
    forms
}

/// The base64 characters of `bytes` preceded by `alignment` other bytes (0 to 2) and followed
/// by others: the characters that mix in a neighbouring byte are left out.
fn aligned_core(bytes: &[u8], alignment: usize, engine: &impl base64::Engine) -> String {
    let mut padded = vec![0u8; alignment];
    padded.extend_from_slice(bytes);
    let encoded = engine.encode(&padded);
    // Byte b of a group of three sits in characters b and b + 1: the first byte of the value
    // at alignment a shares character a with the byte before it (none when a = 0).
    let skip = [0, 2, 3][alignment];
    // Unless the encoded input ends on a group boundary, the last character also holds bits of
    // the byte that follows the value.
    let keep = if padded.len().is_multiple_of(3) {
        encoded.len()
    } else {
        encoded.len() - 1
    };
    encoded.get(skip..keep).unwrap_or_default().to_string()
}

/// The base64 of `bytes` preceded by `alignment` other bytes when they end the encoded input:
/// its last characters, with the `=` padding, are its own too.
fn aligned_ending(bytes: &[u8], alignment: usize, engine: &impl base64::Engine) -> String {
    let mut padded = vec![0u8; alignment];
    padded.extend_from_slice(bytes);
    let mut encoded = engine.encode(&padded);
    while !encoded.len().is_multiple_of(4) {
        encoded.push('=');
    }
    let skip = [0, 2, 3][alignment];
    encoded.get(skip..).unwrap_or_default().to_string()
}

/// What the searcher looks for to find `form` or any [`PIECE_LEN`]-character run of it: every
/// window of that many characters, or the whole form when it is shorter.
pub(super) fn pieces(form: &str) -> Vec<&str> {
    let starts: Vec<usize> = form.char_indices().map(|(at, _)| at).collect();
    if starts.len() <= PIECE_LEN {
        return vec![form];
    }
    (0..=starts.len() - PIECE_LEN)
        .map(|first| {
            let end = starts.get(first + PIECE_LEN).copied().unwrap_or(form.len());
            &form[starts[first]..end]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;

    #[test]
    fn an_aligned_core_is_found_in_the_encoding_of_any_longer_input() {
        let value = b"sk-SECRET-0123456789abcdef";
        for before in 0..7usize {
            for after in 0..4usize {
                let mut input = vec![b'x'; before];
                input.extend_from_slice(value);
                input.extend(std::iter::repeat_n(b'y', after));
                for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
                    let encoded = engine.encode(&input);
                    let core = aligned_core(value, before % 3, engine);
                    assert!(core.len() >= 30, "{core}");
                    assert!(
                        encoded.contains(&core),
                        "{before} {after}: {core} in {encoded}"
                    );
                }
            }
        }
    }

    #[test]
    fn basic_auth_of_user_and_key_holds_a_form_of_the_key() {
        // What a client sends for http://user:sk-SECRET-...@host.
        let header = STANDARD_NO_PAD.encode("user:sk-SECRET-0123456789abcdef");
        let forms = whole_forms("sk-SECRET-0123456789abcdef");
        assert!(
            forms
                .iter()
                .skip(1)
                .any(|form| header.contains(form.as_str()))
        );
    }

    #[test]
    fn pieces_are_every_window_or_the_whole_short_form() {
        assert_eq!(pieces("short-form"), ["short-form"]);
        let windows = pieces("abcdefghijklmn");
        assert_eq!(windows, ["abcdefghijkl", "bcdefghijklm", "cdefghijklmn"]);
        let wide = pieces("ééééééééééééé");
        assert_eq!(wide.len(), 2);
        assert!(wide.iter().all(|piece| piece.chars().count() == PIECE_LEN));
    }
}
