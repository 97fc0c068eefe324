//! Validation of the `embeddings` section: the OpenAI-compatible endpoint that makes
//! `answer_relevance` embedding-based.

use crate::config::Keys;
use crate::config::endpoint::{self, HttpEndpoint, WrittenEndpoint};
use crate::config::raw::{RawEmbeddings, RawMetric};
use crate::config::yaml;
use crate::error::Result;
use crate::judge::cost::CostHints;

/// An OpenAI-compatible embeddings endpoint and how it is called, as configured and validated
/// (`judge::embeddings::EmbeddingClient` is its client).
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingsSpec {
    /// Where and how `/embeddings` is called.
    pub endpoint: HttpEndpoint,
    /// Price and latency, for plans and budgets (not part of the endpoint's identity).
    pub cost: CostHints,
}

impl EmbeddingsSpec {
    /// `model` at `base_url` with the defaults: concurrency 4, timeout 60 s, 5 retries, no API
    /// key.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        EmbeddingsSpec {
            endpoint: HttpEndpoint::new(base_url, model, 4),
            cost: CostHints::default(),
        }
    }
}

/// The embeddings endpoint, when configured: `base_url` and `model` required, the rest
/// defaulted (timeout 60 s, 5 retries, concurrency 4).
pub(super) fn validate(
    keys: &Keys<'_>,
    raw: Option<&RawEmbeddings>,
    metrics: &[RawMetric],
    written: &yaml::Value,
) -> Result<Option<EmbeddingsSpec>> {
    let Some(raw) = raw else { return Ok(None) };
    if !cfg!(feature = "llm") {
        let message = crate::features::missing(
            "llm",
            "an embeddings endpoint",
            "or remove `embeddings:` (answer_relevance is then judged)",
        );
        return Err(keys.error("embeddings", message));
    }
    let written_endpoint = WrittenEndpoint {
        base_url: raw.base_url.as_deref(),
        model: raw.model.as_deref(),
        api_key_env: raw.api_key_env.as_deref(),
        concurrency: raw.concurrency,
        timeout_s: raw.timeout_s,
        max_retries: raw.max_retries,
    };
    let defaults = EmbeddingsSpec::new("", "").endpoint;
    let endpoint = endpoint::validate(
        keys,
        "embeddings",
        "the embeddings endpoint",
        written_endpoint,
        (written, &["embeddings"]),
        &defaults,
    )?;
    for (index, metric) in metrics.iter().enumerate() {
        if let RawMetric::Spec(spec) = metric
            && spec.name == "answer_relevance"
            && spec.judge.is_some()
        {
            return Err(keys.error(
                format!("metrics[{index}].judge"),
                "answer_relevance is embedding-based when `embeddings` is configured: remove `judge`, or remove `embeddings` to use a judge",
            ));
        }
    }
    let cost = CostHints::validate(raw.price_per_1k_tokens, raw.latency_s, |field, message| {
        keys.error(format!("embeddings.{field}"), message)
    })?;
    Ok(Some(EmbeddingsSpec { endpoint, cost }))
}
