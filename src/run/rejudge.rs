//! Judge changes between a baseline and the current run (`--allow-judge-change`).
//!
//! Verdicts of different judges are not comparable, so a judge (or embeddings endpoint) that
//! differs from the one recorded in the baseline's provenance is an error. With
//! `--allow-judge-change` the baseline's stored answers are judged again with the current judges
//! so that the comparison stays like for like: a run is rebuilt from the baseline (its stored
//! answer and ranked doc ids per query), the contexts are the corpus texts of those doc ids,
//! and every judged metric of the baseline (and its claims and embedding parts) is replaced by
//! the values the current judges give; the other metrics are kept. When contexts cannot be
//! rebuilt (no corpus, a doc id not in it, answers stored as sha256 only) it is an error.

use std::collections::BTreeMap;
use std::path::Path;

use crate::baseline::collect::summarise;
use crate::baseline::results::{QueryRecord, Results, StoredClaim};
use crate::config::{Config, Tier};
use crate::error::{Error, Result};
use crate::evaluate::{EvalOptions, Evaluation, evaluate_run};
use crate::input::corpus::Corpus;
use crate::input::qrels::Qrels;
use crate::input::run::{Retrieved, RunQuery};
use crate::judge::cache::JudgeCache;
use crate::metrics::metric::JudgedMetric;
use crate::metrics::metric::{Metric, MetricSpec};

/// The judging identities of a results file: judge name -> description, and the embeddings.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Identities {
    pub judges: BTreeMap<String, String>,
    pub embeddings: Option<String>,
}

impl Identities {
    pub(crate) fn of(results: &Results) -> Identities {
        Identities {
            judges: results.provenance.judges.clone(),
            embeddings: results.provenance.embeddings.clone(),
        }
    }
}

/// The differences of `current` from `baseline`, one message each (judges the current run does
/// not use are ignored).
pub(crate) fn differences(baseline: &Identities, current: &Identities) -> Vec<String> {
    let mut found = Vec::new();
    for (name, now) in &current.judges {
        let before = baseline.judges.get(name);
        if before != Some(now) {
            found.push(format!(
                "judge `{name}` differs from the baseline's ({} -> {now})",
                before.map_or("none", String::as_str)
            ));
        }
    }
    if let Some(now) = &current.embeddings
        && baseline.embeddings.as_ref() != Some(now)
    {
        found.push(format!(
            "the embeddings differ from the baseline's ({} -> {now})",
            baseline.embeddings.as_deref().unwrap_or("none")
        ));
    }
    found
}

/// The error for judge changes without `--allow-judge-change`; `accept` is the command that
/// accepts the gate's results once it ran with `--allow-judge-change` (None outside a gate).
pub(crate) fn refused(differences: &[String], accept: Option<&str>) -> Error {
    let how = match accept {
        Some(accept) => format!(": rerun this gate with --allow-judge-change, then run `{accept}`"),
        None => String::new(),
    };
    Error::Usage(format!(
        "{}: verdicts of different judges are not comparable; pass --allow-judge-change to \
         re-judge the baseline's stored answers with the current judges, or accept a baseline \
         judged by the current ones{how}",
        differences.join("; ")
    ))
}

/// What re-judging reads besides the baseline.
pub(crate) struct Rejudging<'a> {
    pub config: &'a Config,
    /// The tier whose baseline is re-judged: its metrics are recomputed.
    pub tier: &'a Tier,
    pub qrels: &'a Qrels,
    pub corpus: Option<&'a Corpus>,
    pub cache: Option<&'a JudgeCache>,
    /// The baseline's file, which messages about the rebuilt run name.
    pub source: &'a Path,
}

/// Names of the tier's metrics the current judges (or embeddings) decide.
fn judged_metrics(config: &Config, tier: &Tier) -> Vec<String> {
    tier.metrics
        .iter()
        .filter(|spec| {
            spec.is_judged()
                || (spec.metric == Metric::Judged(JudgedMetric::AnswerRelevance)
                    && config.embeddings.is_some())
        })
        .map(|spec| spec.metric.to_string())
        .collect()
}

/// `baseline` with its judged metrics recomputed by the current judges; `current` becomes its
/// provenance's judging identities.
pub(crate) fn rejudge(
    baseline: &Results,
    current: &Identities,
    with: &Rejudging<'_>,
) -> Result<Results> {
    let config = with.config;
    let run = rebuilt_run(baseline, with)?;
    let names = judged_metrics(config, with.tier);
    let mut rejudged = baseline.clone();
    rejudged.provenance.judges = current.judges.clone();
    rejudged.provenance.embeddings = current.embeddings.clone();
    if run.is_empty() || names.is_empty() {
        return Ok(rejudged);
    }
    let clients = config.judge_clients(&super::judge_events::printed());
    let options = EvalOptions {
        judge_repeat: 1,
        metrics: with
            .tier
            .metrics
            .iter()
            .filter(|spec| names.contains(&spec.metric.to_string()))
            .cloned()
            .collect(),
        judges: clients.judges,
        corpus: with.corpus,
        cache: with.cache,
        embeddings: clients.embeddings.as_ref(),
        // The stored ids are documents already.
        chunk_separator: None,
        threads: 1,
        keep_ranked: 0,
        // The baseline's own: the same queries, judged by the current judges.
        conventions: baseline.provenance.conventions(),
    };
    let evaluation = evaluate_run(with.qrels, with.source, run, &options)?;
    let metric_names: Vec<String> = evaluation.metrics.iter().map(ToString::to_string).collect();
    // The re-judged values are of the first run's answers only: whatever noise the baseline
    // stored for them (as means over its runs) no longer holds.
    if let Some(noise) = &mut rejudged.noise {
        for name in &metric_names {
            noise.metrics.remove(name);
        }
    }
    store_values(&mut rejudged, &metric_names, &evaluation);
    rejudged.summary = summarise(&rejudged.metrics, &rejudged.queries);
    Ok(rejudged)
}

/// The baseline's stored answers and ranked doc ids as a native run, after checking that their
/// contexts can be rebuilt from the corpus (faithfulness judges answers against them).
pub(crate) fn rebuilt_run(baseline: &Results, with: &Rejudging<'_>) -> Result<Vec<RunQuery>> {
    let cannot = |message: String| {
        Error::Usage(format!(
            "--allow-judge-change: the baseline's answers cannot be re-judged: {message}"
        ))
    };
    let contexts_k = faithfulness_contexts_k(&with.tier.metrics);
    let mut run = Vec::new();
    for (qid, record) in &baseline.queries {
        let Some(answer) = &record.answer else {
            if record.answer_sha256.is_some() {
                return Err(cannot(format!(
                    "query `{qid}` stores only the sha256 of its answer (store_text: false)"
                )));
            }
            continue; // missing from the baseline's run: its values stay
        };
        if let Some(k) = contexts_k.filter(|_| !answer.trim().is_empty()) {
            let corpus = with.corpus.ok_or_else(|| {
                cannot(
                    "results keep the ranked doc ids, not the contexts' texts, and the config names no `corpus:` to rebuild them from".to_string(),
                )
            })?;
            if let Some(doc) = record
                .retrieved
                .iter()
                .take(k)
                .find(|d| corpus.get(d).is_none())
            {
                return Err(cannot(format!(
                    "doc `{doc}` retrieved for query `{qid}` is not in the corpus"
                )));
            }
        }
        run.push(stored_query(qid, record, answer));
    }
    Ok(run)
}

/// The re-judged values and claims stored into the queries that have an answer.
fn store_values(rejudged: &mut Results, metric_names: &[String], evaluation: &Evaluation) {
    for scores in &evaluation.per_query {
        let Some(record) = rejudged.queries.get_mut(&scores.qid) else {
            continue;
        };
        if record.answer.is_none() {
            continue;
        }
        for (name, value) in metric_names.iter().zip(&scores.values) {
            match value {
                Some(value) => record.metrics.insert(name.clone(), *value),
                None => record.metrics.remove(name),
            };
        }
        record.claims = scores
            .claims
            .iter()
            .map(|c| StoredClaim {
                claim: c.claim.clone(),
                grade: c.grade,
                reason: c.reason.clone(),
            })
            .collect();
        record.answer_relevance_embedding = scores.relevance;
    }
}

/// The most contexts a faithfulness metric of `metrics` judges an answer against.
fn faithfulness_contexts_k(metrics: &[MetricSpec]) -> Option<usize> {
    metrics
        .iter()
        .filter(|spec| {
            matches!(
                spec.metric,
                Metric::Judged(JudgedMetric::Faithfulness | JudgedMetric::FaithfulnessGraded)
            )
        })
        .map(|spec| spec.contexts_k)
        .max()
}

/// A stored query as a native run's query: its ranked doc ids and its answer.
fn stored_query(qid: &str, record: &QueryRecord, answer: &str) -> RunQuery {
    RunQuery {
        qid: qid.to_string(),
        retrieved: record
            .retrieved
            .iter()
            .map(|doc_id| Retrieved {
                doc_id: doc_id.clone(),
                score: None,
                text: None,
            })
            .collect(),
        answer: Some(answer.to_string()),
        contexts: None,
        latency_ms: None,
        usage: None,
        cost: None,
        line: 0,
    }
}
