//! The run-to-run noise of a tier run `repeats` times: per metric, the pooled within-query
//! variance of the query's values across the runs. A gate run reports it, and its results file
//! (so the baseline accepted from it) stores it: the noise of a per-query delta is this run's and
//! the baseline's (see `run::repeats::describe`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

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
    /// The pooled variance of a query's value between runs (0 with no query).
    pub fn variance(&self) -> f64 {
        if self.queries == 0 {
            0.0
        } else {
            self.variance_sum / self.queries as f64
        }
    }

    /// The pooled standard deviation of a query's value between runs.
    pub fn sd(&self) -> f64 {
        self.variance().sqrt()
    }
}

/// The noise of a tier run `repeats` times: the per-query values are means over that many runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunNoise {
    /// How many runs the per-query values are means over (at least 2).
    pub repeats: usize,
    /// Per metric, the within-query variation across the runs.
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

    /// The run-to-run variance that a per-query mean over the runs carries for `metric`
    /// (`variance / repeats`), when the metric was measured in at least two runs.
    pub fn of_mean(&self, metric: &str) -> Option<f64> {
        let within = self.metrics.get(metric).filter(|w| w.queries > 0)?;
        Some(within.variance() / self.repeats.max(1) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mean_over_n_runs_carries_a_nth_of_the_pooled_variance() {
        let mut noise = RunNoise {
            repeats: 4,
            metrics: [(
                "mrr".to_string(),
                WithinQuery {
                    variance_sum: 0.12,
                    queries: 3,
                },
            )]
            .into_iter()
            .collect(),
        };
        assert!((noise.of_mean("mrr").unwrap() - 0.01).abs() < 1e-15);
        assert_eq!(noise.of_mean("ndcg@10"), None);
        // A shard adds its sums: (0.12 + 0.36) / (3 + 3) = 0.08.
        noise.add(&RunNoise {
            repeats: 4,
            metrics: [(
                "mrr".to_string(),
                WithinQuery {
                    variance_sum: 0.36,
                    queries: 3,
                },
            )]
            .into_iter()
            .collect(),
        });
        assert!((noise.metrics["mrr"].variance() - 0.08).abs() < 1e-15);
        assert!((noise.of_mean("mrr").unwrap() - 0.02).abs() < 1e-15);
        assert_eq!(WithinQuery::default().sd(), 0.0);
    }
}
