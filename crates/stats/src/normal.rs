//! Standard normal quantiles (Wichura's AS241) and the detectable drop of a one-sided test.

/// Inverse of the standard normal CDF: the `x` with `P(Z <= x) = p`.
///
/// Wichura's algorithm AS241 (PPND16, Applied Statistics 37(3), 1988), relative accuracy about
/// 1e-16. `p <= 0` gives -infinity, `p >= 1` gives +infinity, NaN gives NaN.
pub fn quantile(p: f64) -> f64 {
    if p.is_nan() {
        return f64::NAN;
    }
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    let q = p - 0.5;
    if q.abs() <= 0.425 {
        let r = 0.180625 - q * q;
        return q * polynomial(&CENTRAL_NUMERATOR, r) / polynomial(&CENTRAL_DENOMINATOR, r);
    }
    let tail = if q < 0.0 { p } else { 1.0 - p };
    let r = (-tail.ln()).sqrt();
    let magnitude = if r <= 5.0 {
        let r = r - 1.6;
        polynomial(&NEAR_TAIL_NUMERATOR, r) / polynomial(&NEAR_TAIL_DENOMINATOR, r)
    } else {
        let r = r - 5.0;
        polynomial(&FAR_TAIL_NUMERATOR, r) / polynomial(&FAR_TAIL_DENOMINATOR, r)
    };
    if q < 0.0 { -magnitude } else { magnitude }
}

/// The smallest drop of the mean delta that a one-sided test at level `alpha` detects with
/// probability `power`, when the limit is `limit` (the allowed absolute drop), the per-query
/// deltas have standard deviation `sd` and there are `n` paired queries:
///
/// `limit + (z(1 - alpha) + z(power)) * sd / sqrt(n)`
///
/// (normal approximation to the distribution of the mean delta). A gate with this many queries
/// cannot reliably flag drops smaller than this. `n == 0` gives +infinity.
pub fn detectable_drop(limit: f64, alpha: f64, power: f64, sd: f64, n: usize) -> f64 {
    if n == 0 {
        return f64::INFINITY;
    }
    limit + (quantile(1.0 - alpha) + quantile(power)) * sd / (n as f64).sqrt()
}

/// Horner evaluation; `coefficients[0]` is the constant term.
fn polynomial(coefficients: &[f64; 8], x: f64) -> f64 {
    coefficients.iter().rev().fold(0.0, |acc, &c| acc * x + c)
}

// Coefficients as published in AS241 (constant term first).
#[allow(clippy::excessive_precision)]
const CENTRAL_NUMERATOR: [f64; 8] = [
    3.3871328727963666080e0,
    1.3314166789178437745e+2,
    1.9715909503065514427e+3,
    1.3731693765509461125e+4,
    4.5921953931549871457e+4,
    6.7265770927008700853e+4,
    3.3430575583588128105e+4,
    2.5090809287301226727e+3,
];
#[allow(clippy::excessive_precision)]
const CENTRAL_DENOMINATOR: [f64; 8] = [
    1.0,
    4.2313330701600911252e+1,
    6.8718700749205790830e+2,
    5.3941960214247511077e+3,
    2.1213794301586595867e+4,
    3.9307895800092710610e+4,
    2.8729085735721942674e+4,
    5.2264952788528545610e+3,
];
#[allow(clippy::excessive_precision)]
const NEAR_TAIL_NUMERATOR: [f64; 8] = [
    1.42343711074968357734e0,
    4.63033784615654529590e0,
    5.76949722146069140550e0,
    3.64784832476320460504e0,
    1.27045825245236838258e0,
    2.41780725177450611770e-1,
    2.27238449892691845833e-2,
    7.74545014278341407640e-4,
];
#[allow(clippy::excessive_precision)]
const NEAR_TAIL_DENOMINATOR: [f64; 8] = [
    1.0,
    2.05319162663775882187e0,
    1.67638483018380384940e0,
    6.89767334985100004550e-1,
    1.48103976427480074590e-1,
    1.51986665636164571966e-2,
    5.47593808499534494600e-4,
    1.05075007164441684324e-9,
];
#[allow(clippy::excessive_precision)]
const FAR_TAIL_NUMERATOR: [f64; 8] = [
    6.65790464350110377720e0,
    5.46378491116411436990e0,
    1.78482653991729133580e0,
    2.96560571828504891230e-1,
    2.65321895265761230930e-2,
    1.24266094738807843860e-3,
    2.71155556874348757815e-5,
    2.01033439929228813265e-7,
];
#[allow(clippy::excessive_precision)]
const FAR_TAIL_DENOMINATOR: [f64; 8] = [
    1.0,
    5.99832206555887937690e-1,
    1.36929880922735805310e-1,
    1.48753612908506148525e-2,
    7.86869131145613259100e-4,
    1.84631831751005468180e-5,
    1.42151175831644588870e-7,
    2.04426310338993978564e-15,
];

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_close(actual: f64, expected: f64, tolerance: f64) {
        assert!(
            (actual - expected).abs() <= tolerance,
            "{actual} vs {expected}"
        );
    }

    #[test]
    fn known_quantiles() {
        assert_close(quantile(0.975), 1.959963984540054, 1e-12);
        assert_close(quantile(0.8), 0.8416212335729143, 1e-12);
        assert_close(quantile(0.95), 1.6448536269514722, 1e-12);
        assert_close(quantile(0.3), -0.5244005127080407, 1e-12);
        assert_eq!(quantile(0.5), 0.0);
    }

    #[test]
    fn tail_quantiles() {
        // Near tail (r <= 5) and far tail (r > 5) branches.
        assert_close(quantile(1e-10), -6.361340902404056, 1e-9);
        assert_close(quantile(1e-300), -37.0470962993612, 1e-9);
        assert_close(quantile(0.001), -3.090232306167813, 1e-12);
    }

    #[test]
    fn symmetric_around_one_half() {
        for p in [0.001, 0.01, 0.025, 0.1, 0.3, 0.45, 0.49] {
            assert_close(quantile(p), -quantile(1.0 - p), 1e-12);
        }
    }

    #[test]
    fn out_of_range_probabilities() {
        assert_eq!(quantile(0.0), f64::NEG_INFINITY);
        assert_eq!(quantile(-0.5), f64::NEG_INFINITY);
        assert_eq!(quantile(1.0), f64::INFINITY);
        assert_eq!(quantile(2.0), f64::INFINITY);
        assert!(quantile(f64::NAN).is_nan());
    }

    #[test]
    fn detectable_drop_formula() {
        // z(0.95) + z(0.8) = 2.486474860524...; sd 0.2, n 100 -> 0.049729497...
        let expected = 0.02 + (1.6448536269514722 + 0.8416212335729143) * 0.2 / 10.0;
        assert_close(detectable_drop(0.02, 0.05, 0.8, 0.2, 100), expected, 1e-12);
        assert_eq!(detectable_drop(0.02, 0.05, 0.8, 0.0, 10), 0.02);
        assert_eq!(detectable_drop(0.02, 0.05, 0.8, 0.2, 0), f64::INFINITY);
    }

    #[test]
    fn detectable_drop_shrinks_with_more_queries() {
        let small = detectable_drop(0.0, 0.05, 0.8, 0.3, 25);
        let large = detectable_drop(0.0, 0.05, 0.8, 0.3, 100);
        assert_close(small, 2.0 * large, 1e-12);
    }
}
