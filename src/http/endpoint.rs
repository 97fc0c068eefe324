//! An OpenAI-compatible HTTP endpoint as configured: where it is, which model, which key, and
//! how it is called. Shared by `openai` judges and the `embeddings` section, validated once.

use std::time::Duration;

use crate::error::Result;
use crate::settings::expand;
use crate::settings::keys::Keys;
use crate::settings::yaml;

/// An OpenAI-compatible endpoint and how it is called, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpEndpoint {
    /// The API root, e.g. `http://127.0.0.1:8000/v1` (the client appends its path).
    pub base_url: String,
    /// How messages name `base_url` when it was not written literally in the config (it came
    /// from `${VAR}`), e.g. `judges.j.base_url (from ${VAR})`; None: the URL is shown as it is.
    pub shown_base_url: Option<String>,
    /// `base_url` as written in the config when it holds a `${VAR}` (`http://h/v1/${KEY}`):
    /// what the identity records. None: written literally.
    pub written_base_url: Option<String>,
    /// The model name sent with each request.
    pub model: String,
    /// `model` as written when it holds a `${VAR}` (see `written_base_url`).
    pub written_model: Option<String>,
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
            written_base_url: None,
            model: model.into(),
            written_model: None,
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

    /// What identifies the endpoint's results in provenance (results, baselines, history,
    /// reports): `{kind} {model} @ {root} {version}`, with `base_url` and `model` as written in
    /// the config (`http://h/v1/${KEY}`), never an expanded `${VAR}`: the identity stays the same
    /// when a variable's value (a key in the URL, say) changes, and no value is recorded.
    pub fn identity(&self, kind: &str, version: &str) -> String {
        let root = self
            .written_base_url
            .as_deref()
            .unwrap_or(&self.base_url)
            .trim_end_matches('/');
        let model = self.written_model.as_deref().unwrap_or(&self.model);
        format!("{kind} {model} @ {root} {version}")
    }

    /// [`Self::identity`] with the values as called (`${VAR}` expanded): for cache keys, which
    /// are hashed and never shown, so that verdicts of another model or host are not reused.
    pub fn expanded_identity(&self, kind: &str, version: &str) -> String {
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

/// Whether `name` can be an environment variable's name as `api_key_env` gives it: a letter or
/// `_`, then letters, digits and `_`.
fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The endpoint keys of a config section, as written.
pub(crate) struct WrittenEndpoint<'a> {
    pub base_url: Option<&'a str>,
    pub model: Option<&'a str>,
    pub api_key_env: Option<&'a str>,
    pub concurrency: Option<usize>,
    pub timeout_s: Option<u64>,
    pub max_retries: Option<u32>,
}

/// The endpoint of the section at `key` (`judges.j`, `embeddings`), which messages call `what`
/// (`an openai judge`): `base_url` and `model` required, the rest defaulted from `defaults`.
/// `document` is the config as written (before `${VAR}` expansion), `section` the path of the
/// section in it: a value written with `${VAR}` is named, never printed, and recorded as written.
pub(crate) fn validate(
    keys: &Keys<'_>,
    key: &str,
    what: &str,
    written: WrittenEndpoint<'_>,
    (document, section): (&yaml::Value, &[&str]),
    defaults: &HttpEndpoint,
) -> Result<HttpEndpoint> {
    let at = |name: &'static str| [section, &[name]].concat();
    let url_key = format!("{key}.base_url");
    let shown_base_url = expand::shown_if_expanded(document, &at("base_url"), &url_key);
    let written_base_url = expand::written_if_expanded(document, &at("base_url"));
    let written_model = expand::written_if_expanded(document, &at("model"));
    if let Some(var) = expand::written_if_expanded(document, &at("api_key_env")) {
        // `api_key_env: ${OPENAI_API_KEY}` puts the key itself where its name belongs.
        return Err(keys.error(
            format!("{key}.api_key_env"),
            format!(
                "`{var}`: expected the name of the environment variable that holds the key, \
                 not its value: write `api_key_env: {}` (without `${{...}}`)",
                expand::first_variable(&var).unwrap_or("OPENAI_API_KEY")
            ),
        ));
    }
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
        && !is_variable_name(var)
    {
        // Not printed: a value that is no variable name may be the key itself.
        return Err(keys.error(
            format!("{key}.api_key_env"),
            "expected the name of an environment variable (letters, digits and `_`, e.g. \
             OPENAI_API_KEY), not the key itself: the value is not shown",
        ));
    }
    if let Some(var) = written.api_key_env {
        crate::secrets::register_variable(var);
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
        written_base_url,
        model: model.to_string(),
        written_model,
        api_key_env: written.api_key_env.map(str::to_string),
        concurrency,
        timeout,
        max_retries: written.max_retries.unwrap_or(defaults.max_retries),
    })
}

#[cfg(test)]
mod tests {
    use crate::config::load;
    use crate::judge::openai::OpenAiSpec;

    /// The config `judges.llm` entry `judge` loaded from a file (variables unset: defaults apply).
    fn load_judge(judge: &str) -> crate::error::Result<crate::config::Config> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("eval-config.yaml");
        let text = format!(
            "version: 1\nmetrics: [{{ name: faithfulness, judge: llm }}]\njudges:\n  llm: {judge}\n\
             tiers:\n  smoke: {{ qrels: q.jsonl, baseline: b.json }}\n\
             gate:\n  rules: [{{ metric: faithfulness, max_drop: 0.1 }}]\n"
        );
        std::fs::write(&path, text).unwrap();
        load(&path)
    }

    #[test]
    fn the_identity_records_url_and_model_as_written() {
        let config = load_judge(
            "{ kind: openai, base_url: \"http://h/v1/${RAGATE_TEST_UNSET_TENANT:-t0}/\", \
             model: \"${RAGATE_TEST_UNSET_MODEL:-m1}\" }",
        )
        .unwrap();
        let spec = config.judges["llm"]
            .settings::<OpenAiSpec>()
            .expect("an openai judge");
        let endpoint = &spec.endpoint;
        assert_eq!(endpoint.url("/x"), "http://h/v1/t0/x");
        assert_eq!(
            endpoint.identity("openai", "v"),
            "openai ${RAGATE_TEST_UNSET_MODEL:-m1} @ http://h/v1/${RAGATE_TEST_UNSET_TENANT:-t0} v"
        );
        assert_eq!(
            endpoint.expanded_identity("openai", "v"),
            "openai m1 @ http://h/v1/t0 v"
        );
    }

    #[test]
    fn api_key_env_takes_a_variable_name_never_a_key() {
        let error = load_judge(
            "{ kind: openai, base_url: http://h/v1, model: m, \
             api_key_env: \"${RAGATE_TEST_UNSET_VAR:-sk-live-0a1b2c3d}\" }",
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("judges.llm.api_key_env")
                && error.contains("write `api_key_env: RAGATE_TEST_UNSET_VAR`"),
            "{error}"
        );
        let error = load_judge(
            "{ kind: openai, base_url: http://h/v1, model: m, api_key_env: sk-live-9z8y }",
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("judges.llm.api_key_env") && error.contains("not the key itself"),
            "{error}"
        );
        assert!(!error.contains("sk-live-9z8y"), "{error}");
        assert!(
            load_judge("{ kind: openai, base_url: http://h/v1, model: m, api_key_env: _MY_KEY2 }")
                .is_ok()
        );
    }
}
