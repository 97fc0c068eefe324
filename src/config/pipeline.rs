//! Validation of the `pipeline:` section: exactly one adapter (`run_file`, `command` or `http`).

use std::path::{Path, PathBuf};

use crate::config::raw::{RawHttpPipeline, RawPipeline};
use crate::config::{Config, Keys};
use crate::error::Result;
use crate::pipeline::{CommandPipeline, HttpPipeline, Pipeline};

/// The command adapter's default time limit for a whole run.
const DEFAULT_COMMAND_TIMEOUT_S: f64 = 600.0;
/// The http adapter's defaults.
const DEFAULT_HTTP_CONCURRENCY: usize = 8;
const DEFAULT_HTTP_TIMEOUT_S: f64 = 30.0;
const DEFAULT_HTTP_RETRIES: u32 = 3;

const ADAPTERS: &str = "exactly one of `run_file: runs/{tier}.jsonl`, `command: [program, args...]` or `http: { url: ... }`";

pub(crate) fn validate(keys: &Keys<'_>, raw: Option<&RawPipeline>) -> Result<Option<Pipeline>> {
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
            timeout,
        })));
    }
    let http: &RawHttpPipeline = raw.http.as_ref().expect("one adapter is given");
    if !(http.url.starts_with("http://") || http.url.starts_with("https://")) {
        return Err(keys.error(
            "pipeline.http.url",
            format!("`{}`: expected an http:// or https:// URL", http.url),
        ));
    }
    let concurrency = http.concurrency.unwrap_or(DEFAULT_HTTP_CONCURRENCY);
    if concurrency == 0 {
        return Err(keys.error("pipeline.http.concurrency", "expected at least 1"));
    }
    Ok(Some(Pipeline::Http(HttpPipeline {
        url: http.url.clone(),
        concurrency,
        timeout: keys.timeout(
            "pipeline.http.timeout_s",
            http.timeout_s,
            DEFAULT_HTTP_TIMEOUT_S,
        )?,
        max_retries: http.max_retries.unwrap_or(DEFAULT_HTTP_RETRIES),
    })))
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
