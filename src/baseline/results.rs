//! The results file of a gate run, which is also the baseline format once accepted.
//!
//! Versioned (`format`), pretty-printed with a stable key order, holding the raw per-query
//! values so that any two results can be compared again later.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::metrics::embedding_relevance::RelevanceParts;

/// The format tag written into every results and baseline file.
pub const FORMAT: &str = "ragate-results/1";

/// What a gate run concluded, as stored in its results file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    Pass,
    Regression,
    Error,
    NoBaseline,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
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
    /// Set when a baseline is accepted (UTC, RFC 3339; `SOURCE_DATE_EPOCH` when set).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub accepted_utc: Option<String>,
}

impl Provenance {
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
        Ok(())
    }
}

/// Mean and count of one metric over one slice.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SliceSummary {
    pub mean: f64,
    pub n: usize,
}

/// One query's record: its slice values, metric values, ranking and answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryRecord {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub query: Option<String>,
    pub slices: BTreeMap<String, String>,
    pub metrics: BTreeMap<String, f64>,
    /// Retrieved doc ids in rank order (empty when the query was missing from the run).
    pub retrieved: Vec<String>,
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
}

/// One judged claim of an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoredClaim {
    pub claim: String,
    pub grade: u8,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Results {
    pub format: String,
    pub tier: String,
    pub status: RunStatus,
    pub provenance: Provenance,
    /// Metric names in config order.
    pub metrics: Vec<String>,
    /// slice (`all`, `class=literal`, ...) -> metric -> mean and n.
    pub summary: BTreeMap<String, BTreeMap<String, SliceSummary>>,
    /// qid -> record, for queries with at least one relevant doc.
    pub queries: BTreeMap<String, QueryRecord>,
}

impl Results {
    /// Pretty JSON with a final newline: the bytes written to disk.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("results serialise");
        text.push('\n');
        text
    }
}
