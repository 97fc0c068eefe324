//! `gate: { inconclusive: fail }` as a non-inferiority test ("prove it"): a check with a change
//! limit passes only when the data show that the mean worsening is below the limit, i.e. when
//! `H0': E[w] >= L` is rejected at alpha, equivalently when the one-sided upper confidence bound
//! of the worsening at level alpha is below `L`. It is the limit test of `stats::limit_test` on the
//! gains `-w` against the limit `-L` (so the same exact, skew-corrected or betting-checked method).
//!
//! The run passes only when every such check is proven: an intersection-union test, so the chance
//! that a run passes while some check's true worsening is at or beyond its limit is at most alpha,
//! with no multiplicity correction.

use crate::format::{compared, no_negative_zero, p_against};
use crate::gate::verdict::summary::Summary;
use crate::gate::verdict::{
    Candidate, CheckOutcome, CheckStatus, Context, POWER, PROVE_MODE, QueriesNeeded, proving,
};
use crate::stats::limit_test;
use crate::stats::normal;

/// The outcome of the non-inferiority test of one check.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Proof {
    /// The p-value of `H0': E[w] >= L` (one-sided).
    pub p_value: f64,
    /// The level it is compared with (alpha, no multiplicity correction).
    pub alpha: f64,
    /// The upper confidence bound of the mean worsening at one-sided `1 - alpha`, when one exists
    /// at this size.
    pub upper: Option<f64>,
    /// The smallest p-value data of this size could give: above `alpha`, the check cannot be
    /// proven at this size.
    pub smallest_p: f64,
}

impl Proof {
    /// Tests `E[w] < limit` on the worsening values at `alpha`; `range` as in
    /// [`limit_test::test`].
    pub fn of(worsening: &[f64], limit: f64, alpha: f64, range: Option<f64>) -> Proof {
        let gains: Vec<f64> = worsening.iter().map(|w| -w).collect();
        let test = limit_test::test(&gains, -limit, range);
        Proof {
            p_value: test.p_value,
            alpha,
            upper: limit_test::lower_bound(&gains, alpha, range, -limit).map(|b| -b),
            smallest_p: test.smallest_p,
        }
    }

    /// Whether the worsening is shown to be below the limit.
    pub fn proven(&self) -> bool {
        self.p_value <= self.alpha
    }

    /// Whether no data of this size could prove it.
    pub fn underpowered(&self) -> bool {
        self.smallest_p > self.alpha
    }
}

/// About how many paired queries prove a check with this mean worsening and spread within the
/// limit with `power` (normal approximation: `n = ((z(1 - alpha) + z(power)) sd / (L - W))^2`);
/// `None` when the worsening is at or beyond the limit (no number of queries proves it) or there
/// is no spread to scale by.
pub fn queries_needed(
    worsening: f64,
    sd: f64,
    limit: f64,
    alpha: f64,
    power: f64,
) -> Option<usize> {
    let margin = limit - worsening;
    if margin <= 0.0 || sd <= 0.0 {
        return None;
    }
    let z = normal::quantile(1.0 - alpha) + normal::quantile(power);
    let needed = (z * sd / margin).powi(2).ceil();
    (needed.is_finite() && needed < 1e12).then_some(needed as usize)
}

/// The "prove it" verdict of a check with a limit.
impl Context<'_, '_> {
    /// The non-inferiority test of a check with a limit, in the "prove it" mode only.
    pub(super) fn proof(&self, candidate: &Candidate) -> Option<Proof> {
        let limit = candidate.limit.filter(|_| proving(self.settings))?;
        Some(Proof::of(
            &candidate.paired.worsening,
            limit,
            self.settings.alpha,
            self.check.rule.metric.range_width(),
        ))
    }

    /// The "prove it" verdict: pass (or improved) when the non-inferiority test proves the
    /// worsening below the limit, else inconclusive, which fails the run; `evidence` is the
    /// regular test's when the point estimate is beyond the limit.
    pub(super) fn proven_or_not(
        &self,
        mut outcome: CheckOutcome,
        candidate: &Candidate,
        summary: &Summary,
        proof: Proof,
        evidence: Option<&str>,
    ) -> CheckOutcome {
        let limit = candidate.limit.unwrap_or(0.0);
        let alpha = proof.alpha;
        let confidence = 100.0 * (1.0 - alpha);
        let upper = proof.upper.map_or("none at this size".to_string(), |u| {
            format!("{:.4}", no_negative_zero(u))
        });
        let (p, alpha_text) = p_against(proof.p_value, alpha);
        outcome.proof = Some(proof);
        if proof.proven() && evidence.is_none() {
            let within = format!(
                "proven within the limit {limit:.4} ({PROVE_MODE}): worsening {:.4}, at most \
                 {upper} at {confidence:.2}% confidence (non-inferiority {p} <= alpha \
                 {alpha_text})",
                no_negative_zero(summary.worsening)
            );
            self.pass_or_improved(&mut outcome, candidate, summary, &within);
            return outcome;
        }
        let name = self.check.name();
        let needed = queries_needed(summary.worsening, summary.sd, limit, alpha, POWER)
            .map(|q| QueriesNeeded::of(q.max(summary.n + 1)));
        outcome.queries_needed = needed;
        outcome.status = CheckStatus::Inconclusive;
        let why = if proof.underpowered() {
            let (smallest, alpha_text) = compared(proof.smallest_p, alpha);
            format!(
                "with {} queries the smallest attainable p is {smallest}, above alpha \
                 {alpha_text}, so it can never be proven at this size",
                summary.n
            )
        } else {
            format!(
                "the worsening is at most {upper} at {confidence:.2}% confidence, not below the \
                 limit (non-inferiority {p} > alpha {alpha_text})"
            )
        };
        let more = match needed {
            Some(QueriesNeeded::About(q)) => format!(
                "; about {q} paired queries with this effect and spread would prove it with 80% \
                 power"
            ),
            Some(QueriesNeeded::Unrealistic) => {
                format!("; {}", QueriesNeeded::unrealistic_text("prove"))
            }
            None if summary.worsening >= limit => {
                "; the point estimate is at or beyond the limit, so more queries with this effect \
                 would not prove it"
                    .to_string()
            }
            None => String::new(),
        };
        let regular = evidence.map_or(String::new(), |e| {
            format!("; beyond the limit on the point estimate without the evidence to fail ({e})")
        });
        outcome.verdict = format!(
            "{name} not proven within the limit {limit:.4} ({PROVE_MODE}): worsening {:.4}; \
             {why}{more}{regular}; fails the run: {}",
            no_negative_zero(summary.worsening),
            summary.text()
        );
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clear_improvement_is_proven_and_a_change_beyond_the_limit_is_not() {
        // 40 queries, mean worsening about -0.01 with spread 0.05 (11 distinct values, so the
        // analytic test alone), limit 0.02.
        let better: Vec<f64> = (0..40)
            .map(|i| -0.01 + 0.05 * ((i * 7 % 11) as f64 - 5.0) / 5.0)
            .collect();
        let proof = Proof::of(&better, 0.02, 0.05, Some(1.0));
        assert!(proof.proven(), "{proof:?}");
        let upper = proof.upper.unwrap();
        assert!(upper < 0.02 && upper > -0.01, "{upper}");
        // The same values shifted past the limit: never proven, bound above the limit.
        let worse: Vec<f64> = better.iter().map(|w| w + 0.04).collect();
        let proof = Proof::of(&worse, 0.02, 0.05, Some(1.0));
        assert!(!proof.proven() && proof.upper.unwrap() > 0.02, "{proof:?}");
    }

    #[test]
    fn proven_exactly_when_the_upper_bound_is_below_the_limit() {
        for shift in [-0.02, 0.0, 0.005, 0.01, 0.015, 0.018, 0.025] {
            for n in [8usize, 20, 40, 200] {
                let values: Vec<f64> = (0..n)
                    .map(|i| shift + 0.03 * ((i * 7 % 11) as f64 - 5.0) / 5.0)
                    .collect();
                let proof = Proof::of(&values, 0.02, 0.05, Some(1.0));
                let upper = proof.upper.unwrap_or(f64::INFINITY);
                assert_eq!(proof.proven(), upper < 0.02, "{shift} {n}: {proof:?}");
            }
        }
    }

    #[test]
    fn unchanged_queries_of_a_bounded_metric_prove_little() {
        // The exact test on 4 values cannot go below 2^-4 = 0.0625: never proven.
        let proof = Proof::of(&[0.0; 4], 0.02, 0.05, None);
        assert!(proof.underpowered() && !proof.proven(), "{proof:?}");
        // On 5 values of an unbounded metric the sign-flip test alone decides: 2^-5 < 0.05.
        let proof = Proof::of(&[0.0; 5], 0.02, 0.05, None);
        assert!(!proof.underpowered() && proof.proven(), "{proof:?}");
        // A metric in [0, 1] is checked by the betting test when few values changed: five unchanged queries
        // do not show that the mean worsening is below 0.02 (a 3% chance of losing 1 would give
        // five zeros 86% of the time), so it is not proven.
        let proof = Proof::of(&[0.0; 5], 0.02, 0.05, Some(1.0));
        assert!(!proof.proven() && proof.p_value > 0.5, "{proof:?}");
        // Unchanged values are "few changed" at any n, so the betting check stays: 30 unchanged
        // queries are not proof yet, 300 are.
        let proof = Proof::of(&[0.0; 30], 0.02, 0.05, Some(1.0));
        assert!(!proof.proven(), "{proof:?}");
        let proof = Proof::of(&[0.0; 300], 0.02, 0.05, Some(1.0));
        assert!(proof.proven(), "{proof:?}");
    }

    #[test]
    fn queries_needed_for_a_change_of_half_the_limit() {
        // z(0.95) + z(0.8) = 2.486; sd 0.1, margin 0.01: (24.86)^2 = 618.
        assert_eq!(queries_needed(0.01, 0.1, 0.02, 0.05, 0.8), Some(619));
        assert_eq!(queries_needed(0.02, 0.1, 0.02, 0.05, 0.8), None);
        assert_eq!(queries_needed(0.0, 0.0, 0.02, 0.05, 0.8), None);
    }
}
