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

use crate::stats::betting::{self, Tallied};
use crate::stats::{mean, randomization, sample_sd};

/// From this many paired queries on, the analytic (skewness-corrected t) test is used; below, the
/// exact sign-flip enumeration (2^29 sign vectors at most, counted in about 2^15 steps).
pub const ANALYTIC_MIN_N: usize = 30;

/// How a p-value was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Exact enumeration of all sign flips of `w - L`.
    ExactSignFlip,
    /// Studentized mean with Hall's skewness correction, Student's t reference.
    SkewCorrectedT,
    /// The skew-corrected t test checked by a betting test on the metric's range (few queries
    /// changed): the larger of the two p-values.
    SkewCorrectedTAndBetting,
}

impl Method {
    pub fn describe(self) -> &'static str {
        match self {
            Method::ExactSignFlip => "exact sign-flip test",
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
        let shifted: Vec<f64> = worsening.iter().map(|w| limit - w).collect();
        let tolerance = 1e-12 * (1.0 + limit.abs());
        let non_zero = shifted.iter().filter(|d| d.abs() > tolerance).count();
        return LimitTest {
            p_value: randomization::exact_drop_p_value(&shifted),
            method: Method::ExactSignFlip,
            smallest_p: 0.5f64.powi(non_zero as i32),
        };
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

/// The tallied values and the range when the analytic test must be checked by the betting test:
/// a bounded metric with fewer than [`ANALYTIC_MIN_N`] informative values, counting each query
/// that changed (a worsening other than 0) and one for the unchanged ones (so 29 changed queries
/// are enough, as 30 values are for the switch from the exact test). Counting the values off the
/// most common one instead sent uniform shifts (30 queries all worse by 0.3) to the betting test,
/// whose power is bounded by the range: p = 0.0045 where the analytic test gives 0.
fn sparse_check(worsening: &[f64], range: Option<f64>) -> Option<(Tallied, f64)> {
    let range = range.filter(|r| r.is_finite() && *r > 0.0)?;
    let tallied = Tallied::new(worsening);
    (tallied.changed() + 1 < ANALYTIC_MIN_N).then_some((tallied, range))
}

/// The lower confidence bound of `E[worsening]` at confidence `1 - level`: the largest limit the
/// test still rejects at `level` (the verdict fails exactly when the limit is below it). `None`
/// when no limit can be rejected at this level (the exact test's smallest p is above `level`), or
/// for empty or non-finite input.
pub fn lower_bound(worsening: &[f64], level: f64, range: Option<f64>) -> Option<f64> {
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
    // flipped subset's mean worsening is at most the limit), so bisect for where it crosses level.
    let (low, high) = spread_of(worsening);
    bisect_bound(worsening, low - (high - low).max(1e-9), |limit| {
        test(worsening, limit, range).p_value <= level
    })
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
        let statistic = self.n.sqrt() * self.transform((self.mean - limit) / self.sd);
        self.reference().sf(statistic)
    }

    fn lower_bound(&self, level: f64) -> f64 {
        if self.constant() {
            return self.mean;
        }
        let quantile = self.reference().inverse_cdf(1.0 - level.min(0.5));
        self.mean - self.sd * self.inverse(quantile / self.n.sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng_for;
    use rand::Rng;

    fn uniform(rng: &mut impl Rng) -> f64 {
        (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn exponential(rng: &mut impl Rng) -> f64 {
        -(1.0 - uniform(rng)).ln()
    }

    #[test]
    fn exact_test_is_the_sign_flip_share_of_the_shifted_values() {
        // w - L = [0.9, 0.9, -0.1] with L = 0.1: sign vectors whose signed sum is at least the
        // observed 1.7: (+,+,+) 1.7 and (+,+,-) 1.9, so p = 2/8.
        let result = test(&[1.0, 1.0, 0.0], 0.1, None);
        assert_eq!(result.method, Method::ExactSignFlip);
        assert_eq!(result.p_value, 0.25);
        assert_eq!(result.smallest_p, 0.125);
        // With L = 0 the unchanged query is a zero: only 2 non-zero values, p >= 1/4.
        let at_zero = test(&[1.0, 1.0, 0.0], 0.0, None);
        assert_eq!(at_zero.smallest_p, 0.25);
        assert_eq!(at_zero.p_value, 0.25);
    }

    #[test]
    fn seven_total_losses_cannot_reach_a_holm_threshold_of_21_checks() {
        let result = test(&[1.0; 7], 0.03, None);
        assert_eq!(result.p_value, 1.0 / 128.0);
        assert!(result.smallest_p > 0.05 / 21.0);
    }

    #[test]
    fn the_analytic_test_matches_a_t_test_on_symmetric_data() {
        // Symmetric values (skewness 0): T is the plain t statistic plus nothing.
        let values: Vec<f64> = (0..40)
            .map(|i| if i % 2 == 0 { 0.3 } else { -0.1 })
            .collect();
        let result = test(&values, 0.0, None);
        assert_eq!(result.method, Method::SkewCorrectedT);
        // mean 0.1, sd = 0.2 * sqrt(40 / 39); t = 0.1 / (sd / sqrt(40)) = 3.1225; t(39) upper tail.
        let sd = 0.2 * (40.0f64 / 39.0).sqrt();
        let t = 0.1 / (sd / 40.0f64.sqrt());
        let expected = StudentsT::new(0.0, 1.0, 39.0).unwrap().sf(t);
        assert!(
            (result.p_value - expected).abs() < 1e-12,
            "{result:?} {expected}"
        );
        // scipy.stats.t.sf(3.122498999199199, 39)
        assert!(
            (expected - 0.001_686_525_290_093_039).abs() < 1e-12,
            "{expected}"
        );
    }

    #[test]
    fn the_bound_inverts_the_test() {
        let mut rng = rng_for(3, "bound");
        for n in [8, 15, 40, 200] {
            let values: Vec<f64> = (0..n).map(|_| exponential(&mut rng) - 0.7).collect();
            for level in [0.05, 0.0025] {
                let Some(bound) = lower_bound(&values, level, None) else {
                    assert!(test(&values, -10.0, None).p_value > level, "n = {n}");
                    continue;
                };
                let just_below = test(&values, bound - 1e-6, None).p_value;
                let just_above = test(&values, bound + 1e-6, None).p_value;
                assert!(
                    just_below <= level,
                    "n = {n}, level {level}: p {just_below}"
                );
                assert!(just_above > level, "n = {n}, level {level}: p {just_above}");
            }
        }
    }

    /// 300 queries of which `changed` lost 0.5 and the rest did not change.
    fn sparse(changed: usize) -> Vec<f64> {
        (0..300)
            .map(|i| if i < changed { 0.5 } else { 0.0 })
            .collect()
    }

    #[test]
    fn few_changed_queries_of_a_bounded_metric_add_the_betting_test() {
        let values = sparse(20);
        let analytic = test(&values, 0.01, None);
        assert_eq!(analytic.method, Method::SkewCorrectedT);
        let checked = test(&values, 0.01, Some(1.0));
        assert_eq!(checked.method, Method::SkewCorrectedTAndBetting);
        let betting = Tallied::new(&values).p_value(0.01, 1.0);
        assert_eq!(checked.p_value, analytic.p_value.max(betting));
        assert!(betting > analytic.p_value, "{betting} vs {analytic:?}");
        assert!(checked.smallest_p > 0.0 && checked.smallest_p < 1e-12);
        // 29 changed queries (and the unchanged value) are enough for the analytic test alone.
        assert_eq!(
            test(&sparse(28), 0.01, Some(1.0)).method,
            Method::SkewCorrectedTAndBetting
        );
        assert_eq!(
            test(&sparse(29), 0.01, Some(1.0)).method,
            Method::SkewCorrectedT
        );
        let distinct: Vec<f64> = (0..30).map(|i| f64::from(i) / 100.0).collect();
        assert_eq!(
            test(&distinct, 0.01, Some(1.0)).method,
            Method::SkewCorrectedT
        );
    }

    #[test]
    fn the_betting_check_holds_the_level_where_rare_large_gains_fool_the_analytic_test() {
        // 2% of queries better by 0.5, 8% worse by 0.125, the rest unchanged (mean 0), n = 100:
        // a sample with no gain looks like a clear regression. The analytic test alone rejects
        // more than 8% at 0.0125, the checked test less than the level.
        let mut rng = rng_for(5, "rare gains");
        let trials = 4_000;
        let (mut analytic, mut checked) = (0, 0);
        for _ in 0..trials {
            let values: Vec<f64> = (0..100)
                .map(|_| match uniform(&mut rng) {
                    u if u < 0.02 => -0.5,
                    u if u < 0.10 => 0.125,
                    _ => 0.0,
                })
                .collect();
            analytic += usize::from(test(&values, 0.0, None).p_value <= 0.0125);
            checked += usize::from(test(&values, 0.0, Some(1.0)).p_value <= 0.0125);
        }
        assert!(
            analytic as f64 > 0.08 * trials as f64,
            "analytic: {analytic}"
        );
        assert!(
            checked as f64 <= 0.0125 * trials as f64,
            "checked: {checked}"
        );
    }

    #[test]
    fn a_uniform_shift_is_decided_by_the_analytic_test_alone() {
        // Every query changed by the same amount: not "few queries changed". Before, the values off
        // the most common one were counted (none here), and the betting test capped the evidence.
        let thirty = test(&[0.3; 30], 0.02, Some(1.0));
        assert_eq!(thirty.method, Method::SkewCorrectedT);
        assert_eq!(thirty.p_value, 0.0, "before: 0.0045");
        // 40 queries each losing 10x the limit fail even at Holm's level of 300 slices.
        let forty = test(&[0.2; 40], 0.02, Some(1.0));
        assert_eq!(forty.method, Method::SkewCorrectedT);
        assert!(forty.p_value < 0.05 / 300.0, "before: 0.0090: {forty:?}");
        let bound = lower_bound(&[0.2; 40], 0.05 / 300.0, Some(1.0)).unwrap();
        assert!((bound - 0.2).abs() < 1e-12, "{bound}");
        // A shift at the limit is tolerated.
        assert_eq!(test(&[0.02; 40], 0.02, Some(1.0)).p_value, 1.0);
    }

    #[test]
    fn counting_changed_queries_keeps_the_false_alarm_rate_where_most_queries_are_unchanged() {
        // A worsening at the limit (tolerated), seeded, 4,000 samples of 100 queries; 20% of the
        // queries move by +-0.3 around a common value. When the common value is 0 (most queries
        // unchanged, the usual shape of a ranking metric's deltas) the changed queries are the
        // ones off the most common value, so the check applies exactly as before (to 98% of the
        // samples): the rate stays below the level. When every query shifted (the common value is the limit), the betting
        // check no longer applies and the analytic test alone rejects 1.36x the level here
        // (before: 0): asserted at <= 1.5x so it cannot grow unnoticed.
        let mut rng = rng_for(13, "false alarms");
        let trials = 4_000;
        let level = 0.0125;
        for (label, common, limit, allowed) in [
            ("mostly unchanged", 0.0, 0.0, 1.0),
            ("uniform shift", 0.02, 0.02, 1.5),
        ] {
            let mut rejected = 0;
            let mut checked = 0;
            for _ in 0..trials {
                let values: Vec<f64> = (0..100)
                    .map(|_| match uniform(&mut rng) {
                        u if u < 0.1 => common + 0.3,
                        u if u < 0.2 => common - 0.3,
                        _ => common,
                    })
                    .collect();
                let result = test(&values, limit, Some(1.0));
                checked += usize::from(result.method == Method::SkewCorrectedTAndBetting);
                rejected += usize::from(result.p_value <= level);
            }
            let rate = rejected as f64 / trials as f64;
            println!("{label}: {rate:.4} at {level} ({checked} of {trials} checked by betting)");
            assert!(rate <= allowed * level, "{label}: {rate}");
        }
    }

    #[test]
    fn the_bound_inverts_the_checked_test() {
        for changed in [5, 12, 29] {
            let values = sparse(changed);
            for level in [0.05, 0.0025] {
                let bound = lower_bound(&values, level, Some(1.0)).expect("a bound");
                let just_below = test(&values, bound - 1e-6, Some(1.0)).p_value;
                let just_above = test(&values, bound + 1e-6, Some(1.0)).p_value;
                assert!(just_below <= level, "{changed}, {level}: p {just_below}");
                assert!(just_above > level, "{changed}, {level}: p {just_above}");
                let analytic = lower_bound(&values, level, None).unwrap();
                assert!(bound <= analytic, "{changed}: {bound} > {analytic}");
            }
        }
    }

    #[test]
    fn an_unreachable_level_has_no_bound() {
        assert_eq!(lower_bound(&[1.0; 5], 0.01, None), None, "2^-5 > 0.01");
        assert!(lower_bound(&[1.0; 5], 0.05, None).is_some());
        assert_eq!(lower_bound(&[], 0.05, None), None);
        assert_eq!(lower_bound(&[f64::NAN; 40], 0.05, None), None);
    }

    #[test]
    fn constant_values_decide_without_spread() {
        let losses = vec![0.3; 570];
        assert_eq!(test(&losses, 0.05, None).p_value, 0.0);
        assert_eq!(test(&losses, 0.3, None).p_value, 1.0);
        assert!((lower_bound(&losses, 0.001, None).unwrap() - 0.3).abs() < 1e-12);
    }

    /// Rejection rate of the upper-tail test at the null (true mean = limit) on skewed data.
    fn rejection_rate(skew_sign: f64, corrected: bool, level: f64) -> f64 {
        let mut rng = rng_for(7, if skew_sign > 0.0 { "right" } else { "left" });
        let trials = 20_000;
        let n = 100;
        let mut rejected = 0;
        for _ in 0..trials {
            // Exponential(1) has mean 1 and skewness 2; centred on 0.
            let values: Vec<f64> = (0..n)
                .map(|_| skew_sign * (exponential(&mut rng) - 1.0))
                .collect();
            let p = if corrected {
                test(&values, 0.0, None).p_value
            } else {
                let t = mean(&values) / (sample_sd(&values) / (n as f64).sqrt());
                StudentsT::new(0.0, 1.0, n as f64 - 1.0).unwrap().sf(t)
            };
            rejected += usize::from(p <= level);
        }
        rejected as f64 / trials as f64
    }

    #[test]
    fn the_skewness_correction_holds_the_level_where_the_t_test_does_not() {
        // Left-skewed worsening (rare large improvements), n = 100, skewness -2: the plain t
        // test's upper tail rejects about 7.3% at 5% (numpy/scipy, 40,000 trials); the corrected
        // test about 5.3%.
        let plain = rejection_rate(-1.0, false, 0.05);
        let corrected = rejection_rate(-1.0, true, 0.05);
        assert!(plain > 0.065, "plain t: {plain}");
        assert!(corrected < 0.058, "corrected: {corrected}");
        // Right-skewed worsening: the plain test is conservative (3.1%); the correction brings
        // it back near the level without overshooting (4.7%).
        let right = rejection_rate(1.0, true, 0.05);
        assert!(
            (0.04..0.058).contains(&right),
            "corrected, right skew: {right}"
        );
    }
}
