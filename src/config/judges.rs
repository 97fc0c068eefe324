//! Validation of the `judges` section into plain judge specs: the validated settings of each
//! kind, no clients (`judge::build` makes a client of a spec where the app needs one).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::config::Keys;
use crate::config::endpoint::{self, HttpEndpoint, WrittenEndpoint};
use crate::config::raw::{RawJudge, RawNliJudge, RawOpenAiJudge};
use crate::error::Result;
use crate::judge::nli::model::{self, LabelNames, ModelInfo};

/// A judge as configured and validated.
#[derive(Debug, Clone, PartialEq)]
pub enum JudgeSpec {
    /// The offline token-overlap judge (`kind: lexical`).
    Lexical(LexicalSpec),
    /// An external program speaking JSON lines (`kind: command`).
    Command(CommandSpec),
    /// An OpenAI-compatible chat endpoint (`kind: openai`; needs the `llm` feature).
    OpenAi(OpenAiSpec),
    /// A cross-encoder NLI model run in-process (`kind: nli`; needs the `nli` feature).
    Nli(NliSpec),
}

/// `kind: nli`: the exported model and how it is run and read.
#[derive(Debug, Clone, PartialEq)]
pub struct NliSpec {
    /// What the model directory holds (labels, longest input, digest).
    pub model: ModelInfo,
    /// The model directory as written in the config (the judge's identity records it).
    pub written_model: String,
    /// The ONNX Runtime library (`runtime:`, resolved against the config's folder); None: the
    /// `ORT_DYLIB_PATH` environment variable at run time.
    pub runtime: Option<PathBuf>,
    /// Pairs per model call (default 8); verdicts do not depend on it.
    pub batch_size: usize,
    /// The longest input in tokens (default: the model's, at most 512).
    pub max_length: usize,
    /// Entailment probability at or above which a claim is supported (default 0.5).
    pub entailment_threshold: f64,
    /// Contradiction probability at or above which an unsupported claim is contradicted
    /// (grade 0; default 0.5).
    pub contradiction_threshold: f64,
    /// ONNX Runtime's threads (0, the default: one per core); verdicts do not depend on it.
    pub threads: usize,
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
    base: &Path,
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
            RawJudge::Nli(judge) => {
                if !cfg!(feature = "nli") {
                    let message = crate::features::missing(
                        "nli",
                        "an `nli` judge",
                        "or use a `lexical`, `command` or `openai` judge",
                    );
                    return Err(keys.error(format!("{key}.kind"), message));
                }
                JudgeSpec::Nli(validate_nli(keys, &key, judge, base)?)
            }
        };
        judges.insert(name.clone(), configured);
    }
    Ok(judges)
}

/// An `nli` judge: the model directory read (labels, digest), thresholds in (0, 1], a batch
/// size of 1 to 1024 and a longest input of 8 to the model's.
fn validate_nli(keys: &Keys<'_>, key: &str, judge: &RawNliJudge, base: &Path) -> Result<NliSpec> {
    let written_model = judge.model.clone().filter(|m| !m.is_empty()).ok_or_else(|| {
        keys.error(
            key,
            "an nli judge needs `model: DIR`, an exported model directory (model.onnx, tokenizer.json, config.json)",
        )
    })?;
    let names = LabelNames {
        entailment: judge.entailment_label.clone(),
        contradiction: judge.contradiction_label.clone(),
    };
    let model = model::inspect(&base.join(&written_model), &names)
        .map_err(|message| keys.error(format!("{key}.model"), message))?;
    let threshold = |name: &str, value: Option<f64>| -> Result<f64> {
        let value = value.unwrap_or(0.5);
        if value > 0.0 && value <= 1.0 {
            Ok(value)
        } else {
            Err(keys.error(
                format!("{key}.{name}"),
                format!("{value}: expected a probability in (0, 1]"),
            ))
        }
    };
    let batch_size = judge.batch_size.unwrap_or(8);
    if !(1..=1024).contains(&batch_size) {
        return Err(keys.error(
            format!("{key}.batch_size"),
            format!("{batch_size}: expected 1 to 1024 pairs a model call"),
        ));
    }
    let max_length = judge.max_length.unwrap_or(model.max_length);
    if !(8..=model.max_length).contains(&max_length) {
        return Err(keys.error(
            format!("{key}.max_length"),
            format!(
                "{max_length}: expected 8 to {} tokens (the model's longest input)",
                model.max_length
            ),
        ));
    }
    Ok(NliSpec {
        written_model,
        runtime: judge.runtime.as_ref().map(|r| base.join(r)),
        batch_size,
        max_length,
        entailment_threshold: threshold("entailment_threshold", judge.entailment_threshold)?,
        contradiction_threshold: threshold(
            "contradiction_threshold",
            judge.contradiction_threshold,
        )?,
        threads: judge.threads.unwrap_or(0),
        model,
    })
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

#[cfg(all(test, feature = "nli"))]
mod nli_tests {
    //! `kind: nli` settings (with the `nli` feature; `.ci/nli-check` runs them).

    use std::path::Path;

    use crate::config::{self, JudgeSpec};

    fn load(judge: &str, metrics: &str) -> crate::error::Result<config::Config> {
        let dir = tempfile::tempdir().unwrap();
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/nli");
        let path = dir.path().join("eval-config.yaml");
        std::fs::write(
            &path,
            format!(
                "version: 1\nmetrics: {metrics}\njudges: {{ nli: {{ kind: nli, {judge} }} }}\n\
                 tiers: {{ smoke: {{ qrels: q.jsonl, baseline: b.json }} }}\n\
                 gate: {{ rules: [ {{ metric: faithfulness, max_drop: 0.1 }} ] }}\n"
            )
            .replace("FIXTURES", &fixtures.display().to_string()),
        )
        .unwrap();
        config::load(&path)
    }

    #[test]
    fn an_nli_judge_reads_its_model_directory() {
        let config = load(
            "model: \"FIXTURES/tiny\", batch_size: 4, entailment_threshold: 0.7",
            "[{ name: faithfulness, judge: nli }]",
        )
        .unwrap();
        let JudgeSpec::Nli(spec) = &config.judges["nli"] else {
            panic!("an nli spec");
        };
        assert_eq!(
            (
                spec.model.entailment,
                spec.model.contradiction,
                spec.max_length
            ),
            (1, Some(0), 128)
        );
        assert_eq!((spec.batch_size, spec.entailment_threshold), (4, 0.7));
    }

    #[test]
    fn bad_nli_settings_name_their_key() {
        let cases = [
            (
                "runtime: x",
                "[faithfulness]",
                "judges.nli",
                "needs `model: DIR`",
            ),
            (
                "model: \"FIXTURES/none\"",
                "[faithfulness]",
                "judges.nli.model",
                "model.onnx is missing",
            ),
            (
                "model: \"FIXTURES/tiny\", batch_size: 0",
                "[faithfulness]",
                "judges.nli.batch_size",
                "expected 1 to 1024",
            ),
            (
                "model: \"FIXTURES/tiny\", max_length: 512",
                "[faithfulness]",
                "judges.nli.max_length",
                "expected 8 to 128 tokens",
            ),
            (
                "model: \"FIXTURES/tiny\", entailment_threshold: 0",
                "[faithfulness]",
                "judges.nli.entailment_threshold",
                "(0, 1]",
            ),
            (
                "model: \"FIXTURES/tiny\", entailment_label: yes",
                "[faithfulness]",
                "judges.nli.model",
                "no entailment label",
            ),
            (
                "model: \"FIXTURES/tiny\", modle: x",
                "[faithfulness]",
                "judges.nli.modle",
                "unknown field",
            ),
            (
                "model: \"FIXTURES/tiny\"",
                "[{ name: answer_relevance, judge: nli }]",
                "metrics[0]",
                "an nli judge, which judges whether contexts support claims only",
            ),
            (
                "model: \"FIXTURES/tiny\"",
                "[{ name: faithfulness, judge: nli, claims: llm }]",
                "metrics[0].claims",
                "but `nli` is nli",
            ),
        ];
        for (judge, metrics, key, message) in cases {
            let error = load(judge, metrics).unwrap_err();
            let text = error.to_string();
            // An unknown key is a YAML error at its line and column, the others config errors.
            let at_key = matches!(&error, crate::error::Error::Config { key: k, .. } if k == key)
                || text.contains(&format!(": {key}: "));
            assert!(
                at_key && text.contains(message),
                "{judge} / {metrics}: {text}"
            );
        }
    }
}
