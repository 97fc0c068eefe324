//! Validation of the `embeddings` section: the OpenAI-compatible endpoint that makes
//! `answer_relevance` embedding-based.

use crate::config::raw::{RawEmbeddings, RawMetric};
use crate::error::Result;
use crate::http::endpoint::{self, WrittenEndpoint};
use crate::judge::cost::CostHints;
use crate::judge::embeddings::EmbeddingsSpec;
use crate::settings::keys::Keys;
use crate::settings::yaml;

/// The embeddings endpoint, when configured: `base_url` and `model` required, the rest
/// defaulted (timeout 60 s, 5 retries, concurrency 4). `lists` are the metrics lists with their
/// keys (`metrics`, and every tier's own `tiers.NAME.metrics`).
pub(super) fn validate(
    keys: &Keys<'_>,
    raw: Option<&RawEmbeddings>,
    lists: &[(String, &[RawMetric])],
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
    let entries = lists.iter().flat_map(|(key, metrics)| {
        metrics
            .iter()
            .enumerate()
            .map(move |(index, metric)| (key, index, metric))
    });
    for (key, index, metric) in entries {
        if let RawMetric::Spec(spec) = metric
            && spec.name == "answer_relevance"
            && spec.judge.is_some()
        {
            return Err(keys.error(
                format!("{key}[{index}].judge"),
                "answer_relevance is embedding-based when `embeddings` is configured: remove `judge`, or remove `embeddings` to use a judge",
            ));
        }
    }
    let cost = CostHints::validate(raw.price_per_1k_tokens, raw.latency_s, |field, message| {
        keys.error(format!("embeddings.{field}"), message)
    })?;
    Ok(Some(EmbeddingsSpec { endpoint, cost }))
}
