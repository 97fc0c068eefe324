//! Holm's step-down correction over the family of checks of one run.

/// The Holm outcome for one p-value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HolmDecision {
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
pub fn holm(p_values: &[f64], alpha: f64) -> Vec<HolmDecision> {
    let m = p_values.len();
    let mut ranking: Vec<usize> = (0..m).collect();
    ranking.sort_by(|&a, &b| rank_key(p_values[a]).total_cmp(&rank_key(p_values[b])));
    let mut decisions = vec![
        HolmDecision {
            threshold: alpha,
            rejected: false,
        };
        m
    ];
    let mut still_rejecting = true;
    for (rank, &index) in ranking.iter().enumerate() {
        let threshold = alpha / (m - rank) as f64;
        still_rejecting = still_rejecting && p_values[index] <= threshold;
        decisions[index] = HolmDecision {
            threshold,
            rejected: still_rejecting,
        };
    }
    decisions
}

/// NaN sorts after every number (`total_cmp` alone would put negative NaN first).
fn rank_key(p: f64) -> f64 {
    if p.is_nan() { f64::INFINITY } else { p }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thresholds(decisions: &[HolmDecision]) -> Vec<f64> {
        decisions.iter().map(|d| d.threshold).collect()
    }

    fn rejected(decisions: &[HolmDecision]) -> Vec<bool> {
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
    fn nan_ranks_last_and_is_never_rejected() {
        let decisions = holm(&[f64::NAN, 0.001, -f64::NAN], 0.05);
        assert_eq!(decisions[1].threshold, 0.05 / 3.0);
        assert_eq!(rejected(&decisions), [false, true, false]);
    }
}
