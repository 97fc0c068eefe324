//! One render function per output of a `gate` or `merge` run, each over the whole
//! [`RunOutcome`] and matching it exhaustively: an outcome an output does not render is a compile
//! error here, not a missing file. The registry (`outputs::output_table::OUTPUTS`) names where each
//! goes; the writer (`outputs::writer`) writes what these return. A function returns nothing for an
//! outcome that has no such output, one text for a file or a stream, one text a line for the line
//! sinks (warnings, annotations, errors).

use std::io::{self, Write};

use crate::baseline::results::RunStatus;
use crate::report::outcome::{Decided, RunFiles, RunOutcome};
use crate::report::{
    annotations, error_summary, gate_json, gate_table, inert, junit, measured, summary,
    trends_markdown,
};
use crate::term::Paint;

/// How the streams are rendered: the format stdout was asked for, and its colour.
#[derive(Debug, Clone, Copy)]
pub(crate) struct View {
    /// `--format json`: stdout holds one JSON document.
    pub json: bool,
    pub paint: Paint,
}

/// What an output renders of one outcome.
pub(crate) type Render = fn(&RunOutcome<'_>, &View) -> Vec<String>;

/// What a streamed file renders of one outcome: None when the outcome has no such file.
pub(crate) type Stream = for<'a> fn(&RunOutcome<'a>) -> Option<Streamed<'a>>;

/// A file written as it is encoded (results.json and trace.jsonl: the run's largest, never held
/// whole as text): the run's files and the function that writes this one of them.
#[derive(Clone, Copy)]
pub(crate) struct Streamed<'a> {
    files: RunFiles<'a>,
    write: fn(&RunFiles<'a>, &mut dyn Write) -> io::Result<()>,
}

impl Streamed<'_> {
    /// Writes the file's bytes into `out`.
    pub(crate) fn write_to(&self, out: &mut dyn Write) -> io::Result<()> {
        (self.write)(&self.files, out)
    }
}

/// The files of an outcome that has results.
fn files<'a>(outcome: &RunOutcome<'a>) -> Option<RunFiles<'a>> {
    match outcome {
        RunOutcome::Decided(decided) => Some(decided.files),
        RunOutcome::Unbaselined(unbaselined) => Some(unbaselined.files),
        RunOutcome::NotEvaluated(_) => None,
    }
}

/// results.json.
pub(crate) fn results_json<'a>(outcome: &RunOutcome<'a>) -> Option<Streamed<'a>> {
    files(outcome).map(|files| Streamed {
        files,
        write: RunFiles::write_results_json,
    })
}

/// trace.jsonl.
pub(crate) fn trace_jsonl<'a>(outcome: &RunOutcome<'a>) -> Option<Streamed<'a>> {
    files(outcome).map(|files| Streamed {
        files,
        write: RunFiles::write_trace_jsonl,
    })
}

/// embeddings.jsonl, when answer relevance is embedding-based.
pub(crate) fn embeddings_jsonl(outcome: &RunOutcome<'_>, _: &View) -> Vec<String> {
    let files = match outcome {
        RunOutcome::Decided(decided) => decided.files,
        RunOutcome::Unbaselined(unbaselined) => unbaselined.files,
        RunOutcome::NotEvaluated(_) => return Vec::new(),
    };
    files.embeddings_jsonl().into_iter().collect()
}

/// junit.xml (and the `--junit` copy): a testcase per check, or one `setup` error.
pub(crate) fn junit_xml(outcome: &RunOutcome<'_>, _: &View) -> Vec<String> {
    vec![match outcome {
        RunOutcome::Decided(decided) => junit::render(decided.report, decided.junit),
        RunOutcome::Unbaselined(unbaselined) => junit::render_setup_error(
            unbaselined.tier,
            &unbaselined.problem.to_string(),
            &[],
            false,
            unbaselined.junit,
        ),
        RunOutcome::NotEvaluated(failed) => junit::render_setup_error(
            failed.tier,
            &failed.error.to_string(),
            failed.error.stderr_tail(),
            crate::http::retryable(failed.error),
            failed.junit,
        ),
    }]
}

/// summary.md (also the step summary and the PR comment).
pub(crate) fn summary_md(outcome: &RunOutcome<'_>, _: &View) -> Vec<String> {
    vec![match outcome {
        RunOutcome::Decided(decided) => decided_summary(decided),
        RunOutcome::Unbaselined(unbaselined) => {
            let mut text = measured::summary(
                unbaselined.tier,
                unbaselined.files.results,
                &unbaselined.problem.to_string(),
                &unbaselined.accept_command,
            );
            text.push_str(&first_run_floors(unbaselined.floors));
            text
        }
        RunOutcome::NotEvaluated(failed) => error_summary::render(failed.tier, failed.error),
    }]
}

/// The summary of a decided run, with its trends (`--history`) after the checks; a pass stays
/// quiet (`summary::PASS_LINES`): its trends are folded.
fn decided_summary(decided: &Decided<'_>) -> String {
    let mut text = summary::render(decided.report);
    if decided.trends.is_empty() {
        return text;
    }
    text.push('\n');
    let pass = decided.report.status == RunStatus::Pass;
    if pass {
        text.push_str(&format!(
            "<details><summary>Trends ({} checks)</summary>\n\n",
            decided.trends.len()
        ));
    }
    text.push_str(&trends_markdown::markdown(decided.trends));
    if pass {
        text.push_str("</details>\n");
    }
    let trimmed = text.trim_end().len();
    text.truncate(trimmed);
    text.push('\n');
    text
}

/// The floors of a first run in the summary, one inert list item each (slice values are data),
/// so they wrap at PR-comment width (a `<pre>` block is clipped there).
fn first_run_floors(floors: &[String]) -> String {
    if floors.is_empty() {
        return String::new();
    }
    let items: String = floors
        .iter()
        .map(|line| format!("- {}\n", inert::text(line, 1000)))
        .collect();
    format!(
        "\n**Floors on this run** (`min`, `max`: decided on every query of the slice; reported, \
         not gated without a baseline)\n\n{items}"
    )
}

/// run-stats.json.
pub(crate) fn run_stats_json(outcome: &RunOutcome<'_>, _: &View) -> Vec<String> {
    match outcome {
        RunOutcome::Decided(decided) => vec![crate::json_text::document(&decided.run_stats)],
        RunOutcome::Unbaselined(_) | RunOutcome::NotEvaluated(_) => Vec::new(),
    }
}

/// stdout: the checks as a table or the gate's JSON document. A run that stopped prints its
/// JSON error document here; as a table, nothing (the error is on stderr).
pub(crate) fn stdout(outcome: &RunOutcome<'_>, view: &View) -> Vec<String> {
    let text = match (outcome, view.json) {
        (RunOutcome::Decided(decided), false) => {
            gate_table::render_painted(decided.report, view.paint)
        }
        (RunOutcome::Decided(decided), true) => {
            gate_json::render(decided.report, Some(decided.files.results))
        }
        (RunOutcome::Unbaselined(unbaselined), false) => measured::table(unbaselined.files.results),
        (RunOutcome::Unbaselined(unbaselined), true) => {
            gate_json::render_ungated(unbaselined.files.results)
        }
        (RunOutcome::NotEvaluated(_), false) => return Vec::new(),
        (RunOutcome::NotEvaluated(failed), true) => gate_json::render_error(
            failed.tier,
            &crate::error::with_causes(failed.error, ": "),
            crate::http::retryable(failed.error),
        ),
    };
    vec![text]
}

/// GitHub annotations (emitted under GitHub Actions): the failing checks, most important first,
/// or the reason nothing was gated.
pub(crate) fn annotations(outcome: &RunOutcome<'_>, _: &View) -> Vec<String> {
    match outcome {
        RunOutcome::Decided(decided) => annotations::render(decided.report),
        RunOutcome::Unbaselined(unbaselined) => vec![annotations::setup_error(
            unbaselined.tier,
            &unbaselined.problem.to_string(),
        )],
        RunOutcome::NotEvaluated(failed) => vec![annotations::setup_error(
            failed.tier,
            &failed.error.to_string(),
        )],
    }
}

/// `warning:` lines on stderr.
pub(crate) fn warnings(outcome: &RunOutcome<'_>, _: &View) -> Vec<String> {
    match outcome {
        RunOutcome::Decided(decided) => decided
            .report
            .warnings
            .iter()
            .filter(|warning| decided.error_last.as_ref() != Some(*warning))
            .cloned()
            .collect(),
        RunOutcome::Unbaselined(_) | RunOutcome::NotEvaluated(_) => Vec::new(),
    }
}

/// `error:` lines on stderr, after everything else. A run that stopped has its error printed by
/// `main`, as every command's.
pub(crate) fn errors(outcome: &RunOutcome<'_>, _: &View) -> Vec<String> {
    match outcome {
        RunOutcome::Decided(decided) => decided.error_last.iter().cloned().collect(),
        RunOutcome::Unbaselined(unbaselined) => {
            vec![crate::error::with_causes(
                unbaselined.problem,
                "\n  caused by: ",
            )]
        }
        RunOutcome::NotEvaluated(_) => Vec::new(),
    }
}
