//! A test of a bounded mean by betting, valid for any distribution on a known range.
//!
//! Waudby-Smith & Ramdas (2024), "Estimating means of bounded random variables by betting", JRSS B
//! 86(1). Let the worsening values lie in `[-R, R]` (R the width of the metric's value range: 1 for
//! scores in [0, 1]) and test `H0: E[w] <= L` against `E[w] > L`. For a bet `λ` in `[0, 1 / (R + L)]`
//! the capital `K(λ) = prod(1 + λ (w_i - L))` is non-negative (a factor is 0 at worst, when
//! `w_i = -R`) and, for independent queries, `E[K(λ)] = prod(1 + λ (E[w] - L)) <= 1` under H0. The
//! average of `K` over a fixed grid of bets is therefore an e-value too, and by Markov's inequality
//! `p = min(1, 1 / E)` is a valid p-value: its level holds for every distribution on the range,
//! however skewed or sparse, at any n. A fixed grid (not a bet predicted from earlier queries) makes
//! the result independent of the queries' order.
//!
//! The price of that guarantee is power: a bet can never exceed `1 / (R + L)`, because one query
//! could move by the whole range. The gate uses this test only as a check on the analytic test
//! where the analytic test's normal approximation is not to be trusted (see `limit_test`).

/// Number of bets of the even grid: `λ_j = j / (GRID (R + L))`, `j = 1..=GRID`.
const GRID: usize = 100;

/// Values with their multiplicities, so the capital is computed once per distinct value.
pub struct Tallied {
    values: Vec<(f64, usize)>,
}

impl Tallied {
    /// Tallies the values (equal within 1e-12 relative count as one).
    pub fn new(values: &[f64]) -> Self {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mut tallied: Vec<(f64, usize)> = Vec::new();
        for value in sorted {
            match tallied.last_mut() {
                Some((last, count)) if same(*last, value) => *count += 1,
                _ => tallied.push((value, 1)),
            }
        }
        Tallied { values: tallied }
    }

    /// How many values are not zero (within 1e-12): the queries that changed, which carry the
    /// information when most queries did not. A uniform shift (every query worse by the same
    /// amount) changed every query.
    pub fn changed(&self) -> usize {
        self.values
            .iter()
            .filter(|(value, _)| !same(*value, 0.0))
            .map(|(_, count)| count)
            .sum()
    }

    /// The p-value of `H0: E[w] <= limit` for values in `[-range, range]`. Values outside the
    /// range, a non-finite input or a limit outside `(-range, range)` give NaN.
    pub fn p_value(&self, limit: f64, range: f64) -> f64 {
        let outside = self
            .values
            .iter()
            .any(|(v, _)| !v.is_finite() || v.abs() > range * (1.0 + 1e-12));
        let positive_range = range > 0.0;
        if outside || !limit.is_finite() || !positive_range || limit.abs() >= range {
            return f64::NAN;
        }
        let log_capital = |bet: f64| -> f64 {
            self.values
                .iter()
                .map(|&(v, count)| count as f64 * (bet * (v - limit)).max(-1.0).ln_1p())
                .sum::<f64>()
        };
        let largest = 1.0 / (range + limit);
        let grid = log_mean_exp((1..=GRID).map(|j| log_capital(j as f64 * largest / GRID as f64)));
        let log_e = log_mean_exp([log_capital(largest), grid].into_iter());
        (-log_e).exp().min(1.0)
    }
}

/// The smallest p-value the test can give on n values: every value at the top of the range.
pub fn smallest_p(n: usize, limit: f64, range: f64) -> f64 {
    Tallied {
        values: vec![(range, n)],
    }
    .p_value(limit, range)
}

fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * (1.0 + a.abs().max(b.abs()))
}

/// `ln(mean(exp(x)))` without overflow; `-inf` terms (a bet that lost everything) count as 0.
fn log_mean_exp(logs: impl Iterator<Item = f64>) -> f64 {
    let logs: Vec<f64> = logs.collect();
    let top = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if top == f64::NEG_INFINITY {
        return f64::NEG_INFINITY;
    }
    let sum: f64 = logs.iter().map(|l| (l - top).exp()).sum();
    top + (sum / logs.len() as f64).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(values: &[f64], limit: f64) -> f64 {
        Tallied::new(values).p_value(limit, 1.0)
    }

    #[test]
    fn the_p_value_is_the_inverse_of_the_mean_capital_over_the_grid() {
        // Two values 0.5 and -0.5 at L = 0: K(λ) = (1 + λ/2)(1 - λ/2) = 1 - λ²/4 with λ = j / 100,
        // mean over j = 1..100 of 1 - j²/40000 = 0.9154125, and 0.75 at λ = 1: p = 1.
        assert_eq!(p(&[0.5, -0.5], 0.0), 1.0);
        // Ten values of 1 at L = 0: K(λ) = (1 + λ)^10; E = half of K(1) = 2^10 plus half the mean
        // over j of (1 + j/100)^10 (222.6, which alone gave p = 0.0045).
        let grid: f64 = (1..=100)
            .map(|j| (1.0 + j as f64 / 100.0).powi(10))
            .sum::<f64>()
            / 100.0;
        let expected = 1.0 / (0.5 * 1024.0 + 0.5 * grid);
        assert!(expected < 2.0f64.powi(-9), "{expected}");
        assert!((p(&[1.0; 10], 0.0) - expected).abs() < 1e-15 * expected.max(1.0));
        assert_eq!(smallest_p(10, 0.0, 1.0), p(&[1.0; 10], 0.0));
    }

    #[test]
    fn a_value_at_the_bottom_of_the_range_zeroes_only_the_largest_bet() {
        // With L = 0 and w = -1, the bet λ = 1 loses everything; the others keep some capital.
        let mut values = vec![0.2; 40];
        values.push(-1.0);
        let with_loss = p(&values, 0.0);
        assert!(with_loss.is_finite() && with_loss < 1.0, "{with_loss}");
        assert!(with_loss > p(&values[..40], 0.0));
    }

    #[test]
    fn the_p_value_grows_with_the_limit() {
        let values: Vec<f64> = (0..60)
            .map(|i| if i % 3 == 0 { 0.4 } else { 0.0 })
            .collect();
        let mut last = 0.0;
        for limit in [-0.5, -0.1, 0.0, 0.05, 0.1, 0.2] {
            let current = p(&values, limit);
            assert!(current >= last, "limit {limit}: {current} < {last}");
            last = current;
        }
        assert!(p(&values, -0.5) < 1e-6);
    }

    #[test]
    fn inputs_outside_the_range_are_not_a_p_value() {
        assert!(p(&[1.5, 0.0], 0.0).is_nan());
        assert!(p(&[0.1, f64::NAN], 0.0).is_nan());
        assert!(p(&[0.1], 1.0).is_nan());
        assert!(Tallied::new(&[0.1]).p_value(0.0, 0.0).is_nan());
    }

    #[test]
    fn changed_counts_the_values_that_are_not_zero() {
        assert_eq!(Tallied::new(&[0.0, 0.0, 0.0, 0.3, -0.2, 0.3]).changed(), 3);
        // A uniform shift changed every value (the most common value is not "unchanged").
        assert_eq!(Tallied::new(&[0.1 + 0.2, 0.3, 0.5]).changed(), 3);
        assert_eq!(Tallied::new(&[1e-17, -0.0, 0.5]).changed(), 1);
        assert_eq!(Tallied::new(&[]).changed(), 0);
    }

    #[test]
    fn the_level_holds_under_a_sparse_null_that_fools_a_normal_test() {
        // 95% of queries worse by 0.01, 5% better by 0.19 (mean 0, skewness about -4): samples of
        // 100 with few of the rare gains look like a clear regression to a mean test.
        use rand::Rng;
        let mut rng = crate::rng_for(11, "sparse null");
        let trials = 4_000;
        let mut rejected = 0;
        for _ in 0..trials {
            let values: Vec<f64> = (0..100)
                .map(|_| {
                    if rng.next_u64().is_multiple_of(20) {
                        -0.19
                    } else {
                        0.01
                    }
                })
                .collect();
            rejected += usize::from(p(&values, 0.0) <= 0.05);
        }
        assert!(rejected as f64 / (trials as f64) <= 0.05, "{rejected}");
    }
}
