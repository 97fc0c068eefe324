//! Metrics the config lists under `metrics:` that no rule of the tier gates: measured and compared
//! with the baseline like a check, over the paired queries, but "reported, not gated": they never
//! decide the run's status.

use crate::baseline::results::Results;
use crate::config::Tier;

/// The slice a reported metric is measured over.
pub const SLICE: &str = "all";

/// What every report says of a metric without a rule.
pub const REPORTED: &str = "reported, not gated";

/// One ungated metric over the queries present in both the baseline and the current run.
#[derive(Debug, Clone, PartialEq)]
pub struct Reported {
    /// The metric's name, as in `metrics:`.
    pub metric: String,
    /// Paired queries with a value in both runs.
    pub n: usize,
    /// The baseline's mean over those queries (NaN when there are none).
    pub baseline: f64,
    /// The current run's mean over those queries (NaN when there are none).
    pub current: f64,
    /// current - baseline (NaN when there are no paired queries).
    pub delta: f64,
}

impl Reported {
    /// `recall@5 [all]`: the name a check over the same metric would have.
    pub fn name(&self) -> String {
        format!("{} [{SLICE}]", self.metric)
    }
}

/// Every metric of the tier's metrics list that no rule of `tier` names, in the config's order.
pub fn ungated(tier: &Tier, baseline: &Results, current: &Results) -> Vec<Reported> {
    tier.metrics
        .iter()
        .filter(|spec| {
            !tier
                .gate
                .rules
                .iter()
                .any(|rule| rule.metric == spec.metric)
        })
        .map(|spec| paired(&spec.metric.to_string(), baseline, current))
        .collect()
}

/// `metric`'s means over the queries that have a value for it in both runs.
fn paired(metric: &str, baseline: &Results, current: &Results) -> Reported {
    let (mut n, mut before, mut now) = (0usize, 0.0, 0.0);
    for (qid, record) in &current.queries {
        let value = |results: &Results| results.queries.get(qid)?.metrics.get(metric).copied();
        if let (Some(b), Some(c)) = (value(baseline), record.metrics.get(metric).copied()) {
            n += 1;
            before += b;
            now += c;
        }
    }
    let mean = |sum: f64| if n == 0 { f64::NAN } else { sum / n as f64 };
    let (baseline, current) = (mean(before), mean(now));
    Reported {
        metric: metric.to_string(),
        n,
        baseline,
        current,
        delta: current - baseline,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::results::{Provenance, QueryRecord, RunStatus};

    fn results(values: &[(&str, f64)]) -> Results {
        Results {
            format: String::new(),
            tier: "t".into(),
            status: RunStatus::Pass,
            provenance: Provenance::default(),
            metrics: vec!["mrr".into()],
            summary: Default::default(),
            noise: None,
            baseline_mismatch: None,
            queries: values
                .iter()
                .map(|(qid, mrr)| {
                    let record = QueryRecord {
                        query: None,
                        slices: Default::default(),
                        metrics: [("mrr".to_string(), *mrr)].into_iter().collect(),
                        retrieved: Vec::new(),
                        answer: None,
                        answer_sha256: None,
                        claims: Vec::new(),
                        answer_relevance_embedding: None,
                        must_pass: None,
                    };
                    (qid.to_string(), record)
                })
                .collect(),
        }
    }

    #[test]
    fn means_are_over_the_paired_queries_only() {
        let baseline = results(&[("a", 1.0), ("b", 0.5), ("gone", 0.0)]);
        let current = results(&[("a", 0.5), ("b", 0.5), ("new", 1.0)]);
        let r = paired("mrr", &baseline, &current);
        assert_eq!((r.n, r.baseline, r.current, r.delta), (2, 0.75, 0.5, -0.25));
        assert_eq!(r.name(), "mrr [all]");
        let none = paired("ndcg@10", &baseline, &current);
        assert_eq!(none.n, 0);
        assert!(none.baseline.is_nan() && none.delta.is_nan());
    }
}
