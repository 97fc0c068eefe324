//! The config's text to its typed form, strictly: judges read kind first, every error at its
//! key path, line and column.

use std::path::Path;

use crate::config::raw::RawConfig;
use crate::config::raw_judges::{self, PassFailure};
use crate::error::{Error, Location, Result};
use crate::settings::yaml;
use crate::suggest;

/// The config as written, typed. Judges are read kind first ([`raw_judges`]): the kinds come
/// from `text` parsed as a YAML document, the rest from the typed pass over the same text, so
/// that every error names its key path and its line and column.
pub(super) fn parse(path: &Path, text: &str) -> Result<RawConfig> {
    let document = yaml::from_str::<yaml::Value>(text);
    let kinds = document.as_ref().map(raw_judges::kinds).unwrap_or_default();
    let typed =
        serde_path_to_error::deserialize::<_, RawConfig>(yaml::Deserializer::from_str(text));
    let judges = raw_judges::read(text, &kinds);
    let error = match (typed, judges) {
        (Ok(mut raw), Ok(judges)) => {
            raw.judges = judges;
            return Ok(raw);
        }
        (Err(error), Ok(_)) => PassFailure::Serde(error),
        (Ok(_), Err(error)) => error,
        (Err(config), Err(judges)) => raw_judges::first(config, judges),
    };
    let error = match (&document, error) {
        (Err(invalid), PassFailure::KindUnread(_)) => return Err(yaml_error(path, invalid)),
        (_, error) => error.into_serde(),
    };
    let key = error.path().to_string();
    let inner = error.into_inner();
    let mut message = inner.to_string();
    let location = inner.location();
    if let Some(location) = &location {
        let suffix = format!(" at line {} column {}", location.line(), location.column());
        if let Some(stripped) = message.strip_suffix(&suffix) {
            message = stripped.to_string();
        }
    }
    // serde_yaml prefixes its own (parent) path; keep only ours.
    if let Some((prefix, rest)) = message.split_once(": ")
        && key.starts_with(prefix)
    {
        message = rest.to_string();
    }
    let unknown = suggest::SerdeUnknown::of(&message);
    let mut message = match &unknown {
        Some(unknown) => unknown.did_you_mean(message),
        None => message,
    };
    if let Some(suggest::SerdeUnknown::Field { .. }) = unknown
        && let Some((name, _field)) = key
            .strip_prefix("judges.")
            .and_then(|rest| rest.rsplit_once('.'))
        && let Some(kind) = kinds.get(name)
    {
        message.push_str(&format!(
            " (the keys of {})",
            crate::judge::kinds::a_judge_of(kind)
        ));
    }
    let message = if key == "." || key.is_empty() {
        message
    } else {
        format!("{key}: {message}")
    };
    Err(match location {
        Some(location) => Error::Parse {
            location: Location::new(path, location.line() as u64)
                .with_column(location.column() as u64),
            message,
        },
        None => Error::input(path, message),
    })
}

/// `text` is not a valid YAML document (a key written twice, say): the error at its location.
fn yaml_error(path: &Path, error: &yaml::Error) -> Error {
    let mut message = error.to_string();
    if let Some(location) = error.location() {
        let suffix = format!(" at line {} column {}", location.line(), location.column());
        if let Some(stripped) = message.strip_suffix(&suffix) {
            message = stripped.to_string();
        }
    }
    let message = format!("{message}: expected a valid YAML document");
    match error.location() {
        Some(location) => Error::Parse {
            location: Location::new(path, location.line() as u64)
                .with_column(location.column() as u64),
            message,
        },
        None => Error::input(path, message),
    }
}
