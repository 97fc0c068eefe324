//! The compact table `ragate gate` prints on stdout: one aligned row per check, then the verdict
//! of every failing, erroneous or improved check, then the totals. Plain text; on a terminal
//! that shows colour, the verdict words are coloured (fail red, pass green, inconclusive yellow).

use crate::escape::visible;
use crate::gate::GateReport;
use crate::gate::verdict::{CheckOutcome, CheckStatus};
use crate::metrics::metric::Metric;
use crate::metrics::retrieval::Direction;
use crate::report::format::{MISSING, interval, one_line, p_value, signed, value};
use crate::report::{columns, reported};
use crate::term::{self, Paint};

/// The decision bound of a check, `≤ -0.0310 @99.75%` for a delta that is at most that at that
/// confidence (higher is better), `≥ +0.0310 @99.75%` for lower-is-better metrics (no-break
/// spaces, so a table cell does not wrap inside it); a calibrated floor's 95% interval; or "–".
pub(crate) fn bound(outcome: &CheckOutcome) -> String {
    if let Some(b) = outcome.bound.filter(|b| b.delta.is_finite()) {
        let relation = if higher_is_better(&outcome.metric) {
            "≤"
        } else {
            "≥"
        };
        return format!(
            "{relation}\u{a0}{}\u{a0}@{:.2}%",
            signed(b.delta),
            100.0 * b.confidence
        );
    }
    interval(outcome.ci)
}

/// Whether a check's metric is higher-is-better (unknown names count as higher-is-better).
pub(crate) fn higher_is_better(metric: &str) -> bool {
    metric
        .parse::<Metric>()
        .map_or(true, |m| m.direction() == Direction::HigherIsBetter)
}

/// The number of paired queries; meaningless (so "–") for a check that could not be evaluated.
pub(crate) fn count(outcome: &CheckOutcome) -> String {
    match outcome.status {
        CheckStatus::Error => MISSING.to_string(),
        _ => outcome.n.to_string(),
    }
}

/// The status word of the table: [`CheckStatus::word`], with failures and errors in capitals.
pub(crate) fn status_word(status: CheckStatus) -> &'static str {
    match status {
        CheckStatus::Fail => "FAIL",
        CheckStatus::Error => "ERROR",
        other => other.word(),
    }
}

/// A verdict word in its colour: failing and erroneous checks red, passing and improved ones
/// green, inconclusive ones and warnings (a drift that does not fail) yellow, skipped ones plain.
fn painted_status(status: CheckStatus, text: &str, paint: Paint) -> String {
    match status {
        CheckStatus::Fail | CheckStatus::Error => paint.paint(term::BAD, text),
        CheckStatus::Pass | CheckStatus::Improved => paint.paint(term::GOOD, text),
        CheckStatus::Inconclusive | CheckStatus::Warn => paint.paint(term::DOUBTFUL, text),
        CheckStatus::Skipped => text.to_string(),
    }
}

/// "N checks: X passed, Y failed, I inconclusive, Z skipped, W errors" (improved checks count as
/// passed).
pub(crate) fn totals(report: &GateReport) -> String {
    let count = |wanted: &[CheckStatus]| {
        report
            .outcomes
            .iter()
            .filter(|o| wanted.contains(&o.status))
            .count()
    };
    let compared = report
        .compared()
        .map(|c| format!("; {c}"))
        .unwrap_or_default();
    format!(
        "{} checks: {} passed, {} failed, {} inconclusive, {} skipped, {} errors{compared}",
        report.outcomes.len(),
        count(&[CheckStatus::Pass, CheckStatus::Improved, CheckStatus::Warn]),
        count(&[CheckStatus::Fail]),
        count(&[CheckStatus::Inconclusive]),
        count(&[CheckStatus::Skipped]),
        count(&[CheckStatus::Error]),
    )
}

/// The terminal table of a gate run, without colour.
pub fn render(report: &GateReport) -> String {
    render_painted(report, Paint::plain())
}

/// The terminal table of a gate run, its verdict words coloured by `paint`.
pub(crate) fn render_painted(report: &GateReport, paint: Paint) -> String {
    let mut rows: Vec<[String; 7]> = vec![
        [
            "status", "check", "baseline", "current", "delta", "adj. p", "n",
        ]
        .map(String::from),
    ];
    // The status of each row below the header, to colour its (padded) first cell.
    let statuses: Vec<CheckStatus> = report.outcomes.iter().map(|o| o.status).collect();
    for o in &report.outcomes {
        rows.push([
            status_word(o.status).to_string(),
            visible(&one_line(&o.name, 120)).into_owned(),
            value(o.baseline_mean),
            value(o.current_mean),
            signed(o.delta),
            // The adjusted p is the one compared with alpha (the raw p of a check outside the
            // correction: an underpowered one).
            p_value(o.adjustment.map(|a| a.adjusted).or(o.p_value)),
            count(o),
        ]);
    }
    rows.extend(reported::table_rows(report));
    let mut widths = [0usize; 7];
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for (index, row) in rows.iter().enumerate() {
        let status = index.checked_sub(1).and_then(|i| statuses.get(i)).copied();
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(column, (cell, width))| match (column, status) {
                (0, Some(status)) => painted_status(status, &columns::left(cell, width), paint),
                (0 | 1, _) => columns::left(cell, width),
                _ => columns::right(cell, width),
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    let explained = [
        CheckStatus::Fail,
        CheckStatus::Inconclusive,
        CheckStatus::Error,
        CheckStatus::Improved,
    ];
    let verdicts: Vec<&CheckOutcome> = report
        .outcomes
        .iter()
        .filter(|o| explained.contains(&o.status))
        .collect();
    if !verdicts.is_empty() {
        out.push('\n');
    }
    for o in verdicts {
        out.push_str(&format!(
            "{}: {}\n",
            painted_status(o.status, status_word(o.status), paint),
            visible(&one_line(&o.verdict, 2000))
        ));
    }
    out.push('\n');
    out.push_str(&totals(report));
    out.push('\n');
    if let Some(budget) = &report.error_budget {
        out.push_str(&budget.statement());
        out.push('\n');
    }
    if let Some(line) = reported::totals(report) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::annotations::sample_report;

    #[test]
    fn gate_table_is_aligned_with_verdicts_and_totals() {
        let text = render(&sample_report());
        let lines: Vec<&str> = text.lines().collect();
        let expected_rows = [
            "status        check                         baseline  current    delta  adj. p   n",
            "pass          recall@5 [all]                  0.7000   0.6950  -0.0050  0.3100  40",
            "improved      ndcg@10 [all]                   0.6000   0.6600  +0.0600  0.0008  40",
            "FAIL          recall@5 [class=paraphrased]    0.8000   0.6000  -0.2000  0.0020  25",
            "inconclusive  mrr [class=paraphrased]         0.5000   0.4700  -0.0300  0.2100  25",
            "skipped       recall@5 [class=rare]                –        –        –       –   3",
            "ERROR         mrr [all]                            –        –        –       –   –",
        ];
        assert_eq!(lines[..7], expected_rows);
        assert!(lines[8].starts_with("improved: ndcg@10 [all] improved"));
        assert!(lines[9].starts_with("FAIL: recall@5 [class=paraphrased] regressed"));
        assert!(lines[10].starts_with("inconclusive: mrr [class=paraphrased] inconclusive"));
        assert!(lines[11].starts_with("ERROR: mrr [all]: the baseline has no"));
        assert_eq!(
            lines.last().copied(),
            Some("6 checks: 2 passed, 1 failed, 1 inconclusive, 1 skipped, 1 errors")
        );
        assert!(!text.contains("NaN"), "{text}");
    }

    #[test]
    fn painted_table_colours_the_verdict_words_and_keeps_the_plain_text() {
        let report = sample_report();
        let plain = render(&report);
        let painted = render_painted(&report, Paint::enabled_for_tests());
        assert!(!plain.contains('\u{1b}'), "{plain}");
        let fail = Paint::enabled_for_tests().paint(term::BAD, "FAIL        ");
        let pass = Paint::enabled_for_tests().paint(term::GOOD, "pass        ");
        let inconclusive = Paint::enabled_for_tests().paint(term::DOUBTFUL, "inconclusive");
        assert!(
            painted.contains(&format!("{fail}  recall@5 [class=paraphrased]")),
            "{painted}"
        );
        assert!(
            painted.contains(&format!("{pass}  recall@5 [all]")),
            "{painted}"
        );
        assert!(
            painted.contains(&format!("{inconclusive}  mrr")),
            "{painted}"
        );
        // The header and the skipped row stay plain; without the codes the text is the plain table.
        assert!(painted.starts_with("status  "), "{painted}");
        let stripped = regex_lite::Regex::new("\u{1b}\\[[0-9;]*m")
            .unwrap()
            .replace_all(&painted, "");
        assert_eq!(stripped, plain);
    }
}
