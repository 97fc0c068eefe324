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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::evaluate::evaluate_run;
    use crate::input::native_qrels;
    use crate::input::text_file::TextFile;
    use crate::judge::backend::JudgeBackend;
    use crate::judge::events::Events;
    use crate::judge::{self, Judge, Verdict, kinds};
    use crate::metrics::claims::ClaimSplitter;
    use crate::metrics::conventions::Conventions;
    use crate::metrics::metric::MetricSpec;

    const QRELS: &str = r#"{"qid":"q1","query":"where are backups","gold_doc_ids":["d1"]}
{"qid":"q2","query":"are backups encrypted","gold_doc_ids":["d2"]}
{"qid":"q3","query":"no relevant document here","gold_doc_ids":[],"graded_relevance":{"d9":0}}
"#;

    const RUN: &str = r#"{"qid":"q1","retrieved":[{"doc_id":"d1","text":"Backups stay in Frankfurt."}],"answer":"Backups stay in Frankfurt. They are copied twice."}
{"qid":"q2","retrieved":[{"doc_id":"d2","text":"Backups are encrypted."}],"answer":""}
{"qid":"q3","retrieved":[{"doc_id":"d9","text":"Nothing."}],"answer":"Something."}
{"qid":"q9","retrieved":[{"doc_id":"d1","text":"Not in the qrels."}],"answer":"Unknown."}
"#;

    fn qrels() -> Qrels {
        native_qrels::read(&TextFile::from_bytes("qrels.jsonl", QRELS.as_bytes().to_vec()).unwrap())
            .unwrap()
    }

    fn run() -> Vec<RunQuery> {
        crate::input::run::read(
            &TextFile::from_bytes("run.jsonl", RUN.as_bytes().to_vec()).unwrap(),
        )
        .unwrap()
    }

    fn options(metrics: Vec<MetricSpec>, judges: BTreeMap<String, Judge>) -> EvalOptions<'static> {
        EvalOptions {
            metrics,
            judges,
            corpus: None,
            cache: None,
            embeddings: None,
            chunk_separator: None,
            threads: 1,
            judge_repeat: 1,
            keep_ranked: 0,
            conventions: Conventions::default(),
        }
    }

    fn judged(metric: JudgedMetric) -> MetricSpec {
        MetricSpec::new(Metric::Judged(metric))
    }

    #[test]
    fn a_plan_has_exactly_the_tasks_the_evaluation_judges() {
        let judges: BTreeMap<String, Judge> =
            [("default".to_string(), judge::build(&kinds::default_judge()))].into();
        let options = options(
            vec![
                judged(JudgedMetric::Faithfulness),
                judged(JudgedMetric::AnswerRelevance),
            ],
            judges,
        );
        let plan = plan_run(&qrels(), Path::new("run.jsonl"), run(), &options).unwrap();
        // q1 scored with two claims and a relevance task; q2's empty answer asks nothing; q3
        // has no relevant document and q9 is not in the qrels: not scored.
        assert_eq!((plan.queries, plan.answers), (2, 1));
        let tasks = &plan.tasks["default"];
        assert_eq!(tasks.len(), 3, "{tasks:?}");
        assert_eq!(
            tasks
                .iter()
                .filter(|t| matches!(t, Task::Support { .. }))
                .count(),
            2
        );
        let evaluation = evaluate_run(&qrels(), Path::new("run.jsonl"), run(), &options).unwrap();
        assert_eq!(evaluation.judge_usage.tasks, tasks.len());
        assert!(plan.decompositions.is_empty() && plan.embedded.is_empty());
    }

    /// A judge that fails the test if it is asked anything.
    #[derive(Debug, PartialEq)]
    struct Refusing;

    impl JudgeBackend for Refusing {
        fn kind(&self) -> &'static str {
            "refusing"
        }
        fn describe(&self) -> String {
            "refusing".to_string()
        }
        fn judge_all(&self, _: &str, _: &[Task], _: &Events) -> Result<Vec<Verdict>> {
            panic!("a plan asks no judge")
        }
        fn decompose_all(&self, _: &str, _: &[ClaimsTask], _: &Events) -> Result<Vec<Vec<String>>> {
            panic!("a plan asks no judge to decompose")
        }
    }

    #[test]
    fn answers_not_yet_decomposed_are_counted_without_asking_and_their_claims_left_out() {
        let judges: BTreeMap<String, Judge> = [("llm".to_string(), Judge::new(Refusing))].into();
        let faithfulness = MetricSpec {
            judge: "llm".to_string(),
            claims: ClaimSplitter::Llm,
            ..judged(JudgedMetric::Faithfulness)
        };
        let relevance = MetricSpec {
            judge: "llm".to_string(),
            ..judged(JudgedMetric::AnswerRelevance)
        };
        let options = options(vec![faithfulness, relevance], judges);
        let plan = plan_run(&qrels(), Path::new("run.jsonl"), run(), &options).unwrap();
        assert_eq!(plan.decompositions["llm"].len(), 1, "q1's answer");
        assert_eq!(plan.undecomposed["llm"], plan.decompositions["llm"]);
        let tasks = &plan.tasks["llm"];
        assert_eq!(tasks.len(), 1, "only q1's relevance task: {tasks:?}");
        assert!(matches!(tasks[0], Task::Relevance { .. }));
    }
}
