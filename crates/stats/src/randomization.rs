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
/// Meet in the middle: the signed sums of each half are listed in ascending order (2^(n/2) each,
/// every entry computed by at most n/2 additions, so rounding error stays tiny), and one pass over
/// both lists counts the pairs whose total is at or below `limit`: as the second half's sum grows,
/// the first-half sums that keep the total at or below `limit` form a shrinking prefix. For n = 20
/// that is about 2 * 10^3 steps instead of 10^6.
fn exact_p_value(deltas: &[f64], limit: f64) -> f64 {
    let (first, second) = deltas.split_at(deltas.len() / 2);
    let first_sums = sorted_signed_sums(first);
    let mut kept = first_sums.len();
    let mut at_or_below: u64 = 0;
    for other in sorted_signed_sums(second) {
        // The same comparison, term for term, as a binary search would make: `sum + other` is
        // non-decreasing in both, so the prefix only shrinks.
        while kept > 0 && first_sums[kept - 1] + other > limit {
            kept -= 1;
        }
        at_or_below += kept as u64;
    }
    at_or_below as f64 / (1u64 << deltas.len()) as f64
}

/// All 2^k sums `sum(s_i * v_i)` over sign vectors `s`, in ascending order.
///
/// Built one value at a time: with the sums of the values so far sorted, the sums with the next
/// value `v` are those sums minus |v| and plus |v|, two sorted lists merged in one pass (no sort).
/// Each sum is computed by the same additions in the same order as term-by-term enumeration, since
/// `s - |v|` equals `s + v` exactly for a negative `v`.
fn sorted_signed_sums(values: &[f64]) -> Vec<f64> {
    let mut sums = vec![0.0];
    let mut merged = Vec::with_capacity(1 << values.len());
    for value in values.iter().map(|v| v.abs()) {
        let len = sums.len();
        merged.clear();
        merged.resize(2 * len, 0.0);
        let (mut lower, mut upper) = (0, 0);
        for slot in merged.iter_mut() {
            // Every `sums[i] - value` is at most `sums[i] + value`, so the lower list runs out
            // first and `upper` stays in range until the last slot.
            if lower < len && sums[lower] - value <= sums[upper] + value {
                *slot = sums[lower] - value;
                lower += 1;
            } else {
                *slot = sums[upper] + value;
                upper += 1;
            }
        }
        std::mem::swap(&mut sums, &mut merged);
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng_for;

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

    /// The sums by term-by-term enumeration (signs applied to the values as given), sorted.
    fn enumerated_sums(values: &[f64]) -> Vec<f64> {
        let mut sums = vec![0.0];
        for &value in values {
            sums = sums.iter().flat_map(|s| [s + value, s - value]).collect();
        }
        sums.sort_by(f64::total_cmp);
        sums
    }

    #[test]
    fn merged_sums_are_the_enumerated_sums_bit_for_bit_and_the_count_matches_a_binary_search() {
        for (seed, n) in [(6, 1), (7, 4), (8, 11), (9, 15)] {
            let values = uniform_deltas(seed, n, 0.1);
            let merged = sorted_signed_sums(&values);
            let enumerated = enumerated_sums(&values);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&merged), bits(&enumerated), "n = {n}");
            let (first, second) = values.split_at(n / 2);
            let first_sums = enumerated_sums(first);
            for limit in [-1.0, -0.05, 0.0, 0.3, 2.0] {
                let searched: u64 = enumerated_sums(second)
                    .iter()
                    .map(|&o| first_sums.partition_point(|&s| s + o <= limit) as u64)
                    .sum();
                let expected = searched as f64 / (1u64 << n) as f64;
                assert_eq!(
                    exact_p_value(&values, limit),
                    expected,
                    "n = {n}, limit {limit}"
                );
            }
        }
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
