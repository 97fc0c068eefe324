//! The evaluation of a scored run: every judged query's values (a query the run lacks scores 0),
//! each metric's mean, and the warnings about what was left out.

use std::path::Path;

use super::{Evaluation, JudgeUsage, QueryScores, Scored, Scorer, Tally};
use crate::error::{Error, Result};
use crate::evaluate::operational::Operational;
use crate::input::qrels::Qrels;
use crate::metrics::conventions::NoRelevant;
use crate::metrics::metric::AnswerMetric;
use crate::metrics::metric::Metric;
use crate::metrics::retrieval::RetrievalMetric;

/// What a judged query missing from the run scores: 0 (a dropped query is a regression), except
/// the answer length, which has no value (0 would look like an improvement), and
/// `empty_answers` and RBP's residual, which are 1 (the query got no answer, no rank is judged).
fn missing_value(metric: Metric) -> Option<f64> {
    match metric {
        Metric::Answer(AnswerMetric::Empty) => Some(1.0),
        // Nothing retrieved: every rank is left to the unjudged.
        Metric::Retrieval(RetrievalMetric::RbpResidual(_)) => Some(1.0),
        Metric::Answer(AnswerMetric::Length) | Metric::Operational(_) => None,
        _ => Some(0.0),
    }
}

pub(super) fn assemble(
    qrels: &Qrels,
    run_path: &Path,
    scorer: &Scorer<'_>,
    metrics: &[Metric],
    mut tally: Tally,
    mut warnings: Vec<String>,
) -> Result<Evaluation> {
    if tally.run_queries_in_qrels == 0 {
        let example = tally.first_unknown.clone().unwrap_or_default();
        return Err(Error::input(
            run_path,
            format!(
                "none of the run's {} queries is in the qrels {} (run qid `{example}`, qrels qid `{}`): \
                 expected the run to answer the judged queries",
                tally.run_queries_not_in_qrels,
                qrels.path().display(),
                qrels.queries().first().map_or("", |q| q.qid.as_str()),
            ),
        ));
    }
    let judged = judged_queries(qrels, scorer, metrics, std::mem::take(&mut tally.slots));
    if judged.per_query.is_empty() {
        return Err(Error::input(
            qrels.path(),
            format!(
                "none of the {} queries has a relevant document: expected at least one judged relevant (grade >= {} or in gold_doc_ids{})",
                judged.excluded_no_relevant,
                scorer.relevance_level,
                if scorer.relevance_level > 1 {
                    " with that grade"
                } else {
                    ""
                }
            ),
        ));
    }
    let (means, counts) = metric_means(qrels.path(), metrics, &judged.per_query)?;
    if qrels.comment_lines() > 0 {
        warnings.push(format!(
            "{}: {} comment lines (starting with `#`) were skipped",
            qrels.path().display(),
            qrels.comment_lines()
        ));
    }
    warnings.extend(run_warnings(run_path, &tally, &judged));
    Ok(Evaluation {
        metrics: metrics.to_vec(),
        per_query: judged.per_query,
        means,
        counts,
        empty_answers_excluded: judged.empty_answers_excluded,
        judge_usage: JudgeUsage::default(),
        embeddings: Vec::new(),
        excluded_no_relevant: judged.excluded_no_relevant,
        missing_from_run: judged.missing_from_run,
        run_queries_not_in_qrels: tally.run_queries_not_in_qrels,
        warnings,
    })
}

/// The scores of the judged queries (those with a relevant document), in qrels order.
struct Judged {
    per_query: Vec<QueryScores>,
    empty_answers_excluded: usize,
    excluded_no_relevant: usize,
    missing_from_run: usize,
}

/// Every judged query's scores; a judged query the run lacks scores [`missing_value`].
fn judged_queries(
    qrels: &Qrels,
    scorer: &Scorer<'_>,
    metrics: &[Metric],
    slots: Vec<Option<Scored>>,
) -> Judged {
    let mut judged = Judged {
        per_query: Vec::new(),
        empty_answers_excluded: 0,
        excluded_no_relevant: 0,
        missing_from_run: 0,
    };
    for ((query, truth), slot) in qrels.queries().iter().zip(&scorer.truths).zip(slots) {
        if truth.num_relevant == 0 && scorer.no_relevant == NoRelevant::Exclude {
            judged.excluded_no_relevant += 1;
            continue;
        }
        let scored = slot.unwrap_or_else(|| {
            judged.missing_from_run += 1;
            Scored {
                values: metrics.iter().map(|&m| missing_value(m)).collect(),
                ranked: Vec::new(),
                answer: None,
                claims: Vec::new(),
                operational: Operational::default(),
                relevance: None,
                empty_excluded: false,
                duplicates: 0,
                first_duplicate: None,
            }
        });
        judged.empty_answers_excluded += usize::from(scored.empty_excluded);
        judged.per_query.push(QueryScores {
            qid: query.qid.clone(),
            values: scored.values,
            ranked: scored.ranked,
            answer: scored.answer,
            claims: scored.claims,
            operational: scored.operational,
            relevance: scored.relevance,
        });
    }
    judged
}

/// Each metric's mean over the queries that have a value, and how many do; a metric no query has
/// a value for is an error naming what the qrels lack.
fn metric_means(
    qrels_path: &Path,
    metrics: &[Metric],
    per_query: &[QueryScores],
) -> Result<(Vec<f64>, Vec<usize>)> {
    let mut means = Vec::with_capacity(metrics.len());
    let mut counts = Vec::with_capacity(metrics.len());
    for (m, metric) in metrics.iter().enumerate() {
        let values: Vec<f64> = per_query.iter().filter_map(|q| q.values[m]).collect();
        if values.is_empty() {
            return Err(Error::input(
                qrels_path,
                format!(
                    "no query has a value for {metric}: expected gold_answer_substring (answer_contains), \
                     reference_answer (answer_f1, answer_exact) or non-empty answers; or remove \
                     `{metric}` from the config's `metrics:` (and its rules) when the queries \
                     have none"
                ),
            ));
        }
        means.push(values.iter().sum::<f64>() / values.len() as f64);
        counts.push(values.len());
    }
    Ok((means, counts))
}

/// The warnings about what was left out or ignored while scoring the run.
fn run_warnings(run_path: &Path, tally: &Tally, judged: &Judged) -> Vec<String> {
    let mut warnings = Vec::new();
    if judged.empty_answers_excluded > 0 {
        warnings.push(format!(
            "{}: {} empty answers were left out of the answer metrics (empty_answer: exclude)",
            run_path.display(),
            judged.empty_answers_excluded
        ));
    }
    if let Some((qid, doc)) = &tally.first_duplicate {
        warnings.push(format!(
            "{}: {} duplicate doc ids in rankings were ignored (the first occurrence counts), \
             the first: `{}` in query `{}`",
            run_path.display(),
            tally.duplicates,
            crate::error::shorten(doc),
            crate::error::shorten(qid)
        ));
    }
    if let Some(qid) = &tally.first_unknown {
        warnings.push(format!(
            "{}: {} run queries are not in the qrels and were ignored, the first: `{}`",
            run_path.display(),
            tally.run_queries_not_in_qrels,
            crate::error::shorten(qid)
        ));
    }
    if judged.missing_from_run > 0 {
        warnings.push(format!(
            "{}: {} judged queries are missing from the run and score 0",
            run_path.display(),
            judged.missing_from_run
        ));
    }
    warnings
}
