//! `ragate plan --tier T`: before spending, what a gate run of the tier will cost: its queries
//! and answers, the judges' tasks, the cache hits, the calls for the rest, their tokens, money
//! and wall time. The tasks come from the gate's own evaluation code
//! ([`crate::evaluate::plan_run`]) run on the answers: `--run FILE`, the configured run file, or,
//! when the pipeline answers anew, the baseline's stored answers as an estimate. The gate
//! checks the same numbers against `gate.budget` ([`budget`]) before its first judge call.

mod budget;
mod estimate;
mod render;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::{Config, Tier};
use crate::error::Result;
use crate::evaluate::{JudgingPlan, plan_run};
use crate::input::corpus::{self, Corpus};
use crate::input::qrels::Qrels;
use crate::input::run::{self, RunQuery};
use crate::input::text_file::TextFile;
use crate::input::{self, RunFormat};
use crate::judge::Clients;
use crate::judge::cache::JudgeCache;
use crate::judge::events::Events;
use crate::run::gate_options::{Judging, eval_options};
use crate::run::rejudge::{self, Rejudging};
use crate::run::tier_baseline;
pub(crate) use budget::{check as check_budget, run_lines};
pub(crate) use estimate::Line;
use estimate::{Askings, Lookup, Total};
pub(crate) use render::{json, table};

/// The format tag of `ragate plan --format json`.
pub(crate) const FORMAT: &str = "ragate-plan/1";

/// Where the planned answers come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SourceKind {
    /// A run file: the numbers are exact.
    Run,
    /// The baseline's stored answers stand in for the pipeline's: an estimate.
    Baseline,
    /// Nothing to plan from.
    None,
}

/// Where the planned answers come from, as the plan states it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Source {
    pub kind: SourceKind,
    /// The file.
    pub path: Option<String>,
    /// Why there is nothing to plan from (`none`).
    pub reason: Option<String>,
}

/// The answers a plan counts the judging of.
struct Answers<'c> {
    source: Source,
    /// The run's file and queries (None: a TREC run, or nothing to plan from).
    run: Option<(PathBuf, Vec<RunQuery>)>,
    lookup: Lookup<'c>,
}

impl<'c> Answers<'c> {
    /// The answers of the run file at `path`, with the cache's hits.
    fn of_run(path: PathBuf, cache: Option<&'c JudgeCache>) -> Result<Self> {
        Ok(Answers {
            source: Source {
                kind: SourceKind::Run,
                path: Some(path.display().to_string()),
                reason: None,
            },
            run: read_native(&path)?.map(|queries| (path, queries)),
            lookup: Lookup::Cache(cache),
        })
    }
}

/// The configured budget and whether the plan fits it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct BudgetView {
    pub key: String,
    pub max_calls: Option<u64>,
    pub max_cost: Option<f64>,
    /// None: not known (no plan, or a cost without a price).
    pub within: Option<bool>,
}

/// What `ragate plan` prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Plan {
    pub format: &'static str,
    pub tier: String,
    pub source: Source,
    /// The tier's queries.
    pub queries: usize,
    /// Scored queries with a non-empty answer (None: not known).
    pub answers: Option<usize>,
    /// Pipeline runs (`repeats:`) and askings of the judges (`judge_repeats:`) planned.
    pub runs: usize,
    pub judge_repeats: usize,
    /// Per judge, and the embeddings endpoint.
    pub judges: Vec<Line>,
    /// None when there is nothing to plan from.
    pub total: Option<Total>,
    pub budget: Option<BudgetView>,
    /// What the numbers leave out or cannot tell.
    pub notes: Vec<String>,
}

/// The plan of a gate run of `tier` on `run` (None: the configured run file, else the
/// baseline's answers).
pub(crate) fn plan(
    config: &Config,
    tier: &Tier,
    qrels: &Qrels,
    run: Option<&Path>,
) -> Result<Plan> {
    let corpus = corpus::read_optional(config.corpus.as_deref())?;
    let cache = crate::run::config_judge::read_only_cache(config)?;
    let given = run
        .map(Path::to_path_buf)
        .or_else(|| config.run_file(&tier.name));
    let Answers {
        source,
        run: answers,
        lookup,
    } = match given {
        Some(path) => Answers::of_run(path, cache.as_ref())?,
        None => from_baseline(config, tier, qrels, corpus.as_ref(), cache.as_ref())?,
    };
    let produced = source.kind == SourceKind::Baseline;
    let notes: Vec<String> = (tier.repeats > 1 && !produced)
        .then(|| {
            format!(
                "tier `{}` has repeats: {}, which a run file cannot give (the gate refuses it): \
                 planned once",
                tier.name, tier.repeats
            )
        })
        .into_iter()
        .collect();
    let askings = Askings {
        runs: if produced { tier.repeats } else { 1 },
        judge_repeats: tier.judge_repeats,
    };
    let mut plan = Plan {
        format: FORMAT,
        tier: tier.name.clone(),
        source,
        queries: qrels.len(),
        answers: None,
        runs: askings.runs,
        judge_repeats: askings.judge_repeats,
        judges: Vec::new(),
        total: None,
        budget: None,
        notes,
    };
    let stores = (corpus.as_ref(), cache.as_ref());
    estimate_into(
        &mut plan,
        (config, tier, qrels),
        answers,
        lookup,
        stores,
        askings,
    )?;
    plan.budget = budget_view(tier, plan.total.as_ref());
    Ok(plan)
}

/// The tier's budget, and whether the planned `total` is within it.
fn budget_view(tier: &Tier, total: Option<&Total>) -> Option<BudgetView> {
    tier.budget.as_ref().map(|budget| BudgetView {
        key: budget.key.clone(),
        max_calls: budget.max_calls,
        max_cost: budget.max_cost,
        within: total.and_then(|total| budget::within(budget, total)),
    })
}

/// The judging of the run's answers planned into `plan`: the tasks, per-judge lines, total and
/// notes (a TREC run's: none asked).
fn estimate_into(
    plan: &mut Plan,
    (config, tier, qrels): (&Config, &Tier, &Qrels),
    answers: Option<(PathBuf, Vec<RunQuery>)>,
    lookup: Lookup<'_>,
    (corpus, cache): (Option<&Corpus>, Option<&JudgeCache>),
    askings: Askings,
) -> Result<()> {
    if let Some((path, queries)) = answers {
        let clients = config.judge_clients(&Events::ignored());
        let run = (path.as_path(), queries);
        let judging = judging(config, tier, qrels, run, &clients, corpus, cache)?;
        plan.answers = Some(judging.answers);
        plan.judges = estimate::lines((config, tier), &clients, &judging, lookup, askings)?;
        plan.total = Some(estimate::total(&plan.judges));
        plan.notes.extend(estimate::notes(&plan.judges));
        if plan.source.kind == SourceKind::Baseline {
            plan.notes.push(
                "estimated from the baseline's answers: the pipeline answers anew, so cache hits \
                 are not known and every call is counted"
                    .to_string(),
            );
        }
    } else if plan.source.kind == SourceKind::Run {
        plan.answers = Some(0);
        plan.total = Some(estimate::total(&[]));
        plan.notes.push(
            "a TREC run has no answers: no judge is asked (answer metrics need a native run)"
                .to_string(),
        );
    }
    Ok(())
}

/// The native run at `path` (None for a TREC run: no answers, nothing to judge).
fn read_native(path: &Path) -> Result<Option<Vec<RunQuery>>> {
    match input::detect_run_format(path)? {
        RunFormat::Trec => Ok(None),
        RunFormat::Native => Ok(Some(run::read(&TextFile::read(path)?)?)),
    }
}

/// The baseline's stored answers as the run to plan, when the tier has a baseline whose
/// answers (and contexts) can be rebuilt; else why not.
fn from_baseline<'c>(
    config: &Config,
    tier: &Tier,
    qrels: &Qrels,
    corpus: Option<&Corpus>,
    cache: Option<&'c JudgeCache>,
) -> Result<Answers<'c>> {
    let none = |reason: String| Answers {
        source: Source {
            kind: SourceKind::None,
            path: None,
            reason: Some(reason),
        },
        run: None,
        lookup: Lookup::Unknown,
    };
    let next = "fix it, or pass --run FILE (a native run with answers)";
    let Some(baseline) = tier_baseline::load(tier, next)? else {
        return Ok(none(format!(
            "the pipeline answers anew and tier `{}` has no baseline ({}) to estimate from: \
             pass --run FILE (a native run with answers) for exact numbers",
            tier.name,
            tier.baseline.display()
        )));
    };
    let with = Rejudging {
        config,
        tier,
        qrels,
        corpus,
        cache,
        source: &tier.baseline,
    };
    Ok(match rejudge::rebuilt_run(&baseline.results, &with) {
        Ok(queries) => Answers {
            source: Source {
                kind: SourceKind::Baseline,
                path: Some(tier.baseline.display().to_string()),
                reason: None,
            },
            run: Some((tier.baseline.clone(), queries)),
            lookup: Lookup::Unknown,
        },
        Err(error) => none(format!(
            "the baseline's answers cannot stand in for the pipeline's ({error}): pass --run \
             FILE (a native run with answers)"
        )),
    })
}

/// The judging of `run` (a native run: its file and queries) as the gate's evaluation builds
/// it, the cache read only for decomposed claims.
fn judging(
    config: &Config,
    tier: &Tier,
    qrels: &Qrels,
    run: (&Path, Vec<RunQuery>),
    clients: &Clients,
    corpus: Option<&Corpus>,
    cache: Option<&JudgeCache>,
) -> Result<JudgingPlan> {
    let (path, queries) = run;
    let options = eval_options(config, tier, Judging { clients, repeat: 1 }, corpus, cache);
    plan_run(qrels, path, queries, &options)
}
