//! Validation of the `embeddings` section: the OpenAI-compatible endpoint that makes
//! `answer_relevance` embedding-based.

use std::time::Duration;

use crate::config::raw::{RawEmbeddings, RawMetric};
use crate::config::{Keys, expand};
use crate::error::Result;

/// An OpenAI-compatible embeddings endpoint and how it is called, as configured and validated
/// (`judge::embeddings::EmbeddingClient` is its client).
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingsSpec {
    /// The API root, e.g. `http://127.0.0.1:8000/v1` (`/embeddings` is appended).
    pub base_url: String,
    /// How messages name `base_url` when it was not written literally in the config (it came
    /// from `${VAR}`), e.g. `embeddings.base_url (from ${VAR})`; None: the URL is shown as it is.
    pub shown_base_url: Option<String>,
    /// The embedding model name sent with each request.
    pub model: String,
    /// The environment variable holding the API key, if any.
    pub api_key_env: Option<String>,
    /// Requests in flight at most.
    pub concurrency: usize,
    /// Per HTTP request.
    pub timeout: Duration,
    /// Retries after the first attempt of a request.
    pub max_retries: u32,
}

impl EmbeddingsSpec {
    /// `model` at `base_url` with the defaults: concurrency 4, timeout 60 s, 5 retries, no API
    /// key.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        EmbeddingsSpec {
            base_url: base_url.into(),
            shown_base_url: None,
            model: model.into(),
            api_key_env: None,
            concurrency: 4,
            timeout: Duration::from_secs(60),
            max_retries: 5,
        }
    }
}

/// The embeddings endpoint, when configured: `base_url` and `model` required, the rest
/// defaulted (timeout 60 s, 5 retries, concurrency 4).
pub fn validate(
    keys: &Keys<'_>,
    raw: Option<&RawEmbeddings>,
    metrics: &[RawMetric],
    written: &serde_yaml::Value,
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
    let mut spec = EmbeddingsSpec::new(base_url, model);
    spec.shown_base_url = shown_base_url;
    spec.api_key_env = raw.api_key_env.clone();
    spec.concurrency = raw.concurrency.unwrap_or(spec.concurrency);
    if spec.concurrency == 0 {
        return Err(keys.error("embeddings.concurrency", "0: expected at least 1"));
    }
    spec.timeout = keys.timeout(
        "embeddings.timeout_s",
        raw.timeout_s.map(|s| s as f64),
        spec.timeout.as_secs_f64(),
    )?;
    spec.max_retries = raw.max_retries.unwrap_or(spec.max_retries);
    Ok(Some(spec))
}
