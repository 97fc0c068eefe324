//! The measured metrics of a run that has nothing to be compared with (a tier's first run, or an
//! unreadable baseline): a table for the terminal and a summary for people, so that a baseline is
//! never accepted unseen.

use crate::baseline::results::{Results, RunStatus};
use crate::report::columns;
use crate::report::format::one_line;
use crate::report::inert;

/// The slice every query belongs to.
const ALL: &str = "all";
/// Longest slice or metric name shown in summary.md, in characters.
const NAME_CHARS: usize = 300;

/// How many characters of a slice label the table shows (slice values are untrusted text of any
/// length; a longer label is cut, ending in `…`).
const LABEL_CHARS: usize = 80;

/// The summary as lines `slice  metric  mean  (n = N)`, the form `baseline show` and diffs print.
pub(crate) fn table(results: &Results) -> String {
    let mut out = String::new();
    let labels: Vec<String> = results
        .summary
        .keys()
        .map(|slice| one_line(&crate::escape::visible(slice), LABEL_CHARS))
        .collect();
    // Columns as wide as their longest entry (at least the usual widths), so values line up.
    let slice_width = labels
        .iter()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0)
        .max(28);
    let metric_width = results
        .metrics
        .iter()
        .map(|m| m.chars().count())
        .max()
        .unwrap_or(0)
        .max(16);
    for (label, metrics) in labels.iter().zip(results.summary.values()) {
        for metric in &results.metrics {
            if let Some(s) = metrics.get(metric) {
                out.push_str(&format!(
                    "{} {} {:.4}  (n = {})\n",
                    columns::left(label, slice_width),
                    columns::left(metric, metric_width),
                    s.mean,
                    s.n
                ));
            }
        }
    }
    out
}

/// summary.md of an ungated run: what went wrong, the measured metrics of every query, the
/// other slices folded, and the command that accepts the results as the baseline.
pub(crate) fn summary(
    tier: &str,
    results: &Results,
    problem: &str,
    accept_command: &str,
) -> String {
    let first_run = results.status == RunStatus::NoBaseline;
    // The headline in the form of the gate's summary: status first, the tier last.
    let tier = inert::text(tier, 200);
    let mut out = if first_run {
        format!(
            "**⚠️ No baseline yet: nothing was gated** · tier\u{a0}{tier}\n\nThis tier has no baseline to compare with (exit 2). Measured on this run:\n\n"
        )
    } else {
        format!(
            "**⚠️ The baseline could not be read: nothing was gated** · tier\u{a0}{tier}\n\nMeasured on this run (exit 2):\n\n"
        )
    };
    out.push_str(&metric_table(results, ALL));
    let slices: Vec<&str> = results
        .summary
        .keys()
        .map(String::as_str)
        .filter(|s| *s != ALL)
        .collect();
    if !slices.is_empty() {
        out.push_str("\n<details><summary>per slice</summary>\n\n");
        out.push_str(&slice_table(results, &slices));
        out.push_str("\n</details>\n");
    }
    if first_run {
        out.push_str(&format!(
            "\nIf these numbers are what this tier should hold, accept them as its baseline and commit it:\n\n{}",
            inert::block("sh", accept_command)
        ));
    }
    if !first_run {
        out.push('\n');
        // Wrapping text, not a code block (clipped at the comment's width).
        let lines: Vec<String> = problem
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| inert::text(line, 2000).replace('`', "\\`"))
            .collect();
        out.push_str(&lines.join("<br>\n"));
        out.push('\n');
    }
    out
}

/// `| metric | value | queries |` rows of one slice, in the order the config lists the metrics.
fn metric_table(results: &Results, slice: &str) -> String {
    let mut out = String::from("| metric | value | queries |\n|---|---:|---:|\n");
    let Some(metrics) = results.summary.get(slice) else {
        return out;
    };
    for metric in &results.metrics {
        if let Some(s) = metrics.get(metric) {
            out.push_str(&format!(
                "| {} | {:.4} | {} |\n",
                escape(metric),
                s.mean,
                s.n
            ));
        }
    }
    out
}

/// One row per metric, one column per slice (its query count in the header).
fn slice_table(results: &Results, slices: &[&str]) -> String {
    let summaries: Vec<_> = slices.iter().map(|s| &results.summary[*s]).collect();
    let mut out = String::from("| metric |");
    for (slice, summary) in slices.iter().zip(&summaries) {
        let n = summary.values().map(|s| s.n).max().unwrap_or(0);
        out.push_str(&format!(" {} ({n}) |", escape(slice)));
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|".repeat(slices.len()));
    out.push('\n');
    for metric in &results.metrics {
        out.push_str(&format!("| {} |", escape(metric)));
        for summary in &summaries {
            match summary.get(metric) {
                Some(s) => out.push_str(&format!(" {:.4} |", s.mean)),
                None => out.push_str(" – |"),
            }
        }
        out.push('\n');
    }
    out
}

/// A slice or metric name for a Markdown table cell: inert, cut, unable to split the cell.
fn escape(text: &str) -> String {
    inert::cell(text, NAME_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::results::SliceSummary;
    use std::collections::BTreeMap;

    fn results(status: RunStatus) -> Results {
        let mut results: Results =
            serde_json::from_str(include_str!("../../baselines/smoke.json")).unwrap();
        results.status = status;
        results.summary = BTreeMap::from([
            (
                ALL.to_string(),
                BTreeMap::from([(
                    results.metrics[0].clone(),
                    SliceSummary { mean: 0.25, n: 4 },
                )]),
            ),
            (
                "class=a|b".to_string(),
                BTreeMap::from([(results.metrics[0].clone(), SliceSummary { mean: 0.5, n: 2 })]),
            ),
        ]);
        results
    }

    #[test]
    fn a_first_run_shows_its_numbers_and_the_accept_command() {
        let results = results(RunStatus::NoBaseline);
        let metric = &results.metrics[0];
        let text = summary(
            "smoke",
            &results,
            "no baseline at baselines/smoke.json",
            "ragate baseline accept --tier smoke",
        );
        assert!(text.starts_with("**⚠️ No baseline yet: nothing was gated** · tier\u{a0}smoke\n"));
        assert!(
            text.contains(&format!("| {metric} | 0.2500 | 4 |")),
            "{text}"
        );
        assert!(
            text.contains("| metric | class=a\\|b (2) |\n|---|---:|\n"),
            "{text}"
        );
        assert!(text.contains(&format!("| {metric} | 0.5000 |\n")), "{text}");
        assert!(
            text.contains("```sh\nragate baseline accept --tier smoke\n```"),
            "{text}"
        );
        assert!(
            !text.contains("no baseline at baselines/smoke.json"),
            "the accept command says it all"
        );
    }

    #[test]
    fn an_unreadable_baseline_offers_no_accept_command() {
        let text = summary(
            "smoke",
            &results(RunStatus::Error),
            "bad json",
            "ragate baseline accept --tier smoke",
        );
        assert!(text.contains("could not be read"), "{text}");
        assert!(
            text.ends_with("</details>\n\nbad json\n"),
            "the error itself, as wrapping text: {text}"
        );
        assert!(!text.contains("```"), "no clipped code block: {text}");
        assert!(!text.contains("baseline accept"), "{text}");
    }

    #[test]
    fn the_table_lists_every_slice_and_metric() {
        let results = results(RunStatus::NoBaseline);
        let metric = &results.metrics[0];
        let table = table(&results);
        assert_eq!(table.lines().count(), 2);
        let first: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
        assert_eq!(first, ["all", metric.as_str(), "0.2500", "(n", "=", "4)"]);
    }

    #[test]
    fn long_metric_names_keep_the_values_in_one_column() {
        let mut results = results(RunStatus::NoBaseline);
        let long = "context_precision@10".to_string();
        results.metrics.push(long.clone());
        let all = results.summary.get_mut(ALL).unwrap();
        all.insert(long, SliceSummary { mean: 0.75, n: 4 });
        let table = table(&results);
        let columns: Vec<usize> = table.lines().map(|line| line.find("0.").unwrap()).collect();
        assert_eq!(columns.len(), 3, "{table}");
        assert!(columns.iter().all(|&c| c == columns[0]), "{table}");
    }
}
