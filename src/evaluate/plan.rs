//! The judging a native run needs, judged by nobody: the tasks the gate's evaluation would put
//! to each judge (built by the same code, [`AnswerMetrics::prepare`]), the answers its judges
//! would decompose (`claims: llm`) and the texts it would embed. `ragate plan` and the gate's
//! budget read the cache for these, so that what they count cannot drift from what is asked.

use std::collections::BTreeMap;
use std::path::Path;

use super::answers::{AnswerMetrics, TaskBook};
use super::{EvalOptions, Outcome, leveled, relevance, scorers};
use crate::error::Result;
use crate::input::qrels::Qrels;
use crate::input::run::RunQuery;
use crate::judge::{ClaimsTask, Task};
use crate::metrics::metric::{JudgedMetric, Metric};

/// What judging a run takes, before anything is asked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JudgingPlan {
    /// Queries of the run that are scored (in the qrels, with a relevant document).
    pub queries: usize,
    /// Of them, those with a non-empty answer: what the answer metrics judge.
    pub answers: usize,
    /// The support and relevance tasks per judge name, in the order the judge is asked them.
    pub tasks: BTreeMap<String, Vec<Task>>,
    /// The answers each judge decomposes (`claims: llm`), as the gate asks them.
    pub decompositions: BTreeMap<String, Vec<ClaimsTask>>,
    /// Of them, those whose claims the cache does not hold: the judge would be asked, and the
    /// support tasks of their claims are not known before it answers.
    pub undecomposed: BTreeMap<String, Vec<ClaimsTask>>,
    /// The distinct texts embedded for embedding-based `answer_relevance`.
    pub embedded: Vec<String>,
}

/// The judging of `queries` (a native run, in rank order per query, as [`crate::input::run::read`]
/// returns them) under `options`, asking no judge: the cache (`options.cache`) is only read,
/// for the claims of answers already decomposed. Errors are the evaluation's (a query without
/// text whose judge needs the question, a context without text); messages name `source`.
pub fn plan_run(
    qrels: &Qrels,
    source: &Path,
    queries: Vec<RunQuery>,
    options: &EvalOptions<'_>,
) -> Result<JudgingPlan> {
    let leveled = leveled(qrels, options);
    let qrels = leveled.as_ref();
    let (scorer, mut answer_metrics) = scorers(qrels, source, options);
    let scored: Vec<(&RunQuery, usize)> = queries
        .iter()
        .filter_map(|query| {
            let position = qrels.position(&query.qid)?;
            scorer.is_scored(position).then_some((query, position))
        })
        .collect();
    let planned = answer_metrics.plan_decompositions(
        scored
            .iter()
            .map(|&(query, position)| (query, &qrels.queries()[position])),
        &options.judges,
        options.cache,
    )?;
    answer_metrics.decomposed = planned.decomposed;
    let mut book = TaskBook::default();
    let mut plan = JudgingPlan {
        decompositions: planned.tasks,
        undecomposed: planned.missing,
        ..JudgingPlan::default()
    };
    let mut pairs = Vec::new();
    for query in &queries {
        let Some(position) = qrels.position(&query.qid) else {
            continue;
        };
        let ranked = query.retrieved.iter().map(|r| r.doc_id.as_bytes());
        let Outcome::Scored { position, .. } = scorer.score(position, ranked) else {
            continue;
        };
        plan.queries += 1;
        let answer = query.answer.as_deref().unwrap_or_default();
        if !answer.trim().is_empty() {
            plan.answers += 1;
        }
        if !answer_metrics.specs.is_empty() {
            prepare(&answer_metrics, query, qrels, position, &mut book)?;
        }
        if embeds(options) && !answer.trim().is_empty() {
            pairs.push((relevance::question(qrels, position)?, answer.to_string()));
        }
    }
    plan.tasks = book.into_tasks();
    plan.embedded = relevance::texts(pairs.iter().map(|(q, a)| (q.as_str(), a.as_str())));
    Ok(plan)
}

/// Records the tasks of one scored query (what `score_native` does before judging).
fn prepare(
    answer_metrics: &AnswerMetrics<'_>,
    query: &RunQuery,
    qrels: &Qrels,
    position: usize,
    book: &mut TaskBook,
) -> Result<()> {
    answer_metrics
        .prepare(query, &qrels.queries()[position], book)
        .map(drop)
}

/// Whether answer relevance is embedding-based in this evaluation.
fn embeds(options: &EvalOptions<'_>) -> bool {
    options.embeddings.is_some()
        && options
            .metrics
            .iter()
            .any(|spec| spec.metric == Metric::Judged(JudgedMetric::AnswerRelevance))
}
