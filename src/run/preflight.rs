//! The checks a gate run makes before its pipeline runs (which may take hours): slice fields, the
//! query texts the pipeline is sent, the API keys of the judges it will call, the baseline and the
//! labels (the baseline is loaded here once, for the whole run), and last the probes of the
//! judges' endpoints and programs ([`crate::run::probe`]). A job with a setup problem fails in seconds, not after the whole run; `validate` makes
//! the same checks.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Instant;

use crate::config::{CacheMode, Config, Tier, locate};
use crate::error::{Error, Result};
use crate::http;
use crate::input::labels::Label;
use crate::input::qrels::Qrels;
use crate::report::junit::RunClock;
use crate::run::judges_called::{embeddings_called, judged_by_judges};
use crate::run::probe;
use crate::run::tier_baseline::{self, Baseline};
use crate::run::tier_labels;
use crate::suggest;
use crate::term;
use crate::tier;

/// What the checks read once for the rest of the run.
pub(crate) struct Checked {
    /// The tier's baseline (None: not compared, or the tier's first run).
    pub(crate) baseline: Option<Baseline>,
    /// The tier's human labels (None: the tier has none).
    pub(crate) labels: Option<Vec<Label>>,
}

/// Every check; the baseline's only when the run will be compared with it (not a shard), the
/// query texts only when the configured pipeline runs (no `--run`: `run` is None). Returns the tier's baseline
/// and labels, read once here for the rest of the run, so that a bad file stops the run before
/// the pipeline starts.
pub(crate) fn check(
    config: &Config,
    tier: &Tier,
    qrels: &Qrels,
    compared: bool,
    run: Option<&Path>,
) -> Result<Checked> {
    if let Some(error) = query_errors(config, tier, qrels, run.is_none())
        .into_iter()
        .next()
    {
        return Err(error);
    }
    let labels = tier_labels::read(tier)?;
    check_api_keys(config)?;
    let baseline = if compared {
        check_baseline(tier)?
    } else {
        None
    };
    check_clock()?;
    let run_file = run
        .map(Path::to_path_buf)
        .or_else(|| config.run_file(&tier.name));
    probe::before_run(config, tier, qrels, run_file.as_deref())?;
    Ok(Checked { baseline, labels })
}

/// The checks on the tier's queries, every error (`validate` lists them all; the gate stops at
/// the first): slice fields every query lacks, and the texts the pipeline is sent when
/// `runs_pipeline`.
pub(crate) fn query_errors(
    config: &Config,
    tier: &Tier,
    qrels: &Qrels,
    runs_pipeline: bool,
) -> Vec<Error> {
    let mut errors = slice_field_errors(config, qrels);
    if let Some(adapter) = tier::text_needed_by(config).filter(|_| runs_pipeline)
        && let Err(error) = tier::require_texts(config, tier, qrels, adapter)
    {
        errors.push(error);
    }
    errors
}

/// junit.xml's timestamp: a bad SOURCE_DATE_EPOCH fails now, not after the run.
pub(crate) fn check_clock() -> Result<()> {
    RunClock::of_run(Instant::now()).map(drop)
}

/// A baseline that exists must be readable and of this tier; a missing one (the tier's first
/// run) is not an error yet: the run's metrics are measured and shown, to be accepted.
fn check_baseline(tier: &Tier) -> Result<Option<Baseline>> {
    let baseline = tier_baseline::load(
        tier,
        "fix the file or remove it (then accept a new baseline)",
    )?;
    if baseline.is_none() {
        term::note(format!(
            "tier `{}` has no baseline yet ({}): this run is measured but not gated",
            tier.name,
            tier.baseline.display()
        ));
    }
    Ok(baseline)
}

/// A config error for every slice field that no query of `qrels` has, at its line and column in
/// the config, with the closest field the queries do have.
pub(crate) fn slice_field_errors(config: &Config, qrels: &Qrels) -> Vec<Error> {
    let fields: BTreeSet<&str> = qrels
        .queries()
        .iter()
        .flat_map(|q| q.attributes.keys().map(String::as_str))
        .collect();
    config
        .slices
        .iter()
        .enumerate()
        .filter(|(_, field)| !fields.contains(field.as_str()))
        .map(|(index, field)| {
            let message = format!(
                "no query of {} has a `{field}` field: expected a field the qrels carry",
                qrels.path().display()
            );
            let error = Error::config(
                &config.path,
                format!("slices[{index}]"),
                suggest::did_you_mean(message, field, fields.iter().copied()),
            );
            locate::locate_in_file(error, &config.path)
        })
        .collect()
}

/// Before the pipeline runs (which may take hours), the API key of every judge and embeddings
/// endpoint the tier will call must be set: a fork pull request without the secret fails at once,
/// naming the variable. Replay mode calls nothing, so it needs no key.
pub(crate) fn check_api_keys(config: &Config) -> Result<()> {
    if config.cache.mode == CacheMode::Replay {
        return Ok(());
    }
    let judge_keys = judged_by_judges(config).filter_map(|spec| {
        let variable = config.judges[&spec.judge].api_key_env()?;
        Some((format!("judges.{}", spec.judge), Some(variable)))
    });
    let embeddings_key = embeddings_called(config).map(|spec| {
        (
            "embeddings".to_string(),
            spec.endpoint.api_key_env.as_deref(),
        )
    });
    for (key, variable) in judge_keys.chain(embeddings_key) {
        if let Err(message) = http::authorization(variable) {
            return Err(Error::config(
                &config.path,
                format!("{key}.api_key_env"),
                format!(
                    "{message}: set it before the gate runs the pipeline (on a fork pull request \
                     the repository's secrets are not available), or use `cache: {{ mode: replay }}` \
                     with a cache that holds every verdict"
                ),
            ));
        }
    }
    Ok(())
}
