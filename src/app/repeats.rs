//! `repeats: N` on a tier: the pipeline answers every query N times, the gate compares per-query
//! means over the N runs, and the report says how large the run-to-run noise is, per metric and
//! as a share of each `all` check's variance. `judge_repeats: N`: the judges are asked N times
//! about the first run's answers (each asking cached apart), and the report gives how often their
//! verdicts changed and which claims flipped; the gate uses the first asking.
//!
//! Run-to-run noise of a metric is the pooled within-query variance: for every query with the
//! metric in at least two runs, the sample variance (n - 1) of its values across the runs; their
//! sum and count are kept (so shards add up), and the reported standard deviation is
//! `sqrt(sum / count)`. The per-query mean of N runs carries `variance / N` of that noise; its
//! share of a check is that over the variance of the check's per-query deltas.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::app::outputs::Evaluated;
use crate::baseline::collect;
use crate::baseline::results::Results;
use crate::stats;

/// The run-to-run variation of one metric, summed over queries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WithinQuery {
    /// Sum over queries of the sample variance of the query's values across runs.
    pub variance_sum: f64,
    /// How many queries had the metric in at least two runs.
    pub queries: usize,
}

impl WithinQuery {
    /// The pooled standard deviation of a query's value between runs.
    pub fn sd(&self) -> f64 {
        if self.queries == 0 {
            0.0
        } else {
            (self.variance_sum / self.queries as f64).sqrt()
        }
    }
}

/// The noise of a tier run `repeats` times.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunNoise {
    pub repeats: usize,
    pub metrics: BTreeMap<String, WithinQuery>,
}

impl RunNoise {
    /// Adds another shard's noise (same number of repeats).
    pub fn add(&mut self, other: &RunNoise) {
        for (metric, part) in &other.metrics {
            let total = self.metrics.entry(metric.clone()).or_default();
            total.variance_sum += part.variance_sum;
            total.queries += part.queries;
        }
    }
}

/// How the judges' verdicts held when asked again about the same answers (`judge_repeats:`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeConsistency {
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
pub struct FlippedClaim {
    pub qid: String,
    pub claim: String,
}

/// Most flipped claims listed in the report.
const LISTED_FLIPS: usize = 10;

impl JudgeConsistency {
    /// Adds another shard's counts.
    pub fn add(&mut self, other: &JudgeConsistency) {
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
    pub fn describe(&self) -> Vec<String> {
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

/// Compares the first asking of the judges with the later ones (same run, same answers).
pub fn judge_consistency(
    first: &Evaluated,
    later: &[Evaluated],
    judged_metrics: &[String],
) -> JudgeConsistency {
    let mut consistency = JudgeConsistency {
        askings: later.len() + 1,
        ..JudgeConsistency::default()
    };
    for (qid, record) in &first.results.queries {
        let others: Vec<_> = later
            .iter()
            .filter_map(|run| run.results.queries.get(qid))
            .collect();
        for (index, claim) in record.claims.iter().enumerate() {
            consistency.claims += 1;
            let supported = claim.grade == 2;
            let flipped = others.iter().any(|other| {
                other
                    .claims
                    .get(index)
                    .is_some_and(|c| c.claim == claim.claim && (c.grade == 2) != supported)
            });
            if flipped {
                consistency.flipped_claims.push(FlippedClaim {
                    qid: qid.clone(),
                    claim: claim.claim.clone(),
                });
            }
        }
        for metric in judged_metrics {
            let Some(value) = record.metrics.get(metric) else {
                continue;
            };
            let entry = consistency.metrics.entry(metric.clone()).or_default();
            entry.0 += 1;
            if others
                .iter()
                .any(|other| other.metrics.get(metric).is_some_and(|v| v != value))
            {
                entry.1 += 1;
            }
        }
    }
    consistency
}

/// One evaluation from `runs` (at least one) of the same queries: per-query metric values are
/// the means over the runs that have them; texts, claims and the trace come from the first run.
pub fn combine(runs: Vec<Evaluated>) -> Evaluated {
    let repeats = runs.len();
    let mut runs = runs.into_iter();
    let mut combined = runs.next().expect("at least one run");
    if repeats == 1 {
        return combined;
    }
    let others: Vec<Evaluated> = runs.collect();
    let mut noise = RunNoise {
        repeats,
        metrics: BTreeMap::new(),
    };
    for (qid, record) in combined.results.queries.iter_mut() {
        for (metric, value) in record.metrics.iter_mut() {
            let mut values = vec![*value];
            values.extend(
                others
                    .iter()
                    .filter_map(|run| run.results.queries.get(qid)?.metrics.get(metric)),
            );
            *value = stats::mean(&values);
            if values.len() >= 2 {
                let within = noise.metrics.entry(metric.clone()).or_default();
                within.variance_sum += stats::sample_sd(&values).powi(2);
                within.queries += 1;
            }
        }
    }
    for run in &others {
        combined.judge_tasks += run.judge_tasks;
        combined.judge_calls += run.judge_calls;
        combined.evaluation_seconds += run.evaluation_seconds;
    }
    // The LLM clients count from the start of the process: the last run holds the totals.
    if let Some(last) = others.last() {
        combined.llm_usage = last.llm_usage.clone();
    }
    combined.results.summary =
        collect::summarise(&combined.results.metrics, &combined.results.queries);
    combined.noise = Some(noise);
    combined
}

/// What the noise means for the gate: one line for the whole run, and one per metric with the
/// share of its `all` check's per-query delta variance that run-to-run noise explains.
pub fn describe(noise: &RunNoise, baseline: &Results, current: &Results) -> Vec<String> {
    let sds: Vec<String> = noise
        .metrics
        .iter()
        .map(|(metric, within)| format!("{metric} {:.4}", within.sd()))
        .collect();
    let mut lines = vec![format!(
        "run-to-run noise over {} runs of the pipeline (the gate compares per-query means): \
         standard deviation of a query's value between runs: {}",
        noise.repeats,
        sds.join(", ")
    )];
    for (metric, within) in &noise.metrics {
        let deltas: Vec<f64> = current
            .queries
            .iter()
            .filter_map(|(qid, now)| {
                let before = baseline.queries.get(qid)?.metrics.get(metric)?;
                Some(now.metrics.get(metric)? - before)
            })
            .collect();
        let delta_variance = stats::sample_sd(&deltas).powi(2);
        if deltas.len() < 2 || delta_variance <= 0.0 {
            continue;
        }
        let mean_noise = within.sd().powi(2) / noise.repeats as f64;
        lines.push(format!(
            "{metric} [all]: run-to-run noise is about {:.0}% of the variance of the per-query deltas",
            (100.0 * mean_noise / delta_variance).min(100.0)
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::results::{Provenance, QueryRecord, RunStatus};

    fn evaluated(values: &[f64]) -> Evaluated {
        let queries = values
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let record = QueryRecord {
                    query: None,
                    slices: Default::default(),
                    metrics: [("mrr".to_string(), v)].into_iter().collect(),
                    retrieved: vec![],
                    answer: None,
                    answer_sha256: None,
                    claims: Vec::new(),
                    answer_relevance_embedding: None,
                };
                (format!("q{i}"), record)
            })
            .collect();
        Evaluated {
            results: Results {
                format: String::new(),
                tier: "t".into(),
                status: RunStatus::Pass,
                provenance: Provenance::default(),
                metrics: vec!["mrr".into()],
                summary: Default::default(),
                queries,
            },
            trace: Default::default(),
            operational: Default::default(),
            embeddings: Vec::new(),
            judge_tasks: 1,
            judge_calls: 1,
            llm_usage: Default::default(),
            evaluation_seconds: 1.0,
            noise: None,
            judge_consistency: None,
        }
    }

    #[test]
    fn runs_are_averaged_per_query_and_their_spread_pooled() {
        let combined = combine(vec![
            evaluated(&[1.0, 0.5, 0.0]),
            evaluated(&[0.0, 0.5, 0.0]),
        ]);
        let mrr = |qid: &str| combined.results.queries[qid].metrics["mrr"];
        assert_eq!((mrr("q0"), mrr("q1"), mrr("q2")), (0.5, 0.5, 0.0));
        let noise = combined.noise.as_ref().unwrap();
        // Variances across the two runs: 0.5, 0, 0; pooled sd sqrt(0.5 / 3).
        assert_eq!(noise.repeats, 2);
        let within = noise.metrics["mrr"];
        assert_eq!(within.queries, 3);
        assert!((within.variance_sum - 0.5).abs() < 1e-15, "{within:?}");
        assert!((within.sd() - (0.5f64 / 3.0).sqrt()).abs() < 1e-15);
        assert_eq!(combined.judge_tasks, 2);
        assert!((combined.results.summary["all"]["mrr"].mean - 1.0 / 3.0).abs() < 1e-15);
        // One run: nothing changes, no noise is claimed.
        let single = combine(vec![evaluated(&[1.0, 0.5])]);
        assert!(single.noise.is_none());
    }

    #[test]
    fn the_noise_share_compares_the_mean_s_noise_with_the_delta_variance() {
        let noise = RunNoise {
            repeats: 4,
            metrics: [(
                "mrr".to_string(),
                WithinQuery {
                    variance_sum: 0.04 * 3.0,
                    queries: 3,
                },
            )]
            .into_iter()
            .collect(),
        };
        let baseline = evaluated(&[0.5, 0.5, 0.5]).results;
        let current = evaluated(&[0.3, 0.5, 0.7]).results;
        let lines = describe(&noise, &baseline, &current);
        assert!(
            lines[0].contains("over 4 runs") && lines[0].contains("mrr 0.2000"),
            "{lines:?}"
        );
        // Noise of a 4-run mean: 0.04 / 4 = 0.01; delta variance 0.04: 25%.
        assert_eq!(
            lines[1],
            "mrr [all]: run-to-run noise is about 25% of the variance of the per-query deltas"
        );
    }
}
