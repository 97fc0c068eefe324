//! `${VAR}` and `${VAR:-default}` in the config, expanded from the environment before the values
//! are read. Comment lines are left alone; an unset variable without a default is an error that
//! names the line.

use std::path::Path;

use crate::error::{Error, Result};

/// `text` with every `${NAME}` / `${NAME:-default}` replaced, looking names up with `lookup`.
pub fn expand(path: &Path, text: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String> {
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
                Some(value) => out.push_str(&value),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "VARIANT").then(|| "hybrid".to_string())
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
