//! The config file as written: serde types that reject unknown keys.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use crate::judge::backend::RawJudge;

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
#[serde(
    expecting = "a mapping of the config's top-level keys (`version`, `tiers`, `metrics`, ...)"
)]
pub(crate) struct RawConfig {
    pub version: u32,
    pub corpus: Option<String>,
    pub chunk_separator: Option<String>,
    pub metrics: Vec<RawMetric>,
    #[serde(default)]
    pub slices: Vec<String>,
    /// The `judges` section, only accepted here: it is read in a pass of its own
    /// ([`super::raw_judges`]), into `judges`. Never read back, hence the allowance.
    #[allow(dead_code)]
    #[serde(default, rename = "judges", skip_serializing)]
    pub judges_section: IgnoredAny,
    #[serde(skip)]
    pub judges: BTreeMap<String, RawJudge>,
    pub cache: Option<RawCache>,
    pub embeddings: Option<RawEmbeddings>,
    pub diagnosis: Option<RawDiagnosis>,
    pub pipeline: Option<RawPipeline>,
    pub tiers: BTreeMap<String, RawTier>,
    #[serde(default)]
    pub gate: RawGate,
    pub history: Option<RawHistory>,
}

/// How a tier's run is obtained: exactly one of `run_file`, `command`, `http`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a mapping with one of `run_file`, `command` or `http`")]
pub(crate) struct RawPipeline {
    pub run_file: Option<String>,
    pub command: Option<Vec<String>>,
    pub http: Option<RawHttpPipeline>,
    /// The `command` adapter's time limit for the whole run.
    pub timeout_s: Option<f64>,
}

/// The `http` pipeline adapter's settings.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a mapping such as `{ url: http://host/run }`")]
pub(crate) struct RawHttpPipeline {
    pub url: String,
    pub concurrency: Option<usize>,
    pub timeout_s: Option<f64>,
    pub max_retries: Option<u32>,
}

/// Thresholds of the failure-diagnosis matrix.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a mapping of `diagnosis` settings")]
pub(crate) struct RawDiagnosis {
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub faithfulness: Option<f64>,
    pub relevance: Option<f64>,
}

/// An OpenAI-compatible embeddings endpoint for `answer_relevance`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a mapping of `embeddings` settings (`kind`, `model`, ...)")]
pub(crate) struct RawEmbeddings {
    pub base_url: Option<String>,
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<usize>,
    /// What 1,000 tokens cost (`output` is unused: embeddings have no completion tokens).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price_per_1k_tokens: Option<crate::judge::cost::RawPrice>,
    /// The seconds one request takes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_s: Option<f64>,
}

/// Where judge verdicts are cached.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a mapping of `cache` settings")]
pub(crate) struct RawCache {
    pub path: Option<String>,
    pub mode: Option<super::CacheMode>,
}

/// A metric entry: a name (`recall@5`) or a map with options.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub(crate) enum RawMetric {
    Name(String),
    Spec(RawMetricSpec),
}

impl RawMetric {
    pub(crate) fn name(&self) -> &str {
        match self {
            RawMetric::Name(name) => name,
            RawMetric::Spec(spec) => &spec.name,
        }
    }
}

impl<'de> Deserialize<'de> for RawMetric {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MetricVisitor;
        impl<'de> Visitor<'de> for MetricVisitor {
            type Value = RawMetric;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a metric name or a map {name, judge, k, empty_answer, claims, judged}")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<RawMetric, E> {
                Ok(RawMetric::Name(name.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawMetric, A::Error> {
                RawMetricSpec::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(RawMetric::Spec)
            }
        }
        deserializer.deserialize_any(MetricVisitor)
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a mapping such as `{ name: faithfulness, judge: j }`")]
pub(crate) struct RawMetricSpec {
    pub name: String,
    pub judge: Option<String>,
    pub k: Option<usize>,
    pub empty_answer: Option<RawEmptyAnswer>,
    pub claims: Option<RawClaims>,
    pub judged: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RawEmptyAnswer {
    Zero,
    Exclude,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RawClaims {
    Sentences,
    Llm,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a mapping of tier settings (`qrels`, `baseline`, ...)")]
pub(crate) struct RawTier {
    pub qrels: Option<String>,
    /// Query texts (TSV `qid<TAB>text` or JSONL) for qrels that carry none.
    pub queries: Option<String>,
    pub from: Option<String>,
    pub sample: Option<usize>,
    pub stratify: Option<String>,
    pub seed: Option<u64>,
    pub baseline: String,
    pub labels: Option<String>,
    pub store_text: Option<bool>,
    /// How many times the pipeline answers every query (the gate compares per-query means).
    pub repeats: Option<usize>,
    /// How many times the judges are asked about the same answers (self-consistency).
    pub judge_repeats: Option<usize>,
    /// How the tier's must-pass queries are decided over `repeats`.
    pub must_pass: Option<RawMustPass>,
    /// A document is relevant for binary metrics with a grade at least this (trec_eval `-l`).
    pub relevance_level: Option<i64>,
    /// What a judged query without a relevant document scores: `exclude` (default) or `zero`.
    pub no_relevant: Option<crate::metrics::conventions::NoRelevant>,
    /// `ragate validate` warns about model judgments (`judged_by`) applied longer ago than this.
    pub model_judgments_max_age_days: Option<u64>,
    /// The tier's own metrics, replacing the top-level `metrics` list for this tier.
    pub metrics: Option<Vec<RawMetric>>,
    /// The tier's own slice fields, replacing the top-level `slices` list for this tier.
    pub slices: Option<Vec<String>>,
    pub gate: Option<RawGate>,
}

/// `must_pass:` of a tier.
#[derive(Debug, Clone, Copy, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a mapping such as `{ min_repeats: 2 }`")]
pub(crate) struct RawMustPass {
    /// How many of the tier's `repeats` a must-pass query must pass (default: all of them).
    pub min_repeats: Option<usize>,
}

/// How a verdict is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Fail with evidence (after correction) that the worsening exceeds its limit.
    Significant,
    /// Fail on the point estimate alone.
    Point,
}

/// Multiple-comparison correction over the checks of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Correction {
    /// Holm's step-down: family-wise error at most alpha.
    Holm,
    /// No correction: each check at alpha.
    None,
}

/// Multiple-comparison correction over the slice checks (a diagnostic family).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SliceCorrection {
    /// Holm: family-wise error at most alpha.
    Holm,
    /// Benjamini-Hochberg: false-discovery rate at most alpha.
    Bh,
    /// No correction: each slice check at alpha.
    None,
}

/// What an inconclusive check (beyond the limit, not enough evidence) does to the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InconclusivePolicy {
    /// Shown prominently, passes (the default).
    Pass,
    /// Fails the run (strict release gates).
    Fail,
}

/// Where alpha applies: to each family of checks (the default), or to the whole run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AlphaScope {
    /// Each family (the `all` checks, the slice checks) at alpha; calibrated floors at their own
    /// one-sided 2.5%: a run's chance of a false verdict is the sum (the gate states it).
    #[default]
    Family,
    /// alpha split evenly across the families present in the run (the `all` checks, the slice
    /// checks, calibrated floors), so the run's chance of a false verdict is at most alpha.
    Run,
}

/// What a drift across runs (`--history`) does to the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DriftPolicy {
    /// Shown as a warning, never fails (the default).
    #[default]
    Warn,
    /// Fails the run like a regression.
    Fail,
}

/// `history:`: where `ragate history` keeps its records.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a mapping of `history` settings")]
pub(crate) struct RawHistory {
    /// The history directory, relative to the config file.
    pub dir: String,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a mapping of `gate` settings (`rules`, ...)")]
pub(crate) struct RawGate {
    pub decision: Option<Decision>,
    pub alpha: Option<f64>,
    /// `family` (default: alpha per family) or `run` (alpha split across the families).
    pub alpha_scope: Option<AlphaScope>,
    pub correction: Option<Correction>,
    pub slice_correction: Option<SliceCorrection>,
    pub inconclusive: Option<InconclusivePolicy>,
    pub min_queries: Option<usize>,
    /// The share of the tier's queries the baseline should pair with; below it the headline
    /// says how many were compared.
    pub min_share: Option<f64>,
    /// No longer used (tests are exact or analytic): accepted with a notice.
    pub resamples: Option<usize>,
    /// The default seed of sampled tiers (nothing in a verdict is random).
    pub seed: Option<u64>,
    pub rules: Option<Vec<RawRule>>,
    /// What a drift across runs (`gate --history`) does: warn (default) or fail.
    pub drift: Option<DriftPolicy>,
    /// What a run may spend on judges, checked before the first judge call.
    pub budget: Option<super::budget::RawBudget>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a rule mapping such as `{ metric: recall@5, max_drop: 0.02 }`")]
pub(crate) struct RawRule {
    pub metric: String,
    pub slice: Option<String>,
    pub max_drop: Option<f64>,
    pub max_drop_pct: Option<f64>,
    pub min: Option<f64>,
    pub max_increase: Option<f64>,
    pub max_increase_pct: Option<f64>,
    pub max: Option<f64>,
}
