//! Multiplicity corrections over a family of checks: Holm's step-down (family-wise error),
//! Benjamini-Hochberg's step-up (false-discovery rate), or none. Each p-value gets its adjusted
//! value (Holm's adjusted p, BH's q), rejected exactly when that is at most alpha, and the level
//! at which its one-sided bound is shown, so that the numbers a report prints agree with the
//! verdict: rejected <=> adjusted <= alpha <=> p <= level <=> the bound at `level` is past the
//! limit.

/// The outcome of a correction for one p-value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepDecision {
    /// The adjusted p-value, compared with alpha: Holm's step-down adjusted p
    /// (`max over j <= i of min(1, (m - j + 1) p_(j))`), BH's step-up q-value
    /// (`min over j >= i of min(1, m p_(j) / j)`), or p itself without correction. NaN for NaN.
    pub adjusted: f64,
    /// The level of the check's one-sided bound, the level its raw p is equivalently compared with
    /// (`p <= threshold` exactly when rejected, see [`levels`]).
    pub threshold: f64,
    /// Whether its null hypothesis is rejected: `adjusted <= alpha`.
    pub rejected: bool,
}

/// Which correction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Procedure {
    /// Holm's step-down: family-wise error at most alpha.
    Holm,
    /// Benjamini-Hochberg's step-up: false-discovery rate at most alpha.
    BenjaminiHochberg,
    /// Each p-value against alpha.
    None,
}

impl Procedure {
    /// The decisions of `p_values` at `alpha`, in input order.
    pub fn apply(self, p_values: &[f64], alpha: f64) -> Vec<StepDecision> {
        match self {
            Procedure::Holm => holm(p_values, alpha),
            Procedure::BenjaminiHochberg => benjamini_hochberg(p_values, alpha),
            Procedure::None => uncorrected(p_values, alpha),
        }
    }
}

/// Holm step-down over `p_values` at family-wise level `alpha`; the decisions come back in input
/// order.
///
/// The p-values are ranked ascending (a stable sort, so ties keep input order; NaN ranks last).
/// The i-th smallest (1-based) has adjusted p `max over j <= i of min(1, (m - j + 1) p_(j))`,
/// rejected when at most `alpha`: the same as rejecting up the ranking while
/// `p_(i) <= alpha / (m - i + 1)` and stopping at the first that is not. The bound level
/// (`threshold`) of a rejected p-value is its own rank's `alpha / (m - i + 1)`; of one that is not
/// rejected, the level where Holm stopped, `alpha / (m - k + 1)` with k the first rank not
/// rejected (every p-value from k on is above it, being at least `p_(k)`). NaN is never rejected.
/// An empty family gives an empty vector.
pub fn holm(p_values: &[f64], alpha: f64) -> Vec<StepDecision> {
    let m = p_values.len();
    let ranking = ranked(p_values);
    let mut adjusted = vec![f64::NAN; m];
    let mut running = 0.0f64;
    for (rank, &index) in ranking.iter().enumerate() {
        let p = p_values[index];
        running = running.max((((m - rank) as f64) * p).min(1.0));
        adjusted[index] = if p.is_nan() { f64::NAN } else { running };
    }
    let rejected = |index: usize| adjusted[index] <= alpha;
    let stop = ranking.iter().position(|&index| !rejected(index));
    let level = |rank: usize| alpha / (m - rank) as f64;
    let mut decisions = vec![
        StepDecision {
            adjusted: f64::NAN,
            threshold: alpha,
            rejected: false,
        };
        m
    ];
    for (rank, &index) in ranking.iter().enumerate() {
        decisions[index] = StepDecision {
            adjusted: adjusted[index],
            threshold: level(stop.map_or(rank, |stop| rank.min(stop))),
            rejected: rejected(index),
        };
    }
    decisions
}

/// Benjamini-Hochberg step-up over `p_values` at false-discovery rate `alpha`; decisions in input
/// order. Ranked ascending (stable, NaN last), the i-th smallest (1-based) has q-value
/// `min over j >= i of min(1, m p_(j) / j)`, rejected when at most `alpha`: the same as rejecting
/// every p-value ranked at or below the largest i with `p_(i) <= i alpha / m`. Every p-value's
/// bound level (`threshold`) is `R alpha / m`, R the number rejected (`alpha / m` when none is):
/// Benjamini and Yekutieli's false-coverage-rate adjusted level, at which the rejected p-values
/// are exactly those at or below it. NaN is never rejected.
pub fn benjamini_hochberg(p_values: &[f64], alpha: f64) -> Vec<StepDecision> {
    let m = p_values.len();
    let ranking = ranked(p_values);
    let mut adjusted = vec![f64::NAN; m];
    let mut running = f64::INFINITY;
    for (rank, &index) in ranking.iter().enumerate().rev() {
        let p = p_values[index];
        if p.is_nan() {
            continue;
        }
        // `max(p)`: m / (rank + 1) >= 1, but the division can round below p at the last rank.
        running = running.min((m as f64 * p / (rank + 1) as f64).max(p).min(1.0));
        adjusted[index] = running;
    }
    let rejected = adjusted.iter().filter(|q| **q <= alpha).count();
    let threshold = alpha * rejected.max(1) as f64 / m as f64;
    adjusted
        .iter()
        .map(|&q| StepDecision {
            adjusted: q,
            threshold,
            rejected: q <= alpha,
        })
        .collect()
}

/// No correction: every p-value is compared with `alpha` itself.
pub fn uncorrected(p_values: &[f64], alpha: f64) -> Vec<StepDecision> {
    p_values
        .iter()
        .map(|&p| StepDecision {
            adjusted: p,
            threshold: alpha,
            rejected: p <= alpha,
        })
        .collect()
}

/// The indices of `p_values`, ascending by p (stable; NaN last).
fn ranked(p_values: &[f64]) -> Vec<usize> {
    let mut ranking: Vec<usize> = (0..p_values.len()).collect();
    ranking.sort_by(|&a, &b| rank_key(p_values[a]).total_cmp(&rank_key(p_values[b])));
    ranking
}

/// NaN sorts after every number (`total_cmp` alone would put negative NaN first).
fn rank_key(p: f64) -> f64 {
    if p.is_nan() { f64::INFINITY } else { p }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng_for;
    use rand::Rng;

    fn thresholds(decisions: &[StepDecision]) -> Vec<f64> {
        decisions.iter().map(|d| d.threshold).collect()
    }

    fn rejected(decisions: &[StepDecision]) -> Vec<bool> {
        decisions.iter().map(|d| d.rejected).collect()
    }

    fn adjusted(decisions: &[StepDecision]) -> Vec<f64> {
        decisions.iter().map(|d| d.adjusted).collect()
    }

    fn assert_close(got: &[f64], want: &[f64]) {
        assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-15, "{got:?} vs {want:?}");
        }
    }

    #[test]
    fn empty_family() {
        assert!(holm(&[], 0.05).is_empty());
    }

    #[test]
    fn single_check_uses_alpha() {
        let decisions = holm(&[0.05], 0.05);
        assert_eq!(thresholds(&decisions), [0.05]);
        assert_eq!(adjusted(&decisions), [0.05]);
        assert_eq!(rejected(&decisions), [true]);
        assert_eq!(rejected(&holm(&[0.0501], 0.05)), [false]);
    }

    #[test]
    fn textbook_example_in_input_order() {
        // Ranked: 0.01 (x4 = 0.04, reject), 0.015 (x3 = 0.045, reject), 0.03 (x2 = 0.06: stop),
        // 0.04 (x1 = 0.04, but the running maximum 0.06: not rejected after the stop although
        // 0.04 <= 0.05). The bounds of the two not rejected are at the stop level alpha / 2.
        let decisions = holm(&[0.04, 0.01, 0.03, 0.015], 0.05);
        assert_close(&adjusted(&decisions), &[0.06, 0.04, 0.06, 0.045]);
        assert_eq!(rejected(&decisions), [false, true, false, true]);
        assert_eq!(thresholds(&decisions), [0.025, 0.0125, 0.025, 0.05 / 3.0]);
    }

    #[test]
    fn all_rejected_when_small_enough() {
        let decisions = holm(&[0.001, 0.02, 0.01], 0.05);
        assert_eq!(rejected(&decisions), [true, true, true]);
        assert_close(&adjusted(&decisions), &[0.003, 0.02, 0.02]);
        assert_eq!(thresholds(&decisions), [0.05 / 3.0, 0.05, 0.025]);
    }

    #[test]
    fn adjusted_values_are_capped_at_one() {
        assert_eq!(adjusted(&holm(&[0.6, 0.9], 0.05)), [1.0, 1.0]);
        assert_eq!(adjusted(&benjamini_hochberg(&[0.6, 0.9], 0.05)), [0.9, 0.9]);
        assert_eq!(adjusted(&benjamini_hochberg(&[0.9], 0.05)), [0.9]);
    }

    #[test]
    fn ties_rank_by_input_index() {
        // Both 0.02: adjusted 2 x 0.02 = 0.04 for both (the running maximum), both rejected.
        let decisions = holm(&[0.02, 0.02], 0.05);
        assert_eq!(thresholds(&decisions), [0.025, 0.05]);
        assert_eq!(adjusted(&decisions), [0.04, 0.04]);
        assert_eq!(rejected(&decisions), [true, true]);
        // Both 0.03: the first fails alpha/2, which stops the second despite 0.03 <= 0.05; both
        // bounds at the stop level.
        let stopped = holm(&[0.03, 0.03], 0.05);
        assert_eq!(rejected(&stopped), [false, false]);
        assert_eq!(thresholds(&stopped), [0.025, 0.025]);
    }

    #[test]
    fn benjamini_hochberg_rejects_up_to_the_largest_passing_rank() {
        // Ranked: 0.001 (q 0.004 -> min with later 0.0467), 0.03 (4 x 0.03 / 2 = 0.06, but the
        // later 0.0467 is smaller), 0.035 (4 x 0.035 / 3 = 0.0467), 0.5 (0.5). The largest
        // passing rank is 3, so the first three are rejected, 0.03 included.
        let decisions = benjamini_hochberg(&[0.5, 0.035, 0.001, 0.03], 0.05);
        assert_eq!(rejected(&decisions), [false, true, true, true]);
        assert_close(&adjusted(&decisions), &[0.5, 0.14 / 3.0, 0.004, 0.14 / 3.0]);
        // Every bound at R alpha / m = 3 x 0.05 / 4.
        assert_close(&thresholds(&decisions), &[0.0375; 4]);
        // Holm on the same p-values stops at 0.03 > alpha/3.
        assert_eq!(
            rejected(&holm(&[0.5, 0.035, 0.001, 0.03], 0.05)),
            [false, false, true, false]
        );
        assert!(benjamini_hochberg(&[], 0.05).is_empty());
        let with_nan = benjamini_hochberg(&[f64::NAN, 0.01], 0.05);
        assert_eq!(rejected(&with_nan), [false, true]);
        assert!(with_nan[0].adjusted.is_nan());
        // Nothing rejected: every bound at alpha / m.
        assert_close(
            &thresholds(&benjamini_hochberg(&[0.5, 0.6], 0.05)),
            &[0.025; 2],
        );
    }

    #[test]
    fn uncorrected_compares_with_alpha() {
        assert_eq!(
            rejected(&uncorrected(&[0.05, 0.051, f64::NAN], 0.05)),
            [true, false, false]
        );
    }

    #[test]
    fn nan_ranks_last_and_is_never_rejected() {
        let decisions = holm(&[f64::NAN, 0.001, -f64::NAN], 0.05);
        assert_eq!(decisions[1].threshold, 0.05 / 3.0);
        assert_eq!(rejected(&decisions), [false, true, false]);
        assert!(decisions[0].adjusted.is_nan());
    }

    /// Holm's adjusted p by its definition: the smallest alpha at which the step-down rejects.
    fn holm_by_definition(p: &[f64], i: usize) -> f64 {
        let m = p.len();
        let mut order: Vec<usize> = (0..m).collect();
        order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
        let rank = order.iter().position(|&j| j == i).unwrap();
        (0..=rank)
            .map(|j| ((m - j) as f64 * p[order[j]]).min(1.0))
            .fold(0.0, f64::max)
    }

    /// The equivalences the reports rely on, over many random families (seeded): a p-value is
    /// rejected exactly when its adjusted value is at most alpha and exactly when it is at most
    /// its bound level; Holm's adjusted p is its definition; a Holm bound level is the own rank's
    /// when rejected and the stop level otherwise; BH's level is R alpha / m for every check.
    #[test]
    fn rejected_iff_adjusted_at_most_alpha_iff_p_at_most_the_bound_level() {
        let mut rng = rng_for(23, "holm-property");
        let mut counted = [0usize; 2];
        for family in 0..20_000 {
            let m = 1 + (rng.next_u64() % 25) as usize;
            let alpha = [0.01, 0.05, 0.1][family % 3];
            let p: Vec<f64> = (0..m)
                .map(|_| {
                    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                    // Many small p-values, and some ties (rounded to 3 decimals).
                    let p = u.powi(3);
                    if rng.next_u64().is_multiple_of(4) {
                        (p * 1000.0).round() / 1000.0
                    } else {
                        p
                    }
                })
                .collect();
            for procedure in [
                Procedure::Holm,
                Procedure::BenjaminiHochberg,
                Procedure::None,
            ] {
                let decisions = procedure.apply(&p, alpha);
                let rejections = decisions.iter().filter(|d| d.rejected).count();
                for (i, d) in decisions.iter().enumerate() {
                    assert_eq!(d.rejected, d.adjusted <= alpha, "{procedure:?} {p:?} {i}");
                    assert_eq!(d.rejected, p[i] <= d.threshold, "{procedure:?} {p:?} {i}");
                    assert!(d.adjusted >= p[i] && d.adjusted <= 1.0, "{p:?} {i}");
                    counted[usize::from(d.rejected)] += 1;
                }
                match procedure {
                    Procedure::Holm => {
                        let mut order: Vec<usize> = (0..m).collect();
                        order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
                        let stop = order.iter().position(|&i| !decisions[i].rejected);
                        for (rank, &i) in order.iter().enumerate() {
                            assert!(
                                (decisions[i].adjusted - holm_by_definition(&p, i)).abs() < 1e-15
                            );
                            let own = alpha / (m - rank) as f64;
                            let expected = match stop {
                                Some(k) if rank >= k => alpha / (m - k) as f64,
                                _ => own,
                            };
                            assert_eq!(decisions[i].threshold, expected, "{p:?} rank {rank}");
                        }
                    }
                    Procedure::BenjaminiHochberg => {
                        let level = alpha * rejections.max(1) as f64 / m as f64;
                        assert!(decisions.iter().all(|d| d.threshold == level));
                    }
                    Procedure::None => {}
                }
            }
        }
        // Both outcomes were exercised many times.
        assert!(counted[0] > 10_000 && counted[1] > 10_000, "{counted:?}");
    }
}
