//! Scores a run against qrels: per-query metric values (retrieval metrics from the ranking,
//! answer metrics from the answer), their means and the counts of queries that were excluded,
//! missing or unknown.
//! Over 600 lines: the scoring loops of every run layout (native, TREC) share one `Scorer` here.

mod answers;
mod assemble;
pub(crate) mod judge_consistency;
pub mod operational;
mod plan;
mod relevance;
mod unsorted;

use std::collections::BTreeMap;
use std::collections::hash_map::Entry;
use std::path::Path;

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::input::corpus::Corpus;
use crate::input::qrels::{Qrels, QueryQrels, Ranked};
use crate::input::run::{self, RunQuery};
use crate::input::trec_run::{self, Repeat, RunEntry};
use crate::input::{RunFormat, text_file::TextFile};
use crate::judge::Judge;
use crate::judge::cache::JudgeCache;
use crate::judge::embeddings::EmbeddingClient;
use crate::metrics::conventions::{Conventions, NoRelevant};
use crate::metrics::embedding_relevance::{EmbeddedQuery, RelevanceParts};
use crate::metrics::generation::ClaimVerdict;
use crate::metrics::metric::JudgedMetric;
use crate::metrics::metric::{Metric, MetricSpec};
use crate::metrics::retrieval::{Depth, QueryTruth, RetrievalMetric};
pub use answers::JudgeUsage;
use answers::{AnswerMetrics, Decomposed, PreparedQuery, TaskBook};
use assemble::assemble;
use operational::Operational;
pub use plan::{JudgingPlan, plan_run};

/// What to compute and how to read retrieved ids.
#[derive(Debug, Clone)]
pub struct EvalOptions<'a> {
    /// The metrics to compute, in output order.
    pub metrics: Vec<MetricSpec>,
    /// The judges answer metrics name (`default` at least, when any is judged).
    pub judges: BTreeMap<String, Judge>,
    /// Document texts for contexts when the run carries none.
    pub corpus: Option<&'a Corpus>,
    /// Judge verdicts already known (None: judge everything).
    pub cache: Option<&'a JudgeCache>,
    /// When set, `answer_relevance` is embedding-based (normalised over the run's queries).
    pub embeddings: Option<&'a EmbeddingClient>,
    /// Retrieved `doc7#3` counts as `doc7` with separator `#`; later chunks of a doc are skipped.
    pub chunk_separator: Option<String>,
    /// Worker threads for TREC runs.
    pub threads: usize,
    /// Which asking of the judges this is (1: the first; a later one is cached apart, so an LLM
    /// judge is asked again: `judge_repeats:`).
    pub judge_repeat: usize,
    /// How many ranked doc ids (after chunk mapping and de-duplication) to keep per query.
    pub keep_ranked: usize,
    /// The relevance level and what a judged query without a relevant document scores.
    pub conventions: Conventions,
}

/// One evaluated query's values, in the order of `Evaluation::metrics`.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryScores {
    /// The query's id.
    pub qid: String,
    /// None where a metric has no value for the query (an excluded empty answer, no reference).
    pub values: Vec<Option<f64>>,
    /// The first `keep_ranked` doc ids of the ranking (empty when missing from the run).
    pub ranked: Vec<String>,
    /// The answer of a native run.
    pub answer: Option<String>,
    /// The answer's claims with the judge's verdicts (first faithfulness metric), for the trace.
    pub claims: Vec<ClaimVerdict>,
    /// Latency, tokens and cost, as far as the run line carried them.
    pub operational: Operational,
    /// The parts of the embedding-based answer relevance, when it was computed.
    pub relevance: Option<RelevanceParts>,
}

/// The result of scoring a run.
#[derive(Debug, Clone)]
pub struct Evaluation {
    /// The metrics computed, in the order of `values`, `means` and `counts`.
    pub metrics: Vec<Metric>,
    /// Queries with at least one relevant doc, in qrels order; those missing from the run score 0.
    pub per_query: Vec<QueryScores>,
    /// Mean of each metric over the queries that have a value for it.
    pub means: Vec<f64>,
    /// How many queries have a value for each metric.
    pub counts: Vec<usize>,
    /// Queries whose empty answer was left out of a metric (`empty_answer: exclude`).
    pub empty_answers_excluded: usize,
    /// How many judging tasks the answer metrics needed and how many went to a judge.
    pub judge_usage: JudgeUsage,
    /// Queries of the qrels with no relevant document: left out of every mean, counted here.
    pub excluded_no_relevant: usize,
    /// Queries of the qrels missing from the run: they score 0 (trec_eval `-c`).
    pub missing_from_run: usize,
    /// Queries of the run that the qrels do not have: ignored, counted here.
    pub run_queries_not_in_qrels: usize,
    /// Things the user should know that did not stop the evaluation.
    pub warnings: Vec<String>,
    /// The question and answer embeddings behind embedding-based answer relevance, by qid.
    pub embeddings: Vec<EmbeddedQuery>,
}

/// How one run query fared.
// Nearly every outcome is `Scored`: boxing it would add an allocation per query and save nothing.
#[allow(clippy::large_enum_variant)]
enum Outcome {
    NotInQrels,
    NoRelevant,
    Scored { position: usize, scores: Scored },
}

/// The values of one scored query and what was noticed on the way.
struct Scored {
    values: Vec<Option<f64>>,
    ranked: Vec<String>,
    answer: Option<String>,
    claims: Vec<ClaimVerdict>,
    operational: Operational,
    relevance: Option<RelevanceParts>,
    empty_excluded: bool,
    duplicates: usize,
    first_duplicate: Option<Box<str>>,
}

/// A query's retrieved documents as the metrics read them, and what was noticed on the way.
struct Ranking {
    /// The judgments in rank order ([`Ranked::Unjudged`] for a document the qrels do not judge).
    judgments: Vec<Ranked>,
    /// The first `keep_ranked` doc ids, for the report.
    kept: Vec<String>,
    /// Retrieved ids that repeat an earlier one, and the first of them.
    duplicates: usize,
    first_duplicate: Option<Box<str>>,
}

struct Scorer<'a> {
    qrels: &'a Qrels,
    truths: Vec<QueryTruth>,
    /// The retrieval metrics with their positions in the full metric list.
    metrics: Vec<(usize, RetrievalMetric)>,
    metric_count: usize,
    depth: Depth,
    separator: Option<&'a str>,
    keep_ranked: usize,
    no_relevant: NoRelevant,
    /// The relevance level the qrels were read at (for messages).
    relevance_level: crate::input::qrels::Grade,
}

impl Scorer<'_> {
    /// Whether the query at `position` is scored: it has a relevant document, or a query
    /// without one scores 0 (`no_relevant: zero`).
    fn is_scored(&self, position: usize) -> bool {
        self.truths[position].num_relevant > 0 || self.no_relevant == NoRelevant::Zero
    }

    fn doc_of<'d>(&self, retrieved: &'d [u8]) -> &'d [u8] {
        document_of(retrieved, self.separator)
    }

    /// Scores the query at `position` of the qrels from its ranked doc ids (in rank order).
    fn score<'d>(
        &self,
        position: usize,
        ranked: impl ExactSizeIterator<Item = &'d [u8]>,
    ) -> Outcome {
        if !self.is_scored(position) {
            return Outcome::NoRelevant;
        }
        let ranking = self.rank(position, ranked);
        let mut scored = self.scored(position, &ranking.judgments, ranking.kept);
        if let Outcome::Scored { scores, .. } = &mut scored {
            scores.duplicates = ranking.duplicates;
            scores.first_duplicate = ranking.first_duplicate;
        }
        scored
    }

    /// The judgments of the query at `position` for its ranked doc ids (in rank order), as deep
    /// as the metrics read: [`Ranked::Unjudged`] for a document the qrels do not judge.
    fn rank<'d>(
        &self,
        position: usize,
        ranked: impl ExactSizeIterator<Item = &'d [u8]>,
    ) -> Ranking {
        let truth = &self.truths[position];
        let query: &QueryQrels = &self.qrels.queries()[position];
        let mut judgments: Vec<Ranked> = Vec::new();
        let mut first_chunk: FxHashMap<&[u8], &[u8]> =
            FxHashMap::with_capacity_and_hasher(ranked.len().min(256), Default::default());
        let mut duplicates = 0;
        let mut first_duplicate = None;
        let mut found_relevant = false;
        let mut kept = Vec::new();
        for retrieved in ranked {
            if self
                .depth
                .is_satisfied(judgments.len(), found_relevant, truth)
                && kept.len() >= self.keep_ranked
            {
                break;
            }
            let doc = self.doc_of(retrieved);
            match first_chunk.entry(doc) {
                Entry::Occupied(first) => {
                    // A later chunk of a document is skipped silently; the same id again is a duplicate.
                    if *first.get() == retrieved {
                        duplicates += 1;
                        first_duplicate
                            .get_or_insert_with(|| String::from_utf8_lossy(retrieved).into());
                    }
                    continue;
                }
                Entry::Vacant(slot) => {
                    slot.insert(retrieved);
                }
            }
            // Ids that are not UTF-8 cannot be judged (qrels ids are text); readers reject them anyway.
            let judgment = Ranked::of(query.judgments.get_bytes(doc));
            found_relevant |= judgment.relevant();
            judgments.push(judgment);
            if kept.len() < self.keep_ranked {
                kept.push(String::from_utf8_lossy(doc).into_owned());
            }
        }
        Ranking {
            judgments,
            kept,
            duplicates,
            first_duplicate,
        }
    }

    /// The outcome of the query at `position` from its judgments in rank order and the doc ids
    /// kept for the report.
    fn scored(&self, position: usize, ranking: &[Ranked], kept: Vec<String>) -> Outcome {
        let truth = &self.truths[position];
        let mut values = vec![None; self.metric_count];
        for &(index, metric) in &self.metrics {
            // Without a relevant document (kept by `no_relevant: zero`) the metrics of relevance
            // are 0, as `value` says.
            values[index] = Some(metric.value(ranking, truth));
        }
        Outcome::Scored {
            position,
            scores: Scored {
                values,
                ranked: kept,
                answer: None,
                claims: Vec::new(),
                operational: Operational::default(),
                relevance: None,
                empty_excluded: false,
                duplicates: 0,
                first_duplicate: None,
            },
        }
    }
}

/// The document a retrieved id names: `doc7#3` is `doc7` with separator `#` (split at the last
/// separator); without a separator the id itself.
pub fn document_of<'d>(retrieved: &'d [u8], separator: Option<&str>) -> &'d [u8] {
    match separator {
        Some(sep) => memchr::memmem::rfind(retrieved, sep.as_bytes())
            .map_or(retrieved, |at| &retrieved[..at]),
        None => retrieved,
    }
}

/// Collects outcomes into per-query slots and counts.
struct Tally {
    slots: Vec<Option<Scored>>,
    run_queries_in_qrels: usize,
    run_queries_not_in_qrels: usize,
    first_unknown: Option<String>,
    duplicates: usize,
    first_duplicate: Option<(String, Box<str>)>,
}

impl Tally {
    fn new(queries: usize) -> Self {
        Tally {
            slots: std::iter::repeat_with(|| None).take(queries).collect(),
            run_queries_in_qrels: 0,
            run_queries_not_in_qrels: 0,
            first_unknown: None,
            duplicates: 0,
            first_duplicate: None,
        }
    }

    fn add(&mut self, qid: &str, outcome: Outcome) {
        match outcome {
            Outcome::NotInQrels => {
                self.run_queries_not_in_qrels += 1;
                self.first_unknown.get_or_insert_with(|| qid.to_string());
            }
            Outcome::NoRelevant => self.run_queries_in_qrels += 1,
            Outcome::Scored {
                position,
                mut scores,
            } => {
                self.run_queries_in_qrels += 1;
                self.duplicates += scores.duplicates;
                if let Some(doc) = scores.first_duplicate.take() {
                    self.first_duplicate
                        .get_or_insert_with(|| (qid.to_string(), doc));
                }
                self.slots[position] = Some(scores);
            }
        }
    }
}

/// Scores the run at `run_path` (in `format`) against `qrels`.
pub fn evaluate(
    qrels: &Qrels,
    run_path: &Path,
    format: RunFormat,
    options: &EvalOptions<'_>,
) -> Result<Evaluation> {
    let run = match format {
        RunFormat::Native => RunInput::Native(run::read(&TextFile::read(run_path)?)?),
        RunFormat::Trec => RunInput::Trec,
    };
    score_run(qrels, run_path, run, options)
}

/// Scores a native run already in memory (`queries` in rank order per query, as
/// [`run::read`] returns them); messages name it `source`.
pub fn evaluate_run(
    qrels: &Qrels,
    source: &Path,
    queries: Vec<RunQuery>,
    options: &EvalOptions<'_>,
) -> Result<Evaluation> {
    score_run(qrels, source, RunInput::Native(queries), options)
}

/// A run to score: a native run's queries, or a TREC run streamed from its file.
enum RunInput {
    Native(Vec<RunQuery>),
    Trec,
}

/// `qrels` at the options' relevance level: a copy only when it is not the default.
fn leveled<'q>(qrels: &'q Qrels, options: &EvalOptions<'_>) -> std::borrow::Cow<'q, Qrels> {
    let level = options.conventions.relevance_level;
    if level == Conventions::default().relevance_level {
        std::borrow::Cow::Borrowed(qrels)
    } else {
        let mut copy = qrels.clone();
        copy.set_relevance_level(level);
        std::borrow::Cow::Owned(copy)
    }
}

/// The scorer of the retrieval metrics and the answer metrics of `options` over `qrels`
/// (already [`leveled`]), for the run at `run_path`.
fn scorers<'a>(
    qrels: &'a Qrels,
    run_path: &'a Path,
    options: &'a EvalOptions<'_>,
) -> (Scorer<'a>, AnswerMetrics<'a>) {
    let retrieval: Vec<(usize, RetrievalMetric)> = options
        .metrics
        .iter()
        .enumerate()
        .filter_map(|(i, spec)| spec.metric.as_retrieval().map(|m| (i, m)))
        .collect();
    let retrieval_only: Vec<RetrievalMetric> = retrieval.iter().map(|&(_, m)| m).collect();
    let level = options.conventions.relevance_level;
    let separator = options.chunk_separator.as_deref().filter(|s| !s.is_empty());
    let scorer = Scorer {
        qrels,
        truths: qrels.queries().iter().map(QueryTruth::new).collect(),
        depth: Depth::of(&retrieval_only),
        metrics: retrieval,
        metric_count: options.metrics.len(),
        separator,
        keep_ranked: options.keep_ranked,
        no_relevant: options.conventions.no_relevant,
        relevance_level: level,
    };
    let answer_metrics = AnswerMetrics {
        specs: options
            .metrics
            .iter()
            .enumerate()
            .filter_map(|(index, spec)| Some((index, spec.metric.answer_level()?, spec)))
            .collect(),
        corpus: options.corpus,
        separator,
        run_path,
        qrels_path: qrels.path(),
        decomposed: Decomposed::default(),
        embedding_relevance: options.embeddings.is_some(),
    };
    (scorer, answer_metrics)
}

fn score_run(
    qrels: &Qrels,
    run_path: &Path,
    run: RunInput,
    options: &EvalOptions<'_>,
) -> Result<Evaluation> {
    let leveled = leveled(qrels, options);
    let qrels = leveled.as_ref();
    let (scorer, mut answer_metrics) = scorers(qrels, run_path, options);
    let mut tally = Tally::new(qrels.len());
    let mut warnings = Vec::new();
    let mut judge_usage = JudgeUsage::default();
    match run {
        RunInput::Native(queries) => {
            judge_usage = score_native(
                qrels,
                run_path,
                queries,
                options,
                &scorer,
                &mut answer_metrics,
                &mut tally,
            )?;
        }
        RunInput::Trec => {
            warnings = score_trec(qrels, run_path, options, &scorer, &mut tally)?;
        }
    }
    let metrics: Vec<Metric> = options.metrics.iter().map(|s| s.metric).collect();
    let relevance_index = options
        .metrics
        .iter()
        .position(|spec| spec.metric == Metric::Judged(JudgedMetric::AnswerRelevance));
    let mut embeddings = Vec::new();
    if let (Some(client), Some(index)) = (options.embeddings, relevance_index) {
        let (embedded, usage) = relevance::apply(
            qrels,
            run_path,
            &mut tally.slots,
            index,
            client,
            options.cache,
        )?;
        embeddings = embedded;
        judge_usage.tasks += usage.tasks;
        judge_usage.judged += usage.judged;
    }
    let mut evaluation = assemble(qrels, run_path, &scorer, &metrics, tally, warnings)?;
    evaluation.embeddings = embeddings;
    evaluation.judge_usage = judge_usage;
    Ok(evaluation)
}

/// Native runs: retrieval values and judging tasks per query first, then every judge once,
/// then the answer values (every input error is found before a judge is asked). Returns the
/// judges' usage.
fn score_native(
    qrels: &Qrels,
    run_path: &Path,
    queries: Vec<RunQuery>,
    options: &EvalOptions<'_>,
    scorer: &Scorer<'_>,
    answer_metrics: &mut AnswerMetrics<'_>,
    tally: &mut Tally,
) -> Result<JudgeUsage> {
    // Answers decomposed by judges (`claims: llm`) first: their claims are the tasks.
    let scored = queries.iter().filter_map(|query| {
        let position = qrels.position(&query.qid)?;
        scorer
            .is_scored(position)
            .then(|| (query, &qrels.queries()[position]))
    });
    answer_metrics.decomposed = answer_metrics.decompose(scored, &options.judges, options.cache)?;
    let decomposed = answer_metrics.decomposed.usage;
    let usage = score_queries(
        (qrels, run_path),
        queries.into_iter(),
        options,
        scorer,
        answer_metrics,
        tally,
    )?;
    Ok(JudgeUsage {
        tasks: usage.tasks + decomposed.tasks,
        judged: usage.judged + decomposed.judged,
    })
}

/// A native run's queries scored, their tasks judged, their answer values set. Returns the
/// usage of the judging.
fn score_queries(
    (qrels, run_path): (&Qrels, &Path),
    queries: impl Iterator<Item = RunQuery>,
    options: &EvalOptions<'_>,
    scorer: &Scorer<'_>,
    answer_metrics: &AnswerMetrics<'_>,
    tally: &mut Tally,
) -> Result<JudgeUsage> {
    let mut book = TaskBook::default();
    let mut pending: Vec<(String, Outcome, Option<PreparedQuery>)> = Vec::new();
    for mut query in queries {
        let outcome = match qrels.position(&query.qid) {
            None => Outcome::NotInQrels,
            Some(position) => scorer.score(
                position,
                query.retrieved.iter().map(|r| r.doc_id.as_bytes()),
            ),
        };
        let mut prepared = None;
        if let Outcome::Scored { position, .. } = &outcome
            && !answer_metrics.specs.is_empty()
        {
            prepared =
                Some(answer_metrics.prepare(&query, &qrels.queries()[*position], &mut book)?);
        }
        let mut outcome = outcome;
        if let Outcome::Scored { scores, .. } = &mut outcome {
            scores.operational = Operational::of(&query, run_path)?;
            for (index, spec) in options.metrics.iter().enumerate() {
                if let Metric::Operational(metric) = spec.metric {
                    let value = scores.operational.value(metric, &query, run_path)?;
                    scores.values[index] = Some(value);
                }
            }
            // Moved, not copied: the run line is not read again.
            scores.answer = query.answer.take();
        }
        pending.push((query.qid, outcome, prepared));
    }
    let verdicts = book.judge_all(&options.judges, options.cache, options.judge_repeat)?;
    for (qid, mut outcome, prepared) in pending {
        if let (Outcome::Scored { scores, .. }, Some(prepared)) = (&mut outcome, &prepared) {
            let answer_scores = answer_metrics.finish(prepared, &verdicts);
            for (index, value) in answer_scores.values {
                scores.values[index] = value;
            }
            scores.claims = answer_scores.claims;
            scores.empty_excluded = answer_scores.empty_excluded;
        }
        tally.add(&qid, outcome);
    }
    Ok(verdicts.usage)
}

/// TREC runs: retrieval metrics only, read in parallel; returns the warnings of an ungrouped run
/// and of lines skipped (comments) or read in part (fields after the sixth).
fn score_trec(
    qrels: &Qrels,
    run_path: &Path,
    options: &EvalOptions<'_>,
    scorer: &Scorer<'_>,
    tally: &mut Tally,
) -> Result<Vec<String>> {
    let unsupported: Vec<String> = options
        .metrics
        .iter()
        .filter(|s| s.metric.as_retrieval().is_none())
        .map(|s| s.metric.to_string())
        .collect();
    if !unsupported.is_empty() {
        return Err(Error::input(
            run_path,
            format!(
                "{} need answers or pipeline figures, which a TREC run does not have: expected a native run (JSONL with \"answer\")",
                unsupported.join(", ")
            ),
        ));
    }
    let score_entries = |qid: &str, entries: &mut [RunEntry<'_>]| match qrels.position(qid) {
        None => Outcome::NotInQrels,
        Some(position) => unsorted::score(scorer, position, entries)
            .unwrap_or_else(|| scorer.score(position, trec_run::in_trec_order(entries))),
    };
    let read = trec_run::ReadOptions::new(options.threads);
    let queries = trec_run::for_each_query(run_path, &read, score_entries)?;
    let mut warnings: Vec<String> = queries
        .ungrouped
        .as_ref()
        .map(|repeat| {
            let Repeat {
                qid,
                first_line,
                later_line,
            } = repeat;
            let how = if queries.spilled {
                "through temporary files"
            } else {
                "in memory"
            };
            format!(
                "{}: the lines of query `{}` are not contiguous (lines {first_line} and \
             {later_line}); the run was read again and sorted by query {how}, which is \
             slower: group the lines by qid to avoid it",
                run_path.display(),
                crate::error::shorten(qid)
            )
        })
        .into_iter()
        .collect();
    let notes = queries.notes;
    if notes.comments > 0 {
        warnings.push(format!(
            "{}: {} comment lines (starting with `#`) were skipped",
            run_path.display(),
            notes.comments
        ));
    }
    if notes.extra_fields > 0 {
        warnings.push(format!(
            "{}: {} lines have fields after the sixth (`tag`), which were ignored",
            run_path.display(),
            notes.extra_fields
        ));
    }
    for output in queries.outputs {
        tally.add(&output.qid, output.value);
    }
    Ok(warnings)
}
