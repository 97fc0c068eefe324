//! Judges: verdicts on whether claims are supported by contexts and answers address questions.

pub mod cache;
pub mod command;
pub mod decompose;
pub mod embeddings;
pub mod lexical;
pub mod lexical2;
pub mod nli;
pub mod openai;
pub mod stop_words;

use std::collections::BTreeMap;

use crate::config::{Config, JudgeSpec};
use crate::error::Result;
use cache::{CacheKey, JudgeCache};
use command::CommandJudge;
use decompose::ClaimsTask;
use embeddings::EmbeddingClient;
use lexical::LexicalJudge;
use nli::NliJudge;
use openai::OpenAiJudge;

/// A configured judge.
#[derive(Debug, Clone, PartialEq)]
pub enum Judge {
    /// The offline token-overlap judge.
    Lexical(LexicalJudge),
    /// An external program speaking JSON lines.
    Command(CommandJudge),
    /// An OpenAI-compatible chat endpoint (without the `llm` feature a config cannot name one).
    OpenAi(OpenAiJudge),
    /// A cross-encoder NLI model run in-process (without the `nli` feature a config cannot
    /// name one).
    Nli(NliJudge),
}

/// The client of a judge spec; an `openai` judge gets fresh usage counters, shared by clones.
pub fn build(spec: &JudgeSpec) -> Judge {
    match spec {
        JudgeSpec::Lexical(spec) => Judge::Lexical(LexicalJudge::from_spec(spec)),
        JudgeSpec::Command(spec) => Judge::Command(CommandJudge {
            command: spec.command.clone(),
            written_command: spec.written_command.clone(),
            timeout: spec.timeout,
        }),
        JudgeSpec::OpenAi(spec) => Judge::OpenAi(OpenAiJudge::from_spec(spec)),
        JudgeSpec::Nli(spec) => Judge::Nli(NliJudge::from_spec(spec)),
    }
}

/// The clients of a config's judges and embeddings endpoint. Built once for a run and cloned
/// into what judges, so that the usage (calls, tokens) of the whole run adds up in them.
#[derive(Debug, Clone)]
pub struct Clients {
    /// By name, as in the config.
    pub judges: BTreeMap<String, Judge>,
    /// The client of the embeddings endpoint, when one is configured.
    pub embeddings: Option<EmbeddingClient>,
}

impl Clients {
    /// The clients of every judge of `config` and of its embeddings endpoint.
    pub fn build(config: &Config) -> Clients {
        Clients {
            judges: config
                .judges
                .iter()
                .map(|(name, spec)| (name.clone(), build(spec)))
                .collect(),
            embeddings: config.embeddings.as_ref().map(EmbeddingClient::from_spec),
        }
    }
}

/// One question put to a judge.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(tag = "task", rename_all = "lowercase")]
pub enum Task {
    /// Is `claim` supported by `context`?
    Support {
        /// One claim of an answer.
        claim: String,
        /// The contexts the answer was generated from, joined with blank lines.
        context: String,
    },
    /// Does `answer` address `question`?
    Relevance {
        /// The query text.
        question: String,
        /// The system's answer.
        answer: String,
    },
}

impl Task {
    /// A short description for error messages.
    pub fn summary(&self) -> String {
        let short = |text: &str| text.chars().take(60).collect::<String>();
        match self {
            Task::Support { claim, .. } => format!("support of \"{}\"", short(claim)),
            Task::Relevance { question, .. } => format!("relevance to \"{}\"", short(question)),
        }
    }
}

/// A judge's answer to a task.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Verdict {
    /// Supported (support tasks) or relevant (relevance tasks).
    pub positive: bool,
    /// 0 unsupported, 1 partly, 2 fully supported (relevance: 2 or 0).
    pub grade: u8,
    /// The judge's score in [0, 1] when it has one (the lexical judge's token share).
    pub score: Option<f64>,
    /// Why a claim is not supported, when the judge says (`lexical-2`: `unsupported: number
    /// 1228 not in the context`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl cache::Cached for Verdict {
    /// A grade of 0, 1 or 2 that does not contradict `positive` (0 is never positive, 2 always),
    /// and a score in [0, 1] when there is one: what every judge gives.
    fn check(&self) -> std::result::Result<(), String> {
        match (self.positive, self.grade) {
            (_, 3..) => return Err(format!("grade {}: expected 0, 1 or 2", self.grade)),
            (true, 0) | (false, 2) => {
                return Err(format!(
                    "grade {} contradicts positive {}",
                    self.grade, self.positive
                ));
            }
            _ => {}
        }
        match self.score {
            Some(score) if !(0.0..=1.0).contains(&score) => {
                Err(format!("score {score}: expected a number in [0, 1]"))
            }
            _ => Ok(()),
        }
    }
}

impl Judge {
    /// What identifies the judge's verdicts, for provenance and cache keys.
    pub fn describe(&self) -> String {
        match self {
            Judge::Lexical(judge) => judge.describe(),
            Judge::Command(judge) => format!(
                "command `{}`",
                judge
                    .written_command
                    .as_ref()
                    .unwrap_or(&judge.command)
                    .join(" ")
            ),
            Judge::OpenAi(judge) => judge.describe(),
            Judge::Nli(judge) => judge.describe(),
        }
    }

    /// [`Self::describe`] with every `${VAR}` of the config expanded: what cache keys hash, so
    /// that verdicts of another model or host are never reused. Never shown or recorded.
    fn cache_identity(&self) -> String {
        match self {
            Judge::OpenAi(judge) => judge.expanded_describe(),
            Judge::Command(judge) => format!("command `{}`", judge.command.join(" ")),
            other => other.describe(),
        }
    }

    /// The kind of judge, for cache keys.
    pub fn kind(&self) -> &'static str {
        match self {
            Judge::Lexical(_) => "lexical",
            Judge::Command(_) => "command",
            Judge::OpenAi(_) => "openai",
            Judge::Nli(_) => "nli",
        }
    }

    /// The cache key of one request: the judge kind, its description (with `extra`, e.g. a
    /// prompt version) and the inputs.
    fn cache_key(&self, extra: &str, inputs: &impl serde::Serialize) -> CacheKey {
        let inputs = serde_json::to_value(inputs).expect("tasks serialise");
        let version = format!("{}{extra}", self.cache_identity());
        CacheKey::new(
            self.kind(),
            "",
            "",
            &version,
            &serde_json::Value::Null,
            &inputs,
        )
    }

    /// Judges every task, in order, answering from `cache` where it can and storing new verdicts
    /// there. Returns the verdicts and how many tasks went to the judge. `repeat` is which asking
    /// this is: from the second on, the verdicts are cached apart (the key adds ` repeat N`), so a
    /// judge is really asked again and each asking stays reproducible.
    pub fn judge_cached(
        &self,
        name: &str,
        tasks: &[Task],
        cache: Option<&JudgeCache>,
        repeat: usize,
    ) -> Result<(Vec<Verdict>, usize)> {
        if cache.is_none() {
            self.announce(name, tasks.len(), tasks.len());
            return Ok((self.judge_all(name, tasks)?, tasks.len()));
        }
        let extra = match repeat {
            0 | 1 => String::new(),
            n => format!(" repeat {n}"),
        };
        let keys: Vec<CacheKey> = tasks.iter().map(|t| self.cache_key(&extra, t)).collect();
        let what = |i: usize| format!("judge `{name}`: {}", tasks[i].summary());
        cache::through(cache, &keys, what, |missing| {
            self.announce(name, missing.len(), tasks.len());
            let asked: Vec<Task> = missing.iter().map(|&i| tasks[i].clone()).collect();
            self.judge_all(name, &asked)
        })
    }

    /// Decomposes every answer into claims (`claims: llm`), in order, through the cache (the
    /// key adds the decomposition prompt version). Returns the claims and how many answers went
    /// to the judge. Only `openai` and `command` judges decompose.
    pub fn decompose_cached(
        &self,
        name: &str,
        tasks: &[ClaimsTask],
        cache: Option<&JudgeCache>,
    ) -> Result<(Vec<Vec<String>>, usize)> {
        let extra = format!(" claims {}", decompose::CLAIMS_PROMPT_VERSION);
        let keys: Vec<CacheKey> = tasks.iter().map(|t| self.cache_key(&extra, t)).collect();
        let what = |i: usize| format!("judge `{name}`: {}", tasks[i].summary());
        cache::through(cache, &keys, what, |missing| {
            let asked: Vec<ClaimsTask> = missing.iter().map(|&i| tasks[i].clone()).collect();
            match self {
                Judge::OpenAi(judge) => judge.decompose_all(name, &asked),
                Judge::Command(judge) => judge.decompose_all(name, &asked),
                Judge::Lexical(_) | Judge::Nli(_) => Err(decompose::unsupported(name, self.kind())),
            }
        })
    }

    /// Judges every task, in order. `name` is the judge's name in the config, for errors.
    /// Progress on stderr before a slow (external) judge is asked: how much of the work the cache
    /// did not answer.
    fn announce(&self, name: &str, asked: usize, total: usize) {
        if asked > 0 && !matches!(self, Judge::Lexical(_)) {
            crate::term::info(format!(
                "ragate: judge `{name}`: asking about {asked} of {total} tasks (the rest are cached)"
            ));
        }
    }

    /// The judge's verdicts on `tasks`, in task order; `name` is the judge's config name, for
    /// messages.
    pub fn judge_all(&self, name: &str, tasks: &[Task]) -> Result<Vec<Verdict>> {
        match self {
            Judge::Lexical(judge) => Ok(judge.verdicts(tasks)),
            Judge::Command(judge) => judge.judge_all(name, tasks),
            Judge::OpenAi(judge) => judge.judge_all(name, tasks),
            Judge::Nli(judge) => judge.judge_all(name, tasks),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::config::{CommandSpec, EmbeddingsSpec, HttpEndpoint, LexicalSpec, OpenAiSpec};

    #[test]
    fn a_client_carries_every_setting_of_its_spec() {
        for version in [1, 2] {
            let lexical = build(&JudgeSpec::Lexical(LexicalSpec {
                threshold: 0.7,
                stem: false,
                version,
            }));
            assert_eq!(
                lexical,
                Judge::Lexical(LexicalJudge {
                    threshold: 0.7,
                    stem: false,
                    version,
                })
            );
        }
        let command = build(&JudgeSpec::Command(CommandSpec {
            command: vec!["judge".into(), "-v".into()],
            written_command: None,
            timeout: Duration::from_secs(3),
        }));
        assert_eq!(
            command,
            Judge::Command(CommandJudge {
                command: vec!["judge".into(), "-v".into()],
                written_command: None,
                timeout: Duration::from_secs(3),
            })
        );
        let spec = OpenAiSpec {
            endpoint: HttpEndpoint {
                base_url: "http://h/v1".into(),
                shown_base_url: Some("judges.j.base_url (from ${URL})".into()),
                written_base_url: Some("${URL}".into()),
                model: "m".into(),
                written_model: None,
                api_key_env: Some("KEY".into()),
                concurrency: 3,
                timeout: Duration::from_secs(9),
                max_retries: 1,
            },
            max_calls: 77,
        };
        let Judge::OpenAi(openai) = build(&JudgeSpec::OpenAi(spec.clone())) else {
            panic!("an openai spec builds an openai judge");
        };
        assert_eq!(openai.spec, spec, "the client carries every setting");
        assert_eq!(openai.usage(), Default::default(), "fresh counters");
        let spec = EmbeddingsSpec {
            endpoint: HttpEndpoint {
                base_url: "http://e/v1".into(),
                shown_base_url: None,
                written_base_url: None,
                model: "e5".into(),
                written_model: None,
                api_key_env: Some("EKEY".into()),
                concurrency: 2,
                timeout: Duration::from_secs(4),
                max_retries: 0,
            },
        };
        let client = EmbeddingClient::from_spec(&spec);
        assert_eq!(client.spec, spec, "the client carries every setting");
    }

    #[test]
    fn the_clients_defaults_are_the_configs() {
        assert_eq!(
            LexicalJudge::default(),
            LexicalJudge::from_spec(&LexicalSpec::default())
        );
        let judge = OpenAiJudge::new("http://h/v1", "m");
        assert_eq!(
            judge,
            OpenAiJudge::from_spec(&OpenAiSpec::new("http://h/v1", "m"))
        );
        assert_eq!(
            (judge.spec.endpoint.concurrency, judge.spec.max_calls),
            (8, 20_000)
        );
    }
}
