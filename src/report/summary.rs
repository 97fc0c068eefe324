//! The Markdown summary of a gate run (`summary.md`, appended to `$GITHUB_STEP_SUMMARY`, posted as
//! the PR comment), built to be read in five seconds at PR-comment width:
//! 1. one headline: `❌ 3 of 25 checks failed: worst ndcg@10 [class=literal] -0.62 (limit -0.05)`,
//!    `✅ 25 of 25 checks passed`, or for a pass with an inconclusive check `❓ 24 of 25 checks
//!    passed, 1 inconclusive: ndcg@10 [all] -0.0280 beyond its limit -0.0250 without enough
//!    evidence; about 619 paired queries would decide it`, with the tier;
//! 2. only the failing (furthest beyond their limit first), inconclusive and improved checks, as `check | baseline → current | delta
//!    (%) | limit`, with the statistics (p, bound, adjusted alpha, n) in one line per check when
//!    the decision used them; the checks that could not be evaluated;
//! 3. the likely causes of the change, folded under a title naming them (a run without a
//!    baseline: the level-based diagnosis lines), and the warnings;
//! 4. everything else folded in `<details>`: the regressed queries with their answer changes,
//!    every check, the notes (calibration, judging, operational figures).
//!
//! A run that passes is quiet: after its headline only the hint to accept an improvement and one
//! short line per warning; 2 and 3 are folded too ([`PASS_LINES`] lines at most outside
//! `<details>`), since a reviewer reads whatever is unfolded as a problem.
//!
//! Every string that comes from data goes through [`crate::report::inert`]: prose inert, qids as
//! code spans, diff blocks fenced beyond any backtick run (no link, image, mention or HTML that
//! ragate did not write).
//!
//! GitHub drops a step summary over 1 MiB whole, so the size is bounded: every cell is cut to a
//! fixed length, the tables and the per-check sections stop at byte budgets with a line saying
//! how many were left out (junit.xml still lists them all).

use crate::baseline::results::RunStatus;
use crate::config::InconclusivePolicy;
use crate::gate::GateReport;
use crate::gate::verdict::Notation;
use crate::gate::verdict::proof::Proof;
use crate::gate::verdict::{CheckOutcome, CheckStatus, Family, Floor, QueriesNeeded};
use crate::metrics::retrieval::Direction;
use crate::report::format::{interval_text, no_negative_zero, p_against, p_text, signed, value};
use crate::report::gate_table::higher_is_better;
use crate::report::inert;
use crate::report::reported;
use crate::report::summary_text::{
    Counts, delta_with_percent, display_range, point_past_limit, signed_limit,
};

/// Bytes after which no more rows of a checks table are written.
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
        CheckStatus::Inconclusive => "❓ inconclusive",
        CheckStatus::Fail => "❌ fail",
        CheckStatus::Skipped => "⏭️ skipped",
        CheckStatus::Error => "⚠️ error",
        CheckStatus::Warn => "⚠️ warn",
    }
}

fn status_mark(status: CheckStatus) -> &'static str {
    status_cell(status).split(' ').next().unwrap_or_default()
}

/// Untrusted (or partly untrusted) text for Markdown: on one line, cut, inert.
fn inline(text: &str, max_chars: usize) -> String {
    inert::text(&arrows(&crate::secrets::redact(text)), max_chars)
}

/// [`inline`] for a table cell.
fn cell(text: &str, max_chars: usize) -> String {
    inert::cell(&arrows(&crate::secrets::redact(text)), max_chars)
}

/// A check's verdict as the summary shows it.
fn verdict(o: &CheckOutcome) -> String {
    inline(&o.verdict, TEXT_CHARS)
}

/// ` -> ` as ` → ` and ` >= ` as ` ≥ ` (as the summary's own lines write them): one glyph, so a
/// narrow page never breaks a line inside an arrow (`1.0000 -`, `> 0.8000`).
fn arrows(text: &str) -> String {
    text.replace(" -> ", " → ").replace(" >= ", " ≥ ")
}

/// How many times its limit a check's worsening is (the worsening itself without a limit; a
/// missing number counts as least), so metrics of different scales compare: a 0.62 drop against
/// a 0.05 limit is worse than 19 more words against a limit of 13.
fn excess(o: &CheckOutcome) -> f64 {
    let worsening = if higher_is_better(&o.metric) {
        -o.delta
    } else {
        o.delta
    };
    let excess = match o.limit {
        Some(limit) if limit > 0.0 => worsening / limit,
        _ => worsening,
    };
    if excess.is_nan() {
        f64::NEG_INFINITY
    } else {
        excess
    }
}

/// The failing checks: broken must-pass queries first (they fail whatever the statistics say),
/// then the furthest beyond their limit (ties by name).
fn failing_by_excess(report: &GateReport) -> Vec<&CheckOutcome> {
    let mut failing: Vec<&CheckOutcome> = report
        .outcomes
        .iter()
        .filter(|o| o.status == CheckStatus::Fail)
        .collect();
    failing.sort_by(|a, b| {
        let must_pass = |o: &CheckOutcome| o.family == Family::MustPass;
        must_pass(b)
            .cmp(&must_pass(a))
            .then_with(|| excess(b).total_cmp(&excess(a)))
            .then_with(|| a.name.cmp(&b.name))
    });
    failing
}

/// The checks a reviewer must see: failing (most severe first), inconclusive, improved.
fn notable(report: &GateReport) -> Vec<&CheckOutcome> {
    let with = |status| report.outcomes.iter().filter(move |o| o.status == status);
    failing_by_excess(report)
        .into_iter()
        .chain(with(CheckStatus::Inconclusive))
        .chain(with(CheckStatus::Warn))
        .chain(with(CheckStatus::Improved))
        .collect()
}

/// The floor a failing check broke (`min`, or `max` of a lower-is-better metric), if any.
fn broken_floor(o: &CheckOutcome) -> Option<Floor> {
    let direction = if higher_is_better(&o.metric) {
        Direction::HigherIsBetter
    } else {
        Direction::LowerIsBetter
    };
    o.floor
        .filter(|f| o.status == CheckStatus::Fail && f.n > 0 && f.broken(direction))
}

/// `min 0.9` (`max 0.2` for a lower-is-better metric).
fn floor_text(o: &CheckOutcome, floor: Floor) -> String {
    let key = if higher_is_better(&o.metric) {
        "min"
    } else {
        "max"
    };
    format!("{key} {}", floor.bound)
}

/// A row of the table of notable checks.
fn notable_row(o: &CheckOutcome) -> String {
    let mut change = if o.baseline_mean.is_finite() {
        format!("{} → {}", value(o.baseline_mean), value(o.current_mean))
    } else {
        value(o.current_mean)
    };
    change.push_str(&format!(" · {}", delta_with_percent(o)));
    let mut limit = signed_limit(o);
    // A broken floor is decided on every current query of the slice, paired or not.
    if let Some(floor) = broken_floor(o) {
        if o.n > 0 {
            change.push_str(&format!("; all {} now: {}", floor.n, value(floor.mean)));
        }
        limit = floor_text(o, floor);
    }
    format!(
        "| {} {} | {change} | {limit} |\n",
        status_mark(o.status),
        cell(&o.name, TEXT_CHARS),
    )
}

/// The statistics behind a failing or inconclusive check, on one line, when the decision used
/// them (never in `decision: point`, which has none): `Holm-adjusted p = 0.0040 over 4 checks ≤
/// α 0.0500 (raw p = 0.0010) ·
/// worsening ≥ 0.1000 at 98.75% · n = 25` (the test's name is in the verdict, in the details);
/// for a calibrated floor its interval.
fn statistics_line(o: &CheckOutcome) -> Option<String> {
    if !matches!(o.status, CheckStatus::Fail | CheckStatus::Inconclusive) {
        return None;
    }
    let mut parts = Vec::new();
    if o.family == Family::Calibration {
        let (low, high) = o.ci?;
        parts.push(format!(
            "95% interval {}",
            interval_text((low, high), display_range(&o.metric).as_ref())
        ));
        parts.push(format!("{} labels", o.n));
    } else {
        let p = o.p_value?;
        parts.push(match o.adjustment {
            Some(a) if a.adjusts() => {
                format!("{} (raw {})", a.describe(Notation::Symbols), p_text(p))
            }
            Some(a) => a.describe(Notation::Symbols),
            None => p_text(p),
        });
        if let Some(b) = o.bound.filter(|b| b.delta.is_finite()) {
            let worsening = if higher_is_better(&o.metric) {
                -b.delta
            } else {
                b.delta
            };
            parts.push(format!(
                "worsening ≥ {:.4} at {:.2}%",
                no_negative_zero(worsening),
                100.0 * b.confidence
            ));
        }
        if let Some(proof) = o.proof {
            parts.push(proof_text(&proof, o.limit));
        }
        parts.push(format!("n = {}", o.n));
        let undecided = o.status == CheckStatus::Inconclusive && o.proof.is_none();
        if let (true, Some(limit)) = (undecided, o.limit) {
            let worsening = if higher_is_better(&o.metric) {
                -o.delta
            } else {
                o.delta
            };
            parts.insert(
                0,
                format!(
                    "past the limit by {:.4} on the point estimate",
                    no_negative_zero(worsening - limit)
                ),
            );
        }
        if let Some(needed) = o.queries_needed {
            let verb = if o.proof.is_some() { "prove" } else { "decide" };
            let point = if undecided {
                ", or `decision: point` for this tier"
            } else {
                ""
            };
            parts.push(match needed {
                QueriesNeeded::About(n) => {
                    format!("about {n} paired queries would {verb} it with 80% power{point}")
                }
                QueriesNeeded::Unrealistic => {
                    format!("{}{point}", QueriesNeeded::unrealistic_text(verb))
                }
            });
        }
    }
    Some(format!(
        "- {}: {}\n",
        inline(&o.name, TEXT_CHARS),
        parts.join(" · ")
    ))
}

/// The "prove it" test of a check: `not proven (inconclusive: fail): worsening ≤ 0.0312 at 95.00%,
/// limit 0.0200 (non-inferiority p = 0.2100 > α 0.0500)`.
fn proof_text(proof: &Proof, limit: Option<f64>) -> String {
    let (p, alpha) = p_against(proof.p_value, proof.alpha);
    let relation = if proof.proven() { "≤" } else { ">" };
    let upper = proof.upper.map_or("none at this size".to_string(), |u| {
        format!("{:.4}", no_negative_zero(u))
    });
    format!(
        "{} (`inconclusive: fail`): worsening ≤ {upper} at {:.2}%, limit {} (non-inferiority {p} \
         {relation} α {alpha})",
        if proof.proven() {
            "proven"
        } else {
            "not proven"
        },
        100.0 * (1.0 - proof.alpha),
        limit.map_or("–".to_string(), |l| format!("{l:.4}"))
    )
}

/// The notable checks, their statistics, what inconclusive and improved mean here, and the
/// checks that were not evaluated.
/// `hint`: whether the hint to accept an improvement is written here (a pass shows it unfolded).
fn push_verdicts(out: &mut String, report: &GateReport, hint: bool) {
    let notable = notable(report);
    if !notable.is_empty() {
        // Three columns, the delta with the values: at a PR comment's width on a phone (390 px)
        // a fourth column is pushed out of sight.
        out.push_str("| check | baseline → current · delta (%) | limit |\n|---|---:|---:|\n");
        let shown = push_rows(out, notable.iter().map(|o| notable_row(o)));
        out.push_str(&left_out(notable.len() - shown));
        out.push('\n');
        let lines: Vec<String> = notable[..shown]
            .iter()
            .filter_map(|o| statistics_line(o))
            .collect();
        if !lines.is_empty() {
            out.push_str(&lines.concat());
            out.push('\n');
        }
    }
    if notable
        .iter()
        .any(|o| o.status == CheckStatus::Inconclusive)
    {
        out.push_str(match report.inconclusive {
            InconclusivePolicy::Pass => {
                "❓ inconclusive: beyond the limit on the point estimate, without the evidence to \
                 fail; they pass (`gate: { inconclusive: fail }` makes them fail).\n\n"
            }
            InconclusivePolicy::Fail => {
                "❓ inconclusive: beyond the limit on the point estimate, without the evidence to \
                 fail; they fail the run (`inconclusive: fail`).\n\n"
            }
        });
    }
    if hint && notable.iter().any(|o| o.status == CheckStatus::Improved) {
        out.push_str(&format!(
            "⬆️ improved: if intended, run {}.\n\n",
            inert::code(
                &format!("ragate baseline accept --tier {}", report.tier),
                TEXT_CHARS
            )
        ));
    }
    let errors: Vec<String> = report
        .outcomes
        .iter()
        .filter(|o| o.status == CheckStatus::Error)
        .map(|o| format!("- ⚠️ {}\n", verdict(o)))
        .collect();
    push_list(out, "**Not evaluated**", errors);
}

/// The likely causes and the warnings. The causes of a change against the baseline are folded
/// (`fold`) under a title that names them; a run without a baseline shows the level-based
/// diagnosis lines instead, unfolded.
fn push_diagnosis_and_warnings(out: &mut String, report: &GateReport, fold: bool) {
    if from_change(report) {
        push_causes(out, report, fold);
    } else {
        let diagnoses: Vec<String> = report
            .diagnoses
            .iter()
            .map(|note| format!("- {}\n", inline(note, TEXT_CHARS)))
            .collect();
        push_list(out, "**Likely causes**", diagnoses);
    }
    let mut warnings: Vec<String> = report
        .warnings
        .iter()
        .take(MAX_WARNINGS)
        .map(|w| format!("- ⚠️ {}\n", inline(w, TEXT_CHARS)))
        .collect();
    if report.warnings.len() > MAX_WARNINGS {
        warnings.push(format!(
            "- {} more warnings\n",
            report.warnings.len() - MAX_WARNINGS
        ));
    }
    push_list(out, "**Warnings**", warnings);
}

/// Whether the likely causes are those of the change (a run with a baseline), not the levels'.
fn from_change(report: &GateReport) -> bool {
    report.pairing.is_some() || !report.causes.is_empty()
}

/// The likely causes of the change (`gate::causes`), one line each: folded under a title that
/// names them when `fold`, else a bold title (inside a fold already).
fn push_causes(out: &mut String, report: &GateReport, fold: bool) {
    if report.causes.is_empty() {
        return;
    }
    let lines: Vec<String> = report
        .causes
        .iter()
        .map(|cause| format!("- {}\n", inline(&cause.describe(), TEXT_CHARS)))
        .collect();
    if fold {
        let titles: Vec<String> = report
            .causes
            .iter()
            .map(|c| format!("{} ({} queries)", c.kind.title(), c.queries))
            .collect();
        out.push_str(&open_details(&format!(
            "Likely causes: {}",
            titles.join(", ")
        )));
        push_list(
            out,
            "**What moved, in which queries, and the usual fix**",
            lines,
        );
        out.push_str("</details>\n\n");
    } else {
        push_list(out, "**Likely causes**", lines);
    }
}

/// The lines a passing run shows outside `<details>` at most (blank lines not counted).
pub const PASS_LINES: usize = 12;
/// Longest warning shown unfolded on a pass, in characters (in full in the details).
const NOTE_CHARS: usize = 90;

/// After the headline of a passing run: the hint to accept an improvement, one short line per
/// warning (up to the line budget, then how many more), and folded: the inconclusive and improved
/// checks with their statistics, the likely causes and the warnings in full.
fn push_quiet_pass(out: &mut String, report: &GateReport) {
    let improved = report
        .outcomes
        .iter()
        .any(|o| o.status == CheckStatus::Improved);
    let mut used = 1;
    if improved {
        out.push_str(&format!(
            "⬆️ improved: if intended, run {}.\n\n",
            inert::code(
                &format!("ragate baseline accept --tier {}", report.tier),
                TEXT_CHARS
            )
        ));
        used += 1;
    }
    let room = PASS_LINES - used;
    let warnings = &report.warnings;
    let shown = if warnings.len() <= room {
        warnings.len()
    } else {
        room - 1
    };
    for w in &warnings[..shown] {
        out.push_str(&format!("- ⚠️ {}\n", inline(w, NOTE_CHARS)));
    }
    if shown < warnings.len() {
        out.push_str(&format!(
            "- ⚠️ {} more warnings, in the details below\n",
            warnings.len() - shown
        ));
    }
    if !warnings.is_empty() {
        out.push('\n');
    }
    let mut folded = String::new();
    push_verdicts(&mut folded, report, false);
    push_diagnosis_and_warnings(&mut folded, report, false);
    if folded.is_empty() {
        return;
    }
    let mut parts = Vec::new();
    let counts = Counts::of(report);
    if counts.inconclusive > 0 {
        parts.push(format!("{} inconclusive", counts.inconclusive));
    }
    if counts.improved > 0 {
        parts.push(format!("{} improved", counts.improved));
    }
    if counts.warned > 0 {
        parts.push(format!("{} warned", counts.warned));
    }
    if from_change(report) && !report.causes.is_empty()
        || !from_change(report) && !report.diagnoses.is_empty()
    {
        parts.push("likely causes".to_string());
    }
    if !report.warnings.is_empty() {
        parts.push("warnings in full".to_string());
    }
    out.push_str(&open_details(&format!(
        "Details of this pass: {}",
        parts.join(", ")
    )));
    out.push_str(&folded);
    out.push_str("</details>\n\n");
}

/// The metric legend's line on nDCG's gain, when a check is on ragate's `ndcg` or `ndcg@k`: its
/// gain is 2^g − 1, where trec_eval, ir_measures, ranx and BEIR use g (ragate's `ndcg_linear`),
/// so a number compared with a published table under the same name is not the same measure.
fn gain_legend(report: &GateReport) -> Option<String> {
    let mut exponential: Vec<&str> = (report.outcomes.iter())
        .map(|o| o.metric.as_str())
        .filter(|m| *m == "ndcg" || m.starts_with("ndcg@"))
        .collect();
    exponential.sort_unstable();
    exponential.dedup();
    let first = exponential.first()?;
    let linear = first.replacen("ndcg", "ndcg_linear", 1);
    Some(format!(
        "{} uses gain 2^g − 1; trec_eval, ir_measures, ranx and BEIR's nDCG use gain g, which is \
         ragate's {linear}: compare published nDCG tables with that one",
        exponential.join(", ")
    ))
}

/// The Markdown summary of a decided run (summary.md, the step summary, the PR comment): the
/// headline, the notable checks, the likely causes, then everything else folded; bounded in size.
/// A run that passes is quiet: the headline, the hint to accept an improvement, one short line
/// per warning, and everything else folded ([`PASS_LINES`] lines at most outside `<details>`).
pub fn render(report: &GateReport) -> String {
    let mut out = headline::headline(report);
    let pass = report.status == RunStatus::Pass;
    if pass {
        push_quiet_pass(&mut out, report);
    } else {
        push_verdicts(&mut out, report, true);
        push_diagnosis_and_warnings(&mut out, report, true);
    }
    push_regressed_queries(&mut out, report);
    push_all_checks(&mut out, report);
    let reported = reported::markdown(report);
    // Folded on a pass, and when nothing paired (a column of dashes).
    if (pass || report.paired_queries == 0) && !reported.is_empty() {
        out.push_str(&open_details(&format!(
            "Reported, not gated ({} metrics)",
            report.reported.len()
        )));
        out.push_str(&reported);
        out.push_str("</details>\n\n");
    } else {
        out.push_str(&reported);
    }
    push_notes(&mut out, report);
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    out.push('\n');
    out
}

/// `<details><summary>…</summary>` and the blank line GitHub needs to render Markdown inside.
fn open_details(title: &str) -> String {
    format!(
        "<details><summary>{}</summary>\n\n",
        inline(title, TEXT_CHARS)
    )
}

/// A bold title and its bullet lines (within the budget), or nothing when there are none.
fn push_list(out: &mut String, title: &str, lines: Vec<String>) {
    if lines.is_empty() {
        return;
    }
    out.push_str(&format!("{title}\n\n"));
    let total = lines.len();
    let shown = push_within_budget(out, &mut lines.into_iter());
    if shown < total {
        out.push_str(&format!(
            "- {} more not shown (size limit)\n",
            total - shown
        ));
    }
    out.push('\n');
}

/// Appends table rows while the output stays within `TABLE_BUDGET`; returns how many were.
fn push_rows(out: &mut String, rows: impl Iterator<Item = String>) -> usize {
    let mut shown = 0;
    for row in rows {
        if out.len() + row.len() > TABLE_BUDGET {
            break;
        }
        out.push_str(&row);
        shown += 1;
    }
    shown
}

/// The line after a table cut at its budget.
fn left_out(count: usize) -> String {
    if count == 0 {
        String::new()
    } else {
        format!("\n{count} more checks not shown (size limit); junit.xml lists every check.\n")
    }
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

mod details;
mod headline;

use details::{push_all_checks, push_notes, push_regressed_queries};

#[cfg(test)]
#[path = "summary_tests.rs"]
mod tests;
