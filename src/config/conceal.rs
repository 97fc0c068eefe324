//! What the config's `${VAR}` values may not show: the values of variables that land in a URL or
//! a key, and the userinfo of every URL, are registered as secrets ([`register_secrets`]); an
//! error about a value that came from a variable names the variable, never its value
//! ([`Concealer`]); and later messages show commands, paths and URLs as written
//! ([`install_as_written`]). docs/config.md promises the variable, never its value.

use crate::settings::yaml::Value;

use crate::error::Error;
use crate::settings::expand;

/// Keys whose `${VAR}` values are secrets wherever they are: URLs and the key's variable.
const SECRET_KEYS: [&str; 3] = ["base_url", "url", "api_key_env"];
/// Values at most this long (in bytes) are replaced in messages only where quoted (`"v"`,
/// `` `v` ``, `'v'`): a bare `2` would hit every 2 of a message.
const SHORT_VALUE: usize = 3;

/// Registers (see [`crate::secrets`]) the value of every `${VAR}` written in a URL (`base_url`,
/// `url`, any value with `://`), in `api_key_env`, or whose name looks secret.
pub(super) fn register_secrets(written: &Value) {
    walk(written, None);
}

fn walk(value: &Value, key: Option<&str>) {
    match value {
        Value::String(text) if text.contains("${") => {
            let secret_place =
                key.is_some_and(|key| SECRET_KEYS.contains(&key)) || text.contains("://");
            for name in expand::variables(text) {
                if secret_place || crate::secrets::name_looks_secret(name) {
                    crate::secrets::register_variable(name);
                }
            }
            if text.contains("://") {
                let lookup = |name: &str| std::env::var(name).ok();
                if let Ok(url) = expand::expand(std::path::Path::new(""), text, lookup) {
                    crate::secrets::register_userinfo(&url);
                }
            }
        }
        Value::String(text) if text.contains("://") => crate::secrets::register_userinfo(text),
        Value::Mapping(map) => {
            for (name, child) in map {
                walk(child, name.as_str());
            }
        }
        Value::Sequence(items) => {
            for item in items {
                walk(item, key);
            }
        }
        Value::Tagged(tagged) => walk(&tagged.value, key),
        _ => {}
    }
}

/// Makes later messages show each command argument, path and URL of the config that holds a
/// `${VAR}` as written ([`crate::as_written`]): the scalars of `written` and of `expanded` (the
/// same shape, checked before) are paired where they differ. Left out: numbers and values of
/// fewer than 4 characters, and, outside a `command` list, values without a `/`, `\`, `.`, `:`,
/// `=` or `@` (a plain word such as a model or slice name would hit ordinary words of messages).
pub(super) fn install_as_written(written: &Value, expanded: &Value) {
    let mut pairs = Vec::new();
    pair_scalars(written, expanded, false, &mut pairs);
    crate::as_written::install(pairs);
}

fn pair_scalars(
    written: &Value,
    expanded: &Value,
    in_command: bool,
    pairs: &mut Vec<(String, String)>,
) {
    match (written, expanded) {
        (Value::String(text), expanded) if text.contains("${") => {
            let value = crate::settings::yaml::scalar_text(expanded);
            let looks_like_a_place = value.contains(['/', '\\', '.', ':', '=', '@']);
            let kept = value.len() > SHORT_VALUE
                && !matches!(expanded, Value::Number(_))
                && (in_command || looks_like_a_place)
                && value != *text;
            if kept {
                pairs.push((value, text.clone()));
            }
        }
        (Value::Mapping(written), Value::Mapping(expanded)) => {
            for ((key, child), (_, expanded_child)) in written.iter().zip(expanded.iter()) {
                let command = key.as_str() == Some("command");
                pair_scalars(child, expanded_child, command, pairs);
            }
        }
        (Value::Sequence(written), Value::Sequence(expanded)) => {
            for (child, expanded_child) in written.iter().zip(expanded) {
                pair_scalars(child, expanded_child, in_command, pairs);
            }
        }
        (Value::Tagged(written), Value::Tagged(expanded)) => {
            pair_scalars(&written.value, &expanded.value, in_command, pairs);
        }
        _ => {}
    }
}

/// Rewrites config errors so that they name each `${VAR}` instead of printing its value.
pub(super) struct Concealer {
    /// (value, variable name), longest value first.
    values: Vec<(String, String)>,
}

impl Concealer {
    /// The variables used outside comments in the config `text` (as written), with the values
    /// `lookup` gives them (a variable without a value is left out: its default is written in
    /// the config).
    pub(super) fn new(text: &str, lookup: impl Fn(&str) -> Option<String>) -> Self {
        let mut values: Vec<(String, String)> = text
            .lines()
            .filter(|line| !line.trim_start().starts_with('#'))
            .flat_map(expand::variables)
            .filter_map(|name| Some((lookup(name)?, name.to_string())))
            .filter(|(value, _)| !value.is_empty())
            .collect();
        values.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.cmp(b)));
        values.dedup();
        Concealer { values }
    }

    /// `message` with every variable's value replaced by its name.
    fn conceal_message(&self, message: &str) -> String {
        let mut message = message.to_string();
        for (value, name) in &self.values {
            let shown = format!("(the value of ${{{name}}}, not shown)");
            for quote in ['"', '`', '\''] {
                message = message.replace(&format!("{quote}{value}{quote}"), &shown);
            }
            if value.len() > SHORT_VALUE {
                message = message.replace(value.as_str(), &format!("${{{name}}}"));
            }
        }
        message
    }

    /// `error` with its message concealed (see [`Self::conceal_message`]).
    pub(super) fn conceal(&self, error: Error) -> Error {
        if self.values.is_empty() {
            return error;
        }
        match error {
            Error::Parse { location, message } => Error::Parse {
                location,
                message: self.conceal_message(&message),
            },
            Error::Input { path, message } => Error::Input {
                path,
                message: self.conceal_message(&message),
            },
            Error::Missing { path, message } => Error::Missing {
                path,
                message: self.conceal_message(&message),
            },
            Error::Config {
                path,
                key,
                message,
                line_column,
            } => Error::Config {
                path,
                key: self.conceal_message(&key),
                message: self.conceal_message(&message),
                line_column,
            },
            Error::Usage(message) => Error::Usage(self.conceal_message(&message)),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn errors_name_the_variable_never_its_value() {
        let lookup = |name: &str| match name {
            "MAXDROP" => Some("sk-canary-5f1e".to_string()),
            "N" => Some("2".to_string()),
            _ => None,
        };
        let concealer = Concealer::new(
            "# ${IGNORED}\nmax_drop: ${MAXDROP}\nrepeats: ${N}\nx: ${UNSET:-d}\n",
            lookup,
        );
        let error = Error::Parse {
            location: crate::error::Location::new(Path::new("c.yaml"), 2),
            message: "gate.rules[0].max_drop: invalid type: string \"sk-canary-5f1e\", expected \
                      f64; also sk-canary-5f1e bare; `2` of 2"
                .to_string(),
        };
        assert_eq!(
            concealer.conceal(error).to_string(),
            "c.yaml:2: gate.rules[0].max_drop: invalid type: string (the value of ${MAXDROP}, \
             not shown), expected f64; also ${MAXDROP} bare; (the value of ${N}, not shown) of 2"
        );
    }
}
