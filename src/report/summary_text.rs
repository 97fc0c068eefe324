//! Text pieces of the Markdown summary that must read the same wherever they appear: p-values in
//! table cells, the range an interval is clamped to, signed limits and deltas, and the headline
//! counts. (p in running text and clamped intervals are `format::p_text` and
//! `format::interval_text`.)

use std::ops::RangeInclusive;

use crate::gate::GateReport;
use crate::gate::verdict::{CheckOutcome, CheckStatus, QueriesNeeded};
use crate::metrics::metric::Metric;
use crate::report::format::{MISSING, no_negative_zero, signed};
use crate::report::gate_table::higher_is_better;

/// Below this a p-value prints as `< 0.0001`.
const SMALLEST_P: f64 = 1e-4;

/// A p-value for a table cell: `< 0.0001` or `0.0123` (the text form without the `p`), or "–".
pub(crate) fn p_cell(p: Option<f64>) -> String {
    match p {
        Some(p) if p.is_finite() && p < SMALLEST_P => "< 0.0001".to_string(),
        Some(p) if p.is_finite() => format!("{p:.4}"),
        _ => MISSING.to_string(),
    }
}

/// The values a metric's mean can take, for display: the range of its per-query values, and for
/// a calibrated estimate (`faithfulness_ppi`) the range of the metric it calibrates. None when
/// unbounded above or unknown.
pub(crate) fn display_range(metric: &str) -> Option<RangeInclusive<f64>> {
    let range = match metric.parse::<Metric>().ok()? {
        Metric::Ppi(calibrated) => calibrated.base().value_range(),
        other => other.value_range(),
    }?;
    (range.end().is_finite() && *range.end() < f64::MAX).then_some(range)
}

/// The tolerated change as a signed delta: `-0.0300` for a higher-is-better metric, `+12.8750`
/// for a lower-is-better one, or "–" without a limit.
pub(crate) fn signed_limit(outcome: &CheckOutcome) -> String {
    match outcome.limit {
        Some(limit) if higher_is_better(&outcome.metric) => signed(-limit),
        Some(limit) => signed(limit),
        None => MISSING.to_string(),
    }
}

/// The delta with its change relative to the baseline: `-0.2000 (-25.0%)`.
pub(crate) fn delta_with_percent(outcome: &CheckOutcome) -> String {
    let delta = signed(outcome.delta);
    let base = outcome.baseline_mean;
    if outcome.delta.is_finite() && base.is_finite() && base.abs() > 1e-12 {
        let percent = 100.0 * outcome.delta / base.abs();
        let percent = if percent.abs() < 0.05 { 0.0 } else { percent };
        format!("{delta} ({percent:+.1}%)")
    } else {
        delta
    }
}

/// An inconclusive check (decided by a test, not proven) in words: how far past its limit the
/// point estimate is, what the evidence bounds, and the cheapest way to decide it (issue 48):
/// `-0.0280 is past its limit -0.0250 by 0.0030 on the point estimate; the evidence shows a
/// worsening of at least 0.0012 (97.50% bound), short of the limit; about 619 paired queries
/// would decide it, or `decision: point` for this tier, which fails it`. Past the cap on the
/// queries no realistic tier decides it: only the point decision does. When run-to-run noise is
/// most of the spread (a run with `repeats`), more repeats decide it without new labelled queries.
pub(crate) fn point_past_limit(outcome: &CheckOutcome) -> String {
    let worsening = if higher_is_better(&outcome.metric) {
        -outcome.delta
    } else {
        outcome.delta
    };
    let past = outcome.limit.map_or(worsening, |limit| worsening - limit);
    let mut text = format!(
        "{} is past its limit {} by {:.4} on the point estimate",
        signed(outcome.delta),
        signed_limit(outcome),
        no_negative_zero(past)
    );
    if let Some(bound) = outcome.bound.filter(|b| b.delta.is_finite()) {
        let bounded = if higher_is_better(&outcome.metric) {
            -bound.delta
        } else {
            bound.delta
        };
        text.push_str(&format!(
            "; the evidence shows a worsening of at least {:.4} ({:.2}% bound), short of the limit",
            no_negative_zero(bounded),
            100.0 * bound.confidence
        ));
    }
    if let Some(share) = outcome.noise_share.filter(|share| *share > NOISE_DOMINATES) {
        text.push_str(&format!(
            "; run-to-run noise is about {:.0}% of the variance of the per-query deltas, so more \
             `repeats` would decide it without new labelled queries",
            (100.0 * share).min(100.0)
        ));
    }
    text.push_str(&match outcome.queries_needed {
        Some(QueriesNeeded::About(n)) => format!(
            "; about {n} paired queries would decide it, or {POINT} for this tier, which fails it"
        ),
        Some(QueriesNeeded::Unrealistic) => format!(
            "; {}: only {POINT} for this tier decides it (it fails it)",
            QueriesNeeded::unrealistic_text("decide")
        ),
        None => format!(
            "; more paired queries would decide it (n = {}), or {POINT} for this tier, which \
             fails it",
            outcome.n
        ),
    });
    text
}

/// The share of the per-query delta variance past which run-to-run noise dominates a check.
const NOISE_DOMINATES: f64 = 0.5;

/// The setting that decides a check on its point estimate alone.
const POINT: &str = "`decision: point`";

/// How many checks have each status.
pub(crate) struct Counts {
    pub total: usize,
    pub passed: usize,
    pub improved: usize,
    pub failed: usize,
    pub inconclusive: usize,
    pub skipped: usize,
    pub errors: usize,
    /// Checks that warn without failing (drift under `drift: warn`); counted in `passed` too.
    pub warned: usize,
}

impl Counts {
    pub(crate) fn of(report: &GateReport) -> Counts {
        let count = |status| {
            report
                .outcomes
                .iter()
                .filter(|o| o.status == status)
                .count()
        };
        Counts {
            total: report.outcomes.len(),
            passed: count(CheckStatus::Pass)
                + count(CheckStatus::Improved)
                + count(CheckStatus::Warn),
            improved: count(CheckStatus::Improved),
            failed: count(CheckStatus::Fail),
            inconclusive: count(CheckStatus::Inconclusive),
            skipped: count(CheckStatus::Skipped),
            errors: count(CheckStatus::Error),
            warned: count(CheckStatus::Warn),
        }
    }

    /// ` · 2 improved · 1 inconclusive` (no-break spaces within each part) for the statuses besides `shown` that occurred.
    pub(crate) fn extras(&self, shown: CheckStatus) -> String {
        [
            (CheckStatus::Fail, self.failed, "failed"),
            (CheckStatus::Inconclusive, self.inconclusive, "inconclusive"),
            (CheckStatus::Improved, self.improved, "improved"),
            (CheckStatus::Warn, self.warned, "warned"),
            (CheckStatus::Skipped, self.skipped, "skipped"),
            (CheckStatus::Error, self.errors, "not evaluated"),
        ]
        .iter()
        .filter(|(status, n, _)| *status != shown && *n > 0)
        .map(|(_, n, word)| format!(" · {n}\u{a0}{word}"))
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::format::{interval_text, p_text};

    #[test]
    fn p_reads_the_same_in_cells_and_text() {
        assert_eq!(p_cell(Some(0.00001)), "< 0.0001");
        assert_eq!(p_text(0.00001), "p < 0.0001");
        assert_eq!(p_cell(Some(0.0123)), "0.0123");
        assert_eq!(p_text(0.0123), "p = 0.0123");
        assert_eq!(p_text(0.0001), "p = 0.0001");
        assert_eq!(p_cell(Some(f64::NAN)), "–");
        assert_eq!(p_cell(None), "–");
    }

    #[test]
    fn intervals_of_proportions_are_clamped_and_say_so() {
        let unit = display_range("faithfulness_ppi").expect("a calibrated proportion is bounded");
        assert_eq!((*unit.start(), *unit.end()), (0.0, 1.0));
        assert_eq!(
            interval_text((-0.0091, 1.5091), Some(&unit)),
            "[0.0000, 1.0000] (clamped to [0, 1])"
        );
        assert_eq!(
            interval_text((0.2111, 0.6889), Some(&unit)),
            "[0.2111, 0.6889]"
        );
        assert_eq!(interval_text((-3.0, 2.0), None), "[-3.0000, 2.0000]");
        assert_eq!(interval_text((f64::NAN, 2.0), Some(&unit)), "–");
        assert_eq!(display_range("answer_length"), None, "unbounded above");
    }
}
