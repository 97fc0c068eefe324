//! Multiplicity corrections over a family of checks: Holm's step-down (family-wise error),
//! Benjamini-Hochberg's step-up (false-discovery rate), or none.

/// The outcome of a correction for one p-value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepDecision {
    /// The level this p-value was compared with: `alpha / (m - i)` for the i-th smallest
    /// (0-based) of m p-values.
    pub threshold: f64,
    /// Whether its null hypothesis is rejected.
    pub rejected: bool,
}

/// Holm step-down over `p_values` at family-wise level `alpha`; the decisions come back in input
/// order.
///
/// The p-values are ranked ascending (a stable sort, so ties keep input order; NaN ranks last).
/// The i-th smallest (0-based) gets threshold `alpha / (m - i)`. Going up the ranking, p-values
/// are rejected while `p <= threshold`; from the first one that is not, no later p-value is
/// rejected, though each still reports its threshold. NaN is never rejected. An empty family
/// gives an empty vector. (Without correction the caller compares with `alpha` directly.)
pub fn holm(p_values: &[f64], alpha: f64) -> Vec<StepDecision> {
    let m = p_values.len();
    let mut ranking: Vec<usize> = (0..m).collect();
    ranking.sort_by(|&a, &b| rank_key(p_values[a]).total_cmp(&rank_key(p_values[b])));
    let mut decisions = vec![
        StepDecision {
            threshold: alpha,
            rejected: false,
        };
        m
    ];
    let mut still_rejecting = true;
    for (rank, &index) in ranking.iter().enumerate() {
        let threshold = alpha / (m - rank) as f64;
        still_rejecting = still_rejecting && p_values[index] <= threshold;
        decisions[index] = StepDecision {
            threshold,
            rejected: still_rejecting,
        };
    }
    decisions
}

/// Benjamini-Hochberg step-up over `p_values` at false-discovery rate `alpha`; decisions in input
/// order. Ranked ascending (stable, NaN last), the i-th smallest (1-based) gets threshold
/// `i alpha / m`; every p-value ranked at or below the largest i with `p <= i alpha / m` is
/// rejected (also those above their own threshold). NaN is never rejected.
pub fn benjamini_hochberg(p_values: &[f64], alpha: f64) -> Vec<StepDecision> {
    let m = p_values.len();
    let mut ranking: Vec<usize> = (0..m).collect();
    ranking.sort_by(|&a, &b| rank_key(p_values[a]).total_cmp(&rank_key(p_values[b])));
    let threshold = |rank: usize| alpha / m as f64 * (rank + 1) as f64;
    let last_rejected = ranking
        .iter()
        .enumerate()
        .filter(|&(rank, &index)| p_values[index] <= threshold(rank))
        .map(|(rank, _)| rank)
        .next_back();
    let mut decisions = vec![
        StepDecision {
            threshold: alpha,
            rejected: false,
        };
        m
    ];
    for (rank, &index) in ranking.iter().enumerate() {
        decisions[index] = StepDecision {
            threshold: threshold(rank),
            rejected: last_rejected.is_some_and(|last| rank <= last) && !p_values[index].is_nan(),
        };
    }
    decisions
}

/// No correction: every p-value is compared with `alpha` itself.
pub fn uncorrected(p_values: &[f64], alpha: f64) -> Vec<StepDecision> {
    p_values
        .iter()
        .map(|&p| StepDecision {
            threshold: alpha,
            rejected: p <= alpha,
        })
        .collect()
}

/// NaN sorts after every number (`total_cmp` alone would put negative NaN first).
fn rank_key(p: f64) -> f64 {
    if p.is_nan() { f64::INFINITY } else { p }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thresholds(decisions: &[StepDecision]) -> Vec<f64> {
        decisions.iter().map(|d| d.threshold).collect()
    }

    fn rejected(decisions: &[StepDecision]) -> Vec<bool> {
        decisions.iter().map(|d| d.rejected).collect()
    }

    #[test]
    fn empty_family() {
        assert!(holm(&[], 0.05).is_empty());
    }

    #[test]
    fn single_check_uses_alpha() {
        let decisions = holm(&[0.05], 0.05);
        assert_eq!(thresholds(&decisions), [0.05]);
        assert_eq!(rejected(&decisions), [true]);
        assert_eq!(rejected(&holm(&[0.0501], 0.05)), [false]);
    }

    #[test]
    fn textbook_example_in_input_order() {
        // Ranked: 0.01 (alpha/4 = 0.0125, reject), 0.015 (alpha/3 = 0.01667, reject),
        // 0.03 (alpha/2 = 0.025, stop), 0.04 (alpha/1 = 0.05, not rejected after the stop
        // although 0.04 <= 0.05).
        let decisions = holm(&[0.04, 0.01, 0.03, 0.015], 0.05);
        assert_eq!(thresholds(&decisions), [0.05, 0.0125, 0.025, 0.05 / 3.0]);
        assert_eq!(rejected(&decisions), [false, true, false, true]);
    }

    #[test]
    fn all_rejected_when_small_enough() {
        let decisions = holm(&[0.001, 0.02, 0.01], 0.05);
        assert_eq!(rejected(&decisions), [true, true, true]);
        assert_eq!(thresholds(&decisions), [0.05 / 3.0, 0.05, 0.025]);
    }

    #[test]
    fn ties_rank_by_input_index() {
        // Both 0.02: the first in input order gets alpha/2 = 0.025 (rejected), the second alpha/1.
        let decisions = holm(&[0.02, 0.02], 0.05);
        assert_eq!(thresholds(&decisions), [0.025, 0.05]);
        assert_eq!(rejected(&decisions), [true, true]);
        // Both 0.03: the first fails alpha/2, which stops the second despite 0.03 <= 0.05.
        assert_eq!(rejected(&holm(&[0.03, 0.03], 0.05)), [false, false]);
    }

    #[test]
    fn benjamini_hochberg_rejects_up_to_the_largest_passing_rank() {
        // Ranked: 0.001 (0.0125), 0.03 (0.025: above), 0.035 (0.0375: passes), 0.5 (0.05).
        // The largest passing rank is 3, so the first three are rejected, 0.03 included.
        let decisions = benjamini_hochberg(&[0.5, 0.035, 0.001, 0.03], 0.05);
        assert_eq!(rejected(&decisions), [false, true, true, true]);
        let expected = [0.05, 0.0375, 0.0125, 0.025];
        for (got, want) in thresholds(&decisions).iter().zip(expected) {
            assert!((got - want).abs() < 1e-15, "{got} vs {want}");
        }
        // Holm on the same p-values stops at 0.03 > alpha/3.
        assert_eq!(
            rejected(&holm(&[0.5, 0.035, 0.001, 0.03], 0.05)),
            [false, false, true, false]
        );
        assert!(benjamini_hochberg(&[], 0.05).is_empty());
        assert_eq!(
            rejected(&benjamini_hochberg(&[f64::NAN, 0.01], 0.05)),
            [false, true]
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
    }
}
