//! Prediction-powered inference (PPI) of a mean: judge scores on every query, calibrated by human
//! labels on a few, give an unbiased estimate of the mean human score with a 95% confidence interval.
//!
//! References: Angelopoulos, Bates, Fannjiang, Jordan & Zrnic (2023), "Prediction-powered
//! inference", Science 382; Angelopoulos, Duchi & Zrnic (2023), "PPI++: Efficient
//! prediction-powered inference", arXiv:2311.01453 (power tuning, Example on mean estimation).
//!
//! Design. The judge scores all `N` queries (`f_all`) and the `n` labelled queries are a random
//! subset of those same `N` (`f_lab`, `y_lab`: judge and human on each labelled query). Both
//! estimators are members of one family, for a weight `lambda`:
//!
//! `theta(lambda) = mean(y_lab) + lambda * (mean(f_all) - mean(f_lab))`
//!
//! - `lambda = 1` is classic PPI: `mean(f_all) - mean(f_lab - y_lab)`;
//! - `lambda = 0` is the labels-only mean.
//!
//! Variance. With `r = y - lambda * f` and the labelled queries inside the `N`, the two means are
//! correlated (`Cov(mean_lab(r), mean_all(f)) = cov(r, f) / N`), and the exact variance is
//!
//! `V(lambda) = var(r) / n + (var(y) - var(r)) / N = var(r) * (1/n - 1/N) + var(y) / N`,
//!
//! with sample (n - 1) moments of the labelled pairs (floored: see below), where
//! `var(r) = var(y) - 2 lambda cov(y, f) + lambda^2 var(f)`. At `lambda = 1` this is
//! `var(f - y)/n + var(f)/N - 2 cov(f, f - y)/N`: the paper's `var(f)/N + var(f - y)/n` (written
//! for disjoint labelled and unlabelled sets) plus the overlap term `-2 cov(f, f - y)/N`. That term
//! is negative for a noisy judge (the paper's formula is then conservative) but positive for a
//! judge that compresses the human scale, where omitting it under-covers when `n/N` is large (see
//! `compressed_judge_needs_the_overlap_term`).
//!
//! Variance floor. The sample moments of a few labels can be zero (ten labels that are all 1 gave
//! the interval [1, 1], which passed `min: 0.95` where the tier's human mean was 0.775), and they
//! are smallest exactly when the estimate is near the edge of [0, 1], so a normal interval on
//! them covers too little there. The moments are therefore those of the labelled pairs plus four
//! pseudo-pairs (judge, human), one at each corner of [0, 1]^2 ([`PSEUDO_PAIRS`]): as in
//! Agresti & Coull's "add two successes and two failures", the human labels get two pseudo-0s
//! and two pseudo-1s, and, as in Agresti & Min's adjustment for paired proportions, the rectifier
//! `y - lambda f` sees one pseudo-disagreement each way. The pseudo-pairs enter the variance (and
//! lambda) only, never the point estimate, and `V` keeps the real `n`. The 95% interval is
//! `theta +- t(0.975; n - 1) * sqrt(V)`, with Student's t quantile on n - 1 degrees of freedom,
//! not clipped. Measured coverage: `gate::calibration` (its `floor_simulation` tests).
//!
//! Power tuning (PPI++). For disjoint sets of `n` labelled and `m` unlabelled queries, PPI++
//! minimises the variance with `lambda' = cov(y, f) / ((1 + n/m) var(f))`. Our family is theirs
//! with `lambda' = lambda * m / N` (`m = N - n`, since `mean(f_all) - mean(f_lab)` equals
//! `(m/N) (mean(f_unlabelled) - mean(f_lab))`), so their optimum is ours at
//! `lambda = cov(y, f) / var(f)`, which is also the exact minimiser of `V(lambda)` above.
//! As in PPI++ (its reference implementation `ppi_py` clips by default), lambda is clipped to
//! [0, 1], between the labels-only mean and classic PPI, so an estimated lambda never amplifies the
//! judge beyond classic PPI nor turns its sign. Lambda tuned on the same labels it weighs makes the
//! interval too narrow; it is therefore cross-fitted (Zrnic & Candes (2024), "Cross-prediction-
//! powered inference", PNAS 121): the labels are split into two folds (even and odd positions),
//! each fold's judge scores are weighted by the lambda of the other fold (with the pseudo-pairs),
//!
//! `theta = mean_i(y_i - lambda_{-k(i)} f_i) + lambda_bar * mean(f_all)`,
//!
//! `lambda_bar` the labels-weighted mean of the two, and `V` is taken at `lambda_bar`. In
//! simulation this brought the floor-at-truth pass rate to that of the true optimal lambda.

use crate::{mean, student_t_quantile};

/// Two-sided confidence level of [`PpiEstimate::ci`].
pub const CONFIDENCE: f64 = 0.95;

/// The pseudo-pairs (judge, human) that floor the variance: one at each corner of [0, 1]^2.
pub const PSEUDO_PAIRS: [(f64, f64); 4] = [(0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0)];

/// A prediction-powered estimate of the mean human score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PpiEstimate {
    /// The estimated mean human score.
    pub estimate: f64,
    /// 95% interval, `estimate +- t(0.975; n - 1) * sd`, the variance floored by
    /// [`PSEUDO_PAIRS`]; not clipped to the metric's range.
    pub ci: (f64, f64),
    /// Weight of the judge (1 for classic PPI; for PPI++ the labels-weighted mean of the two
    /// folds' cross-fitted weights).
    pub lambda: f64,
    /// Items with a human label.
    pub n_labelled: usize,
    /// Items with a judge score, labelled or not.
    pub n_total: usize,
}

/// Classic PPI: `mean(f_all) - mean(f_lab - y_lab)` with its 95% CI.
///
/// `f_all`: judge scores of all N queries, the labelled ones included; `f_lab[i]` and `y_lab[i]`:
/// judge and human scores of the i-th labelled query, values in [0, 1]. `None` when there are
/// fewer than two labels (n < 2), `f_all` is shorter than the labels (N < n, so N >= 1 always
/// holds otherwise), `f_lab` and `y_lab` differ in length, or any value is not finite.
pub fn ppi_mean(f_all: &[f64], f_lab: &[f64], y_lab: &[f64]) -> Option<PpiEstimate> {
    let moments = Moments::new(f_all, f_lab, y_lab)?;
    Some(moments.estimate(&[1.0, 1.0]))
}

/// PPI++ power-tuned estimate with a cross-fitted `lambda` (see the module notes); same inputs
/// and `None` cases as [`ppi_mean`].
pub fn ppi_plus_plus(f_all: &[f64], f_lab: &[f64], y_lab: &[f64]) -> Option<PpiEstimate> {
    let moments = Moments::new(f_all, f_lab, y_lab)?;
    let fold = |parity: usize| {
        let (f, y): (Vec<f64>, Vec<f64>) = f_lab
            .iter()
            .zip(y_lab)
            .enumerate()
            .filter(|(i, _)| i % 2 == parity)
            .map(|(_, (f, y))| (*f, *y))
            .unzip();
        Spread::of(&f, &y).lambda()
    };
    // Each fold's weight is tuned on the other fold.
    Some(moments.estimate(&[fold(1), fold(0)]))
}

/// Sample second moments of the labelled pairs with [`PSEUDO_PAIRS`] appended (n + 4 pairs,
/// n + 3 in the denominator).
#[derive(Debug, Clone, Copy)]
struct Spread {
    var_f: f64,
    var_y: f64,
    cov_yf: f64,
}

impl Spread {
    fn of(f_lab: &[f64], y_lab: &[f64]) -> Self {
        let pairs = || {
            f_lab
                .iter()
                .zip(y_lab)
                .map(|(f, y)| (*f, *y))
                .chain(PSEUDO_PAIRS)
        };
        let count = (f_lab.len() + PSEUDO_PAIRS.len()) as f64;
        let (sum_f, sum_y) = pairs().fold((0.0, 0.0), |(a, b), (f, y)| (a + f, b + y));
        let (mean_f, mean_y) = (sum_f / count, sum_y / count);
        let (mut var_f, mut var_y, mut cov_yf) = (0.0, 0.0, 0.0);
        for (f, y) in pairs() {
            let (df, dy) = (f - mean_f, y - mean_y);
            var_f += df * df;
            var_y += dy * dy;
            cov_yf += dy * df;
        }
        let denominator = count - 1.0;
        Spread {
            var_f: var_f / denominator,
            var_y: var_y / denominator,
            cov_yf: cov_yf / denominator,
        }
    }

    /// The variance-minimising weight `cov(y, f) / var(f)`, clipped to [0, 1] (the pseudo-pairs
    /// make `var(f)` positive).
    fn lambda(&self) -> f64 {
        (self.cov_yf / self.var_f).clamp(0.0, 1.0)
    }

    /// `var(y - lambda f)`.
    fn var_r(&self, lambda: f64) -> f64 {
        (self.var_y - 2.0 * lambda * self.cov_yf + lambda * lambda * self.var_f).max(0.0)
    }
}

/// Means of the inputs and the floored spread of the labelled pairs.
struct Moments<'a> {
    f_lab: &'a [f64],
    n_total: usize,
    mean_f_all: f64,
    mean_y: f64,
    spread: Spread,
}

impl<'a> Moments<'a> {
    fn new(f_all: &[f64], f_lab: &'a [f64], y_lab: &[f64]) -> Option<Self> {
        let (n, n_total) = (f_lab.len(), f_all.len());
        if n < 2 || n_total < n || y_lab.len() != n {
            return None;
        }
        let all_values = f_all.iter().chain(f_lab).chain(y_lab);
        if !all_values.into_iter().all(|v| v.is_finite()) {
            return None;
        }
        Some(Moments {
            f_lab,
            n_total,
            mean_f_all: mean(f_all),
            mean_y: mean(y_lab),
            spread: Spread::of(f_lab, y_lab),
        })
    }

    /// The estimate with weight `lambdas[i % 2]` on the i-th labelled query's judge score (the
    /// same weight twice: one `lambda` for all), and its interval at the labels-weighted mean
    /// weight.
    fn estimate(&self, lambdas: &[f64; 2]) -> PpiEstimate {
        let n = self.f_lab.len();
        let weighted_f: f64 = self
            .f_lab
            .iter()
            .enumerate()
            .map(|(i, f)| lambdas[i % 2] * f)
            .sum::<f64>()
            / n as f64;
        let (even, odd) = (n.div_ceil(2) as f64, (n / 2) as f64);
        let lambda = (even * lambdas[0] + odd * lambdas[1]) / n as f64;
        let estimate = self.mean_y - weighted_f + lambda * self.mean_f_all;
        let (n_f, big_n) = (n as f64, self.n_total as f64);
        let variance =
            self.spread.var_r(lambda) * (1.0 / n_f - 1.0 / big_n) + self.spread.var_y / big_n;
        let quantile = student_t_quantile(0.5 + CONFIDENCE / 2.0, (n - 1) as f64);
        let half_width = quantile * variance.max(0.0).sqrt();
        PpiEstimate {
            estimate,
            ci: (estimate - half_width, estimate + half_width),
            lambda,
            n_labelled: n,
            n_total: self.n_total,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{rng_for, sample_sd};
    use rand::Rng;

    /// t(0.975) on 3 degrees of freedom (4 labels): scipy.stats.t.ppf(0.975, 3).
    const T3: f64 = 3.182_446_305_283_708;
    /// t(0.975) on 1 degree of freedom (2 labels).
    const T1: f64 = 12.706_204_736_174_694;
    /// t(0.975) on 99 and 499 degrees of freedom (the simulations' 100 and 500 labels).
    fn t975(n: usize) -> f64 {
        student_t_quantile(0.975, (n - 1) as f64)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    fn half(e: &PpiEstimate) -> f64 {
        (e.ci.1 - e.ci.0) / 2.0
    }

    // N = 8; the first four queries are labelled.
    const F_ALL: [f64; 8] = [0.2, 0.9, 0.5, 0.8, 0.4, 0.6, 0.7, 0.3];
    const F_LAB: [f64; 4] = [0.2, 0.9, 0.5, 0.8];
    const Y_LAB: [f64; 4] = [0.0, 1.0, 1.0, 0.0];

    /// The labelled pairs with the four corner pseudo-pairs appended.
    fn with_pseudo_pairs(f_lab: &[f64], y_lab: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let (mut f, mut y) = (f_lab.to_vec(), y_lab.to_vec());
        f.extend([0.0, 0.0, 1.0, 1.0]);
        y.extend([0.0, 1.0, 0.0, 1.0]);
        (f, y)
    }

    #[test]
    fn hand_computed_small_case() {
        // mean f_all = 0.55, mean f_lab = 0.6, mean y = 0.5. With the corners (8 pairs: mean f
        // 0.55, mean y 0.5, 7 in the denominator): var(y) = 2/7, var(f) = 1.32/7, cov(y, f) =
        // 0.2/7, var(f - y) = 2.92/7.
        let classic = ppi_mean(&F_ALL, &F_LAB, &Y_LAB).unwrap();
        assert!(close(classic.estimate, 0.45));
        // V = (2.92/7)(1/4 - 1/8) + (2/7)/8 = 0.615/7 (the real n = 4 labels).
        assert!(close(half(&classic), T3 * (0.615f64 / 7.0).sqrt()));
        assert_eq!(
            (classic.lambda, classic.n_labelled, classic.n_total),
            (1.0, 4, 8)
        );
        // Cross-fitting: the even labels (f 0.2, 0.5; y 0, 1) get the lambda of the odd ones
        // (f 0.9, 0.8; y 1, 0) with the corners, and the other way round. Odd + corners: mean
        // f 3.7/6, cov sum 0.05, var(f) sum 3.45 - 3.7^2/6; even + corners: mean f 0.45, cov
        // sum 0.15, var(f) sum 1.075.
        let even = 0.05 / (3.45 - 3.7 * 3.7 / 6.0);
        let odd = 0.15 / 1.075;
        let tuned = ppi_plus_plus(&F_ALL, &F_LAB, &Y_LAB).unwrap();
        let lambda_bar = (even + odd) / 2.0;
        assert!(close(tuned.lambda, lambda_bar));
        let weighted = (even * (0.2 + 0.5) + odd * (0.9 + 0.8)) / 4.0;
        assert!(close(tuned.estimate, 0.5 - weighted + lambda_bar * 0.55));
        let var_r = (2.0 - 2.0 * lambda_bar * 0.2 + lambda_bar * lambda_bar * 1.32) / 7.0;
        let variance = var_r * (1.0 / 4.0 - 1.0 / 8.0) + (2.0 / 7.0) / 8.0;
        assert!(close(half(&tuned), T3 * variance.sqrt()));
        assert!(half(&tuned) < half(&classic));
    }

    #[test]
    fn classic_ppi_is_the_rectified_judge_mean_with_the_floored_variance() {
        let classic = ppi_mean(&F_ALL, &F_LAB, &Y_LAB).unwrap();
        let diffs: Vec<f64> = F_LAB.iter().zip(&Y_LAB).map(|(f, y)| f - y).collect();
        assert!(close(classic.estimate, mean(&F_ALL) - mean(&diffs)));
        let (f, y) = with_pseudo_pairs(&F_LAB, &Y_LAB);
        let floored: Vec<f64> = f.iter().zip(&y).map(|(f, y)| f - y).collect();
        let (var_d, var_y) = (sample_sd(&floored).powi(2), sample_sd(&y).powi(2));
        let variance = var_d / 4.0 + (var_y - var_d) / 8.0;
        assert!(close(half(&classic), T3 * variance.sqrt()));
    }

    #[test]
    fn no_zero_width_interval_from_labels_without_spread() {
        // Ten labels that are all 1, a judge at 1 on them (the review's case): the labels alone
        // say nothing about how often humans disagree; the interval must leave room for it.
        for judge_mean in [1.0f64, 0.9] {
            // 200 queries, the first 10 labelled; the judge gives 0 to the last ones.
            let zeros = (200.0 * (1.0 - judge_mean)).round() as usize;
            let f_all: Vec<f64> = (0..200)
                .map(|i| f64::from(u8::from(i < 200 - zeros)))
                .collect();
            for estimate in [
                ppi_plus_plus(&f_all, &[1.0; 10], &[1.0; 10]).unwrap(),
                ppi_mean(&f_all, &[1.0; 10], &[1.0; 10]).unwrap(),
            ] {
                assert!(
                    estimate.ci.1 - estimate.ci.0 > 0.3,
                    "{judge_mean}: {estimate:?}"
                );
                assert!(estimate.ci.0 < 0.8, "{judge_mean}: {estimate:?}");
            }
        }
    }

    #[test]
    fn lambda_is_clipped_and_a_judge_without_spread_gets_about_zero() {
        // A judge that compresses the human scale (f = 0.4 + 0.2 y) on 60 labels: cov(y, f) /
        // var(f) is well above 1 in both folds, pseudo-pairs included, so lambda is clipped to 1.
        let y: Vec<f64> = (0..60).map(|i| f64::from(u8::from(i % 4 < 2))).collect();
        let f: Vec<f64> = y.iter().map(|y| 0.4 + 0.2 * y).collect();
        assert_eq!(ppi_plus_plus(&f, &f, &y).unwrap().lambda, 1.0);
        let reversed: Vec<f64> = y.iter().map(|y| 1.0 - y).collect();
        assert_eq!(ppi_plus_plus(&f, &f, &reversed).unwrap().lambda, 0.0);
        // With few labels the pseudo-pairs shrink lambda: 8 labels of a judge equal to the human.
        let few = ppi_plus_plus(&y[..8], &y[..8], &y[..8]).unwrap();
        assert!(few.lambda > 0.4 && few.lambda < 1.0, "{few:?}");
        // A judge constant on the labels at the middle of the range: the corners carry no
        // correlation of their own.
        let constant =
            ppi_plus_plus(&[0.5, 0.5, 0.5, 0.5, 0.9], &[0.5; 4], &[1.0, 0.0, 0.0, 1.0]).unwrap();
        assert_eq!((constant.lambda, constant.estimate), (0.0, 0.5));
    }

    #[test]
    fn too_few_labels_or_inconsistent_input_give_none() {
        assert_eq!(ppi_mean(&[0.5, 0.5], &[0.5], &[1.0]), None);
        assert_eq!(ppi_plus_plus(&[], &[], &[]), None);
        assert_eq!(ppi_mean(&[0.5], &[0.5, 0.6], &[1.0, 0.0]), None);
        assert_eq!(ppi_mean(&[0.5, 0.6], &[0.5, 0.6], &[1.0]), None);
        assert_eq!(ppi_mean(&[0.5, f64::NAN], &[0.5, 0.6], &[1.0, 0.0]), None);
        // All queries labelled: the labels' mean, with var(y)/N (floored: y 1, 0, 0, 1, 0, 1
        // has variance 0.3).
        let all = ppi_mean(&[0.5, 0.6], &[0.5, 0.6], &[1.0, 0.0]).unwrap();
        assert!(close(all.estimate, 0.5) && close(half(&all), T1 * (0.3f64 / 2.0).sqrt()));
    }

    /// Uniform in [0, 1) with 53 random bits.
    fn uniform(rng: &mut impl Rng) -> f64 {
        (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal draw (Box-Muller).
    fn normal_draw(rng: &mut impl Rng) -> f64 {
        let u1 = 1.0 - uniform(rng); // in (0, 1], so the log is finite
        let u2 = uniform(rng);
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Averages over 500 simulated tiers: human y ~ Bernoulli(0.7) (true mean 0.7), judge
    /// `f = judge(y) + sd * Z`, the first `n` of `big_n` queries labelled. `paper_cover` is the
    /// coverage of the disjoint-sets interval `var(f_all)/N + var(f - y)/n`, for comparison.
    #[derive(Debug, Default)]
    struct Simulation {
        ppi_mean: f64,
        naive_mean: f64,
        ppi_cover: f64,
        plus_cover: f64,
        paper_cover: f64,
        ppi_width: f64,
        plus_width: f64,
    }

    fn simulate(
        stream: &str,
        n: usize,
        big_n: usize,
        judge: fn(f64) -> f64,
        sd: f64,
    ) -> Simulation {
        const SIMS: f64 = 500.0;
        const TRUTH: f64 = 0.7;
        let mut rng = rng_for(42, stream);
        let covers = |lo: f64, hi: f64| f64::from(u8::from(lo <= TRUTH && TRUTH <= hi)) / SIMS;
        let mut s = Simulation::default();
        for _ in 0..SIMS as usize {
            let y: Vec<f64> = (0..big_n)
                .map(|_| f64::from(u8::from(uniform(&mut rng) < TRUTH)))
                .collect();
            let f: Vec<f64> = y
                .iter()
                .map(|&y| judge(y) + sd * normal_draw(&mut rng))
                .collect();
            let classic = ppi_mean(&f, &f[..n], &y[..n]).unwrap();
            let tuned = ppi_plus_plus(&f, &f[..n], &y[..n]).unwrap();
            let diffs: Vec<f64> = f[..n].iter().zip(&y[..n]).map(|(f, y)| f - y).collect();
            let paper_half = t975(n)
                * (sample_sd(&f).powi(2) / big_n as f64 + sample_sd(&diffs).powi(2) / n as f64)
                    .sqrt();
            s.ppi_mean += classic.estimate / SIMS;
            s.naive_mean += mean(&f) / SIMS;
            s.ppi_cover += covers(classic.ci.0, classic.ci.1);
            s.plus_cover += covers(tuned.ci.0, tuned.ci.1);
            s.paper_cover += covers(classic.estimate - paper_half, classic.estimate + paper_half);
            s.ppi_width += 2.0 * half(&classic) / SIMS;
            s.plus_width += 2.0 * half(&tuned) / SIMS;
        }
        s
    }

    #[test]
    fn biased_judge_ppi_is_unbiased_and_covers() {
        let s = simulate("ppi biased judge", 100, 1000, |y| y + 0.1, 0.2);
        println!("biased judge: {s:.4?}");
        assert!((s.ppi_mean - 0.7).abs() < 0.005, "{}", s.ppi_mean);
        assert!((s.naive_mean - 0.8).abs() < 0.01, "{}", s.naive_mean);
        // The variance floor makes classic PPI a little conservative here (0.956 without it).
        assert!((0.92..=0.985).contains(&s.ppi_cover), "{}", s.ppi_cover);
        assert!((0.92..=0.98).contains(&s.plus_cover), "{}", s.plus_cover);
        assert!(s.plus_width <= s.ppi_width);
    }

    #[test]
    fn compressed_judge_needs_the_overlap_term() {
        // A judge that halves the human scale, half of the queries labelled: the disjoint-sets
        // variance understates the spread of the estimate; the overlap-aware one does not.
        let s = simulate("ppi compressed judge", 500, 1000, |y| 0.5 * y + 0.25, 0.05);
        println!("compressed judge: {s:.4?}");
        assert!((s.ppi_mean - 0.7).abs() < 0.005, "{}", s.ppi_mean);
        assert!((0.92..=0.98).contains(&s.ppi_cover), "{}", s.ppi_cover);
        assert!(s.paper_cover < 0.92, "{}", s.paper_cover);
        assert!(s.plus_width <= s.ppi_width);
    }
}
