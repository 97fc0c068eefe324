//! The YAML library behind the config, and the one module that names it: everything else says
//! `settings::yaml::Value`, `yaml::from_str`, ... The tests pin what ragate relies on (error
//! locations and message shape, YAML 1.2 scalars, duplicate keys refused, scalar text), so that
//! a replacement is checked by them.
//!
//! serde_yaml 0.9 is archived upstream (no further releases). The replacement, when one is
//! needed: `serde_norway` or `serde_yaml_ng`, maintained forks with the same API (a change of
//! the `pub use` below and of Cargo.toml), over the same unsafe-libyaml parser. `saphyr` (a pure
//! Rust YAML 1.2 parser) would need a serde layer of our own; not worth it while a fork exists.

pub use serde_yaml::{Deserializer, Error, Mapping, Value, from_str, to_string};

/// The most characters of a line that [`excerpt`] shows.
const EXCERPT_CHARS: usize = 120;

/// Line `line` (1-based) of `text` and a caret under its column `column` (1-based; `None`: no
/// caret), as an error shows them after its words:
///
/// ```text
///    3 | metrics: [recall@5,
///      |          ^
/// ```
///
/// Secrets are redacted (the caret is then left out: the line's length changed), control
/// characters written as escapes (the caret stays under its character), and a long line is cut to
/// [`EXCERPT_CHARS`] characters around the column. `None` when the file has no such line.
pub fn excerpt(text: &str, line: u64, column: Option<u64>) -> Option<String> {
    let raw = text
        .split('\n')
        .nth(usize::try_from(line.checked_sub(1)?).ok()?)?;
    let raw = raw.strip_suffix('\r').unwrap_or(raw);
    let redacted = crate::secrets::redact(raw);
    let column = column.filter(|_| redacted == raw);
    let chars: Vec<char> = redacted.chars().collect();
    let at = column
        .map_or(0, |c| (c.max(1) - 1) as usize)
        .min(chars.len());
    let start = at
        .saturating_sub(EXCERPT_CHARS / 2)
        .min(chars.len().saturating_sub(EXCERPT_CHARS));
    let end = (start + EXCERPT_CHARS).min(chars.len());
    let mut shown = String::from(if start > 0 { "…" } else { "" });
    let mut pad = String::from(if start > 0 { " " } else { "" });
    for (i, c) in chars[start..end].iter().enumerate() {
        let visible = crate::escape::visible(c.encode_utf8(&mut [0; 4])).into_owned();
        if start + i < at {
            let width = visible.chars().count();
            pad.push_str(&if *c == '\t' {
                "\t".to_string()
            } else {
                " ".repeat(width)
            });
        }
        shown.push_str(&visible);
    }
    if end < chars.len() {
        shown.push('…');
    }
    let mut out = format!("{line:>4} | {shown}");
    if column.is_some() {
        out.push_str(&format!("\n{:>4} | {pad}^", ""));
    }
    Some(out)
}

/// The text of a scalar or other non-string value as YAML writes it, on one line (`1`, `true`,
/// `[a, b]` as a flow sequence is not promised: a key or an argument is expected to be a scalar).
pub fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => to_string(other).unwrap_or_default().trim().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_carry_a_one_based_location_that_a_type_error_ends_with() {
        let syntax = from_str::<Value>("version: 1\nmetrics: [recall@5,\n").unwrap_err();
        assert_eq!(syntax.location().expect("a location").line(), 3, "{syntax}");
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Version {
            version: u32,
        }
        let typed = from_str::<Version>("\nversion: one\n").unwrap_err();
        let location = typed.location().expect("a location");
        assert_eq!((location.line(), location.column()), (2, 10), "{typed}");
        // config::yaml_error takes this suffix off (it shows the position its own way).
        assert!(
            typed.to_string().ends_with(" at line 2 column 10"),
            "{typed}"
        );
    }

    #[test]
    fn a_nested_type_error_names_the_path_before_the_message() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Outer {
            gate: Inner,
        }
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Inner {
            alpha: f64,
        }
        let error = from_str::<Outer>("gate:\n  alpha: often\n").unwrap_err();
        // config::yaml_error strips this `gate.alpha: ` prefix and the location suffix.
        assert!(
            error
                .to_string()
                .starts_with("gate.alpha: invalid type: string \"often\""),
            "{error}"
        );
    }

    #[test]
    fn scalars_follow_yaml_1_2_and_duplicate_keys_are_refused() {
        let value: Value = from_str("a: yes\nb: on\nc: ~\nd: 0.10\ne: '1'\n").unwrap();
        assert_eq!(value["a"], Value::String("yes".to_string()));
        assert_eq!(value["b"], Value::String("on".to_string()));
        assert_eq!(value["c"], Value::Null);
        assert_eq!(value["d"].as_f64(), Some(0.1));
        assert_eq!(value["e"].as_str(), Some("1"));
        let duplicate = from_str::<Value>("a: 1\na: 2\n").unwrap_err();
        assert!(duplicate.to_string().contains("duplicate"), "{duplicate}");
    }

    #[test]
    fn an_excerpt_shows_the_line_with_a_caret_under_the_column() {
        let text = "version: 1\nmetrics: [recall@5,\n";
        assert_eq!(
            excerpt(text, 2, Some(10)).unwrap(),
            "   2 | metrics: [recall@5,\n     |          ^"
        );
        assert_eq!(excerpt(text, 3, Some(1)).unwrap(), "   3 | \n     | ^");
        assert_eq!(excerpt(text, 4, Some(1)), None);
        assert_eq!(excerpt(text, 0, Some(1)), None);
        assert_eq!(excerpt(text, 1, None).unwrap(), "   1 | version: 1");
        // Control characters escaped, the caret still under its character; a tab kept.
        let hostile = "a:\t\u{1b}[2Jb: [\r\n";
        assert_eq!(
            excerpt(hostile, 1, Some(6)).unwrap(),
            "   1 | a:\t\\u{1b}[2Jb: [\n     |   \t       ^"
        );
        // A long line is cut around the column.
        let long = format!("key: {}x", "y".repeat(300));
        let shown = excerpt(&long, 1, Some(306)).unwrap();
        let (line, caret) = shown.split_once('\n').unwrap();
        assert!(
            line.starts_with("   1 | …y") && line.ends_with("yx"),
            "{line}"
        );
        assert_eq!(line.chars().count() - 7, 1 + EXCERPT_CHARS, "{line}");
        assert_eq!(
            caret.chars().position(|c| c == '^'),
            line.chars().position(|c| c == 'x')
        );
    }

    #[test]
    fn scalar_text_is_the_value_as_written() {
        let value: Value = from_str("[text, 7, 0.5, true, null]").unwrap();
        let texts: Vec<String> = value
            .as_sequence()
            .unwrap()
            .iter()
            .map(scalar_text)
            .collect();
        assert_eq!(texts, ["text", "7", "0.5", "true", "null"]);
        let mapping: Mapping = from_str("{1: one}").unwrap();
        assert_eq!(mapping.keys().map(scalar_text).collect::<Vec<_>>(), ["1"]);
    }
}
