//! Untrusted text made inert for Markdown (DESIGN 8b): the one Markdown encoder of the output
//! pipeline. Answers, claims, contexts, queries, qids, slice values and endpoint replies are
//! attacker-controlled; ragate shows them, never lets them act. Every function here first redacts
//! the raw text ([`crate::secrets::redact`]: a secret's Markdown-escaped form is not a fixed
//! string, so it could not be found afterwards) and then encodes it once:
//! - control characters, bidi controls and line separators are written as Rust escapes
//!   (`\u{1b}`) everywhere, by [`crate::escape::visible`] (the terminal's own escaping,
//!   [`crate::escape::terminal`], is there too: the lowest layer needs it);
//! - [`text`] and [`cell`]: prose for Markdown (GitHub's flavour), where nothing forms an image, a
//!   link, an autolink, HTML, emphasis, math, an emoji shortcode, a mention (`@user`,
//!   `@org/team`) or an issue or commit reference (`#12`, `GH-12`, `owner/repo#12`, a SHA):
//!   the punctuation that would act is backslash-escaped (or written as an entity), and GitHub's
//!   own patterns, which escapes do not stop, are broken by a word joiner (U+2060, invisible)
//!   after their trigger. Autolink references a repository defines itself (`TICKET-12`) are
//!   not known here: only code spans are sure to stop them;
//! - [`code`] and [`code_cell`]: an identifier as a code span, whose backtick fence is longer
//!   than any run inside;
//! - [`block`]: a fenced code block whose fence is longer than any run inside.

use crate::escape::visible;
use crate::report::format::one_line;
use crate::secrets::redact;

/// The invisible character that breaks a pattern GitHub links (U+2060 WORD JOINER).
const JOINER: char = '\u{2060}';

/// `text` redacted, on one line, cut to `max_chars`, hazards escaped, trimmed: [`one_line`]
/// redacts the raw text before it cuts, and nothing is escaped before that.
fn line(text: &str, max_chars: usize) -> String {
    visible(&one_line(text, max_chars)).trim().to_string()
}

fn is_word(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// Whether the text from `rest` on starts a GitHub emoji shortcode after a `:` (`smile:`, `+1:`).
fn starts_shortcode(rest: &[char]) -> bool {
    let name = rest
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '-'))
        .count();
    name > 0 && rest.get(name) == Some(&':')
}

/// Whether the word from `rest` on (up to a space) holds a dot, as an email's domain does.
fn mail_domain(rest: &[char]) -> bool {
    rest.iter()
        .take_while(|c| !c.is_whitespace())
        .any(|&c| c == '.')
}

/// The length of the run of ASCII hex digits at the start of `rest`.
fn hex_run(rest: &[char]) -> usize {
    rest.iter().take_while(|c| c.is_ascii_hexdigit()).count()
}

/// Prose for Markdown, on one line, cut to `max_chars` characters, inert (see the module doc).
pub(crate) fn text(text: &str, max_chars: usize) -> String {
    let chars: Vec<char> = line(text, max_chars).chars().collect();
    let mut out = String::with_capacity(chars.len() + 16);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let before = i.checked_sub(1).map(|j| chars[j]);
        let after = chars.get(i + 1).copied();
        let rest = &chars[i + 1..];
        match c {
            '\\' | '*' | '~' | '$' => {
                out.push('\\');
                out.push(c);
            }
            // A link or an image needs a `](` (there are no reference definitions: see
            // `escape_block_start`); the caller never writes a `(` right after the text.
            ']' if after == Some('(') => out.push_str("\\]"),
            // Intraword `_` (answer_length) cannot emphasise; elsewhere it can.
            '_' if !(is_word(before) && is_word(after)) => out.push_str("\\_"),
            '<' => out.push_str("&lt;"),
            '&' => out.push_str("&amp;"),
            // Mentions and team mentions (`@` after no word), emails (a domain with a dot) and
            // `owner@sha` (`recall@5` stays).
            '@' if after.is_some_and(|a| a.is_alphanumeric())
                && (!is_word(before) || mail_domain(rest) || hex_run(rest) >= 7) =>
            {
                out.push(c);
                out.push(JOINER);
            }
            // Issue references, `owner/repo#12`.
            '#' if after.is_some_and(|a| a.is_ascii_alphanumeric()) => {
                out.push(c);
                out.push(JOINER);
            }
            // `GH-12`.
            '-' if i >= 2
                && chars[i - 2..i]
                    .iter()
                    .collect::<String>()
                    .eq_ignore_ascii_case("gh")
                && !is_word(i.checked_sub(3).map(|j| chars[j]))
                && after.is_some_and(|a| a.is_ascii_digit()) =>
            {
                out.push(c);
                out.push(JOINER);
            }
            // `https://`, `mailto:`-less schemes, and emoji shortcodes (`:smile:`).
            ':' if rest.starts_with(&['/', '/']) || starts_shortcode(rest) => {
                out.push(c);
                out.push(JOINER);
            }
            // `www.example.com`.
            'w' | 'W'
                if !is_word(before)
                    && rest.len() >= 3
                    && rest[..2].iter().all(|r| r.eq_ignore_ascii_case(&'w'))
                    && rest[2] == '.' =>
            {
                out.push_str(&chars[i..i + 3].iter().collect::<String>());
                out.push(JOINER);
                i += 3;
                continue;
            }
            // A commit SHA (7 to 40 hex digits, one of them a digit) as a word of its own: in
            // pieces of at most 6.
            c if c.is_ascii_hexdigit() && !is_word(before) => {
                let run = 1 + hex_run(rest);
                let word = &chars[i..i + run];
                if (7..=40).contains(&run)
                    && !is_word(chars.get(i + run).copied())
                    && word.iter().any(char::is_ascii_digit)
                {
                    for (n, piece) in word.chunks(6).enumerate() {
                        if n > 0 {
                            out.push(JOINER);
                        }
                        out.extend(piece);
                    }
                } else {
                    out.extend(word);
                }
                i += run;
                continue;
            }
            c => out.push(c),
        }
        i += 1;
    }
    escape_block_start(out)
}

/// `text` that may start a block (a list item's content, a paragraph): a leading `#`, `-`, `+`,
/// `=`, `>` or `[`, or `1.`, escaped so it starts no heading, list, rule, quote, task box or
/// reference definition (a table needs two lines).
fn escape_block_start(text: String) -> String {
    let first = text.chars().next();
    if matches!(first, Some('#' | '-' | '+' | '=' | '>' | '[')) {
        return format!("\\{text}");
    }
    let digits = text.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && matches!(text[digits..].chars().next(), Some('.' | ')')) {
        return format!("{}\\{}", &text[..digits], &text[digits..]);
    }
    text
}

/// Prose for a table cell: [`text`], with `|` escaped so the cell cannot split.
pub(crate) fn cell(text_: &str, max_chars: usize) -> String {
    text(text_, max_chars).replace('|', "\\|")
}

/// The longest run of backticks in `text`.
fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// An identifier (a qid, a doc id) as a code span, on one line and cut: nothing in a code span
/// is Markdown, and GitHub links no mention or reference in one. Empty text is an empty span.
pub(crate) fn code(text: &str, max_chars: usize) -> String {
    let content = line(text, max_chars);
    let fence = "`".repeat(longest_backtick_run(&content) + 1);
    // A space each side keeps a backtick at either end off the fence (CommonMark strips one
    // space from each side of a span that has one on both).
    let pad = if content.is_empty() || content.starts_with('`') || content.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{content}{pad}{fence}")
}

/// [`code`] for a table cell: GitHub splits the row at a `|` even inside a code span, unless it
/// is escaped (the table removes the escape before the span is read). A `\` before a `|` is
/// shown as `∖` (U+2216): renderers disagree on whether `\\|` is a backslash and a pipe.
pub(crate) fn code_cell(text: &str, max_chars: usize) -> String {
    code(&redact(text).replace("\\|", "\u{2216}|"), max_chars).replace('|', "\\|")
}

/// `text` as a fenced code block with the info string `info` (`text`, `diff`): the fence is
/// longer than any backtick run inside, so the text cannot close it; hazards escaped.
pub(crate) fn block(info: &str, text: &str) -> String {
    let raw = redact(text);
    let content = visible(&raw);
    let fence = "`".repeat((longest_backtick_run(&content) + 1).max(3));
    let newline = if content.ends_with('\n') { "" } else { "\n" };
    format!("{fence}{info}\n{content}{newline}{fence}\n")
}

#[cfg(test)]
#[path = "inert_tests.rs"]
mod tests;
