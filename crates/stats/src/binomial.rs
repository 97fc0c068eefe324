//! The exact (Clopper-Pearson) lower confidence bound of a binomial proportion.

use statrs::function::beta::inv_beta_reg;

/// The one-sided Clopper-Pearson lower bound at `level` (0.025: the lower end of the two-sided
/// 95% interval) of a proportion with `successes` of `n` trials: the `level` quantile of
/// Beta(successes, n - successes + 1), 0 without a success; `level^(1/n)` when every trial
/// succeeded. Exact: a proportion `p` has its bound above `p` with probability at most `level`.
/// `successes` is at most `n`, `n` at least 1, `level` in (0, 1).
pub fn clopper_pearson_lower(successes: usize, n: usize, level: f64) -> f64 {
    assert!(
        n >= 1 && successes <= n && level > 0.0 && level < 1.0,
        "clopper_pearson_lower({successes}, {n}, {level})"
    );
    if successes == 0 {
        return 0.0;
    }
    if successes == n {
        return level.powf(1.0 / n as f64);
    }
    inv_beta_reg(successes as f64, (n - successes + 1) as f64, level)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `scipy.stats.beta.ppf(level, k, n - k + 1)` (scipy 1.x), computed outside this crate.
    const SCIPY: [(usize, usize, f64, f64); 6] = [
        (50, 50, 0.025, 0.928_878_263_535_802_4),
        (49, 50, 0.025, 0.893_530_454_288_500_1),
        (50, 50, 0.05, 0.941_844_920_883_027_7),
        (10, 10, 0.025, 0.691_502_892_181_239_2),
        (19, 20, 0.025, 0.751_267_237_227_972_2),
        (1, 5, 0.025, 0.005_050_763_379_468_006),
    ];

    #[test]
    fn the_bound_equals_scipys_beta_quantile() {
        for (k, n, level, expected) in SCIPY {
            let bound = clopper_pearson_lower(k, n, level);
            assert!(
                (bound - expected).abs() < 1e-9,
                "{k} of {n} at {level}: {bound} vs {expected}"
            );
        }
        assert_eq!(clopper_pearson_lower(0, 7, 0.025), 0.0);
    }
}
