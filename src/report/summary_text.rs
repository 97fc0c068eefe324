//! Text pieces of the Markdown summary that must read the same wherever they appear: p-values
//! (`p < 0.0001`, `p = 0.0123`), intervals of bounded metrics (clamped to the metric's range and
//! saying so), the headline counts, and which notes are diagnoses.

use std::ops::RangeInclusive;

use crate::gate::GateReport;
use crate::gate::verdict::{CheckOutcome, CheckStatus};
use crate::metrics::metric::Metric;
use crate::report::gate_table::{MISSING, higher_is_better, signed};

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

/// A p-value in running text: `p < 0.0001` or `p = 0.0123`.
pub(crate) fn p_text(p: f64) -> String {
    if p.is_finite() && p < SMALLEST_P {
        "p < 0.0001".to_string()
    } else {
        format!("p = {p:.4}")
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

/// An interval with four decimals, clamped to `range` when it leaves it, with the clamp said:
/// `[0.0000, 1.0000] (clamped to [0, 1])`. A mean of values in [0, 1] cannot leave [0, 1]; an
/// estimator's interval can (PPI's normal interval does with few labels).
pub(crate) fn bounded_interval(low: f64, high: f64, range: Option<&RangeInclusive<f64>>) -> String {
    if !(low.is_finite() && high.is_finite()) {
        return MISSING.to_string();
    }
    let Some(range) = range else {
        return format!("[{low:.4}, {high:.4}]");
    };
    let (start, end) = (*range.start(), *range.end());
    let (clamped_low, clamped_high) = (low.clamp(start, end), high.clamp(start, end));
    let text = format!("[{clamped_low:.4}, {clamped_high:.4}]");
    if (clamped_low, clamped_high) == (low, high) {
        text
    } else {
        format!("{text} (clamped to [{start}, {end}])")
    }
}

/// Rewrites every `[low, high]` interval in `text` with [`bounded_interval`], so a verdict or a
/// note written elsewhere shows the same bounded interval as the tables.
pub(crate) fn clamp_intervals(text: &str, range: &RangeInclusive<f64>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let parsed = after.find(']').and_then(|close| {
            let (low, high) = after[..close].split_once(", ")?;
            Some((
                low.trim().parse::<f64>().ok()?,
                high.trim().parse::<f64>().ok()?,
                close,
            ))
        });
        match parsed {
            Some((low, high, close)) => {
                out.push_str(&bounded_interval(low, high, Some(range)));
                rest = &after[close + 1..];
            }
            None => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A verdict or note as the summary shows it: p-values in the one text form, and the intervals
/// of a calibrated (bounded) metric clamped to its range.
pub(crate) fn normalized(text: &str, metric: &str) -> String {
    let text = text.replace("p = <0.0001", "p < 0.0001");
    match display_range(metric) {
        Some(range) if text.contains("calibrated on") || text.contains("PPI") => {
            clamp_intervals(&text, &range)
        }
        _ => text,
    }
}

/// Whether a note of the report is a diagnosis line (`[slice] stage: evidence -> usual fix`, as
/// `gate::diagnosis::diagnose` writes them).
pub(crate) fn is_diagnosis(note: &str) -> bool {
    note.starts_with('[')
        && note
            .find("] ")
            .is_some_and(|end| note[end..].contains(": ") && note[end..].contains(" -> "))
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

/// How many checks have each status.
pub(crate) struct Counts {
    pub total: usize,
    pub passed: usize,
    pub improved: usize,
    pub failed: usize,
    pub inconclusive: usize,
    pub skipped: usize,
    pub errors: usize,
}

impl Counts {
    pub fn of(report: &GateReport) -> Counts {
        let count = |status| {
            report
                .outcomes
                .iter()
                .filter(|o| o.status == status)
                .count()
        };
        Counts {
            total: report.outcomes.len(),
            passed: count(CheckStatus::Pass) + count(CheckStatus::Improved),
            improved: count(CheckStatus::Improved),
            failed: count(CheckStatus::Fail),
            inconclusive: count(CheckStatus::Inconclusive),
            skipped: count(CheckStatus::Skipped),
            errors: count(CheckStatus::Error),
        }
    }

    /// ` · 2 improved · 1 inconclusive` (no-break spaces within each part) for the statuses besides `shown` that occurred.
    pub fn extras(&self, shown: CheckStatus) -> String {
        [
            (CheckStatus::Fail, self.failed, "failed"),
            (CheckStatus::Inconclusive, self.inconclusive, "inconclusive"),
            (CheckStatus::Improved, self.improved, "improved"),
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

    #[test]
    fn p_reads_the_same_in_cells_and_text() {
        assert_eq!(p_cell(Some(0.00001)), "< 0.0001");
        assert_eq!(p_text(0.00001), "p < 0.0001");
        assert_eq!(p_cell(Some(0.0123)), "0.0123");
        assert_eq!(p_text(0.0123), "p = 0.0123");
        assert_eq!(p_text(0.0001), "p = 0.0001");
        assert_eq!(p_cell(Some(f64::NAN)), "–");
        assert_eq!(p_cell(None), "–");
        assert_eq!(
            normalized("failed (p = <0.0001 (exact) vs threshold 0.0125)", "mrr"),
            "failed (p < 0.0001 (exact) vs threshold 0.0125)"
        );
    }

    #[test]
    fn intervals_of_proportions_are_clamped_and_say_so() {
        let unit = display_range("faithfulness_ppi").expect("a calibrated proportion is bounded");
        assert_eq!((*unit.start(), *unit.end()), (0.0, 1.0));
        assert_eq!(
            bounded_interval(-0.0091, 1.5091, Some(&unit)),
            "[0.0000, 1.0000] (clamped to [0, 1])"
        );
        assert_eq!(
            bounded_interval(0.2111, 0.6889, Some(&unit)),
            "[0.2111, 0.6889]"
        );
        assert_eq!(bounded_interval(-3.0, 2.0, None), "[-3.0000, 2.0000]");
        assert_eq!(display_range("answer_length"), None, "unbounded above");
        assert_eq!(
            normalized(
                "answer_relevance calibrated on 4 human labels of 20 queries: PPI 0.7500 \
                 (95% CI [-0.0091, 1.5091]), PPI++ 0.7 ([0.1000, 0.9000], lambda 0.25) [see]",
                "answer_relevance"
            ),
            "answer_relevance calibrated on 4 human labels of 20 queries: PPI 0.7500 \
             (95% CI [0.0000, 1.0000] (clamped to [0, 1])), PPI++ 0.7 ([0.1000, 0.9000], \
             lambda 0.25) [see]"
        );
    }

    #[test]
    fn diagnoses_are_told_from_other_notes() {
        assert!(is_diagnosis(
            "[class=paraphrased] ranking buries evidence: recall@10 0.83 is high but ndcg@10 \
             0.59 is low -> add or tune a reranker"
        ));
        assert!(!is_diagnosis(
            "judging: 60 tasks, 60 sent to judges, 0 answered from the cache"
        ));
        assert!(!is_diagnosis("[a] note without a fix"));
    }
}
