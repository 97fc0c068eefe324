//! Reading the `judges` section kind first: each judge's `kind` is taken from the parsed YAML
//! first, then the section is read in a typed pass of its own, each judge as the raw keys of its
//! kind (with `deny_unknown_fields`, see `judge::kinds::read`) straight from the text.
//!
//! serde's internally tagged enums (`#[serde(tag = "kind")]`) would do the same in one pass, but
//! they buffer the judge's map first, and an error from the buffer names neither the key
//! (`judges.j` instead of `judges.j.base_url`) nor its line and column. Reading from the text
//! keeps both: a `base_url` under `kind: lexical` is "judges.j.base_url: unknown field
//! `base_url`, expected one of `kind`, `threshold`, `stem`, `version`" at the key's line and column,
//! wherever `kind` stands in the map. The typed pass over the rest of the config only accepts the
//! section (`RawConfig`); of the two passes' errors, the first in the text is the
//! one reported ([`first`]), as a single pass would.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::judge::backend::RawJudge;
use crate::judge::kinds::{self, KindName};
use crate::settings::yaml;

/// An error of a typed pass over the config text, with its key path.
pub(super) type PassError = serde_path_to_error::Error<yaml::Error>;

/// How a typed pass over the config text failed.
#[derive(Debug, thiserror::Error)]
pub(super) enum PassFailure {
    /// serde_yaml's error, with its key path.
    #[error(transparent)]
    Serde(PassError),
    /// A judge whose `kind` reads on its own but could not be read beforehand ([`KIND_UNREAD`]):
    /// the document as a whole is not valid YAML (a key written twice, say), which the caller
    /// reports instead.
    #[error(transparent)]
    KindUnread(PassError),
}

impl PassFailure {
    /// serde_yaml's error, with its key path.
    pub(super) fn serde(&self) -> &PassError {
        match self {
            PassFailure::Serde(error) | PassFailure::KindUnread(error) => error,
        }
    }

    /// serde_yaml's error, with its key path.
    pub(super) fn into_serde(self) -> PassError {
        match self {
            PassFailure::Serde(error) | PassFailure::KindUnread(error) => error,
        }
    }
}

/// The readable `kind` of every judge of `document` (a judge whose `kind` is missing or not a
/// kind is left out: the typed pass reports it).
pub(super) fn kinds(document: &yaml::Value) -> BTreeMap<String, &'static str> {
    let Some(judges) = document.get("judges").and_then(yaml::Value::as_mapping) else {
        return BTreeMap::new();
    };
    judges
        .iter()
        .filter_map(|(name, judge)| {
            let KindName(kind) = KindName::deserialize(judge.get("kind")?.clone()).ok()?;
            Some((name.as_str()?.to_string(), kind))
        })
        .collect()
}

/// The `judges` section of the config `text`, each judge read as the keys of its kind in
/// `kinds` (see the module docs); no section: no judges.
pub(super) fn read(
    text: &str,
    kinds: &BTreeMap<String, &'static str>,
) -> Result<BTreeMap<String, RawJudge>, PassFailure> {
    let mut track = serde_path_to_error::Track::new();
    let deserializer = yaml::Deserializer::from_str(text);
    let unread = Cell::new(false);
    Section(Judges {
        kinds,
        unread: &unread,
    })
    .deserialize(serde_path_to_error::Deserializer::new(
        deserializer,
        &mut track,
    ))
    .map_err(|error| {
        // The walk stops at the first error: a judge whose kind was unread is that error.
        let error = serde_path_to_error::Error::new(track.path(), error);
        if unread.get() {
            PassFailure::KindUnread(error)
        } else {
            PassFailure::Serde(error)
        }
    })
}

/// Of the errors of the two passes over one text, the one a single pass would have met first:
/// the earlier in the text (`config`'s on a tie or without a location).
pub(super) fn first(config: PassError, judges: PassFailure) -> PassFailure {
    let at = |error: &PassError| {
        error
            .inner()
            .location()
            .map_or((usize::MAX, usize::MAX), |l| (l.line(), l.column()))
    };
    if at(judges.serde()) < at(&config) {
        judges
    } else {
        PassFailure::Serde(config)
    }
}

/// The whole document, of which only `judges` is read.
struct Section<'k>(Judges<'k>);

impl<'de> DeserializeSeed<'de> for Section<'_> {
    type Value = BTreeMap<String, RawJudge>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Section<'_> {
    type Value = BTreeMap<String, RawJudge>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a config map")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut judges = BTreeMap::new();
        while let Some(key) = map.next_key::<yaml::Value>()? {
            if key.as_str() == Some("judges") {
                judges = map.next_value_seed(self.0)?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(judges)
    }
}

/// The `judges` map, each judge read as the struct of its kind in `kinds`; `unread` is set when
/// a judge's kind is not there ([`KIND_UNREAD`]).
#[derive(Clone, Copy)]
struct Judges<'k> {
    kinds: &'k BTreeMap<String, &'static str>,
    unread: &'k Cell<bool>,
}

impl<'de> DeserializeSeed<'de> for Judges<'_> {
    type Value = BTreeMap<String, RawJudge>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Judges<'_> {
    type Value = BTreeMap<String, RawJudge>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a map of judge names to judges `{{kind: {}, ...}}`",
            kinds::names().join("|")
        )
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut judges = BTreeMap::new();
        while let Some(name) = map.next_key::<String>()? {
            let kind = self.kinds.get(&name).copied();
            let judge = map.next_value_seed(JudgeOfKind {
                kind,
                unread: self.unread,
            })?;
            judges.insert(name, judge);
        }
        Ok(judges)
    }
}

/// The error of a judge whose `kind` reads on its own but could not be read beforehand: the
/// document as a whole is not valid YAML (a key written twice, say), which the caller reports.
const KIND_UNREAD: &str = "the judge's `kind` could not be read: expected valid YAML";

/// One judge, read as the struct of `kind` (None: the kind could not be read beforehand, which
/// sets `unread`).
struct JudgeOfKind<'k> {
    kind: Option<&'static str>,
    unread: &'k Cell<bool>,
}

/// Only the `kind` of a judge: reading it reports a missing or unknown kind with its location.
#[derive(Deserialize)]
struct KindOnly {
    #[serde(rename = "kind")]
    _kind: KindName,
}

impl<'de> DeserializeSeed<'de> for JudgeOfKind<'_> {
    type Value = RawJudge;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<RawJudge, D::Error> {
        match self.kind {
            Some(kind) => kinds::read(kind, deserializer),
            None => {
                KindOnly::deserialize(deserializer)?;
                self.unread.set(true);
                Err(de::Error::custom(KIND_UNREAD))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::parse;

    fn first_error(text: &str) -> String {
        parse(Path::new("c.yaml"), text).unwrap_err().to_string()
    }

    #[test]
    fn of_errors_in_both_passes_the_first_in_the_text_is_reported() {
        let judges_first =
            "version: 1\njudges: { j: { kind: lexical, treshold: 1 } }\nmetrics: 3\n";
        let error = first_error(judges_first);
        assert!(
            error.starts_with("c.yaml:2:31: judges.j.treshold: unknown field `treshold`"),
            "{error}"
        );
        let judges_last = "version: 1\nmetrics: 3\njudges: { j: { kind: lexical, treshold: 1 } }\n";
        let error = first_error(judges_last);
        assert!(
            error.starts_with("c.yaml:2:10: metrics: invalid type: integer `3`"),
            "{error}"
        );
    }

    #[test]
    fn judges_are_read_as_their_kind_wherever_the_section_stands() {
        let text = "judges: { j: { threshold: 0.5, kind: lexical } }\nversion: 1\nmetrics: []\n\
                    tiers: {}\n";
        let raw = parse(Path::new("c.yaml"), text).unwrap();
        assert_eq!(format!("{:?}", raw.judges), "{\"j\": RawJudge(lexical)}");
    }
}
