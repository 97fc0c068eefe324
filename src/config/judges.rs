//! Validation of the `judges` section into plain judge specs: the validated settings of each
//! kind, no clients (`judge::build` makes a client of a spec where the app needs one).

use std::collections::BTreeMap;
use std::time::Duration;

use crate::config::Keys;
use crate::config::endpoint::{self, HttpEndpoint, WrittenEndpoint};
use crate::config::raw::{RawJudge, RawOpenAiJudge};
use crate::error::Result;

/// A judge as configured and validated.
#[derive(Debug, Clone, PartialEq)]
pub enum JudgeSpec {
    /// The offline token-overlap judge (`kind: lexical`).
    Lexical(LexicalSpec),
    /// An external program speaking JSON lines (`kind: command`).
    Command(CommandSpec),
    /// An OpenAI-compatible chat endpoint (`kind: openai`; needs the `llm` feature).
    OpenAi(OpenAiSpec),
}

/// `kind: lexical`: the offline token-overlap judge's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LexicalSpec {
    /// Minimum share of matched tokens for full support / relevance, in (0, 1].
    pub threshold: f64,
    /// Snowball-stem non-numeric tokens.
    pub stem: bool,
    /// Which lexical judge: 1 (`lexical-1`: token overlap with the whole context) or 2
    /// (`lexical-2`: hard checks of numbers, polarity and names, and the share of the best
    /// context window).
    pub version: u8,
}

/// The lexical judge a config gets when it names no version.
pub const DEFAULT_LEXICAL_VERSION: u8 = 2;

impl Default for LexicalSpec {
    /// Threshold 0.4, stemming on, `lexical-2`.
    fn default() -> Self {
        LexicalSpec {
            threshold: 0.4,
            stem: true,
            version: DEFAULT_LEXICAL_VERSION,
        }
    }
}

/// `kind: command`: the judge program (an argv list, no shell) and its time limit per run.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandSpec {
    /// The program and its arguments (run without a shell).
    pub command: Vec<String>,
    /// The argv as written in the config when an argument holds a `${VAR}`: what the judge's
    /// identity records (never an expanded value). None: written literally.
    pub written_command: Option<Vec<String>>,
    /// How long one run of the program may take.
    pub timeout: Duration,
}

/// `kind: openai`: an OpenAI-compatible chat completions endpoint and how it is called.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAiSpec {
    /// Where and how `/chat/completions` is called.
    pub endpoint: HttpEndpoint,
    /// HTTP requests per run at most, retries included.
    pub max_calls: u64,
}

impl OpenAiSpec {
    /// `model` at `base_url` with the defaults: concurrency 8, timeout 60 s, 5 retries, at most
    /// 20,000 calls a run, no API key.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        OpenAiSpec {
            endpoint: HttpEndpoint::new(base_url, model, 8),
            max_calls: 20_000,
        }
    }
}

/// The judge every judged metric uses unless it names another.
pub const DEFAULT_JUDGE: &str = "default";

/// The configured judges by name; `default` is the lexical judge unless configured otherwise.
pub fn validate_judges(
    keys: &Keys<'_>,
    raw: &BTreeMap<String, RawJudge>,
    written: &serde_yaml::Value,
) -> Result<BTreeMap<String, JudgeSpec>> {
    let mut judges = BTreeMap::new();
    judges.insert(
        DEFAULT_JUDGE.to_string(),
        JudgeSpec::Lexical(LexicalSpec::default()),
    );
    for (name, judge) in raw {
        let key = format!("judges.{name}");
        let configured = match judge {
            RawJudge::Lexical(judge) => {
                let defaults = LexicalSpec::default();
                let threshold = judge.threshold.unwrap_or(defaults.threshold);
                if !(threshold > 0.0 && threshold <= 1.0) {
                    return Err(keys.error(
                        format!("{key}.threshold"),
                        format!("{threshold} is outside (0, 1]"),
                    ));
                }
                let version = match judge.version {
                    None => defaults.version,
                    Some(version @ (1 | 2)) => version as u8,
                    Some(other) => {
                        return Err(keys.error(
                            format!("{key}.version"),
                            format!("{other}: expected 1 (lexical-1) or 2 (lexical-2)"),
                        ));
                    }
                };
                JudgeSpec::Lexical(LexicalSpec {
                    threshold,
                    stem: judge.stem.unwrap_or(defaults.stem),
                    version,
                })
            }
            RawJudge::Openai(judge) => {
                if !cfg!(feature = "llm") {
                    let message = crate::features::missing(
                        "llm",
                        "an `openai` judge",
                        "or use a `lexical` or `command` judge",
                    );
                    return Err(keys.error(format!("{key}.kind"), message));
                }
                let section = ["judges", name.as_str()];
                JudgeSpec::OpenAi(validate_openai(keys, &key, judge, (written, &section))?)
            }
            RawJudge::Command(judge) => {
                let command = judge.command.clone().filter(|c| !c.is_empty() && !c[0].is_empty()).ok_or_else(|| {
                    keys.error(&key, "a command judge needs `command: [program, arg, ...]` (an argv list, no shell)")
                })?;
                let timeout = keys.timeout(
                    &format!("{key}.timeout_s"),
                    judge.timeout_s.map(|s| s as f64),
                    300.0,
                )?;
                let written_command = written
                    .get("judges")
                    .and_then(|judges| judges.get(name.as_str()))
                    .and_then(|judge| judge.get("command"))
                    .and_then(serde_yaml::Value::as_sequence)
                    .filter(|argv| {
                        argv.iter()
                            .any(|arg| arg.as_str().is_some_and(|a| a.contains("${")))
                    })
                    .map(|argv| {
                        argv.iter()
                            .map(|arg| match arg {
                                serde_yaml::Value::String(text) => text.clone(),
                                other => serde_yaml::to_string(other)
                                    .map(|t| t.trim_end().to_string())
                                    .unwrap_or_default(),
                            })
                            .collect()
                    });
                JudgeSpec::Command(CommandSpec {
                    command,
                    written_command,
                    timeout,
                })
            }
        };
        judges.insert(name.clone(), configured);
    }
    Ok(judges)
}

/// An `openai` judge: the endpoint, and `max_calls` (at least 1).
fn validate_openai(
    keys: &Keys<'_>,
    key: &str,
    judge: &RawOpenAiJudge,
    written_section: (&serde_yaml::Value, &[&str]),
) -> Result<OpenAiSpec> {
    let defaults = OpenAiSpec::new("", "");
    let written = WrittenEndpoint {
        base_url: judge.base_url.as_deref(),
        model: judge.model.as_deref(),
        api_key_env: judge.api_key_env.as_deref(),
        concurrency: judge.concurrency,
        timeout_s: judge.timeout_s,
        max_retries: judge.max_retries,
    };
    let endpoint = endpoint::validate(
        keys,
        key,
        "an openai judge",
        written,
        written_section,
        &defaults.endpoint,
    )?;
    let max_calls = judge.max_calls.unwrap_or(defaults.max_calls);
    if max_calls == 0 {
        return Err(keys.error(format!("{key}.max_calls"), "0: expected at least 1"));
    }
    Ok(OpenAiSpec {
        endpoint,
        max_calls,
    })
}
