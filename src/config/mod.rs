//! The gate's configuration (`eval-config.yaml`): parsed strictly, validated once, paths resolved
//! relative to the config file. Unknown keys are errors with "did you mean".

mod embeddings;
mod expand;
mod hash;
mod metrics;
mod pipeline;
pub mod raw;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Location, Result};
use crate::gate::diagnosis;
use crate::judge::Judge;
use crate::judge::cache::CacheMode;
use crate::judge::embeddings::EmbeddingClient;
use crate::metrics::metric::{Metric, MetricSpec};
use crate::metrics::retrieval::Direction;
use crate::pipeline::Pipeline;
use crate::suggest;
pub use metrics::DEFAULT_JUDGE;
pub use raw::{Correction, Decision};
use raw::{RawConfig, RawGate, RawRule, RawTier};

pub const SUPPORTED_VERSION: u32 = 1;

/// A validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub path: PathBuf,
    pub corpus: Option<PathBuf>,
    pub chunk_separator: Option<String>,
    pub metrics: Vec<MetricSpec>,
    /// The judge-verdict cache (default `.ragate/judge-cache.sqlite` beside the config, read-write).
    pub cache: CacheSettings,
    /// How the run to gate is obtained, when configured.
    pub pipeline: Option<Pipeline>,
    /// Thresholds of the failure-diagnosis matrix in the summary.
    pub diagnosis: diagnosis::Thresholds,
    /// Judges by name (`default` is always there).
    pub judges: BTreeMap<String, Judge>,
    /// The embeddings endpoint; when set, `answer_relevance` is embedding-based.
    pub embeddings: Option<EmbeddingClient>,
    /// Query fields to slice by; the slice `all` is always present.
    pub slices: Vec<String>,
    pub tiers: BTreeMap<String, Tier>,
}

/// Where judge verdicts are cached and how.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheSettings {
    pub path: PathBuf,
    pub mode: CacheMode,
}

/// Where a tier's queries come from.
#[derive(Debug, Clone, PartialEq)]
pub enum TierSource {
    Qrels(PathBuf),
    /// A seeded sample of `size` queries of a larger set, stratified by a field.
    Sample {
        from: PathBuf,
        size: usize,
        stratify: Option<String>,
        seed: u64,
    },
}

#[derive(Debug, Clone)]
pub struct Tier {
    pub name: String,
    pub source: TierSource,
    pub baseline: PathBuf,
    /// Human labels for judge calibration (JSONL `{qid, answer, <metric>: value}`).
    pub labels: Option<PathBuf>,
    /// Keep answer text in results (false: a sha256 instead).
    pub store_text: bool,
    pub gate: GateSettings,
    /// sha256 of what gives the tier's numbers their meaning, as written in the file.
    pub config_hash: String,
}

#[derive(Debug, Clone)]
pub struct GateSettings {
    pub decision: Decision,
    pub alpha: f64,
    pub correction: Correction,
    pub min_queries: usize,
    pub resamples: usize,
    pub seed: u64,
    pub rules: Vec<Rule>,
}

/// A slice selector `field=value`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SliceValue {
    pub field: String,
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
    pub max_drop: Option<f64>,
    pub max_drop_pct: Option<f64>,
    pub min: Option<f64>,
    pub max_increase: Option<f64>,
    pub max_increase_pct: Option<f64>,
    pub max: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub metric: Metric,
    /// None: the rule applies to `all` and to every slice value.
    pub slice: Option<SliceValue>,
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
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let expanded = expand::expand(path, &text, |name| std::env::var(name).ok())?;
    let raw = parse(path, &expanded)?;
    let written: serde_yaml::Value = serde_yaml::from_str(&text).map_err(|e| {
        let line = e.location().map_or(0, |l| l.line() as u64);
        Error::parse(
            path,
            line,
            format!(
                "{e}: before `${{VAR}}` expansion the file must be valid YAML too: quote a variable \
                 inside a flow collection (`{{...}}`, `[...]`), or write that value in block style"
            ),
        )
    })?;
    validate(path, raw, &written)
}

fn parse(path: &Path, text: &str) -> Result<RawConfig> {
    let deserializer = serde_yaml::Deserializer::from_str(text);
    serde_path_to_error::deserialize(deserializer).map_err(|error| {
        let key = error.path().to_string();
        let inner = error.into_inner();
        let mut message = inner.to_string();
        let location = inner.location();
        if let Some(location) = &location {
            let suffix = format!(" at line {} column {}", location.line(), location.column());
            if let Some(stripped) = message.strip_suffix(&suffix) {
                message = stripped.to_string();
            }
        }
        // serde_yaml prefixes its own (parent) path; keep only ours.
        if let Some((prefix, rest)) = message.split_once(": ")
            && key.starts_with(prefix)
        {
            message = rest.to_string();
        }
        let message = suggest::for_serde_message(message);
        let message = if key == "." || key.is_empty() {
            message
        } else {
            format!("{key}: {message}")
        };
        match location {
            Some(location) => Error::Parse {
                location: Location::new(path, location.line() as u64)
                    .with_column(location.column() as u64),
                message,
            },
            None => Error::input(path, message),
        }
    })
}

/// Validation context: the config path and a key path prefix for errors.
pub(crate) struct Keys<'a> {
    path: &'a Path,
}

impl Keys<'_> {
    fn error(&self, key: impl Into<String>, message: impl Into<String>) -> Error {
        Error::config(self.path, key, message)
    }
}

fn validate(path: &Path, raw: RawConfig, written: &serde_yaml::Value) -> Result<Config> {
    let keys = Keys { path };
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
    let judges = metrics::validate_judges(&keys, &raw.judges)?;
    let mut specs = metrics::validate_metrics(&keys, &raw.metrics, &judges)?;
    metrics::add_gated_operational(&mut specs, &raw);
    let embeddings = embeddings::validate(&keys, raw.embeddings.as_ref(), &raw.metrics)?;
    let metrics: Vec<Metric> = specs.iter().map(|s| s.metric).collect();
    validate_slices(&keys, &raw.slices)?;
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
        let prefix = format!("tiers.{name}");
        let gate = merge_gate(&raw.gate, tier.gate.as_ref());
        let rules_key = if tier.gate.as_ref().is_some_and(|g| g.rules.is_some()) {
            format!("{prefix}.gate.rules")
        } else {
            "gate.rules".to_string()
        };
        let settings = validate_gate(&keys, &prefix, &rules_key, &gate, &metrics, &raw.slices)?;
        let source = validate_source(&keys, &prefix, tier, &resolve, settings.seed)?;
        tiers.insert(
            name.clone(),
            Tier {
                name: name.clone(),
                source,
                baseline: resolve(&tier.baseline),
                labels: tier.labels.as_deref().map(resolve),
                store_text: tier.store_text.unwrap_or(true),
                gate: settings,
                config_hash: hash::tier_hash(written, name),
            },
        );
    }
    Ok(Config {
        path: path.to_path_buf(),
        corpus: raw.corpus.as_deref().map(resolve),
        chunk_separator: raw.chunk_separator,
        metrics: specs,
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
        pipeline: pipeline::validate(&keys, raw.pipeline.as_ref())?,
        judges,
        embeddings,
        slices: raw.slices,
        tiers,
    })
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn validate_slices(keys: &Keys<'_>, slices: &[String]) -> Result<()> {
    for (index, field) in slices.iter().enumerate() {
        let key = format!("slices[{index}]");
        if field.is_empty() || field == "all" || field.contains('=') {
            return Err(keys.error(
                key,
                format!("`{field}`: expected a query field name (not empty, not `all`, no `=`)"),
            ));
        }
        if slices[..index].contains(field) {
            return Err(keys.error(
                key,
                format!("`{field}` is listed twice: expected each field once"),
            ));
        }
    }
    Ok(())
}

/// The top-level gate block with the keys a tier's block names replacing it.
fn merge_gate(top: &RawGate, tier: Option<&RawGate>) -> RawGate {
    let Some(tier) = tier else { return top.clone() };
    RawGate {
        decision: tier.decision.or(top.decision),
        alpha: tier.alpha.or(top.alpha),
        correction: tier.correction.or(top.correction),
        min_queries: tier.min_queries.or(top.min_queries),
        resamples: tier.resamples.or(top.resamples),
        seed: tier.seed.or(top.seed),
        rules: tier.rules.clone().or_else(|| top.rules.clone()),
    }
}

fn validate_gate(
    keys: &Keys<'_>,
    tier_key: &str,
    rules_key: &str,
    gate: &RawGate,
    metrics: &[Metric],
    slices: &[String],
) -> Result<GateSettings> {
    let alpha = gate.alpha.unwrap_or(0.05);
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(keys.error(
            format!("{tier_key}.gate.alpha"),
            format!("{alpha} is outside (0, 1)"),
        ));
    }
    let min_queries = gate.min_queries.unwrap_or(5);
    if min_queries == 0 {
        return Err(keys.error(
            format!("{tier_key}.gate.min_queries"),
            "0: expected at least 1",
        ));
    }
    let resamples = gate.resamples.unwrap_or(10_000);
    if resamples < 100 {
        return Err(keys.error(
            format!("{tier_key}.gate.resamples"),
            format!("{resamples}: expected at least 100"),
        ));
    }
    let raw_rules = gate.rules.as_deref().unwrap_or_default();
    if raw_rules.is_empty() {
        return Err(keys.error(
            rules_key,
            "no rules: expected at least one, e.g. { metric: recall@5, max_drop: 0.02 }",
        ));
    }
    let mut rules: Vec<Rule> = Vec::new();
    for (index, raw) in raw_rules.iter().enumerate() {
        let rule = validate_rule(keys, &format!("{rules_key}[{index}]"), raw, metrics, slices)?;
        if rules
            .iter()
            .any(|r| r.metric == rule.metric && r.slice == rule.slice)
        {
            let slice = rule
                .slice
                .as_ref()
                .map_or("all slices".to_string(), ToString::to_string);
            return Err(keys.error(
                format!("{rules_key}[{index}]"),
                format!(
                    "a second rule for {} on {slice}: expected one rule per metric and slice",
                    rule.metric
                ),
            ));
        }
        rules.push(rule);
    }
    Ok(GateSettings {
        decision: gate.decision.unwrap_or(Decision::Significant),
        alpha,
        correction: gate.correction.unwrap_or(Correction::Holm),
        min_queries,
        resamples,
        seed: gate.seed.unwrap_or(42),
        rules,
    })
}

fn validate_rule(
    keys: &Keys<'_>,
    key: &str,
    raw: &RawRule,
    metrics: &[Metric],
    slices: &[String],
) -> Result<Rule> {
    let metric: Metric = raw
        .metric
        .parse()
        .map_err(|e| keys.error(format!("{key}.metric"), format!("{e}")))?;
    if let Metric::Ppi(calibrated) = metric {
        return validate_calibrated_rule(keys, key, raw, metrics, calibrated.base()).map(
            |limits| Rule {
                metric,
                slice: None,
                limits,
            },
        );
    }
    if !metrics.contains(&metric) {
        let names: Vec<String> = metrics.iter().map(ToString::to_string).collect();
        return Err(keys.error(
            format!("{key}.metric"),
            format!(
                "`{metric}` is not computed: expected one of the metrics list ({})",
                names.join(", ")
            ),
        ));
    }
    let slice = match &raw.slice {
        None => None,
        Some(text) => {
            let (field, value) = text
                .split_once('=')
                .filter(|(f, v)| !f.is_empty() && !v.is_empty())
                .ok_or_else(|| {
                    keys.error(
                        format!("{key}.slice"),
                        format!("`{text}`: expected `field=value`, e.g. class=paraphrased"),
                    )
                })?;
            if !slices.iter().any(|s| s == field) {
                return Err(keys.error(
                    format!("{key}.slice"),
                    suggest::did_you_mean(
                        format!(
                            "`{field}` is not a slice field: expected one of the slices list ({})",
                            slices.join(", ")
                        ),
                        field,
                        slices.iter().map(String::as_str),
                    ),
                ));
            }
            Some(SliceValue {
                field: field.to_string(),
                value: value.to_string(),
            })
        }
    };
    let limits = Limits {
        max_drop: raw.max_drop,
        max_drop_pct: raw.max_drop_pct,
        min: raw.min,
        max_increase: raw.max_increase,
        max_increase_pct: raw.max_increase_pct,
        max: raw.max,
    };
    let named = [
        ("max_drop", limits.max_drop),
        ("max_drop_pct", limits.max_drop_pct),
        ("min", limits.min),
        ("max_increase", limits.max_increase),
        ("max_increase_pct", limits.max_increase_pct),
        ("max", limits.max),
    ];
    let (allowed, direction_name): (&[&str], &str) = match metric.direction() {
        Direction::HigherIsBetter => (&["max_drop", "max_drop_pct", "min"], "higher-is-better"),
        Direction::LowerIsBetter => (
            &["max_increase", "max_increase_pct", "max"],
            "lower-is-better",
        ),
    };
    let mut any = false;
    for (name, value) in named {
        let Some(value) = value else { continue };
        if !allowed.contains(&name) {
            return Err(keys.error(
                format!("{key}.{name}"),
                format!(
                    "{metric} is {direction_name}: expected {}",
                    allowed.join(", ")
                ),
            ));
        }
        let non_negative = !matches!(name, "min" | "max");
        if !value.is_finite() || (non_negative && value < 0.0) {
            return Err(keys.error(
                format!("{key}.{name}"),
                format!(
                    "{value}: expected a finite{} number",
                    if non_negative { " non-negative" } else { "" }
                ),
            ));
        }
        any = true;
    }
    if !any {
        return Err(keys.error(
            key,
            format!("no limit: expected at least one of {}", allowed.join(", ")),
        ));
    }
    Ok(Rule {
        metric,
        slice,
        limits,
    })
}

/// A rule on a calibrated estimate: its base metric must be computed, and only `min` applies
/// (to the lower bound of the estimate's confidence interval), over all queries.
fn validate_calibrated_rule(
    keys: &Keys<'_>,
    key: &str,
    raw: &RawRule,
    metrics: &[Metric],
    base: Metric,
) -> Result<Limits> {
    if !metrics.contains(&base) {
        return Err(keys.error(
            format!("{key}.metric"),
            format!("`{}` needs `{base}` in the metrics list", raw.metric),
        ));
    }
    let others = [
        ("slice", raw.slice.is_some()),
        ("max_drop", raw.max_drop.is_some()),
        ("max_drop_pct", raw.max_drop_pct.is_some()),
        ("max_increase", raw.max_increase.is_some()),
        ("max_increase_pct", raw.max_increase_pct.is_some()),
        ("max", raw.max.is_some()),
    ];
    if let Some((name, _)) = others.iter().find(|(_, present)| *present) {
        return Err(keys.error(
            format!("{key}.{name}"),
            format!(
                "`{}` takes only `min` (a floor on its lower CI bound)",
                raw.metric
            ),
        ));
    }
    match raw.min {
        Some(min) if min.is_finite() => Ok(Limits {
            min: Some(min),
            ..Limits::default()
        }),
        _ => Err(keys.error(
            key,
            format!(
                "`{}` needs `min`: a floor on the lower bound of its 95% CI",
                raw.metric
            ),
        )),
    }
}

fn validate_diagnosis(
    keys: &Keys<'_>,
    raw: Option<&raw::RawDiagnosis>,
) -> Result<diagnosis::Thresholds> {
    let defaults = diagnosis::Thresholds::default();
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

#[cfg(test)]
mod tests;
