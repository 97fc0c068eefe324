//! The share of a metric's per-query delta variance (current - baseline over the paired queries)
//! that run-to-run noise explains, when the run was repeated (`repeats`): this run's noise of a
//! mean over its runs plus the baseline's (its stored noise, else this run's from a single run).
//! The repeats note and the gate's inconclusive checks both read it.

use crate::baseline::noise::RunNoise;
use crate::baseline::results::Results;
use crate::stats;

/// How much of the per-query delta variance of one metric is run-to-run noise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoiseShare {
    /// Noise variance over delta variance: not capped (a ratio of estimates can exceed 1).
    pub fraction: f64,
    /// The baseline's stored noise (its runs and a query's standard deviation between them);
    /// None when the baseline stores none and this run's noise of one run stands in for it.
    pub baseline_stored: Option<(usize, f64)>,
}

/// The noise share of `metric` over the queries with a value in both runs; `None` with fewer
/// than two such queries, deltas that do not vary, or no noise measured for the metric.
pub fn of(
    noise: &RunNoise,
    metric: &str,
    baseline: &Results,
    current: &Results,
) -> Option<NoiseShare> {
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
        return None;
    }
    let within = noise.metrics.get(metric)?;
    let current_noise = within.variance() / noise.repeats.max(1) as f64;
    let stored = baseline.noise.as_ref().and_then(|stored| {
        Some((
            stored.of_mean(metric)?,
            stored.repeats,
            stored.metrics[metric].sd(),
        ))
    });
    let (baseline_noise, baseline_stored) = match stored {
        Some((variance, runs, sd)) => (variance, Some((runs, sd))),
        None => (within.variance(), None),
    };
    Some(NoiseShare {
        fraction: (current_noise + baseline_noise) / delta_variance,
        baseline_stored,
    })
}
