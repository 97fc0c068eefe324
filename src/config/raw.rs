//! The config file as written: serde types that reject unknown keys.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    pub version: u32,
    pub corpus: Option<String>,
    pub chunk_separator: Option<String>,
    pub metrics: Vec<String>,
    #[serde(default)]
    pub slices: Vec<String>,
    pub tiers: BTreeMap<String, RawTier>,
    #[serde(default)]
    pub gate: RawGate,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawTier {
    pub qrels: Option<String>,
    pub from: Option<String>,
    pub sample: Option<usize>,
    pub stratify: Option<String>,
    pub seed: Option<u64>,
    pub baseline: String,
    pub store_text: Option<bool>,
    pub gate: Option<RawGate>,
}

/// How a verdict is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Fail when the drop exceeds its limit and is significant after correction.
    Significant,
    /// Fail on the point estimate alone.
    Point,
}

/// Multiple-comparison correction over the checks of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Correction {
    Holm,
    None,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawGate {
    pub decision: Option<Decision>,
    pub alpha: Option<f64>,
    pub correction: Option<Correction>,
    pub min_queries: Option<usize>,
    pub resamples: Option<usize>,
    pub seed: Option<u64>,
    pub rules: Option<Vec<RawRule>>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawRule {
    pub metric: String,
    pub slice: Option<String>,
    pub max_drop: Option<f64>,
    pub max_drop_pct: Option<f64>,
    pub min: Option<f64>,
    pub max_increase: Option<f64>,
    pub max_increase_pct: Option<f64>,
    pub max: Option<f64>,
}

/// The parts of a tier's config that give its numbers their meaning, hashed into provenance.
#[derive(Serialize)]
pub struct MeaningfulParts<'a> {
    pub metrics: &'a [String],
    pub slices: &'a [String],
    pub chunk_separator: Option<&'a str>,
    pub rules: &'a [RawRule],
}
