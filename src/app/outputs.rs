//! What a gate run writes and prints, rendered from a decided run and then written: nothing
//! here loads, evaluates or decides.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::app::judge_consistency::JudgeConsistency;
use crate::app::output_table::{self, OutputFile};
use crate::app::{write_document, write_human};
use crate::baseline::noise::RunNoise;
use crate::baseline::results::Results;
use crate::baseline::{embeddings, store};
use crate::cli::{GateFormat, ReportArgs};
use crate::config::Tier;
use crate::error::{Error, Result};
use crate::evaluate::operational::Operational;
use crate::gate::GateReport;
use crate::gate::calibration::{AGREEMENT_CUT, Calibration};
use crate::history::sparkline::{self, Trend};
use crate::metrics::embedding_relevance::EmbeddedQuery;
use crate::report::junit::RunInfo;
use crate::report::operational::Figures;
use crate::report::{annotations, gate_json, gate_table, junit, measured, summary};
use crate::term::{self, Paint};

/// HTTP calls and tokens of one LLM judge.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LlmUsage {
    pub calls: u64,
    pub retries: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl std::ops::AddAssign for LlmUsage {
    fn add_assign(&mut self, other: Self) {
        self.calls += other.calls;
        self.retries += other.retries;
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
    }
}

/// An evaluated tier (or shard of one), before the comparison with the baseline.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Evaluated {
    /// Results with every text kept (queries, answers, claims); stripped on writing when the
    /// tier says `store_text: false`.
    pub results: Results,
    /// One trace line per query, by qid.
    pub trace: BTreeMap<String, String>,
    /// Latency, tokens and cost per query, where the run carried them.
    pub operational: BTreeMap<String, Operational>,
    /// The vectors behind embedding-based answer relevance (written as `embeddings.jsonl`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub embeddings: Vec<EmbeddedQuery>,
    pub judge_tasks: usize,
    pub judge_calls: usize,
    /// Per LLM judge name.
    pub llm_usage: BTreeMap<String, LlmUsage>,
    pub evaluation_seconds: f64,
    /// Run-to-run noise, when the tier's pipeline ran more than once (`repeats:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<RunNoise>,
    /// How often the judges changed their verdicts when asked again (`judge_repeats:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_consistency: Option<JudgeConsistency>,
}

/// How the outputs are written.
#[derive(Debug, Clone)]
pub(super) struct OutputOptions {
    pub out_dir: PathBuf,
    pub junit: Option<PathBuf>,
    pub format: GateFormat,
    pub allow_judge_change: bool,
    pub started: Instant,
    /// `--history DIR`: drift checks and trends from the run history.
    pub history: Option<PathBuf>,
}

impl OutputOptions {
    /// The options the command line gave, for `tier`.
    pub(super) fn new(report: &ReportArgs, tier: &str, started: Instant) -> Self {
        OutputOptions {
            out_dir: report.out.clone().unwrap_or_else(|| default_out(tier)),
            junit: report.junit.clone(),
            format: report.format,
            allow_judge_change: report.allow_judge_change,
            started,
            history: report.history.clone(),
        }
    }
}

impl OutputOptions {
    /// The command that accepts this run's results as the baseline of `tier`.
    pub(super) fn accept_command(&self, tier: &str) -> String {
        let mut command = format!("ragate baseline accept --tier {tier}");
        if self.out_dir != default_out(tier) {
            command.push_str(&format!(
                " --from {}",
                output_table::RESULTS.path(&self.out_dir).display()
            ));
        }
        command
    }
}

/// The default output directory of a tier.
pub(super) fn default_out(tier: &str) -> PathBuf {
    PathBuf::from(".ragate/out").join(tier)
}

pub(super) fn write(path: &Path, text: &str) -> Result<()> {
    store::write_atomic(path, text)
}

/// What a decided run adds to its reports besides the verdicts.
#[derive(Debug, Clone, Copy)]
pub(super) struct RunFigures<'a> {
    pub calibrations: &'a [Calibration],
    pub operational: &'a Figures,
    /// The config and the run's clock, which junit.xml names.
    pub junit: &'a RunInfo,
    /// The trends summary.md shows (`--history`; empty without).
    pub trends: &'a [Trend],
}

/// Every output of a finished run, rendered before anything is written.
#[derive(Debug, Default)]
pub(super) struct Outputs {
    /// Files to write, in order, with the option that names each (for errors).
    files: Vec<(PathBuf, String, &'static str)>,
    /// Appended to `$GITHUB_STEP_SUMMARY` when GitHub Actions provides one.
    step_summary: Option<String>,
    warnings: Vec<String>,
    /// GitHub workflow commands, emitted only under GitHub Actions.
    annotations: Vec<String>,
    stdout: String,
    /// Printed as errors after stdout: why the run could not be gated.
    errors: Vec<String>,
}

impl Outputs {
    /// The results files every finished run writes: results.json, trace.jsonl and, when
    /// answer_relevance is embedding-based, embeddings.jsonl (an earlier run's outputs are gone
    /// already: `output_files::prepare` removed them before the run).
    fn results(current: &Results, evaluated: &Evaluated, out_dir: &Path) -> Outputs {
        let mut outputs = Outputs::default();
        outputs.file(out_dir, output_table::RESULTS, current.to_json());
        if !evaluated.embeddings.is_empty() {
            let sidecar = embeddings::to_jsonl(&evaluated.embeddings);
            outputs.file(out_dir, output_table::EMBEDDINGS, sidecar);
        }
        let trace: String = evaluated
            .trace
            .values()
            .map(|line| format!("{line}\n"))
            .collect();
        outputs.file(out_dir, output_table::TRACE, trace);
        outputs
    }

    /// Prints `message` as an error after everything else (and not among the warnings, where
    /// summary.md keeps it).
    pub(super) fn error_last(&mut self, message: String) {
        self.warnings.retain(|warning| *warning != message);
        self.errors.push(message);
    }

    /// Writes `file` into `out_dir`.
    fn file(&mut self, out_dir: &Path, file: OutputFile, text: String) {
        self.files.push((file.path(out_dir), text, "--out"));
    }

    /// Writes the files, then the step summary, then prints warnings, annotations (stderr when
    /// stdout carries JSON) and stdout.
    pub(super) fn write(self, options: &OutputOptions) -> Result<()> {
        for (path, text, named_by) in &self.files {
            write(path, text).map_err(|e| e.named_by(named_by))?;
        }
        if let Some(summary) = &self.step_summary {
            append_step_summary(summary)?;
        }
        for warning in &self.warnings {
            term::warning(warning);
        }
        if std::env::var("GITHUB_ACTIONS").as_deref() == Ok("true") {
            for line in &self.annotations {
                let stream = match options.format {
                    GateFormat::Table if !term::quiet() => term::CommandStream::Stdout,
                    // stdout is one JSON document (or nothing, --quiet); the runner reads
                    // workflow commands on stderr too.
                    GateFormat::Table | GateFormat::Json => term::CommandStream::Stderr,
                };
                term::workflow_command(line, stream);
            }
        }
        match options.format {
            GateFormat::Table => write_human(&self.stdout)?,
            GateFormat::Json => write_document(&self.stdout)?,
        }
        self.errors.iter().for_each(term::error_message);
        Ok(())
    }
}

/// The outputs of a decided run: results, junit.xml (and the `--junit` copy), summary.md (also
/// the step summary), run-stats.json, warnings, annotations and stdout in the chosen format.
pub(super) fn render(
    tier: &Tier,
    current: &Results,
    evaluated: &Evaluated,
    report: &GateReport,
    run: RunFigures<'_>,
    options: &OutputOptions,
) -> Outputs {
    let out_dir = &options.out_dir;
    let mut outputs = Outputs::results(current, evaluated, out_dir);
    let junit_text = junit::render(report, run.junit);
    if let Some(path) = &options.junit {
        outputs
            .files
            .push((path.clone(), junit_text.clone(), "--junit"));
    }
    outputs.file(out_dir, output_table::JUNIT, junit_text);
    let mut summary_text = summary::render(report);
    if !run.trends.is_empty() {
        summary_text.push('\n');
        // A pass stays quiet (`summary::PASS_LINES`): its trends are folded.
        let pass = report.status == crate::baseline::results::RunStatus::Pass;
        if pass {
            summary_text.push_str(&format!(
                "<details><summary>Trends ({} checks)</summary>\n\n",
                run.trends.len()
            ));
        }
        summary_text.push_str(&sparkline::markdown(run.trends));
        if pass {
            summary_text.push_str("</details>\n");
        }
        let trimmed = summary_text.trim_end().len();
        summary_text.truncate(trimmed);
        summary_text.push('\n');
    }
    outputs.file(out_dir, output_table::SUMMARY, summary_text.clone());
    outputs.step_summary = Some(summary_text);
    let stats = run_stats(tier, current, evaluated, report, run, options);
    outputs.file(
        out_dir,
        output_table::RUN_STATS,
        crate::json_text::document(&stats),
    );
    outputs.warnings = report.warnings.clone();
    outputs.annotations = annotations::render(report);
    outputs.stdout = match options.format {
        GateFormat::Table => gate_table::render_painted(report, Paint::stdout()),
        GateFormat::Json => gate_json::render(report, Some(current)),
    };
    outputs
}

/// The outputs of a run that has no baseline to compare with (or an unreadable one): its
/// results, and a summary and table of the measured metrics with the way forward.
pub(super) fn render_unbaselined(
    tier: &Tier,
    current: &Results,
    evaluated: &Evaluated,
    options: &OutputOptions,
    problem: &Error,
    floors: &[String],
) -> Outputs {
    let mut outputs = Outputs::results(current, evaluated, &options.out_dir);
    let mut summary_text = measured::summary(
        &tier.name,
        current,
        &problem.to_string(),
        &options.accept_command(&tier.name),
    );
    summary_text.push_str(&first_run_floors(floors));
    outputs.file(
        &options.out_dir,
        output_table::SUMMARY,
        summary_text.clone(),
    );
    outputs.step_summary = Some(summary_text);
    outputs.stdout = match options.format {
        GateFormat::Table => measured::table(current),
        GateFormat::Json => gate_json::render_ungated(current),
    };
    outputs
}

/// The floors of a first run in the summary, one inert list item each (slice values are data),
/// so they wrap at PR-comment width (a `<pre>` block is clipped there).
fn first_run_floors(floors: &[String]) -> String {
    if floors.is_empty() {
        return String::new();
    }
    let items: String = floors
        .iter()
        .map(|line| format!("- {}\n", crate::report::inert::text(line, 1000)))
        .collect();
    format!(
        "\n**Floors on this run** (`min`, `max`: decided on every query of the slice; reported, \
         not gated without a baseline)\n\n{items}"
    )
}

/// run-stats.json: sizes, calibration, operational figures, judge usage and timings.
fn run_stats(
    tier: &Tier,
    current: &Results,
    evaluated: &Evaluated,
    report: &GateReport,
    run: RunFigures<'_>,
    options: &OutputOptions,
) -> serde_json::Value {
    json!({
        "tier": tier.name,
        "queries": current.queries.len(),
        "checks": report.outcomes.len(),
        "judged_at_10": report.judged_at_k.map(|(_, share)| share),
        "model_judged_at_10": report.model_judged_at_k,
        "calibration": run.calibrations.iter().map(|c| json!({
            "metric": c.metric,
            "ppi": c.ppi.estimate,
            "ppi_ci": [c.ppi.ci.0, c.ppi.ci.1],
            "ppi_plus_plus": c.ppi_plus_plus.estimate,
            "ppi_plus_plus_ci": [c.ppi_plus_plus.ci.0, c.ppi_plus_plus.ci.1],
            "lambda": c.ppi_plus_plus.lambda,
            "judge_mean": c.judge_mean,
            "labelled": c.ppi.n_labelled,
            "queries": c.ppi.n_total,
            "stale_labels": c.stale,
            "agreement": {
                "agree": c.agreement.confusion[0] + c.agreement.confusion[3],
                "labels": c.agreement.confusion.iter().sum::<usize>(),
                "cut": AGREEMENT_CUT,
                "kappa": c.agreement.kappa,
            },
        })).collect::<Vec<_>>(),
        "operational": run.operational,
        "llm_usage": evaluated.llm_usage,
        "judge_consistency": evaluated.judge_consistency,
        "noise": evaluated.noise.as_ref().map(|noise| json!({
            "repeats": noise.repeats,
            "sd": noise.metrics.iter().map(|(m, w)| (m.clone(), json!(w.sd()))).collect::<serde_json::Map<_, _>>(),
        })),
        "judge_tasks": evaluated.judge_tasks,
        "judge_calls": evaluated.judge_calls,
        "judge_cache_hits": evaluated.judge_tasks.saturating_sub(evaluated.judge_calls),
        "evaluation_seconds": evaluated.evaluation_seconds,
        "total_seconds": options.started.elapsed().as_secs_f64(),
    })
}

/// Appends the summary to `$GITHUB_STEP_SUMMARY` when GitHub Actions provides one (as it is:
/// its encoder redacted every text from outside before escaping it).
pub(crate) fn append_step_summary(text: &str) -> Result<()> {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY") else {
        return Ok(());
    };
    let path = PathBuf::from(path);
    use std::io::Write;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| Error::write(&path, e).named_by("$GITHUB_STEP_SUMMARY"))
}
