//! Seeded simulation of calibrated floors: how often the PPI++ 95% interval covers the tier's
//! human mean, and how often a floor set at that mean passes (the rule's false-pass rate; 2.5% is
//! the one-sided level), by number of labels. `cargo test --lib floor_simulation -- --nocapture`
//! prints the rows of docs/statistics.md's table.

use super::{BinaryLabels, MIN_LABELS_FOR_FLOOR, floor_status};
use crate::gate::verdict::CheckStatus;
use crate::stats::ppi::ppi_plus_plus;
use crate::stats::{mean, rng_for, student_t_quantile};
use rand::Rng;

/// Tiers simulated per configuration.
const TIERS: usize = 1000;
/// Label counts measured: the labelled queries are the first `n` of each tier.
const LABELS: [usize; 5] = [10, 20, 30, 50, 100];
/// Human means (share of answers the humans call faithful).
const HUMAN_MEANS: [f64; 4] = [0.6, 0.75, 0.85, 0.95];
/// Queries per tier.
const TIER_SIZES: [usize; 3] = [50, 200, 2000];

/// How the judge scores an answer the humans label `y` (0 or 1).
#[derive(Debug, Clone, Copy)]
enum Judge {
    /// A verdict wrong with probability `false_positive` on human 0s and `false_negative` on 1s.
    Binary {
        false_positive: f64,
        false_negative: f64,
    },
    /// A graded score, `0.35 + 0.55 y + N(0, 0.2)` clamped to [0, 1].
    Graded,
}

/// Judges agreeing with the humans on 70-95% of answers over the human means above.
const JUDGES: [(&str, Judge); 5] = [
    ("good", binary(0.3, 0.05)),
    ("lenient", binary(0.7, 0.02)),
    ("noisy", binary(0.25, 0.25)),
    ("harsh", binary(0.05, 0.2)),
    ("graded", Judge::Graded),
];

const fn binary(false_positive: f64, false_negative: f64) -> Judge {
    Judge::Binary {
        false_positive,
        false_negative,
    }
}

/// Uniform in [0, 1) with 53 random bits.
fn uniform(rng: &mut impl Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

impl Judge {
    fn score(self, y: f64, rng: &mut impl Rng) -> f64 {
        match self {
            Judge::Binary {
                false_positive,
                false_negative,
            } => {
                let wrong = if y >= 0.5 {
                    false_negative
                } else {
                    false_positive
                };
                if uniform(rng) < wrong { 1.0 - y } else { y }
            }
            Judge::Graded => {
                let (u1, u2) = (1.0 - uniform(rng), uniform(rng));
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                (0.35 + 0.55 * y + 0.2 * z).clamp(0.0, 1.0)
            }
        }
    }
}

/// The interval before the variance floor and cross-fitting: plug-in lambda, sample moments of
/// the labels alone. Kept here to measure what the change did.
fn unfloored_interval(f_all: &[f64], f_lab: &[f64], y_lab: &[f64]) -> (f64, f64) {
    let n = f_lab.len() as f64;
    let (mf, my) = (mean(f_lab), mean(y_lab));
    let (mut var_f, mut var_y, mut cov) = (0.0, 0.0, 0.0);
    for (f, y) in f_lab.iter().zip(y_lab) {
        var_f += (f - mf) * (f - mf) / (n - 1.0);
        var_y += (y - my) * (y - my) / (n - 1.0);
        cov += (f - mf) * (y - my) / (n - 1.0);
    }
    let lambda = if var_f > 0.0 {
        (cov / var_f).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let estimate = my + lambda * (mean(f_all) - mf);
    let var_r = (var_y - 2.0 * lambda * cov + lambda * lambda * var_f).max(0.0);
    let big_n = f_all.len() as f64;
    let variance = var_r * (1.0 / n - 1.0 / big_n) + var_y / big_n;
    let half = student_t_quantile(0.975, n - 1.0) * variance.sqrt();
    (estimate - half, estimate + half)
}

/// Counts over the tiers of one configuration at one label count.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    tiers: usize,
    covered: usize,
    passed_at_truth: usize,
    unfloored_covered: usize,
    unfloored_passed: usize,
    /// Tiers with the minimum number of labels, all 1, while the human mean was below 0.95, and
    /// how many of them passed `min: 0.95` (before: `unfloored_all_ones_passed`).
    all_ones: usize,
    all_ones_passed: usize,
    unfloored_all_ones_passed: usize,
}

impl Tally {
    fn rate(count: usize, tiers: usize) -> f64 {
        count as f64 / tiers as f64
    }
}

/// One configuration's tallies, by label count (`LABELS`; counts above the tier size stay empty).
fn simulate(human_mean: f64, judge: Judge, size: usize, stream: &str) -> [Tally; LABELS.len()] {
    let mut rng = rng_for(2311, stream);
    let mut tallies = [Tally::default(); LABELS.len()];
    let (mut y, mut f) = (vec![0.0; size], vec![0.0; size]);
    for _ in 0..TIERS {
        for (y, f) in y.iter_mut().zip(f.iter_mut()) {
            *y = f64::from(u8::from(uniform(&mut rng) < human_mean));
            *f = judge.score(*y, &mut rng);
        }
        let truth = mean(&y);
        for (tally, &n) in tallies.iter_mut().zip(&LABELS).filter(|(_, n)| **n <= size) {
            let estimate = ppi_plus_plus(&f, &f[..n], &y[..n]).unwrap();
            let (low, high) = estimate.ci;
            let (old_low, old_high) = unfloored_interval(&f, &f[..n], &y[..n]);
            tally.tiers += 1;
            tally.covered += usize::from(low <= truth && truth <= high);
            tally.passed_at_truth += usize::from(low >= truth);
            tally.unfloored_covered += usize::from(old_low <= truth && truth <= old_high);
            tally.unfloored_passed += usize::from(old_low >= truth);
            if n == MIN_LABELS_FOR_FLOOR && truth < 0.95 && y[..n].iter().all(|&y| y == 1.0) {
                tally.all_ones += 1;
                let status = floor_status(&estimate, BinaryLabels::of(&y[..n]), 0.95);
                tally.all_ones_passed += usize::from(status == Some(CheckStatus::Pass));
                tally.unfloored_all_ones_passed += usize::from(old_low >= 0.95);
            }
        }
    }
    tallies
}

#[test]
fn the_floor_holds_its_level_from_the_minimum_labels_on() {
    let mut by_labels = vec![Vec::new(); LABELS.len()];
    for (p, size, (judge_name, judge)) in HUMAN_MEANS
        .iter()
        .flat_map(|p| TIER_SIZES.iter().map(move |size| (p, size)))
        .flat_map(|(p, size)| JUDGES.iter().map(move |judge| (p, size, judge)))
    {
        let stream = format!("ppi floor p={p} N={size} {judge_name}");
        for (i, tally) in simulate(*p, *judge, *size, &stream).into_iter().enumerate() {
            if tally.tiers > 0 {
                by_labels[i].push((stream.clone(), tally));
            }
        }
    }
    println!(
        "| labels | configurations | coverage: mean (worst) | floor at the truth passes: mean (worst) | before: coverage | before: passes |"
    );
    println!("|---:|---:|---|---|---|---|");
    let (mut all_ones, mut all_ones_passed, mut unfloored_all_ones_passed) = (0, 0, 0);
    for (&n, configs) in LABELS.iter().zip(&by_labels) {
        let coverage = |t: &Tally| Tally::rate(t.covered, t.tiers);
        let passes = |t: &Tally| Tally::rate(t.passed_at_truth, t.tiers);
        let old_coverage = |t: &Tally| Tally::rate(t.unfloored_covered, t.tiers);
        let old_passes = |t: &Tally| Tally::rate(t.unfloored_passed, t.tiers);
        let range = |value: &dyn Fn(&Tally) -> f64| {
            let values: Vec<f64> = configs.iter().map(|(_, t)| value(t)).collect();
            let low = values.iter().copied().fold(f64::INFINITY, f64::min);
            let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (low, mean(&values), high)
        };
        let (cover_low, cover_mean, _) = range(&coverage);
        let (_, pass_mean, pass_worst) = range(&passes);
        let (old_cover_low, old_cover_mean, _) = range(&old_coverage);
        let (_, old_pass_mean, old_pass_worst) = range(&old_passes);
        println!(
            "| {n} | {} | {cover_mean:.3} ({cover_low:.3}) | {pass_mean:.3} ({pass_worst:.3}) | {old_cover_mean:.3} ({old_cover_low:.3}) | {old_pass_mean:.3} ({old_pass_worst:.3}) |",
            configs.len()
        );
        for (stream, tally) in configs {
            all_ones += tally.all_ones;
            all_ones_passed += tally.all_ones_passed;
            unfloored_all_ones_passed += tally.unfloored_all_ones_passed;
            if n >= MIN_LABELS_FOR_FLOOR {
                assert!(coverage(tally) >= 0.93, "{n} labels, {stream}: {tally:?}");
                assert!(passes(tally) <= 0.05, "{n} labels, {stream}: {tally:?}");
            }
        }
        if n >= MIN_LABELS_FOR_FLOOR {
            assert!(pass_mean <= 0.03, "{n} labels: {pass_mean}");
        }
    }
    println!(
        "{MIN_LABELS_FOR_FLOOR} labels all 1 while the tier's human mean is below 0.95: {all_ones} tiers; `min: 0.95` passed in {all_ones_passed} (before: {unfloored_all_ones_passed})"
    );
    assert!(all_ones > 100 && all_ones_passed == 0);
}

/// The case of issue 47: 50 human labels of a tier whose true rate is exactly the floor (0.95),
/// a judge that calls every answer supported. The PPI++ interval's normal approximation put the
/// lower bound of 50 labels all 1 at 0.951, so `min: 0.95` passed 7.3% of such tiers; with the
/// exact binomial bound of nearly-all-1 labels it passes at most the one-sided level (2.5%).
#[test]
fn a_floor_at_the_true_rate_passes_at_most_its_level_when_nearly_every_label_is_1() {
    const TRIALS: usize = 4000;
    let (labels, size, floor) = (50, 200, 0.95);
    let mut rng = rng_for(4701, "floor at the true rate, constant judge");
    let judge = vec![1.0; size];
    let (mut passed, mut passed_before) = (0, 0);
    for _ in 0..TRIALS {
        let y: Vec<f64> = (0..labels)
            .map(|_| f64::from(u8::from(uniform(&mut rng) < floor)))
            .collect();
        let estimate = ppi_plus_plus(&judge, &judge[..labels], &y).unwrap();
        passed += usize::from(
            floor_status(&estimate, BinaryLabels::of(&y), floor) == Some(CheckStatus::Pass),
        );
        passed_before +=
            usize::from(floor_status(&estimate, None, floor) == Some(CheckStatus::Pass));
    }
    let (rate, before) = (
        passed as f64 / TRIALS as f64,
        passed_before as f64 / TRIALS as f64,
    );
    println!(
        "floor 0.95 at the true rate, 50 labels: passes {rate:.4} (normal approximation alone: {before:.4})"
    );
    assert!(rate <= 0.025, "{rate}");
    assert!(
        before > 0.05,
        "the approximation alone breached the level: {before}"
    );
}
