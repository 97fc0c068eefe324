//! What a gate run writes and prints, rendered from a decided run and then written: nothing
//! here loads, evaluates or decides.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::baseline::noise::RunNoise;
use crate::baseline::results::Results;
use crate::baseline::store;
use crate::cli::{GateFormat, ReportArgs};
use crate::config::Tier;
use crate::error::{Error, Result};
use crate::evaluate::judge_consistency::JudgeConsistency;
use crate::evaluate::operational::Operational;
use crate::gate::GateReport;
use crate::gate::calibration::{AGREEMENT_CUT, Calibration};
use crate::metrics::embedding_relevance::EmbeddedQuery;
use crate::outputs::output_place;
use crate::outputs::output_table::{self, Rendering, Sink};
use crate::outputs::stdout::write_document;
use crate::outputs::stdout::write_human;
use crate::report::operational::Figures;
use crate::report::outcome::RunOutcome;
use crate::report::run_outputs::{Streamed, View};
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
pub(crate) struct OutputOptions {
    pub out_dir: PathBuf,
    /// Where the outputs go without `--out` ([`default_out`]): what `baseline accept` reads.
    pub default_out_dir: PathBuf,
    pub junit: Option<PathBuf>,
    pub format: GateFormat,
    pub allow_judge_change: bool,
    pub started: Instant,
    /// `--history DIR`: drift checks and trends from the run history.
    pub history: Option<PathBuf>,
}

impl OutputOptions {
    /// The options the command line gave, for `tier` of the config at `config`.
    pub(crate) fn new(report: &ReportArgs, config: &Path, tier: &str, started: Instant) -> Self {
        let default_out_dir = default_out(config, tier);
        OutputOptions {
            out_dir: report
                .out
                .clone()
                .unwrap_or_else(|| default_out_dir.clone()),
            default_out_dir,
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
    pub(crate) fn accept_command(&self, tier: &str) -> String {
        let mut command = format!("ragate baseline accept --tier {tier}");
        if self.out_dir != self.default_out_dir {
            command.push_str(&format!(
                " --from {}",
                output_table::RESULTS.path(&self.out_dir).display()
            ));
        }
        command
    }
}

/// The default output directory of `tier`: `.ragate/out/<tier>` beside the config at `config`
/// (the outputs belong to the config's project wherever the command runs: a config found in a
/// parent folder, `../../eval-config.yaml`, gives `../../.ragate/out/<tier>`).
pub(crate) fn default_out(config: &Path, tier: &str) -> PathBuf {
    let out = Path::new(".ragate/out").join(tier);
    match config.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(out),
        _ => out,
    }
}

/// Writes `text` to `path`, a file the user named (`--junit FILE`, `convert --out FILE`): a
/// symbolic link there is followed ([`store::write_atomic`]).
pub(crate) fn write(path: &Path, text: &str) -> Result<()> {
    store::write_atomic(path, text)
}

/// Writes `text` to `path`, a file whose name ragate chose inside an output folder: a symbolic
/// link there is replaced, never followed ([`store::write_replacing_links`]).
pub(crate) fn write_in_folder(path: &Path, text: &str) -> Result<()> {
    store::write_replacing_links(path, text)
}

/// What run-stats.json adds to a decided run besides its verdicts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunFigures<'a> {
    pub calibrations: &'a [Calibration],
    pub operational: &'a Figures,
}

/// Writes every output of `outcome` ([`output_table::OUTPUTS`]), rendered before anything is
/// written: the files (each whole or not at all), the step summary, then warnings, annotations
/// (stdout for a decided run's table, else stderr, where the runner reads them too), stdout and
/// errors. A run that stopped ([`RunOutcome::NotEvaluated`]) writes no file where this run wrote
/// one already (it may have failed while writing), and its step summary only with its summary.
pub(crate) fn write_outcome(outcome: &RunOutcome<'_>, options: &OutputOptions) -> Result<()> {
    let rendered = render(outcome, options);
    let stopped = matches!(outcome, RunOutcome::NotEvaluated(_));
    let summary_written = write_files(&rendered, stopped, options)?;
    print(rendered, outcome, options, summary_written || !stopped)
}

/// Every output this run writes, rendered; only those (a 20,000-query junit.xml is not made
/// twice).
fn render<'a>(outcome: &RunOutcome<'a>, options: &OutputOptions) -> Vec<(Sink, Rendered<'a>)> {
    let view = View {
        json: options.format == GateFormat::Json,
        paint: Paint::stdout(),
    };
    let on_actions = std::env::var("GITHUB_ACTIONS").as_deref() == Ok("true");
    let active = |sink: Sink| match sink {
        Sink::JunitOption => options.junit.is_some(),
        Sink::StepSummary => std::env::var_os("GITHUB_STEP_SUMMARY").is_some(),
        Sink::Annotations => on_actions,
        Sink::OutDir(_) | Sink::Stdout | Sink::Warnings | Sink::Errors => true,
    };
    output_table::OUTPUTS
        .iter()
        .filter(|output| active(output.sink))
        .map(|output| {
            let rendered = match output.render {
                Rendering::Text(render) => Rendered::Texts(render(outcome, &view)),
                Rendering::Streamed(stream) => Rendered::File(stream(outcome)),
            };
            (output.sink, rendered)
        })
        .collect()
}

/// One output, rendered: its texts, or the file written as it is encoded (None: the outcome has
/// no such file).
enum Rendered<'a> {
    Texts(Vec<String>),
    File(Option<Streamed<'a>>),
}

impl Rendered<'_> {
    /// Whether there is a file to write.
    fn has_file(&self) -> bool {
        match self {
            Rendered::Texts(texts) => !texts.is_empty(),
            Rendered::File(streamed) => streamed.is_some(),
        }
    }

    /// Writes the file (the first text, or the streamed bytes) to `path`.
    fn write(&self, path: &Path, in_folder: bool) -> Result<()> {
        let body = |out: &mut dyn std::io::Write| match self {
            Rendered::Texts(texts) => {
                out.write_all(texts.first().map_or("", String::as_str).as_bytes())
            }
            Rendered::File(streamed) => streamed.map_or(Ok(()), |streamed| streamed.write_to(out)),
        };
        if in_folder {
            store::write_replacing_links_with(path, &body)
        } else {
            store::write_atomic_with(path, &body)
        }
    }
}

/// Writes the rendered files (the output folder's and `--junit`); a run that `stopped` keeps
/// what it wrote already. Returns whether the summary file was written.
fn write_files(
    rendered: &[(Sink, Rendered<'_>)],
    stopped: bool,
    options: &OutputOptions,
) -> Result<bool> {
    // A regular file there was written by this run before it stopped (the previous run's were
    // removed first); a device or a FIFO (`--junit /dev/null`) always gets the error. In the
    // output folder a link is no file of this run's: it is replaced. A run refused for writing
    // into a history folder writes nothing there either.
    let keep = |path: &Path, in_folder: bool| {
        stopped
            && (if in_folder {
                std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
            } else {
                store::resolve_links(path).is_file()
            } || output_place::refuse_history_folder(
                "",
                path,
                output_place::parent_dir(path),
                options.history.as_deref(),
            )
            .is_err())
    };
    let mut summary_written = false;
    for (sink, output) in rendered {
        if !output.has_file() {
            continue;
        }
        let (path, named_by, in_folder) = match sink {
            Sink::OutDir(file) => (file.path(&options.out_dir), "--out", true),
            Sink::JunitOption => match &options.junit {
                Some(path) => (path.clone(), "--junit", false),
                None => continue,
            },
            _ => continue,
        };
        if keep(&path, in_folder) {
            continue;
        }
        output
            .write(&path, in_folder)
            .map_err(|e| e.named_by(named_by))?;
        summary_written |= *sink == Sink::OutDir(output_table::SUMMARY);
    }
    Ok(summary_written)
}

/// Prints the rest: the step summary (when `with_summary`), warnings, annotations, stdout and
/// errors.
fn print(
    rendered: Vec<(Sink, Rendered<'_>)>,
    outcome: &RunOutcome<'_>,
    options: &OutputOptions,
    with_summary: bool,
) -> Result<()> {
    let annotation_stream = match (outcome, options.format) {
        (RunOutcome::Decided(_), GateFormat::Table) if !term::quiet() => {
            term::CommandStream::Stdout
        }
        // stdout is one JSON document (or nothing, --quiet); the runner reads workflow
        // commands on stderr too.
        _ => term::CommandStream::Stderr,
    };
    for (sink, output) in rendered {
        // Only files are streamed; every printed output is text.
        let Rendered::Texts(texts) = output else {
            continue;
        };
        match sink {
            Sink::StepSummary if with_summary => {
                texts
                    .iter()
                    .try_for_each(|text| append_step_summary(text))?;
            }
            Sink::Warnings => texts.iter().for_each(term::warning),
            Sink::Annotations => texts
                .iter()
                .for_each(|line| term::workflow_command(line, annotation_stream)),
            Sink::Stdout => {
                for text in &texts {
                    match options.format {
                        GateFormat::Table => write_human(text)?,
                        GateFormat::Json => write_document(text)?,
                    }
                }
            }
            Sink::Errors => texts.iter().for_each(term::error_message),
            Sink::OutDir(_) | Sink::JunitOption | Sink::StepSummary => {}
        }
    }
    Ok(())
}

/// run-stats.json: sizes, calibration, operational figures, judge usage and timings.
pub(crate) fn run_stats(
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
