//! An OpenAI-compatible HTTP endpoint as configured: where it is, which model, which key, and
//! how it is called. Shared by `openai` judges and the `embeddings` section, validated once.

use std::time::Duration;

use crate::config::Keys;
use crate::error::Result;

/// An OpenAI-compatible endpoint and how it is called, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpEndpoint {
    /// The API root, e.g. `http://127.0.0.1:8000/v1` (the client appends its path).
    pub base_url: String,
    /// How messages name `base_url` when it was not written literally in the config (it came
    /// from `${VAR}`), e.g. `judges.j.base_url (from ${VAR})`; None: the URL is shown as it is.
    pub shown_base_url: Option<String>,
    /// The model name sent with each request.
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

impl HttpEndpoint {
    /// `model` at `base_url` with `concurrency` requests in flight, a timeout of 60 s, 5
    /// retries and no API key.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>, concurrency: usize) -> Self {
        HttpEndpoint {
            base_url: base_url.into(),
            shown_base_url: None,
            model: model.into(),
            api_key_env: None,
            concurrency,
            timeout: Duration::from_secs(60),
            max_retries: 5,
        }
    }

    /// The URL of `path` (`/chat/completions`, say) under the API root.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url.trim_end_matches('/'))
    }

    /// [`Self::url`] as messages print it: a root that came from the environment is named by
    /// the key that read it, never printed.
    pub fn shown_url(&self, path: &str) -> String {
        match &self.shown_base_url {
            Some(shown) => format!("{path} at {shown}"),
            None => self.url(path),
        }
    }

    /// What identifies the endpoint's results: `{kind} {model} @ {root} {version}`.
    pub fn identity(&self, kind: &str, version: &str) -> String {
        let root = self.base_url.trim_end_matches('/');
        format!("{kind} {} @ {root} {version}", self.model)
    }

    /// [`Self::identity`] as messages print it (see [`Self::shown_url`]).
    pub fn shown_identity(&self, kind: &str, version: &str) -> String {
        match &self.shown_base_url {
            Some(shown) => format!("{kind} {} @ {shown} {version}", self.model),
            None => self.identity(kind, version),
        }
    }
}

/// The endpoint keys of a config section, as written.
pub(super) struct WrittenEndpoint<'a> {
    pub base_url: Option<&'a str>,
    pub model: Option<&'a str>,
    pub api_key_env: Option<&'a str>,
    pub concurrency: Option<usize>,
    pub timeout_s: Option<u64>,
    pub max_retries: Option<u32>,
}

/// The endpoint of the section at `key` (`judges.j`, `embeddings`), which messages call `what`
/// (`an openai judge`): `base_url` and `model` required, the rest defaulted from `defaults`.
/// `shown_base_url`: how messages name a `base_url` that came from the environment.
pub(super) fn validate(
    keys: &Keys<'_>,
    key: &str,
    what: &str,
    written: WrittenEndpoint<'_>,
    shown_base_url: Option<String>,
    defaults: &HttpEndpoint,
) -> Result<HttpEndpoint> {
    let base_url = written
        .base_url
        .filter(|url| !url.trim().is_empty())
        .ok_or_else(|| {
            keys.error(
                key,
                format!("{what} needs `base_url` (the API root, e.g. http://127.0.0.1:8000/v1)"),
            )
        })?;
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(keys.error(
            format!("{key}.base_url"),
            format!(
                "`{}`: expected an http:// or https:// URL",
                shown_base_url.as_deref().unwrap_or(base_url)
            ),
        ));
    }
    let model = written
        .model
        .filter(|model| !model.trim().is_empty())
        .ok_or_else(|| keys.error(key, format!("{what} needs `model`")))?;
    if let Some(var) = written.api_key_env
        && (var.is_empty() || var.contains('=') || var.contains('\0'))
    {
        return Err(keys.error(
            format!("{key}.api_key_env"),
            "expected the name of an environment variable",
        ));
    }
    let concurrency = written.concurrency.unwrap_or(defaults.concurrency);
    if concurrency == 0 {
        return Err(keys.error(format!("{key}.concurrency"), "0: expected at least 1"));
    }
    let timeout = keys.timeout(
        &format!("{key}.timeout_s"),
        written.timeout_s.map(|s| s as f64),
        defaults.timeout.as_secs_f64(),
    )?;
    Ok(HttpEndpoint {
        base_url: base_url.to_string(),
        shown_base_url,
        model: model.to_string(),
        api_key_env: written.api_key_env.map(str::to_string),
        concurrency,
        timeout,
        max_retries: written.max_retries.unwrap_or(defaults.max_retries),
    })
}
