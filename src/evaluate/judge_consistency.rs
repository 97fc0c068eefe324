//! How the judges' verdicts held when asked again about the same answers (`judge_repeats:`):
//! the counts a run stores (and shards add up) and the lines its report prints. `repeats`
//! computes them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How the judges' verdicts held when asked again about the same answers (`judge_repeats:`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct JudgeConsistency {
    /// How many times the judges were asked in all.
    pub askings: usize,
    /// Claims judged (the first asking's), and those whose support verdict changed in a later one.
    pub claims: usize,
    pub flipped_claims: Vec<FlippedClaim>,
    /// Per judged metric: queries with a value, and those whose value changed in a later asking.
    pub metrics: BTreeMap<String, (usize, usize)>,
}

/// A claim whose verdict changed between askings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FlippedClaim {
    pub qid: String,
    pub claim: String,
}

/// Most flipped claims listed in the report.
const LISTED_FLIPS: usize = 10;

impl JudgeConsistency {
    /// Adds another shard's counts.
    pub(crate) fn add(&mut self, other: &JudgeConsistency) {
        self.claims += other.claims;
        self.flipped_claims
            .extend(other.flipped_claims.iter().cloned());
        self.flipped_claims
            .sort_by(|a, b| (&a.qid, &a.claim).cmp(&(&b.qid, &b.claim)));
        for (metric, (total, changed)) in &other.metrics {
            let entry = self.metrics.entry(metric.clone()).or_default();
            entry.0 += total;
            entry.1 += changed;
        }
    }

    /// The report's lines: the flip rates, then the first flipped claims.
    pub(crate) fn describe(&self) -> Vec<String> {
        let rate = |changed: usize, total: usize| {
            if total == 0 {
                0.0
            } else {
                100.0 * changed as f64 / total as f64
            }
        };
        let mut parts = vec![format!(
            "{} of {} claims ({:.1}%) changed their support verdict",
            self.flipped_claims.len(),
            self.claims,
            rate(self.flipped_claims.len(), self.claims)
        )];
        for (metric, (total, changed)) in &self.metrics {
            parts.push(format!(
                "{metric} changed on {changed} of {total} queries ({:.1}%)",
                rate(*changed, *total)
            ));
        }
        let mut lines = vec![format!(
            "judge self-consistency over {} askings of the same answers: {}",
            self.askings,
            parts.join("; ")
        )];
        for flip in self.flipped_claims.iter().take(LISTED_FLIPS) {
            lines.push(format!(
                "claim whose verdict flipped, `{}`: {}",
                flip.qid, flip.claim
            ));
        }
        if self.flipped_claims.len() > LISTED_FLIPS {
            lines.push(format!(
                "{} more flipped claims (run-stats.json lists them all)",
                self.flipped_claims.len() - LISTED_FLIPS
            ));
        }
        lines
    }
}
