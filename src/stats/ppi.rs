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
//! with sample (n - 1) moments of the labelled pairs, where
//! `var(r) = var(y) - 2 lambda cov(y, f) + lambda^2 var(f)`. At `lambda = 1` this is
//! `var(f - y)/n + var(f)/N - 2 cov(f, f - y)/N`: the paper's `var(f)/N + var(f - y)/n` (written
//! for disjoint labelled and unlabelled sets) plus the overlap term `-2 cov(f, f - y)/N`. That term
//! is negative for a noisy judge (the paper's formula is then conservative) but positive for a
//! judge that compresses the human scale, where omitting it under-covers when `n/N` is large (see
//! `compressed_judge_needs_the_overlap_term`). The 95% interval is
//! `theta +- t(0.975; n - 1) * sqrt(V)`, with Student's t quantile on n - 1 degrees of freedom (n the
//! number of labels; with a handful of labels the normal quantile covered only 61-79% in simulation),
//! not clipped.
//!
//! Power tuning (PPI++). For disjoint sets of `n` labelled and `m` unlabelled queries, PPI++
//! minimises the variance with `lambda' = cov(y, f) / ((1 + n/m) var(f))`. Our family is theirs
//! with `lambda' = lambda * m / N` (`m = N - n`, since `mean(f_all) - mean(f_lab)` equals
//! `(m/N) (mean(f_unlabelled) - mean(f_lab))`), so their optimum is ours at
//! `lambda = cov(y, f) / var(f)`, which is also the exact minimiser of `V(lambda)` above.
//! As in PPI++ (its reference implementation `ppi_py` clips by default), lambda is clipped to
//! [0, 1], between the labels-only mean and classic PPI, so an estimated lambda never amplifies the
//! judge beyond classic PPI nor turns its sign;
//! `V` is convex in lambda, so the clipped value is never worse than classic PPI on the same data.
//! A judge constant on the labelled queries carries no information: lambda = 0.

use crate::stats::{mean, student_t_quantile};

/// Two-sided confidence level of [`PpiEstimate::ci`].
pub const CONFIDENCE: f64 = 0.95;

/// A prediction-powered estimate of the mean human score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PpiEstimate {
    pub estimate: f64,
    /// 95% interval, `estimate +- t(0.975; n - 1) * sd`; not clipped to the metric's range.
    pub ci: (f64, f64),
    /// Weight of the judge (1 for classic PPI).
    pub lambda: f64,
    pub n_labelled: usize,
    pub n_total: usize,
}

/// Classic PPI: `mean(f_all) - mean(f_lab - y_lab)` with its 95% CI.
///
/// `f_all`: judge scores of all N queries, the labelled ones included; `f_lab[i]` and `y_lab[i]`:
/// judge and human scores of the i-th labelled query. `None` when there are fewer than two labels
/// (n < 2, no variance estimate), `f_all` is shorter than the labels (N < n, so N >= 1 always
/// holds otherwise), `f_lab` and `y_lab` differ in length, or any value is not finite.
pub fn ppi_mean(f_all: &[f64], f_lab: &[f64], y_lab: &[f64]) -> Option<PpiEstimate> {
    with_lambda(f_all, f_lab, y_lab, 1.0)
}

/// PPI++ power-tuned estimate, `lambda = clip(cov(y, f) / var(f), 0, 1)` on the labelled pairs
/// (see the module notes); same inputs and `None` cases as [`ppi_mean`].
pub fn ppi_plus_plus(f_all: &[f64], f_lab: &[f64], y_lab: &[f64]) -> Option<PpiEstimate> {
    let moments = Moments::new(f_all, f_lab, y_lab)?;
    let lambda = if moments.var_f > 0.0 {
        (moments.cov_yf / moments.var_f).clamp(0.0, 1.0)
    } else {
        0.0
    };
    Some(moments.estimate(lambda))
}

/// The estimate for a given `lambda` (1 = classic PPI, 0 = labels only).
fn with_lambda(f_all: &[f64], f_lab: &[f64], y_lab: &[f64], lambda: f64) -> Option<PpiEstimate> {
    Some(Moments::new(f_all, f_lab, y_lab)?.estimate(lambda))
}

/// Means and sample (n - 1) second moments of the inputs.
struct Moments {
    n: usize,
    n_total: usize,
    mean_f_all: f64,
    mean_f_lab: f64,
    mean_y: f64,
    var_f: f64,
    var_y: f64,
    cov_yf: f64,
}

impl Moments {
    fn new(f_all: &[f64], f_lab: &[f64], y_lab: &[f64]) -> Option<Self> {
        let (n, n_total) = (f_lab.len(), f_all.len());
        if n < 2 || n_total < n || y_lab.len() != n {
            return None;
        }
        let all_values = f_all.iter().chain(f_lab).chain(y_lab);
        if !all_values.into_iter().all(|v| v.is_finite()) {
            return None;
        }
        let (mean_f_all, mean_f_lab, mean_y) = (mean(f_all), mean(f_lab), mean(y_lab));
        let (mut var_f, mut var_y, mut cov_yf) = (0.0, 0.0, 0.0);
        for (f, y) in f_lab.iter().zip(y_lab) {
            let (df, dy) = (f - mean_f_lab, y - mean_y);
            var_f += df * df;
            var_y += dy * dy;
            cov_yf += dy * df;
        }
        let denominator = (n - 1) as f64;
        Some(Moments {
            n,
            n_total,
            mean_f_all,
            mean_f_lab,
            mean_y,
            var_f: var_f / denominator,
            var_y: var_y / denominator,
            cov_yf: cov_yf / denominator,
        })
    }

    fn estimate(&self, lambda: f64) -> PpiEstimate {
        let estimate = self.mean_y + lambda * (self.mean_f_all - self.mean_f_lab);
        let var_r =
            (self.var_y - 2.0 * lambda * self.cov_yf + lambda * lambda * self.var_f).max(0.0);
        let (n, big_n) = (self.n as f64, self.n_total as f64);
        let variance = var_r * (1.0 / n - 1.0 / big_n) + self.var_y / big_n;
        let quantile = student_t_quantile(0.5 + CONFIDENCE / 2.0, (self.n - 1) as f64);
        let half_width = quantile * variance.max(0.0).sqrt();
        PpiEstimate {
            estimate,
            ci: (estimate - half_width, estimate + half_width),
            lambda,
            n_labelled: self.n,
            n_total: self.n_total,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{rng_for, sample_sd};
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

    #[test]
    fn hand_computed_small_case() {
        // mean f_all = 0.55, mean f_lab = 0.6, mean y = 0.5; sample var(y) = 1/3,
        // var(f) = 0.1, cov(y, f) = 1/15, var(f - y) = 0.3.
        let classic = ppi_mean(&F_ALL, &F_LAB, &Y_LAB).unwrap();
        assert!(close(classic.estimate, 0.45));
        // V = 0.3 (1/4 - 1/8) + (1/3)/8 = 19/240.
        assert!(close(half(&classic), T3 * (19.0f64 / 240.0).sqrt()));
        assert_eq!(
            (classic.lambda, classic.n_labelled, classic.n_total),
            (1.0, 4, 8)
        );
        let tuned = ppi_plus_plus(&F_ALL, &F_LAB, &Y_LAB).unwrap();
        // lambda = (1/15) / 0.1 = 2/3; theta = 0.5 + (2/3)(0.55 - 0.6) = 0.4666...
        assert!(close(tuned.lambda, 2.0 / 3.0));
        assert!(close(tuned.estimate, 0.5 - 0.05 * 2.0 / 3.0));
        // var(r) = 1/3 - 2 (2/3)(1/15) + (4/9)(0.1) = 13/45; V = (13/45)(1/8) + 1/24 = 7/90.
        assert!(close(half(&tuned), T3 * (7.0f64 / 90.0).sqrt()));
        assert!(half(&tuned) < half(&classic));
    }

    #[test]
    fn lambda_one_is_classic_ppi_and_zero_is_labels_only() {
        let forced = with_lambda(&F_ALL, &F_LAB, &Y_LAB, 1.0).unwrap();
        assert_eq!(forced, ppi_mean(&F_ALL, &F_LAB, &Y_LAB).unwrap());
        // Classic PPI computed the other way round: rectifier on the differences.
        let diffs: Vec<f64> = F_LAB.iter().zip(&Y_LAB).map(|(f, y)| f - y).collect();
        assert!(close(forced.estimate, mean(&F_ALL) - mean(&diffs)));
        let (var_d, var_y) = (sample_sd(&diffs).powi(2), sample_sd(&Y_LAB).powi(2));
        let variance = var_d / 4.0 + (var_y - var_d) / 8.0;
        assert!(close(half(&forced), T3 * variance.sqrt()));
        let labels_only = with_lambda(&F_ALL, &F_LAB, &Y_LAB, 0.0).unwrap();
        assert!(close(labels_only.estimate, mean(&Y_LAB)));
        assert!(close(half(&labels_only), T3 * (var_y / 4.0).sqrt()));
    }

    #[test]
    fn lambda_is_clipped_and_a_constant_judge_gets_zero() {
        let steep = ppi_plus_plus(&[0.5, 0.6, 0.7], &[0.5, 0.6], &[0.0, 1.0]).unwrap();
        assert_eq!(steep.lambda, 1.0);
        let reversed = ppi_plus_plus(&[0.5, 0.6, 0.7], &[0.5, 0.6], &[1.0, 0.0]).unwrap();
        assert_eq!(reversed.lambda, 0.0);
        let constant = ppi_plus_plus(&[0.5, 0.5, 0.9], &[0.5, 0.5], &[1.0, 0.0]).unwrap();
        assert_eq!((constant.lambda, constant.estimate), (0.0, 0.5));
    }

    #[test]
    fn too_few_labels_or_inconsistent_input_give_none() {
        assert_eq!(ppi_mean(&[0.5, 0.5], &[0.5], &[1.0]), None);
        assert_eq!(ppi_plus_plus(&[], &[], &[]), None);
        assert_eq!(ppi_mean(&[0.5], &[0.5, 0.6], &[1.0, 0.0]), None);
        assert_eq!(ppi_mean(&[0.5, 0.6], &[0.5, 0.6], &[1.0]), None);
        assert_eq!(ppi_mean(&[0.5, f64::NAN], &[0.5, 0.6], &[1.0, 0.0]), None);
        // All queries labelled: the labels' mean, with var(y)/N.
        let all = ppi_mean(&[0.5, 0.6], &[0.5, 0.6], &[1.0, 0.0]).unwrap();
        assert!(close(all.estimate, 0.5) && close(half(&all), T1 * (0.5f64 / 2.0).sqrt()));
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
        assert!((0.92..=0.98).contains(&s.ppi_cover), "{}", s.ppi_cover);
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
