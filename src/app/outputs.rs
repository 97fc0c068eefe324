//! The second half of a gate run, shared by `gate` and `merge`: compare an evaluated tier with its
//! baseline, calibrate judges on human labels, decide, and write every report.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::app::rejudge::{self, Identities, Rejudging};
use crate::app::repeats::{self, JudgeConsistency, RunNoise};
use crate::app::write_stdout;
use crate::baseline::collect;
use crate::baseline::results::{Results, RunStatus};
use crate::baseline::{embeddings, store};
use crate::cli::{GateFormat, ReportArgs};
use crate::config::CacheMode;
use crate::config::{Config, Tier};
use crate::error::{Error, Result};
use crate::evaluate::operational::Operational;
use crate::gate::{self, calibration, decision};
use crate::input::{corpus, qrels::Qrels};
use crate::judge::cache::JudgeCache;
use crate::metrics::embedding_relevance::EmbeddedQuery;
use crate::report::{annotations, gate_table, junit, operational, summary};

/// The depth of the judged@k coverage report.
const JUDGED_DEPTH: usize = 10;

/// HTTP calls and tokens of one LLM judge.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LlmUsage {
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
pub struct Evaluated {
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
pub struct OutputOptions {
    pub out_dir: PathBuf,
    pub junit: Option<PathBuf>,
    pub format: GateFormat,
    pub allow_judge_change: bool,
    pub started: Instant,
}

impl OutputOptions {
    /// The options the command line gave, for `tier`.
    pub fn new(report: &ReportArgs, tier: &str, started: Instant) -> Self {
        OutputOptions {
            out_dir: report.out.clone().unwrap_or_else(|| default_out(tier)),
            junit: report.junit.clone(),
            format: report.format,
            allow_judge_change: report.allow_judge_change,
            started,
        }
    }
}

/// The default output directory of a tier.
pub fn default_out(tier: &str) -> PathBuf {
    PathBuf::from(".ragate/out").join(tier)
}

pub fn write(path: &Path, text: &str) -> Result<()> {
    store::write_atomic(path, text)
}

/// The results as the tier stores them.
fn stored(tier: &Tier, results: &Results) -> Results {
    if tier.store_text {
        results.clone()
    } else {
        collect::strip_text(results.clone())
    }
}

fn trace_text(evaluated: &Evaluated) -> String {
    evaluated
        .trace
        .values()
        .map(|line| format!("{line}\n"))
        .collect()
}

/// Writes `results.json` and, beside it, `embeddings.jsonl` when answer_relevance is
/// embedding-based (a stale one from an earlier run is removed).
fn write_results(path: &Path, results: &Results, evaluated: &Evaluated) -> Result<()> {
    write(path, &results.to_json())?;
    let sidecar = path.with_file_name("embeddings.jsonl");
    if evaluated.embeddings.is_empty() {
        if sidecar.exists() {
            std::fs::remove_file(&sidecar).map_err(|e| Error::io(&sidecar, e))?;
        }
        return Ok(());
    }
    write(&sidecar, &embeddings::to_jsonl(&evaluated.embeddings))
}

/// The baseline as compared: re-judged by the current judges when they differ from the
/// baseline's and `--allow-judge-change` allows it (an error otherwise), with a note saying so.
fn comparable_baseline(
    config: &Config,
    qrels: &Qrels,
    baseline: Results,
    current: &Results,
    options: &OutputOptions,
) -> Result<(Results, Option<String>)> {
    let identities = Identities::of(current);
    let changes = rejudge::differences(&Identities::of(&baseline), &identities);
    if changes.is_empty() {
        return Ok((baseline, None));
    }
    if !options.allow_judge_change {
        return Err(rejudge::refused(&changes));
    }
    let corpus = corpus::read_optional(config.corpus.as_deref())?;
    let cache = match config.cache.mode {
        CacheMode::Off => None,
        mode => Some(JudgeCache::open(&config.cache.path, mode)?),
    };
    let with = Rejudging {
        config,
        qrels,
        corpus: corpus.as_ref(),
        cache: cache.as_ref(),
        out_dir: &options.out_dir,
    };
    let rejudged = rejudge::rejudge(&baseline, &identities, &with)?;
    let note = format!(
        "the baseline was re-judged with the current judges (--allow-judge-change): {}",
        changes.join("; ")
    );
    Ok((rejudged, Some(note)))
}

/// Compares `evaluated` with the tier's baseline, writes results.json, trace.jsonl, junit.xml,
/// summary.md and run-stats.json, and returns the exit code.
pub fn finish(
    config: &Config,
    tier: &Tier,
    qrels: &Qrels,
    evaluated: Evaluated,
    options: OutputOptions,
) -> Result<i32> {
    let out_dir = &options.out_dir;
    let mut current = stored(tier, &evaluated.results);
    let results_path = out_dir.join("results.json");
    let accept_hint = format!(
        "run `ragate baseline accept --tier {}` to accept {}",
        tier.name,
        results_path.display()
    );
    let baseline = match store::read(&tier.baseline, &accept_hint) {
        Ok(baseline) => baseline,
        Err(error) => {
            // A missing baseline (the first run of a tier) leaves results to accept; an
            // unreadable one leaves results that `accept` refuses (fix or remove the file first).
            current.status = if error.is_missing() {
                RunStatus::NoBaseline
            } else {
                RunStatus::Error
            };
            write_results(&results_path, &current, &evaluated)?;
            write(&out_dir.join("trace.jsonl"), &trace_text(&evaluated))?;
            return Err(error);
        }
    };
    decision::check_baseline_tier(&baseline, &tier.name, &tier.baseline)?;
    let (baseline, rejudged) = comparable_baseline(config, qrels, baseline, &current, &options)?;
    let calibrations = calibration::for_tier(tier, &config.metrics, &evaluated.results)?;
    let mut report = decision::decide(config, tier, &baseline, &current, &calibrations);
    report.notes.extend(rejudged);
    if let Some(noise) = &evaluated.noise {
        report
            .notes
            .extend(repeats::describe(noise, &baseline, &current));
    }
    if let Some(consistency) = &evaluated.judge_consistency {
        report.notes.extend(consistency.describe());
    }
    if evaluated.judge_tasks > 0 {
        let mut note = format!(
            "judging: {} tasks, {} sent to judges, {} answered from the cache",
            evaluated.judge_tasks,
            evaluated.judge_calls,
            evaluated.judge_tasks.saturating_sub(evaluated.judge_calls)
        );
        for (name, u) in &evaluated.llm_usage {
            note.push_str(&format!(
                "; `{name}`: {} HTTP calls ({} retries), {} prompt and {} completion tokens",
                u.calls, u.retries, u.prompt_tokens, u.completion_tokens
            ));
        }
        report.notes.push(note);
    }
    let figures = operational::by_slice(&evaluated.results, &evaluated.operational);
    report.notes.extend(operational::describe(&figures));
    report.judged_at_k =
        gate::judged_at_k(&current, qrels, JUDGED_DEPTH).map(|share| (JUDGED_DEPTH, share));
    if let Some((k, share)) = report.judged_at_k.filter(|(_, share)| *share < 0.5) {
        report.warnings.push(format!(
            "judged@{k} is {share:.2}: most retrieved docs are unjudged and count as irrelevant, \
             so recall and nDCG look worse than they are; judge more docs"
        ));
    }
    current.status = report.status;
    write_results(&results_path, &current, &evaluated)?;
    write(&out_dir.join("trace.jsonl"), &trace_text(&evaluated))?;
    let junit_text = junit::render(&report);
    write(&out_dir.join("junit.xml"), &junit_text)?;
    if let Some(path) = &options.junit {
        write(path, &junit_text).map_err(|e| e.named_by("--junit"))?;
    }
    let summary_text = summary::render(&report);
    write(&out_dir.join("summary.md"), &summary_text)?;
    append_step_summary(&summary_text)?;
    let stats = json!({
        "tier": tier.name,
        "queries": current.queries.len(),
        "checks": report.outcomes.len(),
        "judged_at_10": report.judged_at_k.map(|(_, share)| share),
        "calibration": calibrations.iter().map(|c| json!({
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
        })).collect::<Vec<_>>(),
        "operational": figures,
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
    });
    write(&out_dir.join("run-stats.json"), &format!("{stats:#}\n"))?;
    for warning in &report.warnings {
        eprintln!("warning: {warning}");
    }
    if std::env::var("GITHUB_ACTIONS").as_deref() == Ok("true") {
        for line in annotations::render(&report) {
            match options.format {
                GateFormat::Table => println!("{line}"),
                // stdout is one JSON document; the runner reads workflow commands on stderr too.
                GateFormat::Json => eprintln!("{line}"),
            }
        }
    }
    match options.format {
        GateFormat::Table => write_stdout(&gate_table::render(&report))?,
        GateFormat::Json => write_stdout(&current.to_json())?,
    }
    Ok(report.exit_code())
}

/// Appends the summary to `$GITHUB_STEP_SUMMARY` when GitHub Actions provides one.
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
