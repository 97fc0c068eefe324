//! Validation of the `pipeline:` section: exactly one adapter (`run_file`, `command` or `http`).

use std::path::{Path, PathBuf};

use crate::config::raw::{RawHttpPipeline, RawPipeline};
use crate::config::{Config, Keys};
use crate::error::Result;
use crate::pipeline::{CommandPipeline, HttpPipeline, Pipeline};
use crate::settings::yaml;

/// The command adapter's default time limit for a whole run.
const DEFAULT_COMMAND_TIMEOUT_S: f64 = 600.0;
/// The http adapter's defaults.
const DEFAULT_HTTP_CONCURRENCY: usize = 8;
const DEFAULT_HTTP_TIMEOUT_S: f64 = 30.0;
const DEFAULT_HTTP_RETRIES: u32 = 3;

const ADAPTERS: &str = "exactly one of `run_file: runs/{tier}.jsonl`, `command: [program, args...]` or `http: { url: ... }`";

/// The value at `pipeline.<path>` as written in the file, before `${VAR}` expansion, as text: what
/// errors print, so that values from the environment (a token in an argv, say) never reach a log.
fn as_written(written: &yaml::Value, path: &[&str]) -> Option<String> {
    let mut value = written.get("pipeline")?;
    for key in path {
        value = value.get(*key)?;
    }
    let scalar = yaml::scalar_text;
    Some(match value {
        yaml::Value::Sequence(items) => items.iter().map(scalar).collect::<Vec<_>>().join(" "),
        other => scalar(other),
    })
}

pub(crate) fn validate(
    keys: &Keys<'_>,
    raw: Option<&RawPipeline>,
    written: &yaml::Value,
) -> Result<Option<Pipeline>> {
    let Some(raw) = raw else { return Ok(None) };
    let given = [
        raw.run_file.is_some(),
        raw.command.is_some(),
        raw.http.is_some(),
    ];
    if given.iter().filter(|&&g| g).count() != 1 {
        return Err(keys.error("pipeline", format!("expected {ADAPTERS}")));
    }
    if raw.timeout_s.is_some() && raw.command.is_none() {
        return Err(keys.error(
            "pipeline.timeout_s",
            "applies to `command` only (`http` takes its own `timeout_s`)",
        ));
    }
    if let Some(pattern) = &raw.run_file {
        if pattern.is_empty() {
            return Err(keys.error("pipeline.run_file", "empty: expected a path"));
        }
        let shown = as_written(written, &["run_file"]).unwrap_or_else(|| pattern.clone());
        check_placeholders(keys, pattern, &shown)?;
        return Ok(Some(Pipeline::RunFile(pattern.clone())));
    }
    if let Some(argv) = &raw.command {
        if argv.first().is_none_or(|program| program.is_empty()) {
            return Err(keys.error(
                "pipeline.command",
                "expected a non-empty argv list [program, args...] (it is run without a shell)",
            ));
        }
        let timeout = keys.timeout(
            "pipeline.timeout_s",
            raw.timeout_s,
            DEFAULT_COMMAND_TIMEOUT_S,
        )?;
        return Ok(Some(Pipeline::Command(CommandPipeline {
            argv: argv.clone(),
            shown: as_written(written, &["command"]).unwrap_or_else(|| argv[0].clone()),
            timeout,
        })));
    }
    let http: &RawHttpPipeline = raw.http.as_ref().expect("one adapter is given");
    if !cfg!(feature = "llm") {
        let message = crate::features::missing(
            "llm",
            "the `http` pipeline adapter",
            "or use a `command` or `run_file` pipeline",
        );
        return Err(keys.error("pipeline.http", message));
    }
    let shown_url = as_written(written, &["http", "url"]).unwrap_or_else(|| "<url>".to_string());
    if !(http.url.starts_with("http://") || http.url.starts_with("https://")) {
        return Err(keys.error(
            "pipeline.http.url",
            format!("`{shown_url}`: expected an http:// or https:// URL"),
        ));
    }
    let concurrency = http.concurrency.unwrap_or(DEFAULT_HTTP_CONCURRENCY);
    if concurrency == 0 {
        return Err(keys.error("pipeline.http.concurrency", "expected at least 1"));
    }
    Ok(Some(Pipeline::Http(HttpPipeline {
        url: http.url.clone(),
        shown_url,
        concurrency,
        timeout: keys.timeout(
            "pipeline.http.timeout_s",
            http.timeout_s,
            DEFAULT_HTTP_TIMEOUT_S,
        )?,
        max_retries: http.max_retries.unwrap_or(DEFAULT_HTTP_RETRIES),
    })))
}

/// The one placeholder a `run_file` takes.
const TIER_PLACEHOLDER: &str = "{tier}";

/// Every `{` of a `run_file` must open `{tier}`, and no `}` may stand alone: an unknown
/// placeholder (`{tierr}`, `{name}`) would be read as a literal file name that never exists.
/// `shown` is the pattern as written (before `${VAR}` expansion), which the message prints.
fn check_placeholders(keys: &Keys<'_>, pattern: &str, shown: &str) -> Result<()> {
    let rest = pattern.replace(TIER_PLACEHOLDER, "");
    let Some(at) = rest.find(['{', '}']) else {
        return Ok(());
    };
    let unknown = match rest[at..].find('}') {
        Some(end) if rest[at..].starts_with('{') => &rest[at..at + end + 1],
        _ => &rest[at..at + 1],
    };
    Err(keys.error(
        "pipeline.run_file",
        crate::suggest::did_you_mean(
            format!(
                "`{shown}` has `{unknown}`, which is not a placeholder: expected `{TIER_PLACEHOLDER}` \
                 (the tier's name), the only one"
            ),
            unknown,
            [TIER_PLACEHOLDER],
        ),
    ))
}

impl Config {
    /// The directory relative paths of the config are resolved in, and commands run in.
    pub fn dir(&self) -> &Path {
        match self.path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        }
    }

    /// The run file the pipeline names for `tier` (`{tier}` replaced), relative to the config.
    pub fn run_file(&self, tier: &str) -> Option<PathBuf> {
        match &self.pipeline {
            Some(Pipeline::RunFile(pattern)) => {
                Some(self.dir().join(pattern.replace("{tier}", tier)))
            }
            _ => None,
        }
    }
}
