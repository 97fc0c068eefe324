//! The report's trend charts (`ragate report --history DIR`): per check, the runs of the current
//! series and this run, against the baseline's mean and the band its rule tolerates.

use maud::{Markup, PreEscaped, html};

use super::charts::{self, TrendBands, TrendPoint};
use super::shown::Shown;
use super::{History, Page, check_status, number};
use crate::error::Result;
use crate::gate::verdict::{CheckOutcome, CheckStatus, Family};
use crate::history::record::Record;
use crate::metrics::metric::Metric;
use crate::metrics::retrieval::Direction;

/// The runs the charts show at most (the current run included).
const RUNS: usize = 30;

/// `12-01` from `2026-12-01T03:00:00Z`.
fn day(time: &str) -> String {
    time.get(5..10).unwrap_or(time).to_string()
}

/// The check's runs, oldest first, this run last (`now`).
fn points(outcome: &CheckOutcome, history: &History) -> Vec<TrendPoint> {
    let point = |record: &Record, label: String| {
        let mean = record.metrics.get(&outcome.metric)?.get(&outcome.slice)?;
        Some(TrendPoint {
            label,
            mean: mean.mean,
            interval: mean.interval,
        })
    };
    let skip = history.records.len().saturating_sub(RUNS - 1);
    history.records[skip..]
        .iter()
        // Redacted before it is cut to the day (the chart's text is redacted again, whole).
        .filter_map(|r| point(r, day(&crate::secrets::redact(&r.time))))
        .chain(point(&history.now, "now".to_string()))
        .collect()
}

/// The baseline's mean and the worst mean the rule tolerates.
fn bands(outcome: &CheckOutcome) -> TrendBands {
    let worse = match outcome.metric.parse::<Metric>().map(Metric::direction) {
        Ok(Direction::LowerIsBetter) => 1.0,
        _ => -1.0,
    };
    TrendBands {
        baseline: outcome.baseline_mean,
        tolerated: outcome
            .limit
            .map(|limit| outcome.baseline_mean + worse * limit),
    }
}

fn chart(outcome: &CheckOutcome, history: &History) -> Result<Option<Markup>> {
    let points = points(outcome, history);
    if points.is_empty() || !outcome.baseline_mean.is_finite() {
        return Ok(None);
    }
    let svg = charts::trend(&outcome.name, &points, bands(outcome))?;
    Ok(Some(html! {
        figure class={ "status-" (check_status(outcome)) } {
            figcaption class="title" {
                code { (Shown(&outcome.name)) } " "
                span class={ "pill status-" (check_status(outcome)) } { (check_status(outcome)) }
            }
            (PreEscaped(svg))
            figcaption {
                (points.len()) " runs; now " (number(outcome.current_mean))
                ", baseline " (number(outcome.baseline_mean))
                @if let Some(limit) = outcome.limit { ", limit " (number(limit)) }
                "."
            }
        }
    }))
}

pub(super) fn section(page: &Page<'_>, history: &History) -> Result<Markup> {
    let mut shown = Vec::new();
    let mut folded = Vec::new();
    for outcome in &page.report.outcomes {
        let passing_slice = outcome.family == Family::Slices
            && matches!(outcome.status, CheckStatus::Pass | CheckStatus::Improved);
        if !matches!(outcome.family, Family::Primary | Family::Slices) {
            continue;
        }
        if let Some(figure) = chart(outcome, history)? {
            if passing_slice {
                folded.push(figure);
            } else {
                shown.push(figure);
            }
        }
    }
    Ok(html! {
        section id="trends" {
            h2 { "Trends" }
            p {
                "Each check's mean over the last runs of this series in "
                code { (Shown(&history.dir.display().to_string())) }
                " and this run (" b { "now" } "), with 95% intervals. Green line: the baseline's mean; "
                "shaded band down to the red line: the change the rule tolerates."
                @if history.after_break { " Older runs, made with another config or other judges, are left out." }
            }
            @if shown.is_empty() && folded.is_empty() {
                p { "No run of this series has these checks yet." }
            }
            div class="grid" { @for f in shown { (f) } }
            @if !folded.is_empty() {
                details {
                    summary { (folded.len()) " passing slice checks" }
                    div class="grid" { @for f in folded { (f) } }
                }
            }
        }
    })
}
