//! `ragate gate`: evaluate a tier, compare it with its baseline, write every report.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::json;

use crate::app::rejudge::{self, Identities, Rejudging};
use crate::app::{default_threads, write_stdout};
use crate::baseline::collect::{self, RunContext};
use crate::baseline::results::{Results, RunStatus};
use crate::baseline::{embeddings, store};
use crate::cli::{GateArgs, GateFormat};
use crate::config::{self, Config};
use crate::error::{Error, Result};
use crate::evaluate::{EvalOptions, Evaluation, evaluate};
use crate::gate::{
    self,
    calibration::{self, Calibration},
};
use crate::input::labels;
use crate::input::{self, corpus, qrels::Qrels, text_file::TextFile};
use crate::judge::Judge;
use crate::judge::cache::{CacheMode, JudgeCache};
use crate::judge::decompose::ClaimSplitter;
use crate::judge::embeddings::EmbeddingClient;
use crate::metrics::generation::ClaimVerdict;
use crate::metrics::metric::Metric;
use crate::report::{annotations, gate_table, junit, summary};
use crate::tier::{self, TierQueries};

/// How many ranked doc ids results keep per query when no metric reads deeper.
const MIN_KEPT_RANKS: usize = 10;
/// The depth of the judged@k coverage report.
const JUDGED_DEPTH: usize = 10;

fn check_slice_fields(config: &Config, qrels: &Qrels) -> Result<()> {
    for (index, field) in config.slices.iter().enumerate() {
        if !qrels
            .queries()
            .iter()
            .any(|q| q.attributes.contains_key(field))
        {
            return Err(Error::config(
                &config.path,
                format!("slices[{index}]"),
                format!(
                    "no query of {} has a `{field}` field: expected a field the qrels carry",
                    qrels.path().display()
                ),
            ));
        }
    }
    Ok(())
}

/// The judges that the configured answer metrics use, described for provenance; a judge that
/// also decomposes answers (`claims: llm`) gets ` claims=llm:<prompt version>`.
pub(crate) fn judges_used(config: &Config) -> BTreeMap<String, String> {
    let mut used: BTreeMap<String, String> = config
        .metrics
        .iter()
        .filter(|spec| spec.is_judged())
        .filter(|spec| !(spec.metric == Metric::AnswerRelevance && config.embeddings.is_some()))
        .map(|spec| (spec.judge.clone(), config.judges[&spec.judge].describe()))
        .collect();
    for spec in &config.metrics {
        if spec.claims == ClaimSplitter::Llm
            && let Some(description) = used.get_mut(&spec.judge)
        {
            let part = format!(" claims={}", ClaimSplitter::Llm.id());
            if !description.contains(&part) {
                description.push_str(&part);
            }
        }
    }
    used
}

/// The embeddings endpoint, described, when answer_relevance is embedding-based.
pub(crate) fn embeddings_used(config: &Config) -> Option<String> {
    let relevance = config
        .metrics
        .iter()
        .any(|spec| spec.metric == Metric::AnswerRelevance);
    config
        .embeddings
        .as_ref()
        .filter(|_| relevance)
        .map(EmbeddingClient::describe)
}

/// The claim splitter of the first faithfulness metric (whose claims the trace shows).
fn trace_splitter(config: &Config) -> String {
    config
        .metrics
        .iter()
        .find(|spec| {
            matches!(
                spec.metric,
                Metric::Faithfulness | Metric::FaithfulnessGraded
            )
        })
        .map_or(ClaimSplitter::Sentences, |spec| spec.claims)
        .id()
}

/// HTTP calls, retries and tokens of each `openai` judge in this run.
fn llm_usage(config: &Config) -> serde_json::Value {
    let usage: serde_json::Map<String, serde_json::Value> = config
        .judges
        .iter()
        .filter_map(|(name, judge)| match judge {
            Judge::OpenAi(judge) => {
                let u = judge.usage();
                Some((
                    name.clone(),
                    json!({"calls": u.calls, "retries": u.retries, "prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens}),
                ))
            }
            _ => None,
        })
        .collect();
    serde_json::Value::Object(usage)
}

fn git_commit(dir: &Path) -> Option<String> {
    if let Ok(sha) = std::env::var("GITHUB_SHA") {
        return Some(sha);
    }
    let output = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

fn write(path: &Path, text: &str) -> Result<()> {
    store::write_atomic(path, text)
}

/// Writes `results.json` and, beside it, `embeddings.jsonl` when answer_relevance is
/// embedding-based (a stale one from an earlier run is removed).
fn write_results(path: &Path, results: &Results, evaluation: &Evaluation) -> Result<()> {
    write(path, &results.to_json())?;
    let sidecar = path.with_file_name("embeddings.jsonl");
    if evaluation.embeddings.is_empty() {
        if sidecar.exists() {
            std::fs::remove_file(&sidecar).map_err(|e| Error::io(&sidecar, e))?;
        }
        return Ok(());
    }
    write(&sidecar, &embeddings::to_jsonl(&evaluation.embeddings))
}

/// One line per query for debugging: slices, ranking, gold ids, values.
/// One line per query for debugging: slices, ranking, gold ids, values, and each claim of the
/// answer with the judge's verdict.
fn trace(results: &Results, qrels: &Qrels, evaluation: &Evaluation, splitter: &str) -> String {
    let claims: BTreeMap<&str, &[ClaimVerdict]> = evaluation
        .per_query
        .iter()
        .map(|q| (q.qid.as_str(), q.claims.as_slice()))
        .collect();
    let mut out = String::new();
    for (qid, record) in &results.queries {
        let gold: Vec<&str> = qrels
            .position(qid)
            .map(|p| {
                qrels.queries()[p]
                    .judgments
                    .iter()
                    .filter(|(_, j)| j.relevant)
                    .map(|(d, _)| d)
                    .collect()
            })
            .unwrap_or_default();
        let mut line = json!({
            "qid": qid,
            "slices": record.slices,
            "retrieved": record.retrieved,
            "gold": gold,
            "metrics": record.metrics,
        });
        if let Some(claims) = claims.get(qid.as_str()).filter(|c| !c.is_empty()) {
            line["claims"] = claims
                .iter()
                .map(|c| json!({"claim": c.claim, "supported": c.supported, "grade": c.grade, "score": c.score}))
                .collect();
            line["claims_splitter"] = json!(splitter);
        }
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

pub fn run(args: GateArgs) -> Result<i32> {
    let started = Instant::now();
    let config = config::load(&args.config)?;
    let tier = config.tier(&args.tier)?;
    let out_dir = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(".ragate/out").join(&tier.name));
    let TierQueries { qrels, file_sha256 } = tier::load(tier)?;
    check_slice_fields(&config, &qrels)?;
    let run_file = args.run.clone().or_else(|| config.run_file(&tier.name)).ok_or_else(|| {
        Error::Usage(
            "no run to evaluate: pass --run FILE (native JSONL or TREC) or configure `pipeline: { run_file: ... }`"
                .to_string(),
        )
    })?;
    let run_path = run_file.as_path();
    let run_format = match args.run_format {
        Some(format) => format,
        None => input::detect_run_format(run_path)?,
    };
    // Deep enough for every cut-off and for the contexts of faithfulness (so that
    // --allow-judge-change can rebuild a baseline's contexts from its ranked doc ids).
    let deepest = config
        .metrics
        .iter()
        .filter_map(|spec| match spec.metric {
            Metric::Faithfulness | Metric::FaithfulnessGraded => Some(spec.contexts_k),
            metric => metric.cutoff(),
        })
        .max()
        .unwrap_or(0);
    let corpus = corpus::read_optional(config.corpus.as_deref())?;
    // The cache is opened only when a judge will be asked something.
    let cache = if config.metrics.iter().any(|spec| spec.is_judged())
        && config.cache.mode != CacheMode::Off
    {
        Some(JudgeCache::open(&config.cache.path, config.cache.mode)?)
    } else {
        None
    };
    let options = EvalOptions {
        metrics: config.metrics.clone(),
        judges: config.judges.clone(),
        corpus: corpus.as_ref(),
        cache: cache.as_ref(),
        embeddings: config.embeddings.as_ref(),
        chunk_separator: config.chunk_separator.clone(),
        threads: args.threads.unwrap_or_else(default_threads),
        keep_ranked: deepest.max(MIN_KEPT_RANKS),
    };
    let evaluated_at = Instant::now();
    let evaluation = evaluate(&qrels, run_path, run_format, &options)?;
    let evaluation_seconds = evaluated_at.elapsed().as_secs_f64();
    for warning in &evaluation.warnings {
        eprintln!("warning: {warning}");
    }
    let config_dir = config.path.parent().unwrap_or(Path::new("."));
    let mut current = collect::collect(
        &evaluation,
        &qrels,
        RunContext {
            tier: &tier.name,
            slices: &config.slices,
            store_text: tier.store_text,
            qrels_sha256: file_sha256,
            config_hash: tier.config_hash.clone(),
            git_commit: git_commit(config_dir),
            judges: judges_used(&config),
            embeddings: embeddings_used(&config),
        },
    );
    let results_path = out_dir.join("results.json");
    let accept_hint = format!(
        "run `ragate baseline accept --tier {}` to accept {}",
        tier.name,
        results_path.display()
    );
    let baseline = match store::read(&tier.baseline, &accept_hint) {
        Ok(baseline) => baseline,
        Err(error) => {
            current.status = RunStatus::NoBaseline;
            write_results(&results_path, &current, &evaluation)?;
            write(
                &out_dir.join("trace.jsonl"),
                &trace(&current, &qrels, &evaluation, &trace_splitter(&config)),
            )?;
            let junit_text = junit::render_setup_error(&tier.name, &error.to_string());
            write(&out_dir.join("junit.xml"), &junit_text)?;
            if let Some(path) = &args.junit {
                write(path, &junit_text)?;
            }
            return Err(error);
        }
    };
    let identities = Identities::of(&current);
    let changes = rejudge::differences(&Identities::of(&baseline), &identities);
    let baseline = if changes.is_empty() {
        baseline
    } else if !args.allow_judge_change {
        return Err(rejudge::refused(&changes));
    } else {
        let with = Rejudging {
            config: &config,
            qrels: &qrels,
            corpus: corpus.as_ref(),
            cache: cache.as_ref(),
            out_dir: &out_dir,
        };
        rejudge::rejudge(&baseline, &identities, &with)?
    };
    let mut report = gate::compare(&config, tier, &baseline, &current);
    if !changes.is_empty() {
        report.notes.push(format!(
            "the baseline was re-judged with the current judges (--allow-judge-change): {}",
            changes.join("; ")
        ));
    }
    let calibrations = match &tier.labels {
        Some(path) => calibration::calibrate(
            &evaluation,
            &config.metrics,
            &labels::read(&TextFile::read(path)?)?,
        ),
        None => Vec::new(),
    };
    report
        .notes
        .extend(calibrations.iter().map(Calibration::describe));
    report
        .outcomes
        .extend(calibration::checks(&tier.gate.rules, &calibrations));
    let usage = evaluation.judge_usage;
    if usage.tasks > 0 {
        let mut note = format!(
            "judging: {} tasks, {} sent to judges, {} answered from the cache",
            usage.tasks,
            usage.judged,
            usage.tasks - usage.judged
        );
        for (name, judge) in &config.judges {
            if let Judge::OpenAi(judge) = judge {
                let u = judge.usage();
                note.push_str(&format!(
                    "; `{name}`: {} HTTP calls ({} retries), {} prompt and {} completion tokens",
                    u.calls, u.retries, u.prompt_tokens, u.completion_tokens
                ));
            }
        }
        if let Some(client) = &config.embeddings {
            let u = client.usage();
            note.push_str(&format!(
                "; embeddings: {} HTTP calls ({} retries), {} prompt tokens",
                u.calls, u.retries, u.prompt_tokens
            ));
        }
        report.notes.push(note);
    }
    report.judged_at_k =
        gate::judged_at_k(&current, &qrels, JUDGED_DEPTH).map(|share| (JUDGED_DEPTH, share));
    if let Some((k, share)) = report.judged_at_k.filter(|(_, share)| *share < 0.5) {
        report.warnings.push(format!(
            "judged@{k} is {share:.2}: most retrieved docs are unjudged and count as irrelevant, \
             so recall and nDCG look worse than they are; judge more docs"
        ));
    }
    current.status = report.status();
    write_results(&results_path, &current, &evaluation)?;
    write(
        &out_dir.join("trace.jsonl"),
        &trace(&current, &qrels, &evaluation, &trace_splitter(&config)),
    )?;
    let junit_text = junit::render(&report);
    write(&out_dir.join("junit.xml"), &junit_text)?;
    if let Some(path) = &args.junit {
        write(path, &junit_text)?;
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
        "llm_usage": llm_usage(&config),
        "embeddings_usage": config.embeddings.as_ref().map(EmbeddingClient::usage),
        "judge_tasks": evaluation.judge_usage.tasks,
        "judge_calls": evaluation.judge_usage.judged,
        "judge_cache_hits": evaluation.judge_usage.tasks - evaluation.judge_usage.judged,
        "evaluation_seconds": evaluation_seconds,
        "total_seconds": started.elapsed().as_secs_f64(),
    });
    write(&out_dir.join("run-stats.json"), &format!("{stats:#}\n"))?;
    for warning in &report.warnings {
        eprintln!("warning: {warning}");
    }
    if std::env::var("GITHUB_ACTIONS").as_deref() == Ok("true") {
        for line in annotations::render(&report) {
            println!("{line}");
        }
    }
    match args.format {
        GateFormat::Table => write_stdout(&gate_table::render(&report))?,
        GateFormat::Json => write_stdout(&current.to_json())?,
    }
    Ok(report.exit_code())
}

/// Appends the summary to `$GITHUB_STEP_SUMMARY` when GitHub Actions provides one.
fn append_step_summary(text: &str) -> Result<()> {
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
        .map_err(|e| Error::io(&path, e))
}
