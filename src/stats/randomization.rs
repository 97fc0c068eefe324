//! One-sided paired sign-flip randomization test for a drop in the mean delta, enumerated exactly.

/// Largest n [`exact_drop_p_value`] enumerates: 2^40 sign vectors, counted in about 2^21 steps.
pub const EXACT_MAX_N: usize = 40;

/// Exact one-sided p-value of the paired sign-flip test of H0 "no drop" against "the mean delta
/// is negative", where each delta is `current - baseline` for one query (or, for a test against a
/// limit, the shifted value `limit - worsening`).
///
/// Under H0 every delta is as likely to have either sign, so the statistic `T = sum(s_i * d_i)`
/// with signs `s_i = ±1` is compared with the observed `sum(d_i)`. The p-value is the share of all
/// 2^n sign assignments (the observed one included, so p >= 2^-n) whose `T` is at most the
/// observed sum. Ties count; two sums within `max(1e-12, 4 n ε) * sum|d_i|` of each other are
/// treated as equal, which bounds the rounding error of the summations (Higham's
/// `(n - 1) ε sum|d_i|`), so tied sums that floating point computes a few ulps apart still tie.
///
/// Empty `deltas` give 1 (no evidence of a drop). Any non-finite delta, or more than
/// [`EXACT_MAX_N`] deltas, gives NaN, which no threshold accepts.
pub fn exact_drop_p_value(deltas: &[f64]) -> f64 {
    if deltas.iter().any(|d| !d.is_finite()) || deltas.len() > EXACT_MAX_N {
        return f64::NAN;
    }
    if deltas.is_empty() {
        return 1.0;
    }
    let observed: f64 = deltas.iter().sum();
    exact_p_value(deltas, observed + tie_tolerance(deltas))
}

/// Sums within this distance of each other count as equal (see [`drop_p_value`]).
fn tie_tolerance(deltas: &[f64]) -> f64 {
    let magnitude: f64 = deltas.iter().map(|d| d.abs()).sum();
    let relative = (4.0 * deltas.len() as f64 * f64::EPSILON).max(1e-12);
    magnitude * relative
}

/// Share of all 2^n sign assignments whose signed sum is `<= limit`.
///
/// Meet in the middle: the signed sums of each half are listed separately (2^(n/2) each, every
/// entry computed by at most n/2 additions, so rounding error stays tiny), the first half is
/// sorted, and for each second-half sum a binary search counts the first-half sums that keep the
/// total at or below `limit`. For n = 20 that is about 10^4 operations instead of 10^6.
fn exact_p_value(deltas: &[f64], limit: f64) -> f64 {
    let (first, second) = deltas.split_at(deltas.len() / 2);
    let mut first_sums = signed_sums(first);
    first_sums.sort_unstable_by(f64::total_cmp);
    let at_or_below: u64 = signed_sums(second)
        .iter()
        .map(|&other| first_sums.partition_point(|&sum| sum + other <= limit) as u64)
        .sum();
    at_or_below as f64 / (1u64 << deltas.len()) as f64
}

/// All 2^k sums `sum(s_i * v_i)` over sign vectors `s` (in no particular order).
fn signed_sums(values: &[f64]) -> Vec<f64> {
    let mut sums = Vec::with_capacity(1 << values.len());
    sums.push(0.0);
    for &value in values {
        let len = sums.len();
        for i in 0..len {
            let sum = sums[i];
            sums[i] = sum + value;
            sums.push(sum - value);
        }
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng_for;

    use rand::Rng;

    fn exact(deltas: &[f64]) -> f64 {
        exact_drop_p_value(deltas)
    }

    /// Direct enumeration over bit masks, as a reference for the meet-in-the-middle count.
    fn brute_force(deltas: &[f64]) -> f64 {
        let observed: f64 = deltas.iter().sum();
        let limit = observed + tie_tolerance(deltas);
        let total = 1u64 << deltas.len();
        let count = (0..total)
            .filter(|mask| {
                let sum: f64 = (deltas.iter().enumerate())
                    .map(|(i, d)| if mask >> i & 1 == 1 { -d } else { *d })
                    .sum();
                sum <= limit
            })
            .count();
        count as f64 / total as f64
    }

    fn uniform_deltas(seed: u64, n: usize, shift: f64) -> Vec<f64> {
        let mut rng = rng_for(seed, "deltas");
        (0..n)
            .map(|_| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0 + shift)
            .collect()
    }

    #[test]
    fn hand_enumerated_cases() {
        // [-1, -2]: signed sums {-3, -1, 1, 3}; observed -3; only itself is <= -3: p = 1/4.
        assert_eq!(exact(&[-1.0, -2.0]), 0.25);
        // [-1, 1]: (+,+) 0, (-,+) 2, (+,-) -2, (-,-) 0; observed 0; {0, -2, 0}: p = 3/4.
        assert_eq!(exact(&[-1.0, 1.0]), 0.75);
        // [-1]: sums {-1, 1}; p = 1/2.
        assert_eq!(exact(&[-1.0]), 0.5);
        // All zero: every sum ties with the observed 0.
        assert_eq!(exact(&[0.0; 6]), 1.0);
        // Every delta strongly negative: only the observed assignment: p = 2^-10.
        assert_eq!(exact(&[-1.0; 10]), 1.0 / 1024.0);
    }

    #[test]
    fn float_noise_does_not_break_ties() {
        // Exact sums of ±0.3 ±0.1 ±0.2: {0.6, 0.4, 0.2, 0, 0, -0.2, -0.4, -0.6}; observed 0, so
        // p = 5/8. In floating point 0.3 - 0.1 - 0.2 is -2.8e-17 and its mirror is +2.8e-17.
        assert_eq!(exact(&[0.3, -0.1, -0.2]), 0.625);
    }

    #[test]
    fn empty_non_finite_and_oversized_inputs() {
        assert_eq!(exact(&[]), 1.0);
        assert!(exact(&[1.0, f64::NAN]).is_nan());
        assert!(exact(&[f64::NEG_INFINITY]).is_nan());
        assert!(exact(&[-1.0; EXACT_MAX_N + 1]).is_nan());
        assert_eq!(exact(&[-1.0; 30]), 0.5f64.powi(30));
    }

    #[test]
    fn meet_in_the_middle_matches_brute_force() {
        for (seed, n) in [(1, 1), (2, 2), (3, 5), (4, 9), (5, 12)] {
            let deltas = uniform_deltas(seed, n, -0.2);
            assert_eq!(exact(&deltas), brute_force(&deltas), "n = {n}");
        }
        let discrete = [0.2, -0.2, 0.0, -0.4, 0.2, -0.2, 0.6, -0.2, 0.0, -0.2, 0.4];
        assert_eq!(exact(&discrete), brute_force(&discrete));
    }

    #[test]
    fn p_value_does_not_rise_when_a_delta_gets_more_negative() {
        for n in [12, 29] {
            let mut deltas = uniform_deltas(n as u64, n, 0.0);
            let mut previous = exact(&deltas);
            for i in 0..n {
                deltas[i] -= 0.5;
                let p = exact(&deltas);
                assert!(p <= previous, "n = {n}, step {i}: {p} > {previous}");
                previous = p;
            }
            assert!(previous < 0.05, "n = {n}: final p {previous}");
        }
    }
}
