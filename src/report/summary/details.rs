//! The folded part of the summary (`<details>`): the failing checks' regressed queries with
//! their answer changes, every check, and the notes.

use super::{
    QUERY_CHARS, TEXT_CHARS, cell, failing_by_excess, gain_legend, inline, left_out, open_details,
    push_rows, push_within_budget, status_cell, status_mark, verdict,
};
use crate::gate::GateReport;
use crate::gate::error_budget::ErrorBudget;
use crate::gate::verdict::{CheckOutcome, CheckStatus, Family};
use crate::report::answer_diff;
use crate::report::format::{interval_text, optional, signed, value};
use crate::report::gate_table::{bound, count};
use crate::report::inert;
use crate::report::summary_text::{display_range, p_cell, signed_limit};

/// A failing check: its verdict and the queries that dropped most, with their answer changes.
pub(super) fn failing_section(o: &CheckOutcome) -> String {
    let mut text = format!(
        "#### ❌ {}\n\n{}\n\n",
        inline(&o.name, TEXT_CHARS),
        verdict(o)
    );
    if o.worst.is_empty() {
        text.push_str("No paired query got worse.\n\n");
        return text;
    }
    text.push_str("| qid | baseline → current | hit → miss | query |\n|---|---:|:---:|---|\n");
    for drop in &o.worst {
        text.push_str(&format!(
            "| {} | {} → {} | {} | {} |\n",
            inert::code_cell(&drop.qid, QUERY_CHARS),
            value(drop.baseline),
            value(drop.current),
            if drop.hit_to_miss { "yes" } else { "" },
            drop.query
                .as_deref()
                .map_or(String::new(), |q| cell(q, QUERY_CHARS)),
        ));
    }
    for drop in o.worst.iter().filter(|d| !d.details.is_empty()) {
        text.push_str(&format!("\n{}:\n", inert::code(&drop.qid, QUERY_CHARS)));
        let mut bullets = String::new();
        for detail in &drop.details {
            let block = (drop.answers.as_ref())
                .filter(|_| detail.starts_with("answer: "))
                .and_then(|(old, new)| answer_diff::rewritten_block(old, new));
            match block {
                Some(block) => text.push_str(&format!("answer, rewritten:\n\n{block}\n")),
                None => bullets.push_str(&format!("- {}\n", inline(detail, TEXT_CHARS))),
            }
        }
        text.push_str(&bullets);
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

/// The regressed queries of every failing check, folded.
pub(super) fn push_regressed_queries(out: &mut String, report: &GateReport) {
    let failing = failing_by_excess(report);
    if failing.is_empty() {
        return;
    }
    let checks = if failing.len() == 1 {
        "check"
    } else {
        "checks"
    };
    out.push_str(&open_details(&format!(
        "Regressed queries and answer changes ({} failing {checks})",
        failing.len()
    )));
    let mut sections = failing.iter().map(|o| failing_section(o));
    let shown = push_within_budget(out, &mut sections);
    if shown < failing.len() {
        let queries: usize = failing[shown..].iter().map(|o| o.worse_count).sum();
        out.push_str(&format!(
            "{} more failing checks not shown (size limit), with {queries} queries that got worse; \
             junit.xml lists them all.\n\n",
            failing.len() - shown
        ));
    }
    out.push_str("</details>\n\n");
}

/// A row of the table of every check; the statistics columns only when the run has them.
pub(super) fn full_row(o: &CheckOutcome, statistics: bool) -> String {
    let mut row = format!(
        "| {} | {} | {} | {} | {} | {} | {} |",
        status_cell(o.status),
        cell(&o.name, TEXT_CHARS),
        value(o.baseline_mean),
        value(o.current_mean),
        signed(o.delta),
        signed_limit(o),
        count(o),
    );
    if statistics {
        let interval = match (o.family, o.ci) {
            (Family::Calibration, Some(ci)) => interval_text(ci, display_range(&o.metric).as_ref()),
            // Through inert: GitHub would read `@97.50%` as a mention of user 97.
            _ => inert::cell(&bound(o), TEXT_CHARS),
        };
        row.push_str(&format!(
            " {} | {} | {} | {} |",
            p_cell(o.p_value),
            p_cell(o.adjustment.map(|a| a.adjusted)),
            interval,
            optional(o.detectable_drop),
        ));
    }
    row.push('\n');
    row
}

/// Every check, folded, with the verdicts of the skipped and calibrated ones.
pub(super) fn push_all_checks(out: &mut String, report: &GateReport) {
    let statistics = report
        .outcomes
        .iter()
        .any(|o| o.p_value.is_some() || o.ci.is_some());
    out.push_str(&open_details(&format!(
        "All {} checks",
        report.outcomes.len()
    )));
    out.push_str("| status | check | baseline | current | delta | limit | n |");
    let mut rule = String::from("|---|---|---:|---:|---:|---:|---:|");
    if statistics {
        out.push_str(" p | adjusted p | decision bound | detectable drop |");
        rule.push_str("---:|---:|---:|---:|");
    }
    out.push('\n');
    out.push_str(&rule);
    out.push('\n');
    let shown = push_rows(out, report.outcomes.iter().map(|o| full_row(o, statistics)));
    out.push_str(&left_out(report.outcomes.len() - shown));
    out.push('\n');
    let explained: Vec<String> = report
        .outcomes
        .iter()
        .filter(|o| {
            o.status == CheckStatus::Skipped
                || matches!(o.family, Family::Calibration | Family::Drift)
        })
        .map(|o| format!("- {} {}\n", status_mark(o.status), verdict(o)))
        .collect();
    let mut explained = explained.into_iter();
    if push_within_budget(out, &mut explained) > 0 {
        out.push('\n');
    }
    out.push_str(&format!(
        "{} paired queries · {} only in the baseline · {} only in the current run",
        report.paired_queries,
        report.baseline_only.len(),
        report.current_only.len()
    ));
    if let Some((k, share)) = report.judged_at_k {
        out.push_str(&format!(
            " · judged@{k} {share:.2}{}",
            crate::gate::decision::judged_split(share, report.model_judged_at_k)
        ));
    }
    out.push_str("\n\n</details>\n\n");
}

/// The notes (the run's error budget, calibration, judging, noise, operational figures), folded.
pub(super) fn push_notes(out: &mut String, report: &GateReport) {
    let budget = report.error_budget.as_ref().map(ErrorBudget::statement);
    let legend = gain_legend(report);
    let notes: Vec<&String> = (budget.iter().chain(&legend))
        .chain(&report.notes)
        .collect();
    if notes.is_empty() {
        return;
    }
    out.push_str(&open_details(
        "Notes: error budget, calibration, judging, operational figures",
    ));
    let mut lines = notes
        .iter()
        .map(|note| format!("- {}\n", inline(note, TEXT_CHARS)));
    let shown = push_within_budget(out, &mut lines);
    if shown < notes.len() {
        out.push_str(&format!(
            "- {} more notes not shown (size limit)\n",
            notes.len() - shown
        ));
    }
    out.push_str("\n</details>\n\n");
}
