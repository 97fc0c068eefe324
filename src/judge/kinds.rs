//! The registry of judge kinds: the one place that lists them ([`for_each_kind`]).
//!
//! Each kind is one module under `src/judge/` with everything of its own: a marker type
//! implementing [`JudgeKind`] (its `kind:` name, its raw config keys and their validation), its
//! settings ([`KindSettings`]: the client they build, the API key to check and the endpoint or
//! program to probe before the pipeline runs, what it can judge) and its client ([`JudgeBackend`]: verdicts, description, usage).
//!
//! Adding a kind is one new module and one line here. The `nli` kind, for example, is
//! `src/judge/nli/` (its marker `nli::Nli` implements [`JudgeKind`] with `NAME = "nli"`,
//! `Raw = RawNliJudge` and `validate`, which refuses the kind in a build without the `nli`
//! feature; `NliSpec` implements [`KindSettings`], `NliJudge` implements [`JudgeBackend`]),
//! registered by the line `visit.kind::<nli::Nli>();` below.

use std::marker::PhantomData;
use std::sync::OnceLock;

use serde::de::{self, Deserialize, Deserializer};

use crate::judge::backend::{JudgeKind, JudgeSpec, RawJudge};
use crate::judge::{command, lexical, nli, openai};

/// Something done with each kind's type, in turn.
trait VisitKind {
    fn kind<K: JudgeKind>(&mut self);
}

/// Visits every kind, in the order messages list them.
fn for_each_kind(visit: &mut impl VisitKind) {
    visit.kind::<lexical::Lexical>();
    visit.kind::<openai::OpenAi>();
    visit.kind::<command::Command>();
    visit.kind::<nli::Nli>();
}

/// A kind's name and article.
#[derive(Debug, Clone, Copy)]
struct Named {
    name: &'static str,
    article: &'static str,
}

/// Every kind, in registry order.
fn all() -> &'static [Named] {
    static KINDS: OnceLock<Vec<Named>> = OnceLock::new();
    KINDS.get_or_init(|| {
        struct Collect(Vec<Named>);
        impl VisitKind for Collect {
            fn kind<K: JudgeKind>(&mut self) {
                self.0.push(Named {
                    name: K::NAME,
                    article: K::ARTICLE,
                });
            }
        }
        let mut collect = Collect(Vec::new());
        for_each_kind(&mut collect);
        collect.0
    })
}

/// The name of every kind, in registry order.
pub fn names() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| all().iter().map(|kind| kind.name).collect())
}

/// The article of `kind` in messages: "a" (`lexical`) or "an" (`openai`).
pub fn article_of(kind: &str) -> &'static str {
    all()
        .iter()
        .find(|known| known.name == kind)
        .map_or("a", |known| known.article)
}

/// `kind` with its article, as messages name a judge of it: "a `lexical` judge".
pub fn a_judge_of(kind: &str) -> String {
    format!("{} `{kind}` judge", article_of(kind))
}

/// The judge `default` is unless the config says otherwise: a lexical judge with its defaults.
pub fn default_judge() -> JudgeSpec {
    JudgeSpec::new(lexical::LexicalSpec::default())
}

/// A judge of kind `kind` (a registered name: see [`KindName`]), read from `deserializer` as
/// its kind's raw keys.
pub fn read<'de, D: Deserializer<'de>>(kind: &str, deserializer: D) -> Result<RawJudge, D::Error> {
    struct Read<'de, 'k, D: Deserializer<'de>> {
        wanted: &'k str,
        deserializer: Option<D>,
        read: Option<Result<RawJudge, D::Error>>,
        de: PhantomData<&'de ()>,
    }
    impl<'de, D: Deserializer<'de>> VisitKind for Read<'de, '_, D> {
        fn kind<K: JudgeKind>(&mut self) {
            if K::NAME == self.wanted
                && let Some(deserializer) = self.deserializer.take()
            {
                self.read = Some(K::Raw::deserialize(deserializer).map(RawJudge::of::<K>));
            }
        }
    }
    let mut read = Read {
        wanted: kind,
        deserializer: Some(deserializer),
        read: None,
        de: PhantomData,
    };
    for_each_kind(&mut read);
    read.read
        .unwrap_or_else(|| Err(de::Error::unknown_variant(kind, names())))
}

/// A judge's `kind:` value, read as serde reads a unit variant of an enum of the registered
/// names (the same errors: "unknown variant `x`, expected one of `lexical`, ...").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindName(pub &'static str);

impl<'de> Deserialize<'de> for KindName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Variant;
        impl<'de> de::Visitor<'de> for Variant {
            type Value = KindName;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("variant identifier")
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<KindName, E> {
                names()
                    .iter()
                    .find(|name| **name == value)
                    .map(|name| KindName(name))
                    .ok_or_else(|| de::Error::unknown_variant(value, names()))
            }
        }
        impl<'de> de::DeserializeSeed<'de> for Variant {
            type Value = KindName;
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<KindName, D::Error> {
                d.deserialize_identifier(self)
            }
        }
        struct Enum;
        impl<'de> de::Visitor<'de> for Enum {
            type Value = KindName;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("enum JudgeKind")
            }
            fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<KindName, A::Error> {
                let (kind, variant) = data.variant_seed(Variant)?;
                de::VariantAccess::unit_variant(variant)?;
                Ok(kind)
            }
        }
        deserializer.deserialize_enum("JudgeKind", names(), Enum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_lists_every_kind_once_in_message_order() {
        assert_eq!(names(), ["lexical", "openai", "command", "nli"]);
        assert_eq!(a_judge_of("openai"), "an `openai` judge");
        assert_eq!(a_judge_of("command"), "a `command` judge");
        assert_eq!(default_judge().kind(), "lexical");
    }

    #[test]
    fn a_kind_name_reads_and_fails_as_serdes_enum_of_the_names_would() {
        #[derive(Debug, serde::Deserialize)]
        #[serde(rename_all = "lowercase")]
        enum JudgeKind {
            Lexical,
            Openai,
            Command,
            Nli,
        }
        for text in [
            "lexical",
            "openai",
            "command",
            "nli",
            "lexicl",
            "Lexical",
            "3",
            "true",
            "~",
            "[a]",
            "{a: 1}",
            "{lexical: 1}",
            "!nli",
            "!nli 1",
            "",
        ] {
            let ours = crate::settings::yaml::from_str::<KindName>(text)
                .map(|KindName(name)| name.to_string())
                .map_err(|e| e.to_string());
            let serdes = crate::settings::yaml::from_str::<JudgeKind>(text)
                .map(|kind| format!("{kind:?}").to_lowercase())
                .map_err(|e| e.to_string());
            assert_eq!(ours, serdes, "{text:?}");
        }
    }

    #[test]
    fn a_kind_name_reads_as_a_registered_name_only() {
        let read = |text: &str| {
            crate::settings::yaml::from_str::<KindName>(text).map_err(|e| e.to_string())
        };
        assert_eq!(read("nli"), Ok(KindName("nli")));
        let error = read("lexicl").unwrap_err();
        assert!(
            error.starts_with(
                "unknown variant `lexicl`, expected one of `lexical`, `openai`, `command`, `nli`"
            ),
            "{error}"
        );
    }
}
