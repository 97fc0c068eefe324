//! The Markdown summary of a gate run (`summary.md`, appended to `$GITHUB_STEP_SUMMARY`): a
//! heading with the overall status, a table of checks, the regressed queries of every failing
//! check (most severe first), the inconclusive checks, the errors and the warnings.
//!
//! GitHub drops a step summary over 1 MiB whole, so the size is bounded: every cell is cut to a
//! fixed length, the checks table and the per-check sections stop at byte budgets with a line
//! saying how many were left out (junit.xml still lists them all).

use crate::baseline::results::RunStatus;
use crate::config::InconclusivePolicy;
use crate::gate::GateReport;
use crate::gate::verdict::{CheckOutcome, CheckStatus};
use crate::report::annotations::failing_by_severity;
use crate::report::gate_table::{
    bound, count, limit, one_line, optional, p_value, signed, totals, value,
};

/// Bytes after which no more rows of the checks table are written.
const TABLE_BUDGET: usize = 200 * 1024;
/// Bytes after which no more failing-check or error sections are written.
pub const BUDGET: usize = 500 * 1024;
/// Longest query text shown, in characters.
const QUERY_CHARS: usize = 300;
/// Longest check name or verdict shown, in characters.
const TEXT_CHARS: usize = 1000;
/// Most warnings listed.
const MAX_WARNINGS: usize = 20;

fn status_cell(status: CheckStatus) -> &'static str {
    match status {
        CheckStatus::Pass => "✅ pass",
        CheckStatus::Improved => "⬆️ improved",
        CheckStatus::Inconclusive => "❔ inconclusive",
        CheckStatus::Fail => "❌ fail",
        CheckStatus::Skipped => "⏭️ skipped",
        CheckStatus::Error => "⚠️ error",
    }
}

/// Text for Markdown: on one line, cut, with `<` unable to open HTML.
fn inline(text: &str, max_chars: usize) -> String {
    one_line(text, max_chars).replace('<', "&lt;")
}

/// Text for a table cell: also `\` and `|` escaped, so the cell cannot split.
fn cell(text: &str, max_chars: usize) -> String {
    inline(text, max_chars)
        .replace('\\', "\\\\")
        .replace('|', "\\|")
}

fn check_row(o: &CheckOutcome) -> String {
    format!(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
        status_cell(o.status),
        cell(&o.name, TEXT_CHARS),
        value(o.baseline_mean),
        value(o.current_mean),
        signed(o.delta),
        limit(o),
        bound(o),
        p_value(o.p_value),
        optional(o.threshold),
        count(o),
        optional(o.detectable_drop),
    )
}

/// A failing check: its verdict and the queries that dropped most.
fn failing_section(o: &CheckOutcome) -> String {
    let mut text = format!(
        "### ❌ {}\n\n> {}\n\n",
        inline(&o.name, TEXT_CHARS),
        inline(&o.verdict, TEXT_CHARS)
    );
    if o.worst.is_empty() {
        text.push_str("No paired query got worse.\n\n");
        return text;
    }
    text.push_str("| qid | baseline | current | hit → miss | query |\n|---|---:|---:|:---:|---|\n");
    for drop in &o.worst {
        text.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            cell(&drop.qid, QUERY_CHARS),
            value(drop.baseline),
            value(drop.current),
            if drop.hit_to_miss { "yes" } else { "" },
            drop.query
                .as_deref()
                .map_or(String::new(), |q| cell(q, QUERY_CHARS)),
        ));
    }
    for drop in o.worst.iter().filter(|d| !d.details.is_empty()) {
        text.push_str(&format!("\n`{}`:\n", inline(&drop.qid, QUERY_CHARS)));
        for detail in &drop.details {
            text.push_str(&format!("- {}\n", inline(detail, TEXT_CHARS)));
        }
    }
    let more = o.worse_count.saturating_sub(o.worst.len());
    if more > 0 {
        text.push_str(&format!(
            "\n{more} more queries got worse ({} in all).\n",
            o.worse_count
        ));
    }
    text.push('\n');
    text
}

pub fn render(report: &GateReport) -> String {
    let overall = match report.status {
        RunStatus::Pass => "✅ pass",
        RunStatus::Regression => "❌ REGRESSION",
        RunStatus::Error | RunStatus::NoBaseline => "⚠️ error",
    };
    let mut out = format!(
        "## ragate · tier {} · {overall}\n\n{}\n\n",
        inline(&report.tier, TEXT_CHARS),
        totals(report)
    );
    out.push_str(
        "| status | check | baseline | current | delta | limit | decision bound | p | threshold | n | detectable drop |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut rows = 0;
    for o in &report.outcomes {
        let row = check_row(o);
        if out.len() + row.len() > TABLE_BUDGET {
            break;
        }
        out.push_str(&row);
        rows += 1;
    }
    if rows < report.outcomes.len() {
        out.push_str(&format!(
            "\n{} more checks not shown (size limit); junit.xml lists every check.\n",
            report.outcomes.len() - rows
        ));
    }
    out.push('\n');

    let failing = failing_by_severity(report);
    let mut sections = failing.iter().map(|o| failing_section(o));
    let shown = push_within_budget(&mut out, &mut sections);
    if shown < failing.len() {
        let queries: usize = failing[shown..].iter().map(|o| o.worse_count).sum();
        out.push_str(&format!(
            "{} more failing checks not shown (size limit), with {queries} queries that got worse; \
             junit.xml lists them all.\n\n",
            failing.len() - shown
        ));
    }

    let inconclusive: Vec<&CheckOutcome> = report
        .outcomes
        .iter()
        .filter(|o| o.status == CheckStatus::Inconclusive)
        .collect();
    if !inconclusive.is_empty() {
        out.push_str(&format!(
            "### ❔ Inconclusive ({})\n\nBeyond the limit on the point estimate, without the evidence to fail.\n\n",
            match report.inconclusive {
                InconclusivePolicy::Pass => "pass by default; `gate: { inconclusive: fail }` makes them fail",
                InconclusivePolicy::Fail => "these fail the run: `inconclusive: fail`",
            }
        ));
        let mut lines = inconclusive
            .iter()
            .map(|o| format!("- {}\n", inline(&o.verdict, TEXT_CHARS)));
        let shown = push_within_budget(&mut out, &mut lines);
        if shown < inconclusive.len() {
            out.push_str(&format!(
                "- {} more not shown (size limit)\n",
                inconclusive.len() - shown
            ));
        }
        out.push('\n');
    }

    let errors: Vec<&CheckOutcome> = report
        .outcomes
        .iter()
        .filter(|o| o.status == CheckStatus::Error)
        .collect();
    if !errors.is_empty() {
        out.push_str("### ⚠️ Not evaluated\n\n");
        let mut lines = errors
            .iter()
            .map(|o| format!("- {}\n", inline(&o.verdict, TEXT_CHARS)));
        let shown = push_within_budget(&mut out, &mut lines);
        if shown < errors.len() {
            out.push_str(&format!(
                "- {} more not shown (size limit)\n",
                errors.len() - shown
            ));
        }
        out.push('\n');
    }
    if report
        .outcomes
        .iter()
        .any(|o| o.status == CheckStatus::Improved)
    {
        out.push_str(&format!(
            "Some checks improved significantly; if intended, run `ragate baseline accept --tier {}`.\n\n",
            inline(&report.tier, TEXT_CHARS)
        ));
    }
    if !report.warnings.is_empty() {
        out.push_str("### Warnings\n\n");
        for warning in report.warnings.iter().take(MAX_WARNINGS) {
            out.push_str(&format!("- {}\n", inline(warning, TEXT_CHARS)));
        }
        if report.warnings.len() > MAX_WARNINGS {
            out.push_str(&format!(
                "- {} more warnings\n",
                report.warnings.len() - MAX_WARNINGS
            ));
        }
        out.push('\n');
    }
    for note in &report.notes {
        out.push_str(&format!("{}\n\n", inline(note, TEXT_CHARS)));
    }
    out.push_str(&format!(
        "{} paired queries · {} only in the baseline · {} only in the current run",
        report.paired_queries,
        report.baseline_only.len(),
        report.current_only.len()
    ));
    if let Some((k, share)) = report.judged_at_k {
        out.push_str(&format!(" · judged@{k} {share:.2}"));
    }
    out.push('\n');
    out
}

/// Appends pieces while the output stays within `BUDGET`; returns how many were appended.
fn push_within_budget(out: &mut String, pieces: &mut dyn Iterator<Item = String>) -> usize {
    let mut shown = 0;
    for piece in pieces {
        if out.len() + piece.len() > BUDGET {
            break;
        }
        out.push_str(&piece);
        shown += 1;
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::annotations::{assert_snapshot, sample_report};

    #[test]
    fn summary_snapshot() {
        assert_snapshot(
            &render(&sample_report()),
            include_str!("../../tests/fixtures/snapshots/summary.md"),
            "tests/fixtures/snapshots/summary.md",
        );
    }

    #[test]
    fn summary_heading_says_the_overall_status() {
        let mut report = sample_report();
        assert!(render(&report).starts_with("## ragate · tier smoke · ⚠️ error\n"));
        for (status, heading) in [
            (
                RunStatus::Regression,
                "## ragate · tier smoke · ❌ REGRESSION\n",
            ),
            (RunStatus::Pass, "## ragate · tier smoke · ✅ pass\n"),
        ] {
            report.status = status;
            assert!(render(&report).starts_with(heading));
        }
    }

    #[test]
    fn summary_escapes_query_text_in_cells_and_shows_dashes() {
        let text = render(&sample_report());
        assert!(
            text.contains("| q17 | 1.0000 | 0.0000 | yes | cats \\| dogs: which sheds more? |")
        );
        assert!(text.contains("ranking &lt;b>100%&lt;/b>"), "{text}");
        assert!(text.contains("9 more queries got worse (12 in all)."));
        assert!(text.contains(
            "| ⏭️ skipped | recall@5 [class=rare] | – | – | – | – | – | – | – | 3 | – |"
        ));
        assert!(!text.contains("NaN"), "{text}");
    }

    #[test]
    fn summary_stays_bounded_with_200_failing_checks_of_long_queries() {
        let mut report = sample_report();
        let template = report.outcomes[2].clone();
        let long = "why | ".repeat(400);
        report.outcomes = (0..200)
            .map(|i| {
                let mut o = template.clone();
                o.name = format!("recall@5 [class=c{i:03}]");
                o.worst = (0..10)
                    .map(|q| {
                        let mut drop = template.worst[0].clone();
                        drop.qid = format!("q{i}-{q}");
                        drop.query = Some(long.clone());
                        drop
                    })
                    .collect();
                o.worse_count = 40;
                o
            })
            .collect();
        let text = render(&report);
        assert!(text.len() < 1024 * 1024, "{} bytes", text.len());
        assert!(text.len() <= BUDGET + 4096, "{} bytes", text.len());
        let shown = text.matches("### ❌").count();
        assert!((1..200).contains(&shown), "{shown} sections");
        let omitted = format!("{} more failing checks not shown (size limit)", 200 - shown);
        assert!(text.contains(&omitted), "{omitted}");
        assert!(text.ends_with(
            "40 paired queries · 1 only in the baseline · 0 only in the current run · judged@10 0.42\n"
        ));
        // A table of thousands of checks is cut too.
        let many = report.outcomes[0].clone();
        report.outcomes.extend(std::iter::repeat_n(many, 5000));
        let text = render(&report);
        assert!(text.len() < 1024 * 1024, "{} bytes", text.len());
        assert!(text.contains("more checks not shown (size limit)"));
    }
}
