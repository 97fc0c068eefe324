//! Validation of the `embeddings` section: the OpenAI-compatible endpoint that makes
//! `answer_relevance` embedding-based.

use crate::config::raw::{RawEmbeddings, RawMetric};
use crate::config::{Keys, expand};
use crate::error::Result;
use crate::judge::embeddings::EmbeddingClient;

/// The embeddings client, when configured: `base_url` and `model` required, the rest defaulted
/// (timeout 60 s, 5 retries, concurrency 4).
pub fn validate(
    keys: &Keys<'_>,
    raw: Option<&RawEmbeddings>,
    metrics: &[RawMetric],
    written: &serde_yaml::Value,
) -> Result<Option<EmbeddingClient>> {
    let Some(raw) = raw else { return Ok(None) };
    let shown_base_url =
        expand::shown_if_expanded(written, &["embeddings", "base_url"], "embeddings.base_url");
    let base_url = raw
        .base_url
        .clone()
        .filter(|url| !url.trim().is_empty())
        .ok_or_else(|| {
            keys.error(
                "embeddings",
                "needs `base_url` (the API root, e.g. http://127.0.0.1:8000/v1)",
            )
        })?;
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(keys.error(
            "embeddings.base_url",
            format!(
                "`{}`: expected an http:// or https:// URL",
                shown_base_url.as_deref().unwrap_or(&base_url)
            ),
        ));
    }
    let model = raw
        .model
        .clone()
        .filter(|model| !model.trim().is_empty())
        .ok_or_else(|| keys.error("embeddings", "needs `model`"))?;
    if let Some(var) = &raw.api_key_env
        && (var.is_empty() || var.contains('=') || var.contains('\0'))
    {
        return Err(keys.error(
            "embeddings.api_key_env",
            "expected the name of an environment variable",
        ));
    }
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
    let mut client = EmbeddingClient::new(base_url, model);
    client.shown_base_url = shown_base_url;
    client.api_key_env = raw.api_key_env.clone();
    client.concurrency = raw.concurrency.unwrap_or(4);
    if client.concurrency == 0 {
        return Err(keys.error("embeddings.concurrency", "0: expected at least 1"));
    }
    client.timeout = keys.timeout(
        "embeddings.timeout_s",
        raw.timeout_s.map(|s| s as f64),
        60.0,
    )?;
    client.max_retries = raw.max_retries.unwrap_or(5);
    Ok(Some(client))
}
