//! Tallies of the simulations: per-check rejections (the gate's and a plain t test's), the checks a
//! betting check at every n would still fail, and what the failing checks' samples look like.

use statrs::distribution::{ContinuousCDF, StudentsT};

use ragate::gate::verdict::{CheckOutcome, CheckStatus};
use ragate::stats;
use ragate::stats::betting::Tallied;

use super::checked::worsenings;
use super::{LEVELS, METRICS, share};

/// The plain one-sample t test's one-sided p-value of "mean worsening <= limit" (a reference).
fn plain_t(worsening: &[f64], limit: f64) -> f64 {
    let n = worsening.len() as f64;
    let sd = stats::sample_sd(worsening);
    if sd <= 0.0 {
        return if stats::mean(worsening) > limit {
            0.0
        } else {
            1.0
        };
    }
    let t = (stats::mean(worsening) - limit) / (sd / n.sqrt());
    StudentsT::new(0.0, 1.0, n - 1.0).unwrap().sf(t)
}

/// Per-check rejections at each of [`LEVELS`], the gate's and the plain t test's.
#[derive(Default)]
pub(super) struct Rejections {
    gate: [[usize; 2]; METRICS.len()],
    plain: [[usize; 2]; METRICS.len()],
}

impl Rejections {
    pub(super) fn add(
        &mut self,
        outcomes: &[CheckOutcome],
        baseline: &[Vec<f64>],
        current: &[Vec<f64>],
    ) {
        for (m, (outcome, worsening)) in outcomes
            .iter()
            .zip(worsenings(baseline, current))
            .enumerate()
        {
            let limit = outcome.limit.unwrap();
            let plain = plain_t(&worsening, limit);
            for (l, level) in LEVELS.iter().enumerate() {
                self.gate[m][l] += usize::from(outcome.p_value.is_some_and(|p| p <= *level));
                self.plain[m][l] += usize::from(plain <= *level);
            }
        }
    }

    pub(super) fn print(&self, label: &str, trials: usize) {
        for (l, level) in LEVELS.iter().enumerate() {
            let per_metric: Vec<String> = (0..METRICS.len())
                .map(|m| {
                    format!(
                        "{} {:.2}x (t {:.2}x)",
                        METRICS[m],
                        self.gate[m][l] as f64 / trials as f64 / level,
                        self.plain[m][l] as f64 / trials as f64 / level
                    )
                })
                .collect();
            let pooled: usize = self.gate.iter().map(|g| g[l]).sum();
            let checks = trials * METRICS.len();
            println!(
                "{label}: per check at {level}: all metrics {} = {:.2}x; {}",
                share(pooled, checks),
                pooled as f64 / checks as f64 / level,
                per_metric.join(", ")
            );
        }
    }
}

/// The checks that fail and whose betting test (`stats::betting`, valid for every distribution on
/// [0, 1]) also rejects at the check's threshold: what a betting check at every n would fail (a
/// reference for the tradeoff, docs/statistics.md).
pub(super) fn failing_with_betting(
    outcomes: &[CheckOutcome],
    baseline: &[Vec<f64>],
    current: &[Vec<f64>],
) -> Vec<bool> {
    (outcomes.iter().zip(worsenings(baseline, current)))
        .map(|(outcome, worsening)| {
            let betting = Tallied::new(&worsening).p_value(outcome.limit.unwrap(), 1.0);
            outcome.status == CheckStatus::Fail && betting <= outcome.threshold.unwrap()
        })
        .collect()
}

/// What the samples of the failing checks look like: their standard deviation against the
/// population's, and the broken queries with a gain they hold against the number expected.
#[derive(Default)]
pub(super) struct FailingSamples {
    checks: usize,
    sd_ratio: f64,
    gains: usize,
    expected_gains: f64,
}

impl FailingSamples {
    pub(super) fn add(
        &mut self,
        outcomes: &[CheckOutcome],
        population: &[Vec<f64>],
        broken: &[bool],
        indices: &[usize],
    ) {
        for (m, outcome) in outcomes.iter().enumerate() {
            if outcome.status != CheckStatus::Fail {
                continue;
            }
            let gained = |i: usize| broken[i] && population[m][i] < 0.0;
            let sampled: Vec<f64> = indices.iter().map(|&i| population[m][i]).collect();
            self.checks += 1;
            self.sd_ratio += stats::sample_sd(&sampled) / stats::sample_sd(&population[m]);
            self.gains += indices.iter().filter(|&&i| gained(i)).count();
            let share = (0..broken.len()).filter(|&i| gained(i)).count() as f64;
            self.expected_gains += share / broken.len() as f64 * indices.len() as f64;
        }
    }

    pub(super) fn print(&self, label: &str) {
        let checks = self.checks.max(1) as f64;
        println!(
            "{label}: the {} failing checks' samples: sd {:.2}x the population's; {:.2} broken \
             queries with a gain per sample where {:.2} expected",
            self.checks,
            self.sd_ratio / checks,
            self.gains as f64 / checks,
            self.expected_gains / checks
        );
    }
}
