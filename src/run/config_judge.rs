//! A judge of the config by name, as a command's `--judge NAME` or `--generator NAME` asks for
//! it: its client, telling what it does on stderr; an unknown name is a usage error with the
//! configured names and a did-you-mean. And the config's judge cache, as a run or a plan opens it.

use crate::config::{CacheMode, Config};
use crate::error::{Error, Result};
use crate::judge::cache::JudgeCache;
use crate::judge::{self, Judge};
use crate::suggest;

/// The judge `name` of `config`, for the command-line flag `flag` (`--judge`).
pub(crate) fn by_name(config: &Config, flag: &str, name: &str) -> Result<Judge> {
    match config.judges.get(name) {
        Some(spec) => Ok(judge::build(spec).reporting_to(crate::run::judge_events::printed())),
        None => {
            let names: Vec<&str> = config.judges.keys().map(String::as_str).collect();
            Err(Error::Usage(suggest::did_you_mean(
                format!(
                    "{flag} {name}: no such judge in {}: expected one of {}",
                    config.path.display(),
                    names.join(", ")
                ),
                name,
                names.iter().copied(),
            )))
        }
    }
}

/// The config's judge cache in its configured mode; None with `cache: { mode: off }`.
pub(crate) fn run_cache(config: &Config) -> Result<Option<JudgeCache>> {
    match config.cache.mode {
        CacheMode::Off => Ok(None),
        mode => JudgeCache::open(&config.cache.path, mode).map(Some),
    }
}

/// The config's judge cache opened read-only when its file exists (a plan writes nothing and
/// creates no file); None when there is none or `mode: off`.
pub(crate) fn read_only_cache(config: &Config) -> Result<Option<JudgeCache>> {
    if config.cache.mode == CacheMode::Off || !config.cache.path.exists() {
        return Ok(None);
    }
    JudgeCache::open(&config.cache.path, CacheMode::Replay).map(Some)
}
