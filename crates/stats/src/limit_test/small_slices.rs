//! Where the exact sign-flip test of fewer than 30 pairs holds its level without the betting
//! check, and how often the bound a check shows covers the true mean (issue 47, item 4). Seeded;
//! `cargo test -p ragate-stats small_slices -- --ignored --nocapture` (about half a minute)
//! prints the tables of docs/statistics.md ("Small slices").
//!
//! Tolerated changes with rare large gains (the construction of the NFCorpus rare-gains runs,
//! on synthetic values): 3,000 queries with true values `U²`; 5% of them broken in the baseline
//! (value 0) and mended in the current run (a gain of their value), the others scaled down so
//! that the mean worsening is exactly the limit. A/A pools for coverage: two runs of the same
//! pipeline, one that drops a query to 0 with probability 0.05 (skewed per-run noise) and one
//! that multiplies every value by `exp(0.2 Z)` (symmetric).

use super::*;
use crate::rng_for;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

const QUERIES: usize = 3_000;
const LEVEL: f64 = 0.05;

pub(super) fn uniform(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn standard_normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1 = 1.0 - uniform(rng);
    let u2 = uniform(rng);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Per-query worsening of a tolerated change whose rare changes are large gains, with mean
/// worsening exactly `limit`; None when no scaling reaches that mean.
pub(super) fn rare_gains(limit: f64, rng: &mut ChaCha8Rng) -> Option<Vec<f64>> {
    let truth: Vec<f64> = (0..QUERIES).map(|_| uniform(rng).powi(2)).collect();
    let broken: Vec<bool> = (0..QUERIES).map(|_| uniform(rng) < 0.05).collect();
    let gains: f64 = truth
        .iter()
        .zip(&broken)
        .filter(|(_, b)| **b)
        .map(|(v, _)| v)
        .sum();
    let kept: f64 = truth
        .iter()
        .zip(&broken)
        .filter(|(_, b)| !**b)
        .map(|(v, _)| v)
        .sum();
    let cut = (limit * QUERIES as f64 + gains) / kept;
    (cut <= 1.0).then(|| {
        truth
            .iter()
            .zip(&broken)
            .map(|(v, b)| if *b { -v } else { cut * v })
            .collect()
    })
}

/// n values drawn without replacement.
pub(super) fn sample(population: &[f64], n: usize, rng: &mut ChaCha8Rng) -> Vec<f64> {
    let mut order: Vec<usize> = (0..population.len()).collect();
    for i in 0..n {
        let j = i + (uniform(rng) * (population.len() - i) as f64) as usize;
        order.swap(i, j.min(population.len() - 1));
    }
    order[..n].iter().map(|&i| population[i]).collect()
}

/// How often a tolerated change at the limit is rejected at 5%: by the exact test alone and by
/// the test the gate runs at this limit.
#[test]
#[ignore = "half a minute: the small-slices tables of docs/statistics.md"]
fn rare_large_gains_fool_the_exact_test_only_at_small_limits() {
    let trials = 2_000;
    println!("| n | limit | exact test alone | the gate's test |");
    for n in [8, 15, 29] {
        for limit in [0.0, 0.02, 0.05, 0.1, 0.25, 0.3] {
            let mut rng = rng_for(47, &format!("rare gains {n} {limit}"));
            let Some(population) = rare_gains(limit, &mut rng) else {
                println!("| {n} | {limit} | no such population | |");
                continue;
            };
            let (mut exact, mut gate) = (0usize, 0usize);
            for _ in 0..trials {
                let values = sample(&population, n, &mut rng);
                exact += usize::from(test(&values, limit, None).p_value <= LEVEL);
                gate += usize::from(test(&values, limit, Some(1.0)).p_value <= LEVEL);
            }
            let (exact, gate) = (exact as f64 / trials as f64, gate as f64 / trials as f64);
            println!("| {n} | {limit} | {exact:.3} | {gate:.3} |");
            // 2.5 standard errors of 2,000 trials above the level.
            assert!(gate <= LEVEL + 0.013, "n {n}, limit {limit}: {gate}");
            if limit >= EXACT_ALONE_FROM {
                assert!(exact <= LEVEL + 0.013, "n {n}, limit {limit}: {exact}");
            }
        }
    }
}

/// One run of an A/A pool over the true values.
fn run(truth: &[f64], skewed: bool, rng: &mut ChaCha8Rng) -> Vec<f64> {
    truth
        .iter()
        .map(|&v| {
            if skewed {
                if uniform(rng) < 0.05 { 0.0 } else { v }
            } else {
                (v * (0.2 * standard_normal(rng)).exp()).clamp(0.0, 1.0)
            }
        })
        .collect()
}

/// Coverage of the one-sided 95% lower bound of the mean worsening on A/A pairs (true mean 0),
/// for a check with a limit of 0 (the exact test checked by betting below 30 pairs) and one with
/// a limit of 0.25 (the exact test alone); a check without a bound counts as covered.
#[test]
#[ignore = "half a minute: the small-slices tables of docs/statistics.md"]
fn the_bounds_of_small_slices_cover_the_mean_of_a_a_pairs() {
    let trials = 2_000;
    println!("| pool | n | limit | coverage | no bound |");
    for skewed in [true, false] {
        let pool = if skewed { "drops" } else { "multiplicative" };
        let mut rng = rng_for(47, &format!("coverage {pool}"));
        let truth: Vec<f64> = (0..QUERIES).map(|_| uniform(&mut rng).powi(2)).collect();
        let baseline = run(&truth, skewed, &mut rng);
        let current = run(&truth, skewed, &mut rng);
        let population: Vec<f64> = baseline.iter().zip(&current).map(|(b, c)| b - c).collect();
        let mean = crate::mean(&population);
        for n in [8, 15, 30] {
            for limit in [0.0, EXACT_ALONE_FROM] {
                let (mut covered, mut none) = (0usize, 0usize);
                for _ in 0..trials {
                    let values = sample(&population, n, &mut rng);
                    match lower_bound(&values, LEVEL, Some(1.0), limit) {
                        Some(bound) => covered += usize::from(bound <= mean + 1e-12),
                        None => none += 1,
                    }
                }
                let coverage = (covered + none) as f64 / trials as f64;
                println!(
                    "| {pool} | {n} | {limit} | {coverage:.3} | {:.3} |",
                    none as f64 / trials as f64
                );
                assert!(coverage >= 0.93, "{pool}, n {n}, limit {limit}: {coverage}");
            }
        }
    }
}
