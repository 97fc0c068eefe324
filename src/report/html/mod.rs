//! `ragate report`'s page: one self-contained HTML file (inline CSS and SVG, no script, nothing
//! loaded from anywhere) with the verdicts, trends, per-query deltas and worst queries of the
//! failing checks, the judge calibration and answer length vs faithfulness. Every text that comes
//! from data is redacted on its raw form and then escaped once, by maud ([`shown::Shown`]) or by
//! plotters in the charts ([`shown::plain`]).

mod charts;
mod queries;
mod shown;
mod trends;

use std::path::{Path, PathBuf};

use maud::{DOCTYPE, Markup, PreEscaped, html};

use crate::baseline::results::Results;
use crate::error::Result;
use crate::gate::GateReport;
use crate::gate::calibration::Calibration;
use crate::gate::verdict::{CheckOutcome, CheckStatus, Family, Notation};
use crate::history::record::Record;
use crate::report::format::{no_negative_zero, p_text};
use crate::report::summary_text::point_past_limit;
use shown::Shown;

/// The run history behind the trend charts.
#[derive(Debug, Clone)]
pub(crate) struct History {
    /// The history directory.
    pub dir: PathBuf,
    /// The records of the current run's series, oldest first (the current run not among them).
    pub records: Vec<Record>,
    /// Whether older runs were left out at a series break.
    pub after_break: bool,
    /// The current run as a record.
    pub now: Record,
}

/// Everything the page shows.
pub(crate) struct Page<'a> {
    pub results_path: &'a Path,
    pub current: &'a Results,
    /// None on a tier's first run (the page then shows the measured means and how to accept).
    pub baseline: Option<&'a Results>,
    /// Why nothing was gated and what to do, when there is no baseline.
    pub no_baseline: Option<String>,
    pub report: &'a GateReport,
    pub calibrations: &'a [Calibration],
    pub history: Option<&'a History>,
}

const STYLE: &str = include_str!("report.css");

/// The page's `<meta name="generator">`: how `ragate report` knows a file at `--out` is an older
/// report of its own, to remove before it starts.
pub(crate) const GENERATOR: &str = "ragate report";

/// Whether `text` (the start of a file) is a page this module wrote.
pub(crate) fn is_report(text: &str) -> bool {
    text.starts_with("<!DOCTYPE html>")
        && text.contains(&format!(r#"<meta name="generator" content="{GENERATOR}">"#))
}

/// The whole page.
pub(crate) fn render(page: &Page<'_>) -> Result<String> {
    let report = page.report;
    // The verdict every output states (an inconclusive run is never PASS here either).
    let status = report.verdict().word();
    let title = format!("ragate · {} · {status}", report.tier);
    let trends = match page.history {
        Some(history) => Some(trends::section(page, history)?),
        None => None,
    };
    let failing = queries::section(page)?;
    let calibration = calibration_section(page)?;
    let length = length_section(page.current)?;
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="generator" content=(GENERATOR);
                title { (Shown(&title)) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                (header(page, status))
                nav {
                    a href="#checks" { @if page.no_baseline.is_some() { "Measured" } @else { "Checks" } }
                    @if trends.is_some() { a href="#trends" { "Trends" } }
                    @if failing.is_some() { a href="#failing" { "Failing checks" } }
                    @if calibration.is_some() { a href="#calibration" { "Judge calibration" } }
                    @if length.is_some() { a href="#length" { "Length vs faithfulness" } }
                    @if has_notes(report) { a href="#notes" { "Notes" } }
                }
                main {
                    @if let Some(why) = &page.no_baseline {
                        (measured_section(page.current, why))
                    } @else {
                        (checks_section(report))
                    }
                    @if let Some(section) = trends { (section) }
                    @if let Some(section) = failing { (section) }
                    @if let Some(section) = calibration { (section) }
                    @if let Some(section) = length { (section) }
                    (notes_section(report))
                    @if page.history.is_none() && page.no_baseline.is_none() {
                        p class="hint" { "No run history was given: " code { "--history DIR" } " adds trend charts and the drift checks." }
                    }
                }
                footer {
                    "Written by ragate " (Shown(&page.current.provenance.ragate_version))
                    " from " code { (Shown(&page.results_path.display().to_string())) }
                    ". Re-run with " code { "ragate report --tier " (Shown(&report.tier)) }
                    "."
                }
            }
        }
    };
    // No pass over the finished page: each text from data was redacted and its control and bidi
    // characters shown escaped on its way in (`Shown`, `shown::plain`), and the page writes none
    // itself; redacting here, after the escaping, would miss the escaped forms of a secret.
    Ok(markup.into_string())
}

fn header(page: &Page<'_>, status: &str) -> Markup {
    let report = page.report;
    let provenance = &page.current.provenance;
    let failing = report
        .outcomes
        .iter()
        .filter(|o| matches!(o.status, CheckStatus::Fail | CheckStatus::Error))
        .count();
    let inconclusive = report
        .outcomes
        .iter()
        .filter(|o| o.status == CheckStatus::Inconclusive)
        .count();
    html! {
        header {
            h1 {
                span class={ "badge run-" (status.replace(' ', "-")) } { (status.to_uppercase()) }
                " Tier " code { (Shown(&report.tier)) }
            }
            @if page.no_baseline.is_some() {
                p class="lede" { (page.current.queries.len()) " queries measured; nothing was gated (no baseline yet)." }
            } @else {
                @if let Some(compared) = report.compared() {
                    p class="lede" { strong { (compared) " of the tier with the baseline." } }
                }
                p class="lede" {
                    (report.outcomes.len()) " checks, " (failing) " failing"
                    @if inconclusive > 0 { ", " (inconclusive) " inconclusive" }
                    "; "
                    (report.paired_queries) " queries compared with the baseline"
                    @if !report.baseline_only.is_empty() { ", " (report.baseline_only.len()) " in the baseline only" }
                    @if !report.current_only.is_empty() { ", " (report.current_only.len()) " new" }
                    "."
                }
            }
            dl class="meta" {
                dt { "commit" } dd { code { (Shown(provenance.git_commit.as_deref().unwrap_or("unknown"))) } }
                dt { "config hash" } dd { code { (Shown(crate::report::format::short_hash(&crate::secrets::redact(&provenance.config_hash)))) } }
                @if let Some(baseline) = page.baseline {
                    dt { "baseline commit" } dd { code { (Shown(baseline.provenance.git_commit.as_deref().unwrap_or("unknown"))) } }
                }
                @for (name, identity) in &provenance.judges {
                    dt { "judge " (Shown(name)) } dd { (Shown(identity)) }
                }
            }
        }
    }
}

/// The status of a check as a CSS class suffix and a word.
fn check_status(outcome: &CheckOutcome) -> &'static str {
    outcome.status.word()
}

fn number(value: f64) -> String {
    if value.is_finite() {
        format!("{:.4}", no_negative_zero(value))
    } else {
        "–".to_string()
    }
}

fn signed(value: f64) -> String {
    if value.is_finite() {
        format!("{:+.4}", no_negative_zero(value))
    } else {
        "–".to_string()
    }
}

fn family_name(family: Family) -> &'static str {
    match family {
        Family::Primary => "Whole tier",
        Family::Slices => "Slices",
        Family::Calibration => "JudgedMetric judge estimates",
        Family::Drift => "Drift across runs",
        Family::MustPass => "Must-pass queries",
    }
}

fn checks_table(rows: &[&CheckOutcome]) -> Markup {
    html! {
        div class="scroll" {
            table class="checks" {
                thead { tr {
                    th { "status" } th { "check" } th class="num" { "baseline" }
                    th class="num" { "current" } th class="num" { "delta" }
                    th class="num" { "limit" } th class="num" { "adjusted p" } th class="num" { "n" }
                } }
                tbody {
                    @for o in rows {
                        tr class={ "status-" (check_status(o)) } {
                            td { span class={ "pill status-" (check_status(o)) } { (check_status(o)) } }
                            td {
                                code { (Shown(&o.name)) }
                                div class="compact" {
                                    (number(o.baseline_mean)) " → " (number(o.current_mean))
                                    " (" (signed(o.delta)) ")"
                                    @if let Some(limit) = o.limit { ", limit " (number(limit)) }
                                    @if let Some(a) = o.adjustment { ", " (Shown(&a.describe(Notation::Ascii))) }
                                    @else if let Some(p) = o.p_value { ", " (p_text(p)) }
                                    ", n = " (o.n)
                                }
                                div class="verdict" { (Shown(&o.verdict)) }
                                @if o.status == CheckStatus::Inconclusive && o.proof.is_none() && o.limit.is_some() {
                                    div class="verdict" { (Shown(&format!("{}: {}", o.name, point_past_limit(o)))) }
                                }
                            }
                            td class="num" { (number(o.baseline_mean)) }
                            td class="num" { (number(o.current_mean)) }
                            td class="num" { (signed(o.delta)) }
                            td class="num" { (o.limit.map_or("–".to_string(), number)) }
                            td class="num" { (o.adjustment.map(|a| a.adjusted).or(o.p_value).map_or("–".to_string(), p_text)) }
                            td class="num" { (o.n) }
                        }
                    }
                }
            }
        }
    }
}

fn checks_section(report: &GateReport) -> Markup {
    let families = [
        Family::MustPass,
        Family::Primary,
        Family::Slices,
        Family::Calibration,
        Family::Drift,
    ];
    let passing = |o: &CheckOutcome| matches!(o.status, CheckStatus::Pass | CheckStatus::Improved);
    html! {
        section id="checks" {
            h2 { "Checks" }
            @if report.outcomes.is_empty() {
                p { "No rule gates this tier." }
            }
            @for family in families {
                @let rows: Vec<&CheckOutcome> = report.outcomes.iter().filter(|o| o.family == family).collect();
                @if !rows.is_empty() {
                    h3 { (family_name(family)) }
                    @if family == Family::Slices && rows.iter().any(|o| passing(o)) {
                        @let (passed, others): (Vec<&CheckOutcome>, Vec<&CheckOutcome>) = rows.iter().partition(|o| passing(o));
                        @if !others.is_empty() { (checks_table(&others)) }
                        details {
                            summary { (passed.len()) " passing slice checks" }
                            (checks_table(&passed))
                        }
                    } @else {
                        (checks_table(&rows))
                    }
                }
            }
            @if !report.reported.is_empty() {
                h3 { "Reported, not gated" }
                div class="scroll" {
                    table {
                        thead { tr {
                            th { "metric" } th class="num" { "baseline" } th class="num" { "current" }
                            th class="num" { "delta" } th class="num" { "n" }
                        } }
                        tbody {
                            @for r in &report.reported {
                                tr {
                                    td { code { (Shown(&r.metric)) } }
                                    td class="num" { (number(r.baseline)) }
                                    td class="num" { (number(r.current)) }
                                    td class="num" { (signed(r.delta)) }
                                    td class="num" { (r.n) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A first run: why nothing was gated, how to accept, and the measured means per slice.
fn measured_section(current: &Results, why: &str) -> Markup {
    let slices: Vec<&String> = current.summary.keys().collect();
    html! {
        section id="checks" {
            h2 { "Nothing was gated" }
            p class="problem" { (Shown(why)) }
            h3 { "Measured on this run" }
            div class="scroll" {
                table class="measured" {
                    thead { tr {
                        th { "metric" }
                        @for slice in &slices { th class="num" { (Shown(slice)) } }
                    } }
                    tbody {
                        @for metric in &current.metrics {
                            tr {
                                td { code { (Shown(metric)) } }
                                @for slice in &slices {
                                    @let summary = current.summary.get(*slice).and_then(|m| m.get(metric));
                                    td class="num" {
                                        @if let Some(s) = summary {
                                            (number(s.mean)) br; span class="n" { "n = " (s.n) }
                                        } @else { "–" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn has_notes(report: &GateReport) -> bool {
    !(report.diagnoses.is_empty()
        && report.causes.is_empty()
        && report.warnings.is_empty()
        && report.notes.is_empty())
}

fn notes_section(report: &GateReport) -> Markup {
    html! {
        @if has_notes(report) {
            section id="notes" {
                h2 { "Notes" }
                @if !report.causes.is_empty() {
                    h3 { "Likely causes of the change" }
                    ul { @for c in &report.causes { li { (Shown(&c.describe())) } } }
                }
                @if !report.diagnoses.is_empty() {
                    h3 { "Signatures of the current levels" }
                    ul { @for d in &report.diagnoses { li { (Shown(d)) } } }
                }
                @if !report.warnings.is_empty() {
                    h3 { "Warnings" }
                    ul { @for w in &report.warnings { li { (Shown(w)) } } }
                }
                @if !report.notes.is_empty() {
                    h3 { "Observations" }
                    ul { @for n in &report.notes { li { (Shown(n)) } } }
                }
            }
        }
    }
}

/// The judge's own mean with a normal 95% interval over the queries that have the metric.
fn judge_estimate(current: &Results, metric: &str) -> Option<charts::Estimate> {
    let values: Vec<f64> = current
        .queries
        .values()
        .filter_map(|q| q.metrics.get(metric).copied())
        .collect();
    if values.is_empty() {
        return None;
    }
    let mean = crate::history::record::slice_mean(&values);
    Some(charts::Estimate {
        name: "judge alone".to_string(),
        value: mean.mean,
        interval: (mean.interval[0], mean.interval[1]),
    })
}

/// An interval clamped to the values the metric can take (as the calibration's text says).
fn clamped((low, high): (f64, f64), range: Option<&std::ops::RangeInclusive<f64>>) -> (f64, f64) {
    match range {
        Some(r) => (
            low.clamp(*r.start(), *r.end()),
            high.clamp(*r.start(), *r.end()),
        ),
        None => (low, high),
    }
}

fn calibration_section(page: &Page<'_>) -> Result<Option<Markup>> {
    if page.calibrations.is_empty() {
        return Ok(None);
    }
    let mut blocks = Vec::new();
    for calibration in page.calibrations {
        let range = calibration
            .metric
            .parse::<crate::metrics::metric::Metric>()
            .ok()
            .and_then(|m| m.value_range());
        let mut rows: Vec<charts::Estimate> = judge_estimate(page.current, &calibration.metric)
            .into_iter()
            .collect();
        for (name, estimate) in [
            ("PPI", &calibration.ppi),
            ("PPI++", &calibration.ppi_plus_plus),
        ] {
            rows.push(charts::Estimate {
                name: name.to_string(),
                value: estimate.estimate,
                interval: clamped(estimate.ci, range.as_ref()),
            });
        }
        let title = format!("{} calibrated by human labels", calibration.metric);
        let chart = charts::estimates(&title, &rows)?;
        blocks.push(html! {
            figure {
                figcaption class="title" { code { (Shown(&calibration.metric)) } }
                (PreEscaped(chart))
                figcaption { (Shown(&calibration.describe())) "; " (Shown(&calibration.agreement_text())) ". Dots: estimates; bars: 95% intervals." }
            }
        });
    }
    Ok(Some(html! {
        section id="calibration" {
            h2 { "Judge calibration" }
            p { "The judge's estimate over every query against prediction-powered inference (PPI), which corrects it with the human labels." }
            div class="grid" { @for b in blocks { (b) } }
        }
    }))
}

fn length_section(current: &Results) -> Result<Option<Markup>> {
    let points: Vec<(f64, f64)> = current
        .queries
        .values()
        .filter_map(|q| {
            Some((
                *q.metrics.get("answer_length")?,
                *q.metrics.get("faithfulness")?,
            ))
        })
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    if points.len() < 2 {
        return Ok(None);
    }
    let chart = charts::scatter(
        "answer length vs faithfulness",
        &points,
        ("answer length (words)", "faithfulness"),
    )?;
    let correlation = crate::gate::length_faithfulness_correlation(current);
    Ok(Some(html! {
        section id="length" {
            h2 { "Answer length vs faithfulness" }
            div class="grid" { figure {
                (PreEscaped(chart))
                figcaption {
                    "One dot per query of this run. "
                    @if let Some(c) = correlation { (Shown(&c)) "." }
                }
            } }
        }
    }))
}

#[cfg(test)]
mod tests;
