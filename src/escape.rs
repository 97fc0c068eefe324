//! Characters that act on a terminal or a log, made visible: the lowest layer of what ragate
//! shows of untrusted text (DESIGN 8b), which `term` and the reports (`report::inert`) build on.
//! - [`visible`]: control characters (C0 but tab and line feed, DEL, C1), bidi embeddings,
//!   overrides, isolates and marks, and the Unicode line and paragraph separators written as
//!   Rust escapes (`\u{1b}`);
//! - [`terminal`]: what ragate writes to stdout and stderr, where no line starts a GitHub
//!   workflow command (`::add-mask::`, `::stop-commands::`, or the legacy `##[`) that ragate
//!   did not print itself (its annotations do not pass through it).

use std::borrow::Cow;

/// Whether `c` is written as an escape: it could move the cursor, set a terminal's title, ring
/// its bell, end a C string, break an XML document or reorder the text around it.
pub(crate) fn is_hazard(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every hazard written as `\u{1b}` (hex, as Rust writes it); a CR before a line feed
/// is dropped, so CRLF text keeps its lines. Tab and line feed stay.
pub(crate) fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hazard) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        if is_hazard(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The length of the colour code (`ESC [ 1 ; 31 m`) that `text` starts with, or 0.
fn colour_code(text: &str) -> usize {
    let Some(rest) = text.strip_prefix("\u{1b}[") else {
        return 0;
    };
    let params = rest
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    if rest.as_bytes().get(params) == Some(&b'm') {
        2 + params + 1
    } else {
        0
    }
}

/// Whether the runner would read `line` as a workflow command: after what it trims (Unicode
/// whitespace; also invisible format characters and colour codes here, to be safe) it starts
/// with `::`.
fn starts_command(line: &str) -> bool {
    let mut rest = line;
    loop {
        let skip = colour_code(rest);
        if skip > 0 {
            rest = &rest[skip..];
            continue;
        }
        match rest.chars().next() {
            Some(c) if c.is_whitespace() || matches!(c, '\u{200b}' | '\u{2060}' | '\u{feff}') => {
                rest = &rest[c.len_utf8()..];
            }
            _ => return rest.starts_with("::"),
        }
    }
}

/// Text for stdout or stderr (one call in each of `term`'s writers): hazards shown escaped (the
/// colour codes ragate paints kept when `colour`), a `\` before the `::` of a line that would
/// start a workflow command, and `##[` written `#\#[` (the runner reads that form anywhere in a
/// line).
pub(crate) fn terminal(text: &str, colour: bool) -> Cow<'_, str> {
    let clean = !text.chars().any(is_hazard)
        && !text.contains("##[")
        && !text.split('\n').any(starts_command);
    if clean {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let code = if colour { colour_code(rest) } else { 0 };
        if code > 0 {
            shown.push_str(&rest[..code]);
            rest = &rest[code..];
            continue;
        }
        // A CR before a line feed is dropped (CRLF text keeps its lines).
        let crlf = c == '\r' && rest[1..].starts_with('\n');
        if is_hazard(c) && !crlf {
            shown.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else if !crlf {
            shown.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    let lines: Vec<String> = shown
        .split('\n')
        .map(|line| {
            let line = line.replace("##[", "#\\#[");
            if starts_command(&line) {
                let at = line.find("::").unwrap_or(0);
                format!("{}\\{}", &line[..at], &line[at..])
            } else {
                line
            }
        })
        .collect();
    Cow::Owned(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hazards_are_escaped_and_ordinary_text_is_borrowed() {
        assert_eq!(
            visible("a\u{1b}[2Jb\u{7}\u{0}\u{202e}\u{9b}\r\nc\rd\te"),
            "a\\u{1b}[2Jb\\u{7}\\u{0}\\u{202e}\\u{9b}\nc\\u{d}d\te"
        );
        assert!(matches!(visible("plain ✅ text\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn no_line_for_the_terminal_starts_a_workflow_command() {
        let text = "error: the service answered 500:\n::add-mask::ragate\n  ::stop-commands::x\r\n\
                    \u{a0}\u{200b}::warning title=pwned::y\nok ##[error]legacy\n";
        let shown = terminal(text, false);
        assert_eq!(
            shown,
            "error: the service answered 500:\n\\::add-mask::ragate\n  \\::stop-commands::x\n\
             \u{a0}\u{200b}\\::warning title=pwned::y\nok #\\#[error]legacy\n"
        );
        assert!(!shown.lines().any(starts_command), "{shown}");
        // Colour codes stay when the stream shows colour, other escapes never do.
        let painted = "\u{1b}[1m\u{1b}[31merror:\u{1b}[0m title \u{1b}]0;pwned\u{7}\n\u{1b}[0m::x";
        assert_eq!(
            terminal(painted, true),
            "\u{1b}[1m\u{1b}[31merror:\u{1b}[0m title \\u{1b}]0;pwned\\u{7}\n\u{1b}[0m\\::x"
        );
        assert_eq!(
            terminal("\u{1b}[31mred\u{1b}[0m", false),
            "\\u{1b}[31mred\\u{1b}[0m"
        );
        assert!(matches!(terminal("plain: a::b\n", false), Cow::Borrowed(_)));
    }
}
