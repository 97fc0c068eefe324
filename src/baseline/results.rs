//! The results file of a gate run, which is also the baseline format once accepted.
//!
//! Versioned (`format`), pretty-printed with a stable key order, holding the raw per-query
//! values so that any two results can be compared again later.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::baseline::noise::RunNoise;
use crate::error::shorten;
use crate::input::qrels::Grade;
use crate::metrics::conventions::{Conventions, NoRelevant};
use crate::metrics::embedding_relevance::RelevanceParts;
use crate::metrics::metric::{Metric, UnknownMetric};

/// The format tag written into every results and baseline file.
pub const FORMAT: &str = "ragate-results/1";

/// What a gate run concluded, as stored in its results file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    /// Every check passed.
    Pass,
    /// At least one check failed (exit code 1).
    Regression,
    /// Something could not be evaluated (exit code 2).
    Error,
    /// A first run: no baseline to compare with yet.
    NoBaseline,
}

/// Where a results file comes from: the ragate version, the hashes of its inputs, the judges.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// The version of ragate that wrote the file (`CARGO_PKG_VERSION`).
    pub ragate_version: String,
    /// sha256 of the qrels file's bytes.
    pub qrels_sha256: String,
    /// sha256 of the tier's meaningful config (metrics, slices, rules, chunk separator).
    pub config_hash: String,
    /// `GITHUB_SHA`, else `git rev-parse HEAD`, when available.
    pub git_commit: Option<String>,
    /// The judges behind the answer metrics: name -> kind, version and parameters.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
    pub judges: BTreeMap<String, String>,
    /// The embeddings endpoint behind embedding-based answer_relevance (model, endpoint, version).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub embeddings: Option<String>,
    /// How a sampled tier's queries were drawn (`40 queries, stratify length, seed 1, stable-v2`);
    /// absent for a tier of its own qrels file and in baselines drawn before samples were stable.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sample: Option<String>,
    /// The relevance level, when not the default 1 (see [`Provenance::conventions`]).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub relevance_level: Option<Grade>,
    /// `zero` when judged queries without a relevant document scored 0 (absent: excluded).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub no_relevant: Option<NoRelevant>,
    /// Set when a baseline is accepted (UTC, RFC 3339; `SOURCE_DATE_EPOCH` when set).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub accepted_utc: Option<String>,
}

impl Provenance {
    /// The conventions the values were computed with (absent keys: the defaults).
    pub fn conventions(&self) -> Conventions {
        let default = Conventions::default();
        Conventions {
            relevance_level: self.relevance_level.unwrap_or(default.relevance_level),
            no_relevant: self.no_relevant.unwrap_or(default.no_relevant),
        }
    }

    /// Records `conventions`, writing only what differs from the defaults (so results made
    /// with the defaults read as before).
    pub fn set_conventions(&mut self, conventions: Conventions) {
        let default = Conventions::default();
        self.relevance_level = (conventions.relevance_level != default.relevance_level)
            .then_some(conventions.relevance_level);
        self.no_relevant =
            (conventions.no_relevant != default.no_relevant).then_some(conventions.no_relevant);
    }

    /// Checks the hashes: `qrels_sha256` and `config_hash` must be 64 lowercase hex digits, as
    /// ragate writes them (a file edited by hand or by another tool may hold anything). Names
    /// the key that is not.
    pub fn check(&self) -> Result<(), String> {
        for (key, value) in [
            ("qrels_sha256", &self.qrels_sha256),
            ("config_hash", &self.config_hash),
        ] {
            let is_sha256 = value.len() == 64
                && value
                    .bytes()
                    .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
            if !is_sha256 {
                return Err(format!(
                    "provenance.{key} is `{}`: expected 64 lowercase hex digits (a sha256)",
                    crate::error::shorten(value)
                ));
            }
        }
        if let Some(level) = self.relevance_level {
            crate::metrics::conventions::relevance_level(level.into())
                .map_err(|message| format!("provenance.relevance_level is {message}"))?;
        }
        Ok(())
    }
}

/// Mean and count of one metric over one slice.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SliceSummary {
    /// Mean of the metric over the slice's queries that have a value.
    pub mean: f64,
    /// How many queries the mean is over.
    pub n: usize,
}

/// One query's record: its slice values, metric values, ranking and answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryRecord {
    /// The query text, when the qrels have one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub query: Option<String>,
    /// The query's value of each slice field (field -> value).
    pub slices: BTreeMap<String, String>,
    /// The query's value of each metric (name -> value); a metric without a value is absent.
    pub metrics: BTreeMap<String, f64>,
    /// Retrieved doc ids in rank order (empty when the query was missing from the run).
    pub retrieved: Vec<String>,
    /// The answer text (tier option `store_text: true`, the default).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub answer: Option<String>,
    /// sha256 of the answer instead of its text (tier option `store_text: false`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub answer_sha256: Option<String>,
    /// The answer's claims with their grades (0, 1, 2; 2 is supported), when text is stored.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub claims: Vec<StoredClaim>,
    /// The parts of embedding-based answer_relevance: cos(question, answer), the mean cosine
    /// of the question with the other queries' answers, and how many those were. The value in
    /// `metrics` is computed from them (see `metrics::embedding_relevance`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub answer_relevance_embedding: Option<RelevanceParts>,
    /// What the gate reads of a must-pass query (native qrels `"must_pass": true`); absent for
    /// the others.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub must_pass: Option<MustPassRecord>,
}

/// A must-pass query's record beyond its values: the gate decides it on its own
/// (`gate::must_pass`), naming what it lost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MustPassRecord {
    /// The query's relevant doc ids (qrels order), so that a broken query names the one it lost.
    pub relevant: Vec<String>,
    /// With `repeats: n`, the query's metric values in each of the n runs (the record's
    /// `metrics` are their means); empty after a single run.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub repeats: Vec<BTreeMap<String, f64>>,
}

/// One judged claim of an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoredClaim {
    /// The claim's text.
    pub claim: String,
    /// The judge's grade: 0 unsupported, 1 partly, 2 fully supported.
    pub grade: u8,
    /// Why the judge found it unsupported, when it says (`lexical-2`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
}

/// A results file (a baseline is an accepted one): per-slice aggregates and per-query values of one
/// tier's run, with provenance; JSON, format [`FORMAT`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Results {
    /// The file format, [`FORMAT`]; other values are rejected on reading.
    pub format: String,
    /// The tier the run evaluated.
    pub tier: String,
    /// What the gate concluded about the run.
    pub status: RunStatus,
    /// The ragate version and the hashes of the inputs.
    pub provenance: Provenance,
    /// Metric names in config order.
    pub metrics: Vec<String>,
    /// slice (`all`, `class=literal`, ...) -> metric -> mean and n.
    pub summary: BTreeMap<String, BTreeMap<String, SliceSummary>>,
    /// The run-to-run noise behind the per-query values when they are means over `repeats` runs
    /// (tier option `repeats`); absent after a single run and in files written before ragate
    /// stored it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub noise: Option<RunNoise>,
    /// Set when the status is `error` only because the baseline did not fit the run (too few of
    /// its queries pair, or it lacks a gated metric): how it paired. `baseline accept` replaces
    /// the baseline with such results; results that errored for any other reason have none and
    /// are refused.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub baseline_mismatch: Option<Pairing>,
    /// qid -> record, for queries with at least one relevant doc.
    pub queries: BTreeMap<String, QueryRecord>,
}

/// How a baseline pairs with a tier's queries and rules (stored with results that errored only
/// because the baseline did not fit; `baseline::pairing` computes it and says what to do).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pairing {
    /// Queries of the tier that the baseline also has: the most any check can pair.
    pub shared_queries: usize,
    /// Queries of the tier (after sampling, those with a relevant doc).
    pub queries: usize,
    /// Queries of the baseline.
    pub baseline_queries: usize,
    /// The tier's `min_queries`: a check over fewer pairs is skipped.
    pub min_queries: usize,
    /// The tier's `gate.min_share` (absent in results written before it: the default).
    #[serde(default = "default_min_share")]
    pub min_share: f64,
    /// Metrics a rule of the tier gates that the baseline has no values of.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub missing_metrics: Vec<String>,
}

fn default_min_share() -> f64 {
    crate::config::DEFAULT_MIN_SHARE
}

/// `value` when it is finite and in `range`, else the message saying what was expected.
pub(crate) fn check_value(
    value: f64,
    range: Option<&std::ops::RangeInclusive<f64>>,
) -> std::result::Result<(), String> {
    let fits = value.is_finite() && range.is_none_or(|r| r.contains(&value));
    if fits {
        return Ok(());
    }
    Err(match range {
        Some(r) if *r.end() == f64::MAX => {
            format!("is {value}: expected a finite number >= {}", r.start())
        }
        Some(r) => format!(
            "is {value}: expected a number in [{}, {}]",
            r.start(),
            r.end()
        ),
        None => format!("is {value}: expected a finite number"),
    })
}

impl Results {
    /// Checks every stored value against its metric: finite and in the metric's range (see
    /// [`Metric::value_range`]), claim grades 0..=2, embedding cosines in [-1, 1], run-to-run
    /// noise of at least 2 runs with finite variances >= 0, and metric names ragate knows. The message names the query (or slice) and the metric.
    pub fn check_values(&self) -> std::result::Result<(), String> {
        let mut ranges = BTreeMap::new();
        for name in &self.metrics {
            let metric: Metric = name
                .parse()
                .map_err(|e: UnknownMetric| format!("`metrics`: {e}"))?;
            ranges.insert(name.as_str(), metric.value_range());
        }
        let range_of = |name: &str| {
            ranges.get(name).cloned().ok_or_else(|| {
                format!(
                    "metric `{}` is not in the file's `metrics` list: expected one of them",
                    shorten(name)
                )
            })
        };
        for (slice, metrics) in &self.summary {
            let slice = shorten(slice);
            for (name, summary) in metrics {
                let range = range_of(name).map_err(|m| format!("summary `{slice}`: {m}"))?;
                check_value(summary.mean, range.as_ref()).map_err(|m| {
                    format!("summary `{slice}`: the mean of `{}` {m}", shorten(name))
                })?;
            }
        }
        for (qid, record) in &self.queries {
            let qid = shorten(qid);
            for (name, &value) in &record.metrics {
                let range = range_of(name).map_err(|m| format!("query `{qid}`: {m}"))?;
                check_value(value, range.as_ref())
                    .map_err(|m| format!("query `{qid}`: metric `{}` {m}", shorten(name)))?;
            }
            if let Some(claim) = record.claims.iter().find(|c| c.grade > 2) {
                return Err(format!(
                    "query `{qid}`: claim grade {}: expected 0, 1 or 2",
                    claim.grade
                ));
            }
            if let Some(parts) = &record.answer_relevance_embedding {
                // Cosines, clamped to [-1, 1] when computed.
                let cosine = -1.0..=1.0;
                check_value(parts.cosine, Some(&cosine))
                    .map_err(|m| format!("query `{qid}`: answer_relevance_embedding.cosine {m}"))?;
                check_value(parts.others_mean, Some(&cosine)).map_err(|m| {
                    format!("query `{qid}`: answer_relevance_embedding.others_mean {m}")
                })?;
            }
        }
        if let Some(pairing) = &self.baseline_mismatch {
            if self.status != RunStatus::Error {
                return Err(
                    "`baseline_mismatch` is set, but the status is not `error`: expected it only \
                     on a run that errored because its baseline did not fit"
                        .to_string(),
                );
            }
            if pairing.shared_queries > pairing.queries.min(pairing.baseline_queries)
                || !pairing.broken()
            {
                return Err(format!(
                    "`baseline_mismatch` says {} of {} queries pair (of {} in the baseline, \
                     min_queries {}) and {} missing metrics: not a baseline that fails to fit",
                    pairing.shared_queries,
                    pairing.queries,
                    pairing.baseline_queries,
                    pairing.min_queries,
                    pairing.missing_metrics.len()
                ));
            }
        }
        if let Some(noise) = &self.noise {
            if noise.repeats < 2 {
                return Err(format!(
                    "noise.repeats is {}: expected at least 2 (noise is measured between runs)",
                    noise.repeats
                ));
            }
            for (name, within) in &noise.metrics {
                range_of(name).map_err(|m| format!("noise: {m}"))?;
                check_value(within.variance_sum, Some(&(0.0..=f64::MAX)))
                    .map_err(|m| format!("noise: the variance_sum of `{}` {m}", shorten(name)))?;
            }
        }
        Ok(())
    }

    /// Results of no query, where a run's results were moved out to be stored (nothing reads
    /// them afterwards).
    pub(crate) fn moved_out(tier: &str) -> Results {
        Results {
            format: FORMAT.to_string(),
            tier: tier.to_string(),
            status: RunStatus::Error,
            provenance: Provenance::default(),
            metrics: Vec::new(),
            summary: BTreeMap::new(),
            noise: None,
            baseline_mismatch: None,
            queries: BTreeMap::new(),
        }
    }

    /// Writes the bytes of [`Results::to_json`] into `out` as they are encoded (the text of a
    /// large run is never held whole).
    pub fn write_json(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        crate::json_text::write_document(out, self)
    }

    /// Pretty JSON with a final newline: the bytes written to disk.
    pub fn to_json(&self) -> String {
        let mut text = crate::json_text::pretty(self);
        text.push('\n');
        text
    }
}
