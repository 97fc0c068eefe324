//! Drift across runs: a one-sided scan test of "the recent runs worsen beyond the limit", in
//! units of the noise, which accumulates evidence that no single run gives when runs are noisy
//! (an LLM pipeline or judge that varies from night to night).
//!
//! Every run of a series is compared with the same baseline, so its mean worsening is
//! `y_i = w_i + u + e_i`: the true worsening `w_i`, a common error `u` (the baseline's own noise
//! and the sampling of the queries, the same every night) and the run's own noise `e_i`
//! (independent from night to night). The per-run standard error `s_i` of the paired deltas
//! covers both: `s_i² = c + v` with `c = Var(u)`, `v = Var(e_i)`. Averaging `m` runs shrinks
//! only `v`: the mean of a window has variance `c + v / m`, never less than `c`, so more nights
//! cannot beat the baseline's error. Treating the runs as independent (the CUSUM this replaced)
//! fires on no-change histories whenever the baseline happened to score high.
//!
//! The test, at each run with the last [`NIGHTS`] runs of the series (this one included):
//! - `s²` = the mean of `s_i²`; `v̂` = half the mean squared successive difference of the `y_i`
//!   (robust to a slow trend), and `v_lo` its lower 97.5% confidence bound (a chi-square with
//!   `2(t-1)²/(3t-4)` degrees of freedom, Wilson-Hilferty): the night noise is taken as small
//!   as the runs allow, so the common error as large, which keeps the level whatever the split.
//! - for each window of the last `m >= 2` runs: `z_m = (ȳ_m - L) / se_m` with
//!   `se_m² = max(s² - v_lo (1 - 1/m), v̂ / m)` (the second term when the runs vary more than
//!   their standard errors say), L the rule's tolerated worsening (0 without one).
//! - the drift fires when some window's `z_m` passes its threshold `h_m`: it tests the excess over
//!   the limit, so a tolerated worsening does not fire. h is calibrated by simulation (seeded; the
//!   worst case over the share of `c` in `s²`) so that 30 runs of a worsening at the limit raise a
//!   warning with probability at most alpha ([`THRESHOLDS`]); the gate spends [`BUDGET`] over its
//!   metrics.
//!
//! Skewed noise (issue 47, item 1). The calibration assumes normal errors; a pipeline that now and
//! then loses a query outright (a dropped document) has run means with a long tail, and two such
//! things together broke the level (6% of 30-night A/A histories warned where 1% was meant): a
//! baseline that happened to drop nothing reads as a common error of 0 (its own deltas' spread
//! lacks the drops it did not have), and a window of two nights that both dropped more than usual
//! sits in the tail the normal threshold ignores. Two guards, each of which can only lower the
//! rate of warnings:
//! - **the baseline is at least one run**: from [`FLOOR_FROM`] runs on, `c >= v̂ / M`, M the
//!   runs the baseline's per-query values average (1 unless it was accepted from a run with
//!   `repeats:`), so `se_m² >= v̂ (1 / M + 1 / m)` (a baseline of the same pipeline varies as
//!   much as a night);
//! - **a skew-aware threshold**: the sample skewness `g` of the runs' worsenings (the nights'
//!   own skew: the common error is the same in every run) gives the right skew of a window's
//!   mean of m nights, `γ_m = max(g / sqrt(m), 0)`, and the window's threshold is the quantile of
//!   a gamma distribution with that skewness at the normal tail of `h` (Wilson-Hilferty; `h`
//!   itself when `γ_m` is 0). The nights' skew is applied to the whole window: conservative where
//!   the baseline's opposite skew would cancel it, which it does not in the tail (a lucky
//!   baseline and two heavy nights add up).
//!
//! docs/statistics.md ("Drift across runs") gives the in-control run length and the detection
//! delays, measured by this module's tests and on real A/A runs (tests/integration/drift_real.rs).

use crate::stats::normal;

/// The chance that 30 runs with no worsening beyond the limits raise a drift warning on any
/// metric: split evenly across the drift checks of a run (Bonferroni).
pub const BUDGET: f64 = 0.01;
/// The runs the test looks back over, this one included; the in-control run length holds for
/// this many runs.
pub const NIGHTS: usize = 30;
/// The fewest runs a window averages: one run alone is the gate's own check.
pub const MIN_WINDOW: usize = 2;
/// The normal quantile of the lower confidence bound of the night noise (97.5%).
pub const NOISE_BOUND_Z: f64 = 1.96;
/// From this many runs on, the night-to-night variance is taken as a floor under the baseline's
/// error: over fewer, one change of the pipeline (a step in the nights, the drift itself)
/// dominates it.
pub const FLOOR_FROM: usize = 6;
/// The smallest standard error a run is given.
pub const MIN_SE: f64 = 1e-6;

/// `(alpha, h)`: the threshold h at which at most `alpha` of 30-run histories at the limit raise
/// a drift warning, the worst case over the common share of the noise (0 to 1), calibrated by
/// `calibrate_thresholds` in this module's tests (400,000 histories per share, seeded).
pub const THRESHOLDS: [(f64, f64); 7] = [
    (0.01, 2.88),
    (0.005, 3.08),
    (0.002, 3.34),
    (0.001, 3.52),
    (0.0005, 3.70),
    (0.0002, 3.93),
    (0.0001, 4.10),
];

/// One run's worsening against the baseline and its standard error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunDelta {
    /// Mean worsening (positive = worse than the baseline).
    pub worsening: f64,
    /// Its standard error (the paired deltas' sd / sqrt(n)).
    pub se: f64,
}

/// What the drift test says about a series of runs: its largest standardised excess.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Drift {
    /// The runs looked at (the last up to [`NIGHTS`], this one included).
    pub runs: usize,
    /// The window with the largest excess: the last `window` runs.
    pub window: usize,
    /// The window's mean worsening.
    pub mean: f64,
    /// Its standard error, `se_m`.
    pub se: f64,
    /// `(mean - limit) / se`.
    pub z: f64,
    /// The window's threshold: h at the check's level, raised for the skew of the window's mean.
    pub threshold: f64,
    /// The per-run standard error `s` (root mean square of the runs' own).
    pub run_se: f64,
    /// The night-to-night sd the runs show, `sqrt(v̂)`.
    pub night_sd: f64,
}

impl Drift {
    /// Whether the drift fires.
    pub fn fires(&self) -> bool {
        self.z > self.threshold
    }
}

/// The threshold h for a check at level `alpha` (its share of the budget): log-linear
/// interpolation in [`THRESHOLDS`]; beyond its ends, the normal tail through the end point.
pub fn threshold(alpha: f64) -> f64 {
    let (first, last) = (THRESHOLDS[0], THRESHOLDS[THRESHOLDS.len() - 1]);
    let through = |(a, h): (f64, f64)| {
        // The number of independent tests K with Φ⁻¹(1 - a / K) = h, carried on.
        let k = a / (1.0 - normal_cdf(h));
        normal::quantile(1.0 - alpha / k)
    };
    if alpha >= first.0 {
        return through(first);
    }
    if alpha <= last.0 {
        return through(last);
    }
    let pair = THRESHOLDS
        .windows(2)
        .find(|w| alpha <= w[0].0 && alpha >= w[1].0)
        .expect("alpha lies inside the table");
    let ((a0, h0), (a1, h1)) = (pair[0], pair[1]);
    let share = (alpha.ln() - a0.ln()) / (a1.ln() - a0.ln());
    h0 + share * (h1 - h0)
}

/// The standard normal CDF (through erfc), for [`threshold`]'s tails.
fn normal_cdf(x: f64) -> f64 {
    0.5 * statrs::function::erf::erfc(-x / std::f64::consts::SQRT_2)
}

/// The night-to-night variance of `runs`: half the mean squared successive difference, and its
/// lower confidence bound ([`NOISE_BOUND_Z`]). Fewer than two runs: both 0.
pub fn night_variance(runs: &[RunDelta]) -> (f64, f64) {
    let t = runs.len();
    if t < 2 {
        return (0.0, 0.0);
    }
    let squares: f64 = runs
        .windows(2)
        .map(|w| (w[1].worsening - w[0].worsening).powi(2))
        .sum();
    let estimate = squares / (2.0 * (t - 1) as f64);
    let t = t as f64;
    let df = 2.0 * (t - 1.0).powi(2) / (3.0 * t - 4.0).max(1.0);
    (estimate, estimate * chi_square_lower(df) / df)
}

/// The lower [`NOISE_BOUND_Z`] quantile of a chi-square with `df` degrees of freedom
/// (Wilson-Hilferty), 0 when the approximation goes below 0.
fn chi_square_lower(df: f64) -> f64 {
    let a = 2.0 / (9.0 * df);
    let root = 1.0 - a - NOISE_BOUND_Z * a.sqrt();
    if root <= 0.0 { 0.0 } else { df * root.powi(3) }
}

/// The threshold for a window whose mean has skewness `skew`: the quantile, at the normal tail
/// beyond `h`, of a standardised gamma distribution with that skewness (Wilson-Hilferty's cube
/// root for its chi-square with `8 / skew²` degrees of freedom); `h` when `skew` is not positive.
pub fn skewed_threshold(h: f64, skew: f64) -> f64 {
    if skew.is_nan() || skew <= 1e-9 {
        return h;
    }
    let df = 8.0 / (skew * skew);
    let a = 2.0 / (9.0 * df);
    let root = 1.0 - a + h * a.sqrt();
    (df * root.powi(3) - df) / (2.0 * df).sqrt()
}

/// The drift test over `runs` (oldest first, the current run last) against the tolerated
/// worsening `limit` (0 without one) at level `alpha`, the baseline's per-query values the mean
/// of `baseline_runs` runs (1 for a plain run); `None` with fewer than [`MIN_WINDOW`] runs.
pub fn scan(runs: &[RunDelta], limit: f64, alpha: f64, baseline_runs: usize) -> Option<Drift> {
    let runs = &runs[runs.len().saturating_sub(NIGHTS)..];
    let t = runs.len();
    if t < MIN_WINDOW {
        return None;
    }
    let total = runs.iter().map(|r| r.se.max(MIN_SE).powi(2)).sum::<f64>() / t as f64;
    let (night, night_low) = night_variance(runs);
    let night_low = night_low.min(total);
    let skewness = skewness(runs);
    let baseline_runs = baseline_runs.max(1) as f64;
    let h = threshold(alpha);
    let mut best: Option<Drift> = None;
    let mut sum = 0.0;
    for (i, run) in runs.iter().rev().enumerate() {
        sum += run.worsening;
        let m = (i + 1) as f64;
        if i + 1 < MIN_WINDOW {
            continue;
        }
        let baseline_floor = if t >= FLOOR_FROM {
            night * (1.0 / baseline_runs + 1.0 / m)
        } else {
            0.0
        };
        let variance = (total - night_low * (1.0 - 1.0 / m))
            .max(night / m)
            .max(baseline_floor);
        let se = variance.sqrt();
        // The right skew of the window's mean of m nights.
        let threshold = skewed_threshold(h, (skewness / m.sqrt()).max(0.0));
        let mean = sum / m;
        let z = (mean - limit) / se;
        if best.is_none_or(|b| z - threshold > b.z - b.threshold) {
            best = Some(Drift {
                runs: t,
                window: i + 1,
                mean,
                se,
                z,
                threshold,
                run_se: total.sqrt(),
                night_sd: night.sqrt(),
            });
        }
    }
    best
}

/// The sample skewness of the runs' worsenings: the skew of the nights' own noise (the common
/// error is the same in every run); 0 when they do not vary.
fn skewness(runs: &[RunDelta]) -> f64 {
    let t = runs.len() as f64;
    let mean = runs.iter().map(|r| r.worsening).sum::<f64>() / t;
    let moment = |k: i32| {
        runs.iter()
            .map(|r| (r.worsening - mean).powi(k))
            .sum::<f64>()
            / t
    };
    let spread = moment(2);
    // Runs that differ only by rounding do not vary.
    if spread.sqrt() > 1e-12 * (1.0 + mean.abs()) {
        moment(3) / spread.powf(1.5)
    } else {
        0.0
    }
}

#[cfg(test)]
mod pools;
#[cfg(test)]
mod tests;
