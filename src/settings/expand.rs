//! `${VAR}` and `${VAR:-default}` in the config, expanded from the environment before the values
//! are read. Comment lines are left alone; an unset variable without a default is an error that
//! names the line.
//!
//! A variable stands for one value and cannot change the config's structure: a value with a
//! line break is an error, and [`check_same_shape`] compares the YAML before and after expansion
//! (same keys, same list lengths), so that `ARG="a, --evil"` in `[python, ${ARG}]` cannot add an
//! argument. Errors name the variable and the line or key, never the value (it may be a secret).

use std::path::Path;

use crate::settings::yaml;
use crate::settings::yaml::Value;

use crate::error::{Error, Result};

/// How messages name the value at `path` of the config as `written` (before expansion) when it
/// holds a `${VAR}`: `key (from <the value as written>)`, since the expanded value may be a
/// secret or an internal host. None when it was written literally: then it may be shown.
pub(crate) fn shown_if_expanded(written: &Value, path: &[&str], key: &str) -> Option<String> {
    let mut value = written;
    for name in path {
        value = value.get(*name)?;
    }
    match value {
        Value::String(text) if text.contains("${") => Some(format!("{key} (from {text})")),
        _ => None,
    }
}

/// The string at `path` of the config as `written` when it holds a `${VAR}`, as written.
pub(crate) fn written_if_expanded(written: &Value, path: &[&str]) -> Option<String> {
    let mut value = written;
    for name in path {
        value = value.get(*name)?;
    }
    match value {
        Value::String(text) if text.contains("${") => Some(text.clone()),
        _ => None,
    }
}

/// The name of the first `${NAME}` or `${NAME:-default}` in `text`.
pub(crate) fn first_variable(text: &str) -> Option<&str> {
    variables(text).next()
}

/// The names of the `${NAME}` and `${NAME:-default}` in `text`, in order.
pub(crate) fn variables(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let start = rest.find("${")?;
        let after = &rest[start + 2..];
        let end = after.find('}')?;
        rest = &after[end + 1..];
        let inner = &after[..end];
        Some(inner.split_once(":-").map_or(inner, |(name, _)| name))
    })
}

/// `text` with every `${NAME}` / `${NAME:-default}` replaced, looking names up with `lookup`.
pub(crate) fn expand(
    path: &Path,
    text: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String> {
    let mut out = String::with_capacity(text.len());
    for (index, line) in text.split_inclusive('\n').enumerate() {
        if line.trim_start().starts_with('#') {
            out.push_str(line);
            continue;
        }
        let mut rest = line;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after.find('}').ok_or_else(|| {
                Error::parse(
                    path,
                    index as u64 + 1,
                    "`${` without a closing `}`: expected `${VAR}` or `${VAR:-default}`",
                )
            })?;
            let inner = &after[..end];
            let (name, default) = match inner.split_once(":-") {
                Some((name, default)) => (name, Some(default)),
                None => (inner, None),
            };
            let valid =
                !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err(Error::parse(
                    path,
                    index as u64 + 1,
                    format!("`${{{inner}}}`: expected a variable name of letters, digits and `_`"),
                ));
            }
            match lookup(name).or_else(|| default.map(str::to_string)) {
                Some(value) if value.contains(['\n', '\r']) => {
                    return Err(Error::parse(
                        path,
                        index as u64 + 1,
                        format!(
                            "the value of `${{{name}}}` contains a line break: expected a one-line \
                             value (a variable stands for one value and cannot add lines to the config)"
                        ),
                    ));
                }
                Some(value) => {
                    let after_end = &after[end + 1..];
                    // `"${MAXDROP:-0.03}"`, quoted so that a flow mapping reads as YAML before
                    // expansion, stands for the number it expands to.
                    let quote = out.chars().last().filter(|c| matches!(c, '"' | '\''));
                    match quote {
                        Some(quote) if after_end.starts_with(quote) && is_yaml_number(&value) => {
                            out.pop();
                            out.push_str(&value);
                            rest = &after_end[1..];
                            continue;
                        }
                        _ => out.push_str(&value),
                    }
                }
                None => {
                    return Err(Error::parse(
                        path,
                        index as u64 + 1,
                        format!(
                            "`${{{name}}}` is not set: expected the environment variable {name}, or a default `${{{name}:-value}}`"
                        ),
                    ));
                }
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
    }
    Ok(out)
}

/// Whether `text` is a plain YAML 1.2 number (`3`, `-0.03`, `1e-3`, `.5`).
fn is_yaml_number(text: &str) -> bool {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    let (mantissa, exponent) = match digits.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, Some(exponent)),
        None => (digits, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok =
        !(whole.is_empty() && fraction.is_empty()) && all_digits(whole) && all_digits(fraction);
    let exponent_ok = exponent.is_none_or(|exponent| {
        let exponent = exponent.strip_prefix(['-', '+']).unwrap_or(exponent);
        !exponent.is_empty() && all_digits(exponent)
    });
    mantissa_ok && exponent_ok
}

/// Fails when the expanded config's structure differs from the written one's: a mapping with
/// other keys (keys with a `${` may change), a list of another length, a scalar that became a
/// list or mapping. Scalars may change freely (`${N}` becomes a number). The error names the key.
pub(crate) fn check_same_shape(path: &Path, written: &Value, expanded: &Value) -> Result<()> {
    match first_difference(written, expanded, "") {
        None => Ok(()),
        Some(key) => Err(Error::config(
            path,
            if key.is_empty() { ".".to_string() } else { key },
            "a `${VAR}` value changed the config's structure here (added or removed keys or list \
             items): expected each variable to stand for one value; check the values of the \
             variables used there, or quote the variable (\"${VAR}\")",
        )),
    }
}

fn child(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

fn first_difference(written: &Value, expanded: &Value, at: &str) -> Option<String> {
    match (written, expanded) {
        (Value::Tagged(a), Value::Tagged(b)) => first_difference(&a.value, &b.value, at),
        (Value::Mapping(a), Value::Mapping(b)) => {
            if a.len() != b.len() {
                return Some(at.to_string());
            }
            for ((key_a, value_a), (key_b, value_b)) in a.iter().zip(b.iter()) {
                let name = yaml::scalar_text(key_a);
                let key_may_change = matches!(key_a, Value::String(s) if s.contains("${"));
                let same_key = key_a == key_b
                    || (key_may_change && !key_b.is_mapping() && !key_b.is_sequence());
                if !same_key {
                    return Some(child(at, &name));
                }
                if let Some(key) = first_difference(value_a, value_b, &child(at, &name)) {
                    return Some(key);
                }
            }
            None
        }
        (Value::Sequence(a), Value::Sequence(b)) => {
            if a.len() != b.len() {
                return Some(at.to_string());
            }
            a.iter()
                .zip(b)
                .enumerate()
                .find_map(|(i, (x, y))| first_difference(x, y, &format!("{at}[{i}]")))
        }
        (Value::Mapping(_) | Value::Sequence(_) | Value::Tagged(_), _)
        | (_, Value::Mapping(_) | Value::Sequence(_) | Value::Tagged(_)) => Some(at.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "VARIANT").then(|| "hybrid".to_string())
    }

    #[test]
    fn a_quoted_variable_that_expands_to_a_number_is_the_number() {
        let text = "r: {max_drop: \"${MAXDROP:-0.03}\", k: '${K:-5}', m: \"${MODEL:-gpt-4}\"}\n\
                    x: \"a${K:-5}\"\n";
        assert_eq!(
            expand(Path::new("c.yaml"), text, |_| None).unwrap(),
            "r: {max_drop: 0.03, k: 5, m: \"gpt-4\"}\nx: \"a5\"\n"
        );
        for number in ["3", "-0.03", "1e-3", ".5", "+2.", "6.02E23"] {
            assert!(is_yaml_number(number), "{number}");
        }
        for other in ["", ".", "-", "1e", "0x10", "1.2.3", "inf", "5 ", "e5"] {
            assert!(!is_yaml_number(other), "{other}");
        }
    }

    #[test]
    fn expands_variables_and_defaults_but_not_comments() {
        let text = "a: ${VARIANT}\nb: x-${MISSING:-bm25}-y\n# ${NOT_EXPANDED}\n";
        assert_eq!(
            expand(Path::new("c.yaml"), text, env).unwrap(),
            "a: hybrid\nb: x-bm25-y\n# ${NOT_EXPANDED}\n"
        );
    }

    #[test]
    fn a_value_cannot_add_lines_or_change_the_structure() {
        let lookup = |name: &str| match name {
            "LINES" => Some("x\nmetrics: [mrr]".to_string()),
            "ARGS" => Some("a, --evil".to_string()),
            "LIST" => Some("[a, --evil]".to_string()),
            "MAP" => Some("{b: 1}".to_string()),
            "COUNT" => Some("2000".to_string()),
            "KEY" => Some("secret-token".to_string()),
            _ => None,
        };
        let path = Path::new("c.yaml");
        let err = expand(path, "a: 1\nb: ${LINES}\n", lookup)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "c.yaml:2: the value of `${LINES}` contains a line break: expected a one-line value \
             (a variable stands for one value and cannot add lines to the config)"
        );
        let shape = |text: &str| {
            let expanded = expand(path, text, lookup).unwrap();
            check_same_shape(
                path,
                &yaml::from_str(text).unwrap(),
                &yaml::from_str(&expanded).unwrap(),
            )
            .map_err(|e| e.to_string())
        };
        let err = shape("pipeline:\n  command:\n    - python\n    - ${LIST}\n").unwrap_err();
        assert!(
            err.starts_with(
                "c.yaml: pipeline.command[1]: a `${VAR}` value changed the config's structure"
            ),
            "{err}"
        );
        assert!(!err.contains("evil"), "{err}");
        let err = shape("a: 1\nb: ${MAP}\n").unwrap_err();
        assert!(err.starts_with("c.yaml: b: "), "{err}");
        assert_eq!(
            shape("n: ${COUNT}\nc: [python, \"${ARGS}\", \"${KEY}\"]\nd:\n  - ${ARGS}\n"),
            Ok(())
        );
    }

    #[test]
    fn unset_and_malformed_variables_name_the_line() {
        let err = expand(Path::new("c.yaml"), "a: 1\nb: ${MISSING}\n", env)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "c.yaml:2: `${MISSING}` is not set: expected the environment variable MISSING, or a default `${MISSING:-value}`"
        );
        let err = expand(Path::new("c.yaml"), "b: ${A B}\n", env)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("c.yaml:1: `${A B}`: expected a variable name"),
            "{err}"
        );
        let err = expand(Path::new("c.yaml"), "b: ${OPEN\n", env)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("c.yaml:1: `${` without a closing `}`"),
            "{err}"
        );
    }
}
