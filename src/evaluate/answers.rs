//! Answer-level metrics of native run lines, in three steps so that a slow judge (an external
//! program, later an LLM) sees every task of the run at once: `prepare` builds each query's
//! contexts and judging tasks, `judge_all` puts the tasks to their judges, `finish` turns the
//! verdicts into metric values.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::input::corpus::Corpus;
use crate::input::qrels::QueryQrels;
use crate::input::run::RunQuery;
use crate::judge::cache::JudgeCache;
use crate::judge::decompose::ClaimsTask;
use crate::judge::{Judge, Task, Verdict};
use crate::metrics::claims::ClaimSplitter;
use crate::metrics::claims::split_claims;
use crate::metrics::generation::{self, AnswerInputs, ClaimVerdict, Judged, Missing};
use crate::metrics::metric::{AnswerLevel, JudgedMetric};
use crate::metrics::metric::{Metric, MetricSpec};

/// The answer metrics of an evaluation and what they need.
pub(super) struct AnswerMetrics<'a> {
    /// (position in the evaluation's metric list, the metric, its spec)
    pub specs: Vec<(usize, AnswerLevel, &'a MetricSpec)>,
    pub corpus: Option<&'a Corpus>,
    pub separator: Option<&'a str>,
    pub run_path: &'a Path,
    /// The qrels file, named when a query has no text but a judge needs its question.
    pub qrels_path: &'a Path,
    /// Answers already decomposed into claims by judges (`claims: llm`).
    pub decomposed: Decomposed,
    /// `answer_relevance` comes from embeddings, not from a judge's relevance task.
    pub embedding_relevance: bool,
}

/// Claims of answers decomposed by judges (`claims: llm`), by judge and (question, answer).
#[derive(Default)]
pub(super) struct Decomposed {
    claims: BTreeMap<(String, ClaimsTask), Vec<String>>,
    /// Answers decomposed and how many went to a judge.
    pub usage: JudgeUsage,
    /// Only the claims the cache holds (a plan): an answer without claims here gets no support
    /// tasks, instead of being a bug.
    pub partial: bool,
}

/// The decompositions (`claims: llm`) a run needs, per judge: the cached ones read (not asked).
pub(super) struct PlannedDecompositions {
    /// The claims the cache holds, for `prepare`.
    pub decomposed: Decomposed,
    /// Every answer to decompose per judge, as the gate asks them (sorted, de-duplicated).
    pub tasks: BTreeMap<String, Vec<ClaimsTask>>,
    /// Of them, those the cache does not hold (the judge would be asked).
    pub missing: BTreeMap<String, Vec<ClaimsTask>>,
}

/// Where a task went: its judge and its position in that judge's list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TaskId {
    judge: String,
    index: usize,
}

/// The tasks of the whole run, per judge name.
#[derive(Default)]
pub(super) struct TaskBook {
    tasks: BTreeMap<String, Vec<Task>>,
}

impl TaskBook {
    /// The tasks, per judge name, in the order each judge is asked them.
    pub(super) fn into_tasks(self) -> BTreeMap<String, Vec<Task>> {
        self.tasks
    }

    fn add(&mut self, judge: &str, task: Task) -> TaskId {
        let list = self.tasks.entry(judge.to_string()).or_default();
        list.push(task);
        TaskId {
            judge: judge.to_string(),
            index: list.len() - 1,
        }
    }

    /// Every judge's verdicts on its tasks, in task order, through the cache when there is one.
    pub(super) fn judge_all(
        &self,
        judges: &BTreeMap<String, Judge>,
        cache: Option<&JudgeCache>,
        repeat: usize,
    ) -> Result<Verdicts> {
        let mut verdicts = BTreeMap::new();
        let mut judged = 0;
        let mut tasks_total = 0;
        for (name, tasks) in &self.tasks {
            let (list, asked) = judges[name].judge_cached(name, tasks, cache, repeat)?;
            verdicts.insert(name.clone(), list);
            judged += asked;
            tasks_total += tasks.len();
        }
        Ok(Verdicts {
            verdicts,
            usage: JudgeUsage {
                tasks: tasks_total,
                judged,
            },
        })
    }
}

/// The verdicts of a run, per judge name, in task order.
pub(super) struct Verdicts {
    verdicts: BTreeMap<String, Vec<Verdict>>,
    pub usage: JudgeUsage,
}

/// How much judging a run took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JudgeUsage {
    /// Tasks the answer metrics needed.
    pub tasks: usize,
    /// Tasks the judges were asked (the rest came from the cache).
    pub judged: usize,
}

impl Verdicts {
    fn get(&self, id: &TaskId) -> &Verdict {
        &self.verdicts[&id.judge][id.index]
    }
}

/// A query's answer, contexts and the tasks put to the judges for it.
pub(super) struct PreparedQuery {
    answer: String,
    question: String,
    gold_answer_substring: Option<String>,
    reference_answer: Option<String>,
    chunk_relevant: Vec<bool>,
    /// Per (judge, contexts k, splitter): the claims with their task ids.
    claims: BTreeMap<(String, usize, ClaimSplitter), Vec<(String, TaskId)>>,
    /// Per judge: the relevance task id.
    relevance: BTreeMap<String, TaskId>,
    /// Per judge: one relevance task per retrieved chunk (None when the chunk has no text).
    chunks: BTreeMap<String, Vec<Option<TaskId>>>,
}

/// Values of one query's answer metrics.
pub(super) struct AnswerScores {
    /// (position in the metric list, value; None when excluded or without a reference)
    pub values: Vec<(usize, Option<f64>)>,
    /// The claims of the first faithfulness metric, for the trace.
    pub claims: Vec<ClaimVerdict>,
    /// The answer was empty and at least one metric excluded it.
    pub empty_excluded: bool,
}

fn is_faithfulness(metric: Metric) -> bool {
    matches!(
        metric,
        Metric::Judged(JudgedMetric::Faithfulness | JudgedMetric::FaithfulnessGraded)
    )
}

impl AnswerMetrics<'_> {
    fn doc_of<'d>(&self, retrieved: &'d str) -> &'d str {
        // A match of a UTF-8 separator starts on a character boundary, so the prefix is a str.
        &retrieved[..super::document_of(retrieved.as_bytes(), self.separator).len()]
    }

    /// The text of a retrieved entry: its own `text`, else the corpus document's title and text.
    fn text_of(&self, run: &RunQuery, index: usize) -> Option<String> {
        let entry = &run.retrieved[index];
        if let Some(text) = &entry.text {
            return Some(text.clone());
        }
        let doc = self.corpus?.get(self.doc_of(&entry.doc_id))?;
        Some(if doc.title.is_empty() {
            doc.text.clone()
        } else {
            format!("{}\n{}", doc.title, doc.text)
        })
    }

    /// The query's text, for a judge of `metric` that needs the question: a query without text
    /// (TREC or TSV qrels without query texts) is an error naming the qid and the fix, never an
    /// empty question.
    fn question(&self, query: &QueryQrels, metric: Metric) -> Result<String> {
        query
            .text
            .clone()
            .filter(|text| !text.trim().is_empty())
            .ok_or_else(|| {
                Error::input(
                    self.qrels_path,
                    format!(
                        "query `{}` has no text, but its judge of {metric} needs the question: \
                         give the query a text (native qrels `query`, `--queries FILE` for TREC \
                         or TSV qrels, or a BEIR folder with `queries.jsonl`)",
                        query.qid
                    ),
                )
            })
    }

    /// The run's `contexts`, else the texts of its top `k` retrieved docs.
    fn contexts(&self, run: &RunQuery, k: usize) -> Result<Vec<String>> {
        if let Some(contexts) = &run.contexts {
            return Ok(contexts.clone());
        }
        (0..run.retrieved.len().min(k))
            .map(|i| {
                self.text_of(run, i).ok_or_else(|| {
                    Error::parse(
                        self.run_path,
                        run.line,
                        format!(
                            "no text for retrieved doc `{}` of query `{}`: expected \"contexts\" or a \"text\" \
                             in the run, or a corpus (`corpus:` in the config, --corpus for eval)",
                            run.retrieved[i].doc_id, run.qid
                        ),
                    )
                })
            })
            .collect()
    }

    /// The answers to decompose per judge: the non-empty answers of `queries`, for every
    /// faithfulness metric with `claims: llm`, sorted and de-duplicated.
    fn claims_tasks<'q>(
        &self,
        queries: impl Iterator<Item = (&'q RunQuery, &'q QueryQrels)>,
    ) -> Result<BTreeMap<String, Vec<ClaimsTask>>> {
        let deciders: Vec<(&str, Metric)> = self
            .specs
            .iter()
            .filter(|(_, _, spec)| {
                is_faithfulness(spec.metric) && spec.claims == ClaimSplitter::Llm
            })
            .map(|(_, _, spec)| (spec.judge.as_str(), spec.metric))
            .collect();
        let mut wanted: BTreeMap<String, Vec<ClaimsTask>> = BTreeMap::new();
        if deciders.is_empty() {
            return Ok(wanted);
        }
        for (run, query) in queries {
            let answer = run.answer.clone().unwrap_or_default();
            if answer.trim().is_empty() {
                continue;
            }
            for &(judge, metric) in &deciders {
                wanted
                    .entry(judge.to_string())
                    .or_default()
                    .push(ClaimsTask {
                        question: self.question(query, metric)?,
                        answer: answer.clone(),
                    });
            }
        }
        for tasks in wanted.values_mut() {
            tasks.sort();
            tasks.dedup();
        }
        Ok(wanted)
    }

    /// Decomposes the non-empty answers of `queries` into claims for every faithfulness metric
    /// with `claims: llm`, through the cache; `prepare` then reads the claims from here.
    pub(super) fn decompose<'q>(
        &self,
        queries: impl Iterator<Item = (&'q RunQuery, &'q QueryQrels)>,
        judges: &BTreeMap<String, Judge>,
        cache: Option<&JudgeCache>,
    ) -> Result<Decomposed> {
        let mut decomposed = Decomposed::default();
        for (judge, tasks) in self.claims_tasks(queries)? {
            let (claims, asked) = judges[&judge].decompose_cached(&judge, &tasks, cache)?;
            decomposed.usage.tasks += tasks.len();
            decomposed.usage.judged += asked;
            for (task, claims) in tasks.into_iter().zip(claims) {
                decomposed.claims.insert((judge.clone(), task), claims);
            }
        }
        Ok(decomposed)
    }

    /// What [`Self::decompose`] would do, asking nothing: the answers to decompose, the
    /// claims the cache holds (read-only) and the answers it does not.
    pub(super) fn plan_decompositions<'q>(
        &self,
        queries: impl Iterator<Item = (&'q RunQuery, &'q QueryQrels)>,
        judges: &BTreeMap<String, Judge>,
        cache: Option<&JudgeCache>,
    ) -> Result<PlannedDecompositions> {
        let mut planned = PlannedDecompositions {
            decomposed: Decomposed {
                partial: true,
                ..Decomposed::default()
            },
            tasks: BTreeMap::new(),
            missing: BTreeMap::new(),
        };
        for (judge, tasks) in self.claims_tasks(queries)? {
            let cached = judges[&judge].cached_claims(&tasks, cache)?;
            let missing = planned.missing.entry(judge.clone()).or_default();
            for (task, claims) in tasks.iter().zip(cached) {
                match claims {
                    Some(claims) => {
                        planned
                            .decomposed
                            .claims
                            .insert((judge.clone(), task.clone()), claims);
                    }
                    None => missing.push(task.clone()),
                }
            }
            planned.tasks.insert(judge, tasks);
        }
        Ok(planned)
    }

    /// Builds the query's inputs and records the tasks its metrics need.
    pub(super) fn prepare(
        &self,
        run: &RunQuery,
        query: &QueryQrels,
        book: &mut TaskBook,
    ) -> Result<PreparedQuery> {
        let answer = run.answer.clone().ok_or_else(|| {
            Error::parse(
                self.run_path,
                run.line,
                format!(
                    "query `{}` has no \"answer\": expected one for the answer metrics",
                    run.qid
                ),
            )
        })?;
        let empty = answer.trim().is_empty();
        // Only the judges that read the question need one: faithfulness with `claims: llm`
        // (non-empty answers), judge-based answer_relevance (non-empty answers) and judged
        // context_precision.
        let asks_question = self.specs.iter().find(|(_, _, spec)| match spec.metric {
            metric if is_faithfulness(metric) => !empty && spec.claims == ClaimSplitter::Llm,
            Metric::Judged(JudgedMetric::AnswerRelevance) => !empty && !self.embedding_relevance,
            Metric::ContextPrecision(_) => spec.judged,
            _ => false,
        });
        let question = match asks_question {
            Some((_, _, spec)) => self.question(query, spec.metric)?,
            None => query.text.clone().unwrap_or_default(),
        };
        let mut prepared = PreparedQuery {
            chunk_relevant: run
                .retrieved
                .iter()
                .map(|r| {
                    query
                        .judgments
                        .get(self.doc_of(&r.doc_id))
                        .is_some_and(|j| j.relevant)
                })
                .collect(),
            answer,
            question,
            gold_answer_substring: query.gold_answer_substring.clone(),
            reference_answer: query.reference_answer.clone(),
            claims: BTreeMap::new(),
            relevance: BTreeMap::new(),
            chunks: BTreeMap::new(),
        };
        for (_, _, spec) in &self.specs {
            let judge = spec.judge.as_str();
            match spec.metric {
                metric if is_faithfulness(metric) && !empty => {
                    let key = (judge.to_string(), spec.contexts_k, spec.claims);
                    if !prepared.claims.contains_key(&key) {
                        let context: Arc<str> =
                            self.contexts(run, spec.contexts_k)?.join("\n\n").into();
                        let split = match spec.claims {
                            ClaimSplitter::Sentences => split_claims(&prepared.answer),
                            ClaimSplitter::Llm => {
                                let task = ClaimsTask {
                                    question: prepared.question.clone(),
                                    answer: prepared.answer.clone(),
                                };
                                let key = (judge.to_string(), task);
                                if self.decomposed.partial
                                    && !self.decomposed.claims.contains_key(&key)
                                {
                                    // A plan: the judge would split this answer; its claims
                                    // are not known yet.
                                    continue;
                                }
                                self.decomposed.claims[&key].clone()
                            }
                        };
                        let claims = split
                            .into_iter()
                            .map(|claim| {
                                let id = book.add(
                                    judge,
                                    Task::Support {
                                        claim: claim.clone(),
                                        context: Arc::clone(&context),
                                    },
                                );
                                (claim, id)
                            })
                            .collect();
                        prepared.claims.insert(key, claims);
                    }
                }
                Metric::Judged(JudgedMetric::AnswerRelevance)
                    if !empty
                        && !self.embedding_relevance
                        && !prepared.relevance.contains_key(judge) =>
                {
                    let task = Task::Relevance {
                        question: prepared.question.clone(),
                        answer: prepared.answer.clone(),
                    };
                    prepared
                        .relevance
                        .insert(judge.to_string(), book.add(judge, task));
                }
                Metric::ContextPrecision(_)
                    if spec.judged && !prepared.chunks.contains_key(judge) =>
                {
                    let ids = (0..run.retrieved.len())
                        .map(|i| {
                            self.text_of(run, i).map(|text| {
                                book.add(
                                    judge,
                                    Task::Relevance {
                                        question: prepared.question.clone(),
                                        answer: text,
                                    },
                                )
                            })
                        })
                        .collect();
                    prepared.chunks.insert(judge.to_string(), ids);
                }
                _ => {}
            }
        }
        Ok(prepared)
    }

    /// The query's metric values from the verdicts.
    pub(super) fn finish(&self, prepared: &PreparedQuery, verdicts: &Verdicts) -> AnswerScores {
        let mut scores = AnswerScores {
            values: Vec::new(),
            claims: Vec::new(),
            empty_excluded: false,
        };
        for &(index, metric, spec) in &self.specs {
            let judge = spec.judge.as_str();
            let claims: Vec<ClaimVerdict> = prepared
                .claims
                .get(&(judge.to_string(), spec.contexts_k, spec.claims))
                .map(|claims| {
                    claims
                        .iter()
                        .map(|(claim, id)| {
                            let verdict = verdicts.get(id);
                            ClaimVerdict {
                                claim: claim.clone(),
                                score: verdict.score,
                                grade: verdict.grade,
                                supported: verdict.positive,
                                reason: verdict.reason.clone(),
                                asserts_nothing: verdict.asserts_nothing,
                            }
                        })
                        .collect()
                })
                .unwrap_or_default();
            if is_faithfulness(spec.metric) && scores.claims.is_empty() {
                scores.claims = claims.clone();
            }
            let judged = Judged {
                claims: &claims,
                relevant: prepared
                    .relevance
                    .get(judge)
                    .map(|id| verdicts.get(id).positive),
                chunks: prepared.chunks.get(judge).map(|ids| {
                    ids.iter()
                        .map(|id| id.as_ref().is_some_and(|id| verdicts.get(id).positive))
                        .collect()
                }),
            };
            let inputs = AnswerInputs {
                answer: &prepared.answer,
                chunk_relevant: &prepared.chunk_relevant,
                gold_answer_substring: prepared.gold_answer_substring.as_deref(),
                reference_answer: prepared.reference_answer.as_deref(),
            };
            let value = match generation::value(metric, &inputs, &judged, spec.empty_answer) {
                Ok(value) => Some(value),
                Err(Missing::EmptyAnswerExcluded) => {
                    scores.empty_excluded = true;
                    None
                }
                Err(Missing::NoReference) => None,
            };
            scores.values.push((index, value));
        }
        scores
    }
}
