//! The paired test behind a regression check: is the mean worsening beyond the tolerated limit?
//!
//! A check compares n paired per-query values. With `w_i` the worsening of query i (baseline
//! minus current for a higher-is-better metric) and `L` the tolerated worsening, the null
//! hypothesis is `H0: E[w] <= L` and the alternative `H1: E[w] > L`. A tolerated change (true
//! worsening at most `L`) is rejected with probability at most the test's level.
//!
//! Two methods, chosen by n alone (never by the data), both deterministic (no random draws, so
//! verdicts cannot depend on a seed):
//!
//! - n < [`ANALYTIC_MIN_N`]: the **exact sign-flip test** on `x_i = w_i - L`. Under H0 (with `x`
//!   symmetric about its mean) every sign vector is equally likely; the p-value is the share of the
//!   2^n sign vectors `s` with `sum(s_i x_i) >= sum(x_i)`, enumerated exactly (meet in the middle).
//!   It can never be smaller than `2^-k`, k the number of non-zero `x_i`: that is the check's
//!   smallest attainable p-value.
//!   For a bounded metric it is **checked by a betting test** (`p = max(p_exact, p_bet)`) when the
//!   limit is below [`EXACT_ALONE_FROM`] of the range: the exact test assumes `x` symmetric, and a
//!   tolerated change whose rare changes are large gains (most queries a little worse, a few much
//!   better) fools it there (a sample that missed the gains looks like a uniform small loss).
//!   From a quarter of the range on, a change within the limit that fools it needs most queries
//!   to lose more than the limit, which the simulation's tolerated changes (queries scaled down,
//!   a few broken ones mended) do not do: the exact test alone holds the level there, and decides
//!   a smoke slice of 7 queries (issue 47, item 4: 7 unchanged queries against `max_drop: 0.5`
//!   pass, 7 each worse by 0.6 fail, where the betting check left both undecidable). A
//!   population in which most queries lose slightly more than such a limit and a few gain the
//!   whole range would still fool it: no test of 7 values can tell that from a uniform loss.
//! - n >= [`ANALYTIC_MIN_N`]: a **studentized test with Hall's skewness correction** (Hall 1992,
//!   "On the removal of skewness by transformation", JRSS B 54(1)). With `u = (mean(w) - L) / s`
//!   (s the sample standard deviation) and `g` the sample skewness of `w`, the statistic is
//!   `T = sqrt(n) * (u + g u^2 / 3 + g^2 u^3 / 27 + g / (6 n))`, compared with Student's t on n - 1
//!   degrees of freedom. The plain t statistic's one-sided error is of order n^-1/2 under skewed
//!   deltas (a few large losses among many unchanged queries); the correction removes that term,
//!   and the transformation is monotone (`1 + g u / 3` squared is its derivative), so it inverts
//!   into a confidence bound in closed form.
//!
//! - n >= [`ANALYTIC_MIN_N`] but fewer than `ANALYTIC_MIN_N - 1` queries changed (a worsening
//!   other than 0), for a metric with a bounded range: the analytic test **checked by a betting
//!   test** (`stats::betting`), `p = max(p_analytic, p_bet)`. A uniform shift (every query worse by
//!   the same amount) changed every query, so the analytic test decides it alone.
//!   The normal approximation rests on the few queries that changed; when the rare changes are
//!   large gains, samples that happen to hold few of them look like a regression (measured on
//!   NFCorpus recall@10: 3x the level at 0.05, 7.5x at 0.0125). The betting test is valid for any
//!   distribution on the metric's range; the maximum of two p-values is valid when one of them is.
//!
//! [`lower_bound`] inverts the same test: the smallest worsening the data still support at a level,
//! so the interval a report shows is the one the verdict used.

use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::betting::{self, Tallied};
use crate::{mean, randomization, sample_sd};

/// From this many paired queries on, the analytic (skewness-corrected t) test is used; below, the
/// exact sign-flip enumeration (2^29 sign vectors at most, counted in about 2^15 steps).
pub const ANALYTIC_MIN_N: usize = 30;

/// From this share of the metric's range on, a limit is tested below [`ANALYTIC_MIN_N`] pairs by
/// the exact sign-flip test alone; below it, the exact test is checked by the betting test.
/// Measured by `small_slices::rare_large_gains_fool_the_exact_test_only_at_small_limits` (the
/// exact test alone rejects 0.41-0.71 of tolerated changes with rare large gains at a limit of
/// 0, and at most the level from a quarter of the range; docs/statistics.md, "Small slices").
pub const EXACT_ALONE_FROM: f64 = 0.25;

/// How a p-value was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Exact enumeration of all sign flips of `w - L` (an unbounded metric, or a bounded one
    /// whose limit is at least [`EXACT_ALONE_FROM`] of its range).
    ExactSignFlip,
    /// The exact sign-flip test checked by a betting test on the metric's range (a bounded metric
    /// with fewer than 30 pairs and a limit below [`EXACT_ALONE_FROM`] of its range): the larger
    /// of the two p-values.
    ExactSignFlipAndBetting,
    /// Studentized mean with Hall's skewness correction, Student's t reference.
    SkewCorrectedT,
    /// The skew-corrected t test checked by a betting test on the metric's range (few queries
    /// changed): the larger of the two p-values.
    SkewCorrectedTAndBetting,
}

impl Method {
    /// The method as the verdicts name it.
    pub fn describe(self) -> &'static str {
        match self {
            Method::ExactSignFlip => "exact sign-flip test",
            Method::ExactSignFlipAndBetting => {
                "exact sign-flip test checked by a betting test: fewer than 30 queries"
            }
            Method::SkewCorrectedT => "skew-corrected t test",
            Method::SkewCorrectedTAndBetting => {
                "skew-corrected t test checked by a betting test: few queries changed"
            }
        }
    }
}

/// The outcome of testing `H0: E[w] <= limit`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LimitTest {
    /// One-sided p-value; 1 when there is no evidence at all (no queries).
    pub p_value: f64,
    /// The test that gave `p_value`.
    pub method: Method,
    /// The smallest p-value data of this size could give (`2^-k` for the exact test, 0 for the
    /// analytic one): a check whose threshold is below it cannot fail.
    pub smallest_p: f64,
}

/// Tests `H0: E[worsening] <= limit` against `E[worsening] > limit`. `range` is the width of the
/// metric's value range (worsening values lie in `[-range, range]`), `None` for unbounded metrics
/// (costs, latency). Non-finite inputs give a NaN p-value (callers reject non-finite values before
/// testing).
pub fn test(worsening: &[f64], limit: f64, range: Option<f64>) -> LimitTest {
    let n = worsening.len();
    if n < ANALYTIC_MIN_N {
        return exact(worsening, limit, checked_by_betting(range, limit));
    }
    let analytic = SkewCorrected::new(worsening).p_value(limit);
    match sparse_check(worsening, range) {
        Some((tallied, range)) => LimitTest {
            p_value: analytic.max(tallied.p_value(limit, range)),
            method: Method::SkewCorrectedTAndBetting,
            smallest_p: betting::smallest_p(n, limit, range),
        },
        None => LimitTest {
            p_value: analytic,
            method: Method::SkewCorrectedT,
            smallest_p: 0.0,
        },
    }
}

/// The exact sign-flip test of fewer than [`ANALYTIC_MIN_N`] pairs, checked by the betting test
/// on `betting_range` when there is one.
fn exact(worsening: &[f64], limit: f64, betting_range: Option<f64>) -> LimitTest {
    let shifted: Vec<f64> = worsening.iter().map(|w| limit - w).collect();
    let tolerance = 1e-12 * (1.0 + limit.abs());
    let non_zero = shifted.iter().filter(|d| d.abs() > tolerance).count();
    let exact = randomization::exact_drop_p_value(&shifted);
    let smallest = 0.5f64.powi(non_zero as i32);
    match betting_range {
        Some(range) => LimitTest {
            p_value: exact.max(Tallied::new(worsening).p_value(limit, range)),
            method: Method::ExactSignFlipAndBetting,
            smallest_p: smallest.max(betting::smallest_p(worsening.len(), limit, range)),
        },
        None => LimitTest {
            p_value: exact,
            method: Method::ExactSignFlip,
            smallest_p: smallest,
        },
    }
}

/// The width of a bounded metric's range (finite and positive), `None` for an unbounded metric.
fn bounded(range: Option<f64>) -> Option<f64> {
    range.filter(|r| r.is_finite() && *r > 0.0)
}

/// The range when the exact test (fewer than [`ANALYTIC_MIN_N`] pairs) must be checked by the
/// betting test: a bounded metric whose limit is below [`EXACT_ALONE_FROM`] of its range.
fn checked_by_betting(range: Option<f64>, limit: f64) -> Option<f64> {
    bounded(range).filter(|r| limit.is_nan() || limit < EXACT_ALONE_FROM * r)
}

/// The tallied values and the range when the analytic test must be checked by the betting test:
/// a bounded metric with fewer than [`ANALYTIC_MIN_N`] informative values, counting each query
/// that changed (a worsening other than 0) and one for the unchanged ones (so 29 changed queries
/// are enough, as 30 values are for the switch from the exact test). Counting the values off the
/// most common one instead sent uniform shifts (30 queries all worse by 0.3) to the betting test,
/// whose power is bounded by the range: p = 0.0045 where the analytic test gives 0.
fn sparse_check(worsening: &[f64], range: Option<f64>) -> Option<(Tallied, f64)> {
    let range = bounded(range)?;
    let tallied = Tallied::new(worsening);
    (tallied.changed() + 1 < ANALYTIC_MIN_N).then_some((tallied, range))
}

/// The lower confidence bound of `E[worsening]` at confidence `1 - level`: the largest limit the
/// test of a check with this `limit` still rejects at `level` (the verdict fails exactly when the
/// limit is below it). Below [`ANALYTIC_MIN_N`] pairs the test is the one the check's own limit
/// chooses (the exact test alone, or checked by betting) at every limit tried, so that the bound
/// agrees with the check's decision; where the exact test alone decides, a bound within the
/// limit is the lower of its bound and the betting-checked one. `None` when no limit can be
/// rejected at this level (the exact test's smallest p is above `level`), or for empty or
/// non-finite input.
pub fn lower_bound(worsening: &[f64], level: f64, range: Option<f64>, limit: f64) -> Option<f64> {
    let positive_level = level > 0.0;
    if worsening.is_empty() || worsening.iter().any(|w| !w.is_finite()) || !positive_level {
        return None;
    }
    if worsening.len() >= ANALYTIC_MIN_N {
        let analytic = SkewCorrected::new(worsening).lower_bound(level);
        return match sparse_check(worsening, range) {
            // Both p-values grow with the limit, so the bound of their maximum is the smaller bound.
            Some((tallied, range)) => {
                let betting = bisect_bound(worsening, -range * (1.0 - 1e-9), |limit| {
                    tallied.p_value(limit, range) <= level
                })?;
                Some(analytic.min(betting))
            }
            None => Some(analytic),
        };
    }
    // p(limit) of the exact test is non-decreasing in the limit (a sign vector counts when the
    // flipped subset's mean worsening is at most the limit), and so is the betting test's (each
    // factor `1 + λ_j (w - L)` with `λ_j` proportional to `1 / (R + L)` falls as L grows): bisect
    // for where their maximum crosses the level, from the bottom of the range for a bounded metric.
    let (low, high) = spread_of(worsening);
    let floor = low - (high - low).max(1e-9);
    let floor = bounded(range).map_or(floor, |r| -r * (1.0 - 1e-9));
    let bound_of = |betting_range: Option<f64>| {
        bisect_bound(worsening, floor, |tried| {
            exact(worsening, tried, betting_range).p_value <= level
        })
    };
    let betting_range = checked_by_betting(range, limit);
    let bound = bound_of(betting_range);
    match bounded(range) {
        // The exact test alone decides this check (a limit of at least a quarter of the range):
        // past the limit its bound is the one that failed the check; within it, the bound
        // checked by betting where that is lower, since the exact test's bound away from the
        // limit assumes a symmetry that unchanged queries (an atom at 0) do not have.
        Some(_) if betting_range.is_none() && !bound.is_some_and(|b| b > limit) => {
            match (bound, bound_of(bounded(range))) {
                (Some(exact), Some(checked)) => Some(exact.min(checked)),
                (exact, _) => exact,
            }
        }
        _ => bound,
    }
}

/// The smallest and largest value.
fn spread_of(values: &[f64]) -> (f64, f64) {
    values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &w| {
            (lo.min(w), hi.max(w))
        })
}

/// How close the bisection brings the bound, relative to the values' scale: far below anything
/// printed, and reached in about 40 steps where 60 would reach the last bit.
const BOUND_PRECISION: f64 = 1e-12;

/// The largest limit above `floor` that `rejects` (a test whose p-value grows with the limit), by
/// bisection up to the largest value, to [`BOUND_PRECISION`]; None when even `floor` is not
/// rejected.
fn bisect_bound(worsening: &[f64], floor: f64, rejects: impl Fn(f64) -> bool) -> Option<f64> {
    let (_, high) = spread_of(worsening);
    let mut rejected = floor;
    if !rejects(rejected) {
        return None;
    }
    let mut kept = high;
    let precision = BOUND_PRECISION * floor.abs().max(high.abs()).max(1.0);
    for _ in 0..60 {
        if kept - rejected <= precision {
            break;
        }
        let middle = 0.5 * (rejected + kept);
        if rejects(middle) {
            rejected = middle;
        } else {
            kept = middle;
        }
    }
    Some(rejected)
}

/// The sample moments the analytic test needs.
struct SkewCorrected {
    n: f64,
    mean: f64,
    sd: f64,
    skewness: f64,
}

impl SkewCorrected {
    fn new(values: &[f64]) -> Self {
        let n = values.len() as f64;
        let mean = mean(values);
        let sd = sample_sd(values);
        let third = values.iter().map(|v| (v - mean).powi(3)).sum::<f64>() / n;
        let skewness = if sd > 0.0 { third / sd.powi(3) } else { 0.0 };
        SkewCorrected {
            n,
            mean,
            sd,
            skewness,
        }
    }

    /// Whether the values are constant (up to rounding), so no spread can be estimated.
    fn constant(&self) -> bool {
        self.sd <= 1e-12 * (1.0 + self.mean.abs())
    }

    /// Hall's transformation `u + g u^2 / 3 + g^2 u^3 / 27 + g / (6 n)`.
    fn transform(&self, u: f64) -> f64 {
        let g = self.skewness;
        u + g * u * u / 3.0 + g * g * u * u * u / 27.0 + g / (6.0 * self.n)
    }

    /// The inverse of [`Self::transform`]: `(3 / g) ((1 + g (y - g / (6 n)))^(1/3) - 1)`, which
    /// tends to `y - g / (6 n)` as g goes to 0.
    fn inverse(&self, y: f64) -> f64 {
        let g = self.skewness;
        let centred = y - g / (6.0 * self.n);
        if g.abs() < 1e-8 {
            return centred;
        }
        3.0 / g * ((1.0 + g * centred).cbrt() - 1.0)
    }

    fn reference(&self) -> StudentsT {
        StudentsT::new(0.0, 1.0, self.n - 1.0).expect("n >= 30 gives positive degrees of freedom")
    }

    fn p_value(&self, limit: f64) -> f64 {
        if !self.mean.is_finite() || !self.sd.is_finite() || !limit.is_finite() {
            return f64::NAN;
        }
        if self.constant() {
            let beyond = self.mean > limit + 1e-12 * (1.0 + limit.abs());
            return if beyond { 0.0 } else { 1.0 };
        }
        let u = (self.mean - limit) / self.sd;
        let plain = self.reference().sf(self.n.sqrt() * u);
        let corrected = self.reference().sf(self.n.sqrt() * self.transform(u));
        plain.max(corrected)
    }

    fn lower_bound(&self, level: f64) -> f64 {
        if self.constant() {
            return self.mean;
        }
        // The larger of two p-values that grow with the limit is at most the level below the
        // smaller of their two bounds.
        let quantile = self.reference().inverse_cdf(1.0 - level.min(0.5)) / self.n.sqrt();
        self.mean - self.sd * quantile.max(self.inverse(quantile))
    }
}

#[cfg(test)]
mod rare_gains;
#[cfg(test)]
mod small_slices;
#[cfg(test)]
mod tests;
