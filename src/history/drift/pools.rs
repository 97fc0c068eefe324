//! The drift test on synthetic pools of per-query values (issue 47, item 1): A/A histories whose
//! runs drop queries outright now and then (skewed noise: a query's value falls to 0 with a small
//! probability, so a run's mean has a long tail) or scale every value by a little multiplicative
//! noise (symmetric); and a constant worsening of 1.5x the limit on every night. Each history: n
//! queries with values `U²` (U uniform), one run as the baseline, 30 runs as the nights; a
//! night's mean worsening and standard error come from its paired per-query deltas as the gate
//! computes them; every night is checked with the history so far, as `gate --history` would.
//!
//! `cargo test --lib history::drift::pools -- --ignored --nocapture` (about a minute in the test
//! profile) prints the table of docs/statistics.md ("Drift across runs", skewed noise) and asserts
//! it; "before" is the test as it was before issue 47 (no floor under the baseline's error, the
//! normal threshold in every window).

use super::*;
use crate::stats;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// How one run of the pipeline perturbs the queries' true values.
#[derive(Debug, Clone, Copy)]
enum Pool {
    /// Each query's value falls to 0 with this probability (a dropped document or query term).
    Drops(f64),
    /// Each value is multiplied by `exp(sigma Z)`, Z standard normal, and kept within [0, 1].
    Multiplicative(f64),
}

fn uniform(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn standard_normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1 = 1.0 - uniform(rng);
    let u2 = uniform(rng);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

impl Pool {
    fn run(self, truth: &[f64], rng: &mut ChaCha8Rng) -> Vec<f64> {
        truth
            .iter()
            .map(|&v| match self {
                Pool::Drops(p) => {
                    if uniform(rng) < p {
                        0.0
                    } else {
                        v
                    }
                }
                Pool::Multiplicative(sigma) => {
                    (v * (sigma * standard_normal(rng)).exp()).clamp(0.0, 1.0)
                }
            })
            .collect()
    }
}

/// The 30 nights of one history: each night's mean worsening against a one-run baseline (plus
/// `shift`, a constant worsening) and its standard error.
fn history(pool: Pool, n: usize, shift: f64, rng: &mut ChaCha8Rng) -> Vec<RunDelta> {
    let truth: Vec<f64> = (0..n).map(|_| uniform(rng).powi(2)).collect();
    let baseline = pool.run(&truth, rng);
    (0..NIGHTS)
        .map(|_| {
            let current = pool.run(&truth, rng);
            let deltas: Vec<f64> = baseline.iter().zip(&current).map(|(b, c)| b - c).collect();
            RunDelta {
                worsening: stats::mean(&deltas) + shift,
                se: stats::sample_sd(&deltas) / (n as f64).sqrt(),
            }
        })
        .collect()
}

/// The test before issue 47: no floor under the common error, the normal threshold everywhere.
fn fires_before(runs: &[RunDelta], limit: f64, alpha: f64) -> bool {
    let runs = &runs[runs.len().saturating_sub(NIGHTS)..];
    let t = runs.len();
    let total = runs.iter().map(|r| r.se.max(MIN_SE).powi(2)).sum::<f64>() / t as f64;
    let (night, night_low) = night_variance(runs);
    let night_low = night_low.min(total);
    let mut sum = 0.0;
    runs.iter().rev().enumerate().any(|(i, run)| {
        sum += run.worsening;
        let m = (i + 1) as f64;
        let se = (total - night_low * (1.0 - 1.0 / m)).max(night / m).sqrt();
        i + 1 >= MIN_WINDOW && (sum / m - limit) / se > threshold(alpha)
    })
}

/// Whether any night of the history warns, before and now.
fn warns(runs: &[RunDelta], limit: f64, alpha: f64) -> (bool, bool) {
    let nights = MIN_WINDOW..=runs.len();
    let before = nights
        .clone()
        .any(|t| fires_before(&runs[..t], limit, alpha));
    let now = nights
        .into_iter()
        .any(|t| scan(&runs[..t], limit, alpha, 1).is_some_and(|d| d.fires()));
    (before, now)
}

/// The share of `histories` histories that warn (before, now) and the 95% Wilson interval of now.
fn warning_rate(pool: Pool, n: usize, shift: f64, histories: usize) -> (f64, f64, (f64, f64)) {
    let mut rng = stats::rng_for(47, &format!("drift pools {pool:?} {n} {shift}"));
    let (mut before, mut now) = (0usize, 0usize);
    for _ in 0..histories {
        let runs = history(pool, n, shift, &mut rng);
        let (b, a) = warns(&runs, LIMIT_OF_POOLS, BUDGET);
        before += usize::from(b);
        now += usize::from(a);
    }
    let share = |k: usize| k as f64 / histories as f64;
    (share(before), share(now), wilson(now, histories))
}

/// The rule's limit in the pools' histories (a `max_drop: 0.02`).
const LIMIT_OF_POOLS: f64 = 0.02;

/// The 95% Wilson interval of k successes in n.
fn wilson(k: usize, n: usize) -> (f64, f64) {
    let (k, n, z) = (k as f64, n as f64, 1.96);
    let p = k / n;
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / (1.0 + z * z / n);
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// A/A histories at the limit (every night's worsening shifted by the limit, the least favourable
/// no-regression case) on skewed and symmetric pools warn in at most 1% of histories (one metric
/// at the whole budget); a constant worsening of 1.5x the limit is reported.
#[test]
#[ignore = "about a minute: the skewed-noise table of docs/statistics.md"]
fn skewed_and_symmetric_pools_warn_in_at_most_one_percent_of_histories() {
    let histories = 4_000;
    let pools = [
        Pool::Drops(0.002),
        Pool::Drops(0.01),
        Pool::Drops(0.03),
        Pool::Multiplicative(0.1),
        Pool::Multiplicative(0.3),
    ];
    for n in [100, 300] {
        for pool in pools {
            let (before, now, (low, high)) = warning_rate(pool, n, LIMIT_OF_POOLS, histories);
            let (found_before, found, _) =
                warning_rate(pool, n, 1.5 * LIMIT_OF_POOLS, histories / 4);
            println!(
                "n {n}, {pool:?}: A/A at the limit warns before {:.1}%, now {:.1}% [{:.1}, {:.1}]; \
                 1.5x the limit found within 30 nights before {:.1}%, now {:.1}%",
                100.0 * before,
                100.0 * now,
                100.0 * low,
                100.0 * high,
                100.0 * found_before,
                100.0 * found
            );
            assert!(now <= 0.01, "n {n}, {pool:?}: {now}");
        }
    }
}
