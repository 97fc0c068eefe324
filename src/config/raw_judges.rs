//! Reading the `judges` section kind first: each judge's `kind` is taken from the parsed YAML
//! before the typed pass, and the typed pass reads the judge as the struct of that kind (with
//! `deny_unknown_fields`) straight from the text.
//!
//! serde's internally tagged enums (`#[serde(tag = "kind")]`) would do the same in one pass, but
//! they buffer the judge's map first, and an error from the buffer names neither the key
//! (`judges.j` instead of `judges.j.base_url`) nor its line and column. Reading from the text
//! keeps both: a `base_url` under `kind: lexical` is "judges.j.base_url: unknown field
//! `base_url`, expected one of `kind`, `threshold`, `stem`, `version`" at the key's line and column,
//! wherever `kind` stands in the map.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::raw::{
    JudgeKind, RawCommandJudge, RawJudge, RawLexicalJudge, RawNliJudge, RawOpenAiJudge,
};

thread_local! {
    /// The kinds of the judges of the config being parsed on this thread, by name (set by
    /// [`with_kinds`] for the duration of one typed pass).
    static KINDS: RefCell<BTreeMap<String, JudgeKind>> = const { RefCell::new(BTreeMap::new()) };
}

/// The readable `kind` of every judge of `document` (a judge whose `kind` is missing or not a
/// kind is left out: the typed pass reports it).
pub fn kinds(document: &serde_yaml::Value) -> BTreeMap<String, JudgeKind> {
    let Some(judges) = document
        .get("judges")
        .and_then(serde_yaml::Value::as_mapping)
    else {
        return BTreeMap::new();
    };
    judges
        .iter()
        .filter_map(|(name, judge)| {
            let kind = JudgeKind::deserialize(judge.get("kind")?.clone()).ok()?;
            Some((name.as_str()?.to_string(), kind))
        })
        .collect()
}

/// Runs `parse` (a typed pass over the config) with the judges' `kinds` known to
/// [`deserialize`]; they are cleared afterwards, also when `parse` panics.
pub fn with_kinds<T>(kinds: BTreeMap<String, JudgeKind>, parse: impl FnOnce() -> T) -> T {
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            KINDS.with(|known| known.borrow_mut().clear());
        }
    }
    KINDS.with(|known| *known.borrow_mut() = kinds);
    let _clear = Clear;
    parse()
}

/// The `judges` map, each judge read as the struct of its kind (see the module docs).
pub fn deserialize<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, RawJudge>, D::Error> {
    deserializer.deserialize_map(JudgesVisitor)
}

struct JudgesVisitor;

impl<'de> Visitor<'de> for JudgesVisitor {
    type Value = BTreeMap<String, RawJudge>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map of judge names to judges `{kind: lexical|openai|command|nli, ...}`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut judges = BTreeMap::new();
        while let Some(name) = map.next_key::<String>()? {
            let kind = KINDS.with(|known| known.borrow().get(&name).copied());
            let judge = map.next_value_seed(JudgeOfKind(kind))?;
            judges.insert(name, judge);
        }
        Ok(judges)
    }
}

/// The error of a judge whose `kind` reads on its own but could not be read beforehand: the
/// document as a whole is not valid YAML (a key written twice, say), which the caller reports.
pub const KIND_UNREAD: &str = "the judge's `kind` could not be read: expected valid YAML";

/// One judge, read as the struct of `kind` (None: the kind could not be read beforehand).
struct JudgeOfKind(Option<JudgeKind>);

/// Only the `kind` of a judge: reading it reports a missing or unknown kind with its location.
#[derive(Deserialize)]
struct KindOnly {
    #[serde(rename = "kind")]
    _kind: JudgeKind,
}

impl<'de> DeserializeSeed<'de> for JudgeOfKind {
    type Value = RawJudge;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<RawJudge, D::Error> {
        match self.0 {
            Some(JudgeKind::Lexical) => {
                RawLexicalJudge::deserialize(deserializer).map(RawJudge::Lexical)
            }
            Some(JudgeKind::Openai) => {
                RawOpenAiJudge::deserialize(deserializer).map(RawJudge::Openai)
            }
            Some(JudgeKind::Command) => {
                RawCommandJudge::deserialize(deserializer).map(RawJudge::Command)
            }
            Some(JudgeKind::Nli) => RawNliJudge::deserialize(deserializer).map(RawJudge::Nli),
            None => {
                KindOnly::deserialize(deserializer)?;
                Err(de::Error::custom(KIND_UNREAD))
            }
        }
    }
}
