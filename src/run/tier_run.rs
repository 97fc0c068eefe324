//! A gate run's tier run: obtained (from the pipeline, a run file or `--run`) and evaluated,
//! `repeats:` times, with its trace and usage; or, with `--shard I/N`, one shard evaluated and
//! written as a partial `shard.json` for `ragate merge`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::baseline::collect::{self, RunContext};
use crate::baseline::results::Results;
use crate::cli::GateArgs;
use crate::config::CacheMode;
use crate::config::{Config, Tier};
use crate::error::{Error, Result};
use crate::evaluate::{EvalOptions, Evaluation, QueryScores, evaluate};
use crate::input::{self, RunFormat, corpus, qrels::Qrels};
use crate::judge::Clients;
use crate::judge::cache::JudgeCache;
use crate::judge::events::Events;
use crate::metrics::claims::ClaimSplitter;
use crate::metrics::metric::JudgedMetric;
use crate::metrics::metric::Metric;
use crate::outputs::output_table;
use crate::outputs::writer::{self, Evaluated, LlmUsage};
use crate::pipeline::{Pipeline, Request};
use crate::progress::Progress;
use crate::run::gate_options::default_threads;
use crate::run::gate_options::{Judging, eval_options};
use crate::run::judges_called::{embeddings_used, judges_used};
use crate::run::plan;
use crate::run::repeats;
use crate::shard::{Shard, ShardQueries};
use crate::term;

/// The format tag of a shard's partial output.
pub(crate) const SHARD_FORMAT: &str = "ragate-shard/2";

/// What `gate --shard I/N` writes for `merge`: the evaluated shard with every text kept.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShardOutput {
    pub format: String,
    pub shard: Shard,
    /// The queries the shard scores, for `merge` to check that none went missing.
    pub queries: ShardQueries,
    pub evaluated: Evaluated,
}

/// The claim splitter of the tier's first faithfulness metric (whose claims the trace shows).
fn trace_splitter(tier: &Tier) -> String {
    tier.metrics
        .iter()
        .find(|spec| {
            matches!(
                spec.metric,
                Metric::Judged(JudgedMetric::Faithfulness | JudgedMetric::FaithfulnessGraded)
            )
        })
        .map_or(ClaimSplitter::Sentences, |spec| spec.claims)
        .id()
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

/// One line per query for debugging: slices, ranking, gold ids, values, and each claim of the
/// answer with the judge's verdict.
fn trace(
    results: &Results,
    qrels: &Qrels,
    evaluation: &Evaluation,
    splitter: &str,
) -> BTreeMap<String, String> {
    let scores: BTreeMap<&str, &QueryScores> = evaluation
        .per_query
        .iter()
        .map(|q| (q.qid.as_str(), q))
        .collect();
    let mut out = BTreeMap::new();
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
        let Some(scores) = scores.get(qid.as_str()) else {
            continue;
        };
        if !scores.claims.is_empty() {
            line["claims"] = scores
                .claims
                .iter()
                .map(|c| {
                    let mut claim = json!({"claim": c.claim, "supported": c.supported, "grade": c.grade, "score": c.score});
                    if let Some(reason) = &c.reason {
                        claim["reason"] = json!(reason);
                    }
                    claim
                })
                .collect();
            line["claims_splitter"] = json!(splitter);
        }
        let operational = json!(scores.operational);
        if operational.as_object().is_some_and(|o| !o.is_empty()) {
            line["operational"] = operational;
        }
        out.insert(qid.clone(), crate::json_text::compact(&line));
    }
    out
}

/// The run to evaluate: `--run`, the configured run file, or the pipeline's output saved as
/// `run.jsonl` in `out_dir` (`run.<repeat>.jsonl` for the second and later of `repeats:`).
fn obtain_run(
    config: &Config,
    tier: &Tier,
    args: &GateArgs,
    qrels: &Qrels,
    out_dir: &Path,
    repeat: usize,
) -> Result<(PathBuf, RunFormat)> {
    let given = |path: PathBuf| -> Result<(PathBuf, RunFormat)> {
        let format = match args.run_format {
            Some(format) => format.into(),
            None => input::detect_run_format(&path)?,
        };
        Ok((path, format))
    };
    if let Some(path) = &args.run {
        return given(path.clone());
    }
    let pipeline = config.pipeline.as_ref().ok_or_else(|| {
        Error::Usage(
            "no run to evaluate: pass --run FILE (native JSONL or TREC) or configure `pipeline:` \
             (command, http or run_file)"
                .to_string(),
        )
    })?;
    if let Pipeline::RunFile(_) = pipeline {
        let path = config.run_file(&tier.name).expect("a run file pipeline");
        return given(path);
    }
    let produced = produce_run(config, pipeline, qrels)?;
    let run_path = output_table::repeat_run(out_dir, repeat);
    writer::write_in_folder(&run_path, &produced.to_jsonl())?;
    Ok((run_path, RunFormat::Native))
}

/// Runs a `command` or `http` pipeline over every query of `qrels` (each must have a text).
pub(crate) fn produce_run(
    config: &Config,
    pipeline: &Pipeline,
    qrels: &Qrels,
) -> Result<crate::pipeline::ProducedRun> {
    let requests = qrels
        .queries()
        .iter()
        .map(|q| {
            let query = q.text.clone().filter(|t| !t.trim().is_empty()).ok_or_else(|| {
                Error::input(
                    qrels.path(),
                    format!(
                        "query `{}` has no text: the pipeline needs `query` in every qrels line",
                        q.qid
                    ),
                )
            })?;
            Ok(Request {
                qid: q.qid.clone(),
                query,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let progress = Progress::new("pipeline: queries", requests.len());
    let produced = pipeline.produce(&requests, config.dir(), &progress);
    progress.finish();
    produced
}

/// HTTP calls, retries and tokens of each `openai` judge (and of the embeddings endpoint) in
/// this run, as counted by `clients`.
fn llm_usage(clients: &Clients) -> BTreeMap<String, LlmUsage> {
    clients
        .judges
        .iter()
        .filter_map(|(name, judge)| {
            let u = judge.usage()?;
            Some((
                name.clone(),
                LlmUsage {
                    calls: u.calls,
                    retries: u.retries,
                    prompt_tokens: u.prompt_tokens,
                    completion_tokens: u.completion_tokens,
                },
            ))
        })
        .chain(clients.embeddings.as_ref().map(|client| {
            let u = client.usage();
            (
                "embeddings".to_string(),
                LlmUsage {
                    calls: u.calls,
                    retries: u.retries,
                    prompt_tokens: u.prompt_tokens,
                    completion_tokens: 0,
                },
            )
        }))
        .collect()
}

/// Evaluates the tier's run (every text kept in the results).
fn evaluate_tier(
    (config, tier): (&Config, &Tier),
    qrels: &Qrels,
    run: (PathBuf, RunFormat),
    context: RunContext<'_>,
    threads: Option<usize>,
    judging: Judging<'_>,
) -> Result<Evaluated> {
    let clients = judging.clients;
    let corpus = corpus::read_optional(config.corpus.as_deref())?;
    // The cache is opened only when a judge will be asked something.
    let cache = if tier.metrics.iter().any(|spec| spec.is_judged())
        && config.cache.mode != CacheMode::Off
    {
        Some(JudgeCache::open(&config.cache.path, config.cache.mode)?)
    } else {
        None
    };
    let options = eval_options(config, tier, judging, corpus.as_ref(), cache.as_ref());
    let options = EvalOptions {
        threads: threads.unwrap_or_else(default_threads),
        ..options
    };
    let evaluated_at = Instant::now();
    let mut evaluation = evaluate(qrels, &run.0, run.1, &options)?;
    let evaluation_seconds = evaluated_at.elapsed().as_secs_f64();
    for warning in &evaluation.warnings {
        term::warning(warning);
    }
    let results = collect::collect(&mut evaluation, qrels, context);
    Ok(Evaluated {
        trace: trace(&results, qrels, &evaluation, &trace_splitter(tier)),
        operational: evaluation
            .per_query
            .iter()
            .filter(|q| q.operational != Default::default())
            .map(|q| (q.qid.clone(), q.operational))
            .collect(),
        results,
        embeddings: evaluation.embeddings,
        judge_tasks: evaluation.judge_usage.tasks,
        judge_calls: evaluation.judge_usage.judged,
        llm_usage: llm_usage(clients),
        evaluation_seconds,
        noise: None,
        judge_consistency: None,
    })
}

/// The tier's run obtained and evaluated `tier.repeats` times (per-query means, with the
/// run-to-run noise; see `run::repeats`).
pub(crate) fn evaluate_repeats(
    config: &Config,
    tier: &Tier,
    args: &GateArgs,
    qrels: &Qrels,
    out_dir: &Path,
    qrels_sha256: String,
) -> Result<Evaluated> {
    let produced = matches!(
        config.pipeline,
        Some(Pipeline::Command(_) | Pipeline::Http(_))
    );
    if tier.repeats > 1 && (args.run.is_some() || !produced) {
        return Err(Error::config(
            &config.path,
            format!("tiers.{}.repeats", tier.name),
            format!(
                "{} runs need a pipeline that answers again (`command` or `http`, and no --run): \
                 a run file gives the same answers every time",
                tier.repeats
            ),
        ));
    }
    // Built once: every run and asking counts in the same usage counters.
    let clients = config.judge_clients(&super::judge_events::printed());
    // Once too (`git rev-parse` is a process): every run and asking is of the same commit.
    let context = run_context(config, tier, qrels_sha256);
    let evaluate = |run, repeat| {
        let judging = Judging {
            clients: &clients,
            repeat,
        };
        let context = context.clone();
        evaluate_tier((config, tier), qrels, run, context, args.threads, judging)
    };
    let mut runs = Vec::with_capacity(tier.repeats);
    let mut first_run = None;
    for repeat in 1..=tier.repeats {
        let run = obtain_run(config, tier, args, qrels, out_dir, repeat)?;
        if repeat == 1 {
            // The answers are known, nothing is judged yet: a run over budget stops here.
            plan::check_budget(config, tier, qrels, &run.0)?;
        }
        first_run.get_or_insert_with(|| run.clone());
        runs.push(evaluate(run, 1)?);
    }
    // The judges asked again on the first run's answers (their own cache entries per asking).
    let mut askings = Vec::new();
    for judge_repeat in 2..=tier.judge_repeats {
        let run = first_run.clone().expect("at least one run");
        askings.push(evaluate(run, judge_repeat)?);
    }
    let consistency = (!askings.is_empty())
        .then(|| repeats::judge_consistency(&runs[0], &askings, &judged_metrics(tier)));
    let mut combined = repeats::combine(runs);
    combined.judge_consistency = consistency;
    Ok(combined)
}

/// The names of the tier's metrics a judge decides.
fn judged_metrics(tier: &Tier) -> Vec<String> {
    tier.metrics
        .iter()
        .filter(|spec| spec.is_judged())
        .map(|spec| spec.metric.to_string())
        .collect()
}

/// What besides the evaluation goes into the tier's results.
pub(crate) fn run_context<'a>(
    config: &'a Config,
    tier: &'a Tier,
    qrels_sha256: String,
) -> RunContext<'a> {
    RunContext {
        tier: &tier.name,
        slices: &tier.slices,
        qrels_sha256,
        config_hash: tier.config_hash.clone(),
        git_commit: git_commit(config.dir()),
        judges: judges_used(config, tier),
        embeddings: embeddings_used(config, tier),
        conventions: tier.conventions,
        sample: crate::tier::sample_description(tier),
    }
}

/// A shard that no query of the tier falls into.
pub(crate) fn empty_shard(config: &Config, tier: &Tier, qrels_sha256: String) -> Evaluated {
    let names = tier.metrics.iter().map(|s| s.metric.to_string()).collect();
    Evaluated {
        results: collect::results(
            names,
            BTreeMap::new(),
            run_context(config, tier, qrels_sha256),
        ),
        trace: BTreeMap::new(),
        operational: BTreeMap::new(),
        embeddings: Vec::new(),
        judge_tasks: 0,
        judge_calls: 0,
        // Nothing was asked: the counters of fresh clients (zero for every judge).
        llm_usage: llm_usage(&config.judge_clients(&Events::ignored())),
        evaluation_seconds: 0.0,
        noise: None,
        judge_consistency: None,
    }
}

/// Writes `shard.json` into `out_dir` and returns its path.
pub(crate) fn write_shard(
    out_dir: &Path,
    shard: Shard,
    queries: ShardQueries,
    evaluated: Evaluated,
) -> Result<PathBuf> {
    let output = ShardOutput {
        format: SHARD_FORMAT.to_string(),
        shard,
        queries,
        evaluated,
    };
    let text = crate::json_text::document(&output);
    let path = output_table::SHARD.path(out_dir);
    writer::write_in_folder(&path, &text)?;
    Ok(path)
}
