//! The gate's configuration (`eval-config.yaml`): parsed strictly, validated once, paths resolved
//! relative to the config file. Unknown keys are errors with "did you mean".

mod budget;
mod conceal;
pub mod discover;
mod embeddings;
mod hash;
mod judges;
pub(crate) mod locate;
mod metrics;
mod parse;
mod pipeline;
pub(crate) mod raw;
mod raw_judges;
mod rules;
mod tier_lists;
pub mod tier_name;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
pub use crate::http::endpoint::HttpEndpoint;
pub use crate::judge::backend::JudgeSpec;
pub use crate::judge::cache::CacheMode;
pub use crate::judge::embeddings::EmbeddingsSpec;
use crate::metrics::conventions::{self, Conventions, DEFAULT_RELEVANCE_LEVEL};
use crate::metrics::metric::{Metric, MetricSpec};
use crate::pipeline::Pipeline;
pub(crate) use crate::settings::keys::Keys;
pub use crate::settings::keys::MAX_TIMEOUT_S;
use crate::settings::{expand, yaml};
use crate::suggest;
pub use budget::Budget;
pub use judges::DEFAULT_JUDGE;
use parse::parse;
pub use raw::{AlphaScope, Correction, Decision, DriftPolicy, InconclusivePolicy, SliceCorrection};
use raw::{RawConfig, RawTier};
pub use rules::{DEFAULT_EMPTY_ANSWERS_MAX_INCREASE, DEFAULT_MIN_SHARE};
use rules::{merge_gate, validate_gate};

/// The config `version:` this ragate reads.
pub const SUPPORTED_VERSION: u32 = 1;
/// The most runs of the pipeline a tier may ask for (`repeats:`).
pub const MAX_REPEATS: usize = 100;

/// A validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// The config file; relative paths in it are resolved against its directory.
    pub path: PathBuf,
    /// Document texts (`corpus.jsonl`), for contexts when runs carry none.
    pub corpus: Option<PathBuf>,
    /// Retrieved ids `doc#chunk` count as `doc` with this separator (None: ids are documents).
    pub chunk_separator: Option<String>,
    /// The judge-verdict cache (default `.ragate/judge-cache.sqlite` beside the config, read-write).
    pub cache: CacheSettings,
    /// How the run to gate is obtained, when configured.
    pub pipeline: Option<Pipeline>,
    /// Thresholds of the failure-diagnosis matrix in the summary.
    pub diagnosis: DiagnosisThresholds,
    /// Judges by name (`default` is always there): settings only, `judge::build` makes clients.
    pub judges: BTreeMap<String, JudgeSpec>,
    /// The embeddings endpoint; when set, `answer_relevance` is embedding-based.
    pub embeddings: Option<EmbeddingsSpec>,
    /// Tiers by name (`smoke`, `regression`, `deep`, ...).
    pub tiers: BTreeMap<String, Tier>,
    /// The run history directory (`history: { dir }`, resolved against the config's folder).
    pub history_dir: Option<PathBuf>,
}

/// Where judge verdicts are cached and how (`judge::cache` opens the cache from these).
#[derive(Debug, Clone, PartialEq)]
pub struct CacheSettings {
    /// The SQLite file, resolved against the config's directory.
    pub path: PathBuf,
    /// How the cache is used.
    pub mode: CacheMode,
}

/// Where a tier's queries come from.
#[derive(Debug, Clone, PartialEq)]
pub enum TierSource {
    /// The queries of a qrels file (`qrels:`).
    Qrels(PathBuf),
    /// A seeded sample of `size` queries of a larger set, stratified by a field.
    Sample {
        /// The larger qrels file sampled from.
        from: PathBuf,
        /// How many queries to sample.
        size: usize,
        /// The query field whose values keep their shares in the sample (None: no strata).
        stratify: Option<String>,
        /// The seed of the sample (the same seed gives the same queries).
        seed: u64,
    },
}

/// A validated tier: its queries, its baseline and its gate settings.
#[derive(Debug, Clone)]
pub struct Tier {
    /// The tier's name, as in the config.
    pub name: String,
    /// Where the tier's queries come from.
    pub source: TierSource,
    /// The query texts (`queries:`, TSV `qid<TAB>text` or JSONL), joined to the qrels by qid.
    pub queries: Option<PathBuf>,
    /// The baseline results file of the tier (written by `ragate baseline accept`).
    pub baseline: PathBuf,
    /// Human labels for judge calibration (JSONL `{qid, answer, <metric>: value}`).
    pub labels: Option<PathBuf>,
    /// Keep answer text in results (false: a sha256 instead).
    pub store_text: bool,
    /// How many times the pipeline answers every query (1: once).
    pub repeats: usize,
    /// How many times the judges are asked about the first run's answers (1: once).
    pub judge_repeats: usize,
    /// How many of the `repeats` runs a must-pass query must pass (`must_pass: { min_repeats }`;
    /// default all of them, and 1 of 1 without repeats).
    pub must_pass_min_repeats: usize,
    /// The metrics the tier computes, in config order: its own `metrics:` list when it has one,
    /// else the top-level list (each with `empty_answers` and the gated operational metrics added).
    pub metrics: Vec<MetricSpec>,
    /// Where the tier's metrics list is written: `metrics`, or `tiers.NAME.metrics`.
    pub metrics_key: String,
    /// The query fields the tier is sliced by (the slice `all` is always present): its own
    /// `slices:` list when it has one, else the top-level list.
    pub slices: Vec<String>,
    /// Where the tier's slices list is written: `slices`, or `tiers.NAME.slices`.
    pub slices_key: String,
    /// How the tier's checks are decided.
    pub gate: GateSettings,
    /// sha256 of what gives the tier's numbers their meaning, as written in the file.
    pub config_hash: String,
    /// What a drift across runs (`gate --history`) does: warn (default) or fail.
    pub drift: DriftPolicy,
    /// What a run may spend on judges (`gate.budget`), checked before the first judge call.
    pub budget: Option<Budget>,
    /// The relevance level and what a judged query without a relevant document scores
    /// (`relevance_level:`, `no_relevant:`), recorded in the results' provenance.
    pub conventions: Conventions,
    /// How old a model judgment (`judged_by`'s `at`) may grow before `ragate validate` warns
    /// that no person has reviewed it since (None: never).
    pub model_judgments_max_age_days: Option<u64>,
}

/// How a tier's checks are decided: decision rule, significance level, corrections, rules.
#[derive(Debug, Clone)]
pub struct GateSettings {
    /// Fail on evidence (`significant`) or on the point estimate (`point`).
    pub decision: Decision,
    /// Significance level of a check, before correction (default 0.05).
    pub alpha: f64,
    /// Whether alpha holds per family of checks (default) or for the whole run, split across the
    /// families present (`gate::decision` sets the levels).
    pub alpha_scope: AlphaScope,
    /// Multiple-comparison correction over the `all` checks.
    pub correction: Correction,
    /// Multiple-comparison correction over the per-slice checks.
    pub slice_correction: SliceCorrection,
    /// Whether an inconclusive check passes or fails the run.
    pub inconclusive: InconclusivePolicy,
    /// Checks over fewer queries are skipped (underpowered), never passed.
    pub min_queries: usize,
    /// The share of the tier's queries the baseline should pair with (`gate.min_share`, default
    /// 0.9): below it every output says how many were compared; below half of them (or below
    /// `min_share` when that is lower) the run is not decided.
    pub min_share: f64,
    /// The default seed of sampled tiers.
    pub seed: u64,
    /// The rules, tier-wide ones and per-slice ones (the latter override the former).
    pub rules: Vec<Rule>,
    /// Keys that are accepted but no longer do anything, with what to do.
    pub notices: Vec<String>,
}

/// A slice selector `field=value`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SliceValue {
    /// The query field (e.g. `class`).
    pub field: String,
    /// The field's value that selects the queries (e.g. `paraphrased`).
    pub value: String,
}

impl fmt::Display for SliceValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.field, self.value)
    }
}

/// Limits of one rule; which ones apply depends on the metric's direction.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Limits {
    /// Largest tolerated fall of a higher-is-better metric, absolute.
    pub max_drop: Option<f64>,
    /// Largest tolerated fall, in percent of the baseline mean.
    pub max_drop_pct: Option<f64>,
    /// Floor of a higher-is-better metric (applies to every non-skipped check).
    pub min: Option<f64>,
    /// Largest tolerated rise of a lower-is-better metric (latency, cost), absolute.
    pub max_increase: Option<f64>,
    /// Largest tolerated rise, in percent of the baseline mean.
    pub max_increase_pct: Option<f64>,
    /// Ceiling of a lower-is-better metric.
    pub max: Option<f64>,
}

impl Limits {
    /// The key of the change limit that is 0 (`max_drop: 0`, ...), if one is.
    pub fn zero_change_limit(&self) -> Option<&'static str> {
        [
            ("max_drop", self.max_drop),
            ("max_drop_pct", self.max_drop_pct),
            ("max_increase", self.max_increase),
            ("max_increase_pct", self.max_increase_pct),
        ]
        .into_iter()
        .find(|(_, limit)| *limit == Some(0.0))
        .map(|(key, _)| key)
    }
}

/// One gate rule: a metric, optionally one slice, and the limits of its change.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// The gated metric.
    pub metric: Metric,
    /// None: the rule applies to `all` and to every slice value.
    pub slice: Option<SliceValue>,
    /// What change the rule tolerates.
    pub limits: Limits,
}

impl Config {
    /// The tier `name`, or an error that lists the tiers (with "did you mean").
    pub fn tier(&self, name: &str) -> Result<&Tier> {
        self.tiers.get(name).ok_or_else(|| {
            let names: Vec<&str> = self.tiers.keys().map(String::as_str).collect();
            Error::Usage(suggest::did_you_mean(
                format!(
                    "{}: no tier `{name}`: expected one of {}",
                    self.path.display(),
                    names.join(", ")
                ),
                name,
                names.iter().copied(),
            ))
        })
    }
}

/// Reads and validates the config at `path`. `${VAR}` and `${VAR:-default}` are expanded from
/// the environment; the provenance hash is taken from the file as written, before expansion.
pub fn load(path: &Path) -> Result<Config> {
    let text = std::fs::read_to_string(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => discover::not_found(path),
        _ => Error::io(path, e),
    })?;
    // A byte-order mark (some Windows editors write one) is accepted, as the readers do.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let lookup = |name: &str| std::env::var(name).ok();
    let expanded = expand::expand(path, text, lookup)?;
    // Errors name a `${VAR}`, never its value; values in URLs and keys are secrets.
    let concealer = conceal::Concealer::new(text, lookup);
    if let Ok(written) = yaml::from_str::<yaml::Value>(text) {
        conceal::register_secrets(&written);
    }
    let excerpt = |error: Error| locate::with_excerpt(error, text, &expanded);
    let raw = parse(path, &expanded).map_err(|e| excerpt(concealer.conceal(e)))?;
    let written: yaml::Value = yaml::from_str(text).map_err(|e| {
        let location = e.location();
        let line = location.as_ref().map_or(0, |l| l.line() as u64);
        let mut message = format!(
            "{e}: before `${{VAR}}` expansion the file must be valid YAML too: quote a variable \
             inside a flow collection (`{{...}}`, `[...]`), or write that value in block style"
        );
        if let Some(shown) =
            location.and_then(|l| locate::excerpt(text, text, line, l.column() as u64))
        {
            message = format!("{message}\n{shown}");
        }
        Error::parse(path, line, message)
    })?;
    let as_expanded: yaml::Value = yaml::from_str(&expanded).map_err(|e| {
        concealer.conceal(Error::input(
            path,
            format!("{e}: expected valid YAML after `${{VAR}}` expansion"),
        ))
    })?;
    expand::check_same_shape(path, &written, &as_expanded)?;
    conceal::install_as_written(&written, &as_expanded);
    let notes = metrics::alias_notes(&raw);
    let config = validate(path, raw, &written)
        .map_err(|error| concealer.conceal(locate::locate(error, text)))?;
    for note in notes {
        crate::term::note(format!("{}: {note}", path.display()));
    }
    Ok(config)
}

fn validate(path: &Path, raw: RawConfig, written: &yaml::Value) -> Result<Config> {
    let keys = Keys::new(path);
    let base = path.parent().unwrap_or(Path::new("."));
    let resolve = |relative: &str| base.join(relative);
    if raw.version != SUPPORTED_VERSION {
        return Err(keys.error(
            "version",
            format!(
                "unsupported version {}: expected {SUPPORTED_VERSION}",
                raw.version
            ),
        ));
    }
    let judges = judges::validate_judges(&keys, &raw.judges, written, base)?;
    let top_lists = tier_lists::Lists::top(&keys, &raw, &judges)?;
    let metrics_lists: Vec<(String, &[raw::RawMetric])> =
        std::iter::once(("metrics".into(), &raw.metrics[..]))
            .chain(raw.tiers.iter().filter_map(|(name, tier)| {
                Some((format!("tiers.{name}.metrics"), tier.metrics.as_deref()?))
            }))
            .collect();
    let embeddings = embeddings::validate(&keys, raw.embeddings.as_ref(), &metrics_lists, written)?;
    if raw.chunk_separator.as_deref() == Some("") {
        return Err(keys.error(
            "chunk_separator",
            "empty: expected a separator such as \"#\"",
        ));
    }
    if raw.tiers.is_empty() {
        return Err(keys.error("tiers", "no tiers: expected at least one (e.g. smoke)"));
    }
    let mut tiers = BTreeMap::new();
    for (name, tier) in &raw.tiers {
        check_tier_name(&keys, name)?;
        let prefix = format!("tiers.{name}");
        let gate = merge_gate(&raw.gate, tier.gate.as_ref());
        let rules_key = if tier.gate.as_ref().is_some_and(|g| g.rules.is_some()) {
            format!("{prefix}.gate.rules")
        } else {
            "gate.rules".to_string()
        };
        let rules = gate.rules.as_deref().unwrap_or_default();
        let lists = top_lists.of_tier(&keys, (name, tier), rules, &judges)?;
        let metrics = lists.metric_names();
        let settings = validate_gate(
            &keys,
            &prefix,
            &rules_key,
            &gate,
            &lists.for_rules(&metrics),
        )?;
        let source = validate_source(&keys, &prefix, tier, &resolve, settings.seed)?;
        let budget_key = if tier.gate.as_ref().is_some_and(|g| g.budget.is_some()) {
            format!("{prefix}.gate.budget")
        } else {
            "gate.budget".to_string()
        };
        let budget = budget::validate(&keys, &budget_key, gate.budget.as_ref())?;
        let repeats = tier.repeats.unwrap_or(1);
        let judge_repeats = tier.judge_repeats.unwrap_or(1);
        for (key, value) in [("repeats", repeats), ("judge_repeats", judge_repeats)] {
            if !(1..=MAX_REPEATS).contains(&value) {
                return Err(keys.error(
                    format!("{prefix}.{key}"),
                    format!("{value}: expected 1 to {MAX_REPEATS}"),
                ));
            }
        }
        let must_pass_min_repeats = tier
            .must_pass
            .and_then(|must_pass| must_pass.min_repeats)
            .unwrap_or(repeats);
        if !(1..=repeats).contains(&must_pass_min_repeats) {
            return Err(keys.error(
                format!("{prefix}.must_pass.min_repeats"),
                format!(
                    "{must_pass_min_repeats}: expected 1 to {repeats} (the tier's `repeats`; a \
                     must-pass query passes when at least this many of its runs pass)"
                ),
            ));
        }
        let relevance_level = match tier.relevance_level {
            None => DEFAULT_RELEVANCE_LEVEL,
            Some(value) => conventions::relevance_level(value)
                .map_err(|message| keys.error(format!("{prefix}.relevance_level"), message))?,
        };
        tiers.insert(
            name.clone(),
            Tier {
                name: name.clone(),
                source,
                queries: tier.queries.as_deref().map(resolve),
                baseline: resolve(&tier.baseline),
                labels: tier.labels.as_deref().map(resolve),
                store_text: tier.store_text.unwrap_or(true),
                repeats,
                judge_repeats,
                must_pass_min_repeats,
                metrics: lists.metrics,
                metrics_key: lists.metrics_key,
                slices: lists.slices,
                slices_key: lists.slices_key,
                gate: settings,
                config_hash: hash::tier_hash(written, name),
                drift: gate.drift.unwrap_or_default(),
                budget,
                conventions: Conventions {
                    relevance_level,
                    no_relevant: tier.no_relevant.unwrap_or_default(),
                },
                model_judgments_max_age_days: tier.model_judgments_max_age_days,
            },
        );
    }
    Ok(Config {
        path: path.to_path_buf(),
        corpus: raw.corpus.as_deref().map(resolve),
        chunk_separator: raw.chunk_separator,
        cache: CacheSettings {
            path: resolve(
                raw.cache
                    .as_ref()
                    .and_then(|c| c.path.as_deref())
                    .unwrap_or(".ragate/judge-cache.sqlite"),
            ),
            mode: raw
                .cache
                .as_ref()
                .and_then(|c| c.mode)
                .unwrap_or(CacheMode::ReadWrite),
        },
        diagnosis: validate_diagnosis(&keys, raw.diagnosis.as_ref())?,
        pipeline: pipeline::validate(&keys, raw.pipeline.as_ref(), written)?,
        judges,
        embeddings,
        tiers,
        history_dir: match &raw.history {
            Some(history) if history.dir.trim().is_empty() => {
                return Err(keys.error(
                    "history.dir",
                    "empty: expected a directory for the run history, e.g. .ragate/history",
                ));
            }
            Some(history) => Some(resolve(&history.dir)),
            None => None,
        },
    })
}

/// A tier's name must be one safe path component ([`tier_name::check`]).
fn check_tier_name(keys: &Keys<'_>, name: &str) -> Result<()> {
    tier_name::check(name).map_err(|message| keys.error("tiers", message))
}

fn validate_diagnosis(
    keys: &Keys<'_>,
    raw: Option<&raw::RawDiagnosis>,
) -> Result<DiagnosisThresholds> {
    let defaults = DiagnosisThresholds::default();
    let Some(raw) = raw else { return Ok(defaults) };
    let mut thresholds = defaults;
    for (name, value, slot) in [
        ("low", raw.low, &mut thresholds.low),
        ("high", raw.high, &mut thresholds.high),
        (
            "faithfulness",
            raw.faithfulness,
            &mut thresholds.faithfulness,
        ),
        ("relevance", raw.relevance, &mut thresholds.relevance),
    ] {
        if let Some(value) = value {
            if !(0.0..=1.0).contains(&value) {
                return Err(keys.error(
                    format!("diagnosis.{name}"),
                    format!("{value} is outside [0, 1]"),
                ));
            }
            *slot = value;
        }
    }
    Ok(thresholds)
}

fn validate_source(
    keys: &Keys<'_>,
    prefix: &str,
    tier: &RawTier,
    resolve: &dyn Fn(&str) -> PathBuf,
    default_seed: u64,
) -> Result<TierSource> {
    match (&tier.qrels, &tier.from) {
        (Some(qrels), None) => {
            for (name, present) in [
                ("sample", tier.sample.is_some()),
                ("stratify", tier.stratify.is_some()),
                ("seed", tier.seed.is_some()),
            ] {
                if present {
                    return Err(keys.error(
                        format!("{prefix}.{name}"),
                        "only a sampled tier (`from:`) takes this key",
                    ));
                }
            }
            Ok(TierSource::Qrels(resolve(qrels)))
        }
        (None, Some(from)) => {
            let size = tier.sample.filter(|&n| n > 0).ok_or_else(|| {
                keys.error(
                    format!("{prefix}.sample"),
                    "a tier with `from:` needs `sample: N` (N >= 1 queries)",
                )
            })?;
            Ok(TierSource::Sample {
                from: resolve(from),
                size,
                stratify: tier.stratify.clone(),
                seed: tier.seed.unwrap_or(default_seed),
            })
        }
        (Some(_), Some(_)) => {
            Err(keys.error(prefix, "both `qrels` and `from`: expected one of them"))
        }
        (None, None) => Err(keys.error(
            prefix,
            "no queries: expected `qrels: FILE` or `from: FILE` with `sample: N`",
        )),
    }
}

/// Where "low" ends and "high" begins, per kind of metric, in the failure-diagnosis matrix
/// (`gate::diagnosis`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiagnosisThresholds {
    /// Recall below this is low; recall (or nDCG) at or above `high` is high.
    pub low: f64,
    /// Recall (or nDCG) at or above this is high.
    pub high: f64,
    /// Faithfulness below this is low, at or above it high.
    pub faithfulness: f64,
    /// Answer relevance below this is low.
    pub relevance: f64,
}

impl Default for DiagnosisThresholds {
    /// The seed note's values: recall < 0.65 is low, faithfulness < 0.75 is low.
    fn default() -> Self {
        DiagnosisThresholds {
            low: 0.65,
            high: 0.75,
            faithfulness: 0.75,
            relevance: 0.5,
        }
    }
}

#[cfg(test)]
mod tests;
