//! `kind: openai` in the config: its keys, their validation and the settings they give.

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::OpenAiJudge;
use crate::error::Result;
use crate::http::endpoint::{self, HttpEndpoint, WrittenEndpoint};
use crate::judge::backend::{JudgeAt, JudgeBackend, JudgeKind, JudgeSpec, KindSettings};
use crate::judge::cost::{CostHints, RawPrice};

/// `kind: openai`, an OpenAI-compatible chat completions endpoint (needs the `llm` feature).
pub struct OpenAi;

/// `kind: openai` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a mapping such as `{ kind: openai, model: NAME, base_url: URL }`")]
pub struct RawOpenAiJudge {
    /// The `kind` key, read before this struct (listed so that it is an accepted key; never
    /// read back, hence the allowance).
    #[allow(dead_code)]
    #[serde(rename = "kind")]
    kind_key: IgnoredAny,
    base_url: Option<String>,
    model: Option<String>,
    api_key_env: Option<String>,
    concurrency: Option<usize>,
    timeout_s: Option<u64>,
    max_retries: Option<u32>,
    max_calls: Option<u64>,
    /// What 1,000 tokens cost, for `ragate plan` and `gate.budget.max_cost`.
    price_per_1k_tokens: Option<RawPrice>,
    /// The seconds one call takes, for the wall time `ragate plan` shows.
    latency_s: Option<f64>,
}

impl JudgeKind for OpenAi {
    const NAME: &'static str = "openai";
    const ARTICLE: &'static str = "an";
    type Raw = RawOpenAiJudge;

    /// The endpoint, and `max_calls` (at least 1); refused in a build without `llm`.
    fn validate(raw: &RawOpenAiJudge, at: &JudgeAt<'_>) -> Result<JudgeSpec> {
        if !cfg!(feature = "llm") {
            let message = crate::features::missing(
                "llm",
                "an `openai` judge",
                "or use a `lexical` or `command` judge",
            );
            return Err(at.error("kind", message));
        }
        let defaults = OpenAiSpec::new("", "");
        let written = WrittenEndpoint {
            base_url: raw.base_url.as_deref(),
            model: raw.model.as_deref(),
            api_key_env: raw.api_key_env.as_deref(),
            concurrency: raw.concurrency,
            timeout_s: raw.timeout_s,
            max_retries: raw.max_retries,
        };
        let section = ["judges", at.name];
        let endpoint = endpoint::validate(
            at.keys,
            &at.key,
            "an openai judge",
            written,
            (at.written, &section),
            &defaults.endpoint,
        )?;
        let max_calls = raw.max_calls.unwrap_or(defaults.max_calls);
        if max_calls == 0 {
            return Err(at.error("max_calls", "0: expected at least 1"));
        }
        let cost =
            CostHints::validate(raw.price_per_1k_tokens, raw.latency_s, |field, message| {
                at.error(field, message)
            })?;
        Ok(JudgeSpec::new(OpenAiSpec {
            endpoint,
            max_calls,
            cost,
        }))
    }
}

/// `kind: openai`: an OpenAI-compatible chat completions endpoint and how it is called.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAiSpec {
    /// Where and how `/chat/completions` is called.
    pub endpoint: HttpEndpoint,
    /// HTTP requests per run at most, retries included.
    pub max_calls: u64,
    /// Price and latency, for plans and budgets (not part of the judge's identity).
    pub cost: CostHints,
}

impl OpenAiSpec {
    /// `model` at `base_url` with the defaults: concurrency 8, timeout 60 s, 5 retries, at most
    /// 20,000 calls a run, no API key.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        OpenAiSpec {
            endpoint: HttpEndpoint::new(base_url, model, 8),
            max_calls: 20_000,
            cost: CostHints::default(),
        }
    }
}

impl KindSettings for OpenAiSpec {
    fn kind(&self) -> &'static str {
        OpenAi::NAME
    }

    fn client(&self) -> Box<dyn JudgeBackend> {
        Box::new(OpenAiJudge::from_spec(self))
    }

    fn api_key_env(&self) -> Option<&str> {
        self.endpoint.api_key_env.as_deref()
    }

    fn endpoint(&self) -> Option<&HttpEndpoint> {
        Some(&self.endpoint)
    }

    fn decomposes_claims(&self) -> bool {
        true
    }

    fn cost_hints(&self) -> CostHints {
        self.cost
    }
}
