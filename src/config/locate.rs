//! The line and column of a config value from its key path (`gate.rules[0].metric`), so that
//! a value that parses but is not valid (an unknown metric, judge or slice field) is reported at
//! `eval-config.yaml:LINE:COLUMN`, as serde reports unknown keys. The YAML is read again by
//! serde_yaml with a visitor that stops at that value: the position is the one serde_yaml gives
//! its own errors.

use std::cell::Cell;
use std::fmt;
use std::path::Path;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::error::{Error, Location};
use crate::settings::yaml;

/// What the visitor raises at the value it looks for, to stop there (never shown: it becomes a
/// position). Whether it was raised is told by [`Walk::found`], not by the error's text.
const FOUND: &str = "ragate: the located value";

/// One step of a key path: a map key or a list index.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

/// `gate.rules[0].metric` as steps; `None` for a path this syntax cannot express.
fn steps(key: &str) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    for part in key.split('.') {
        let (name, mut indices) = match part.find('[') {
            Some(at) => (&part[..at], &part[at..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            steps.push(Step::Key(name.to_string()));
        }
        while let Some(rest) = indices.strip_prefix('[') {
            let (index, after) = rest.split_once(']')?;
            steps.push(Step::Index(index.parse().ok()?));
            indices = after;
        }
        if !indices.is_empty() || (name.is_empty() && part.is_empty()) {
            return None;
        }
    }
    (!steps.is_empty()).then_some(steps)
}

/// The 1-based (line, column) of the value at `key` in the YAML `text`, when it is there.
pub(crate) fn position(text: &str, key: &str) -> Option<(u64, u64)> {
    let steps = steps(key)?;
    let found = Cell::new(false);
    let error = Walk {
        steps: &steps,
        found: &found,
    }
    .deserialize(yaml::Deserializer::from_str(text))
    .err()?;
    // Any other error (the YAML is not valid before the value) has no position for it.
    if !found.get() {
        return None;
    }
    let location = error.location()?;
    Some((location.line() as u64, location.column() as u64))
}

/// `error` with the line and column of its key in `text` when it is a config error found there
/// (and has none yet); any other error unchanged.
pub(crate) fn locate(error: Error, text: &str) -> Error {
    match error {
        Error::Config {
            path,
            key,
            message,
            line_column: None,
        } => Error::Config {
            line_column: position(text, &key),
            path,
            key,
            message,
        },
        other => other,
    }
}

/// Line `line` of the config, as written, with a caret under `column` ([`yaml::excerpt`]): the
/// line in `written` (the file as written, which names a `${VAR}`, never its value); a column
/// found in `expanded` (after `${VAR}` expansion) gets its caret only where expansion left the
/// line unchanged before it. `None` for a line that holds a key whose name looks secret
/// (`api_key_env: sk-...`, pasted where a variable's name belongs, is refused without showing it).
pub(crate) fn excerpt(written: &str, expanded: &str, line: u64, column: u64) -> Option<String> {
    let line_of = |text: &str| -> Option<String> {
        text.split('\n')
            .nth(usize::try_from(line.checked_sub(1)?).ok()?)
            .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
    };
    let shown = line_of(written)?;
    let secret_key = shown
        .split(['{', '[', ','])
        .filter_map(|part| part.split_once(':').map(|(key, _)| key))
        .map(|key| {
            key.trim()
                .trim_start_matches('-')
                .trim()
                .trim_matches(['"', '\''])
        })
        .any(crate::secrets::name_looks_secret);
    if secret_key {
        return None;
    }
    let before =
        |text: &str| line_of(text).map(|l| l.chars().take(column as usize).collect::<String>());
    let same = before(written) == before(expanded);
    yaml::excerpt(written, line, same.then_some(column))
}

/// The line and column of a YAML reader error (a control character, invalid UTF-8), whose mark
/// is the start of the file and whose words end `at position BYTE`: the byte offset in `text`.
fn reader_position(message: &str, text: &str) -> Option<(u64, u64)> {
    let digits = message.split(" at position ").nth(1)?;
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    let offset: usize = digits[..end].parse().ok()?;
    let before = text.get(..offset)?;
    let line = before.matches('\n').count() as u64 + 1;
    let start = before.rfind('\n').map_or(0, |at| at + 1);
    Some((line, before[start..].chars().count() as u64 + 1))
}

/// `error` with the config's line that it points at and a caret under its column after the
/// parser's words ([`excerpt`]), when it is a YAML error (syntax or type) with a line and column;
/// any other error unchanged (ragate's own checks of a value name its key and line, and may
/// leave the value out on purpose).
pub(crate) fn with_excerpt(error: Error, written: &str, expanded: &str) -> Error {
    match error {
        Error::Parse {
            mut location,
            mut message,
        } if location.column.is_some() => {
            if (location.line, location.column) == (1, Some(1))
                && let Some((line, column)) = reader_position(&message, expanded)
            {
                location = Location::new(&location.path, line).with_column(column);
            }
            let column = location.column.unwrap_or(1);
            if let Some(shown) = excerpt(written, expanded, location.line, column) {
                message = format!("{message}\n{shown}");
            }
            Error::Parse { location, message }
        }
        other => other,
    }
}

/// [`locate`] with the text read again from the config file (after loading, when a check of
/// the data finds a config value wrong); a file that cannot be read leaves the error as it is.
pub(crate) fn locate_in_file(error: Error, config: &Path) -> Error {
    match std::fs::read_to_string(config) {
        Ok(text) => locate(error, text.strip_prefix('\u{feff}').unwrap_or(&text)),
        Err(_) => error,
    }
}

/// Walks down `steps`, skipping every other value; at the last step's value, sets `found` and
/// raises [`FOUND`] (serde_yaml gives that error the value's position).
struct Walk<'a> {
    steps: &'a [Step],
    found: &'a Cell<bool>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.scalar()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.scalar()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.scalar()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.scalar()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.scalar()
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.scalar()
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.scalar()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let (first, rest) = match self.steps.split_first() {
            None => return Err(self.raise_found()),
            Some(split) => split,
        };
        let mut index = 0;
        loop {
            let found = if *first == Step::Index(index) {
                seq.next_element_seed(self.down(rest))?
            } else {
                seq.next_element::<IgnoredAny>()?.map(|_| ())
            };
            if found.is_none() {
                return Ok(());
            }
            index += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let (first, rest) = match self.steps.split_first() {
            None => return Err(self.raise_found()),
            Some(split) => split,
        };
        while let Some(key) = map.next_key::<yaml::Value>()? {
            let matches = match (&key, first) {
                (yaml::Value::String(key), Step::Key(wanted)) => key == wanted,
                _ => false,
            };
            if matches {
                map.next_value_seed(self.down(rest))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl<'a> Walk<'a> {
    /// The walk of the remaining steps `rest`, below the current value.
    fn down(&self, rest: &'a [Step]) -> Walk<'a> {
        Walk {
            steps: rest,
            found: self.found,
        }
    }

    /// The value looked for is the current one: records it and stops the walk there.
    fn raise_found<E: de::Error>(&self) -> E {
        self.found.set(true);
        E::custom(FOUND)
    }

    /// A scalar: the value looked for when no step is left, else not on the path.
    fn scalar<E: de::Error>(self) -> Result<(), E> {
        if self.steps.is_empty() {
            Err(self.raise_found())
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "version: 1
metrics:
  - recall@5
  - { name: faithfulness, judge: lexcal }
gate:
  rules:
    - { metric: recall@5, max_drop: 0.02 }
    - metric: mrr
      slice: klass=a
tiers:
  smoke: { qrels: q.jsonl }
";

    #[test]
    fn key_paths_become_steps() {
        assert_eq!(
            steps("gate.rules[1].slice"),
            Some(vec![
                Step::Key("gate".into()),
                Step::Key("rules".into()),
                Step::Index(1),
                Step::Key("slice".into()),
            ])
        );
        assert_eq!(steps("slices[0]").map(|s| s.len()), Some(2));
        assert_eq!(steps("a[x]"), None);
        assert_eq!(steps(""), None);
    }

    #[test]
    fn values_are_found_in_block_and_flow_style() {
        assert_eq!(position(TEXT, "metrics[1].judge"), Some((4, 34)));
        assert_eq!(position(TEXT, "gate.rules[1].slice"), Some((9, 14)));
        assert_eq!(position(TEXT, "gate.rules[0].metric"), Some((7, 17)));
        assert_eq!(position(TEXT, "metrics[0]"), Some((3, 5)));
        assert_eq!(position(TEXT, "tiers.smoke.qrels"), Some((11, 19)));
        // A map or list value is found at its start.
        assert_eq!(position(TEXT, "gate.rules"), Some((7, 5)));
    }

    #[test]
    fn a_yaml_error_shows_its_line_and_a_caret_unless_expansion_moved_it() {
        let at = |line: u64, column: u64| Error::Parse {
            location: crate::error::Location::new(Path::new("c.yaml"), line).with_column(column),
            message: "wrong".into(),
        };
        assert_eq!(
            with_excerpt(at(4, 34), TEXT, TEXT).to_string(),
            format!(
                "c.yaml:4:34: wrong\n   4 |   - {{ name: faithfulness, judge: lexcal }}\n     | {}^",
                " ".repeat(33)
            )
        );
        // `${VAR}` expanded before the column: the line as written, no caret.
        let written = "version: 1\nmetrics: [${A}, bad]\n";
        let expanded = "version: 1\nmetrics: [a-long-value, bad]\n";
        assert_eq!(
            with_excerpt(at(2, 21), written, expanded).to_string(),
            "c.yaml:2:21: wrong\n   2 | metrics: [${A}, bad]"
        );
        // A line with a key whose name looks secret is not shown.
        let pasted = "judges:\n  llm: { kind: openai, api_key_env: sk-live-9z8y, model: 3 }\n";
        assert_eq!(
            with_excerpt(at(2, 60), pasted, pasted).to_string(),
            "c.yaml:2:60: wrong"
        );
        // A reader error (a control character) is shown where its byte offset is.
        let control = "version: 1\nmetrics: [a\u{1b}]\n";
        let reader = Error::Parse {
            location: crate::error::Location::new(Path::new("c.yaml"), 1).with_column(1),
            message: "control characters are not allowed at position 22".into(),
        };
        assert_eq!(
            with_excerpt(reader, control, control).to_string(),
            "c.yaml:2:12: control characters are not allowed at position 22\n   2 | \
             metrics: [a\\u{1b}]\n     |            ^"
        );
        // No column, or ragate's own check of a value: unchanged.
        let bare = Error::parse(Path::new("c.yaml"), 2, "wrong");
        assert_eq!(
            with_excerpt(bare, written, written).to_string(),
            "c.yaml:2: wrong"
        );
        let located = locate(
            Error::config(Path::new("c.yaml"), "metrics[1].judge", "no judge `lexcal`"),
            TEXT,
        );
        assert_eq!(
            with_excerpt(located, TEXT, TEXT).to_string(),
            "c.yaml:4:34: metrics[1].judge: no judge `lexcal`"
        );
    }

    #[test]
    fn absent_values_and_broken_yaml_have_no_position() {
        assert_eq!(position(TEXT, "gate.rules[5].metric"), None);
        assert_eq!(position(TEXT, "judges.strict"), None);
        assert_eq!(position(TEXT, "version.x"), None);
        assert_eq!(position(TEXT, "metrics.name"), None);
    }
}
