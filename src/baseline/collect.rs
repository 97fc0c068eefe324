//! Builds a tier's results from an evaluation: per-query records, per-slice summaries, provenance.

use std::collections::BTreeMap;

use crate::baseline::results::{
    FORMAT, MustPassRecord, Provenance, QueryRecord, Results, RunStatus, SliceSummary, StoredClaim,
};
use crate::digest::sha256_hex;
use crate::evaluate::Evaluation;
use crate::input::qrels::Qrels;
use crate::metrics::conventions::Conventions;

/// What besides the evaluation goes into results.
#[derive(Debug, Clone)]
pub(crate) struct RunContext<'a> {
    /// The tier the results belong to.
    pub tier: &'a str,
    /// The slice fields of the config (each query's values of them are recorded).
    pub slices: &'a [String],
    /// sha256 of the qrels file's bytes (lowercase hex), for the provenance.
    pub qrels_sha256: String,
    /// sha256 of the tier's meaningful config ([`crate::config::Tier::config_hash`]).
    pub config_hash: String,
    /// The commit the run was made from, when known (`GITHUB_SHA` or `git rev-parse HEAD`).
    pub git_commit: Option<String>,
    /// The judges the answer metrics used (name -> description).
    pub judges: BTreeMap<String, String>,
    /// The embeddings endpoint behind answer_relevance, described.
    pub embeddings: Option<String>,
    /// The relevance level and what judged queries without a relevant document scored.
    pub conventions: Conventions,
    /// How a sampled tier's queries were drawn (None: the tier's own qrels file).
    pub sample: Option<String>,
}

/// The results of `evaluation` over `qrels`, every text kept (see [`strip_text`]); `status` is
/// set by the caller once decided. Each query's ranking and answer are moved into the results
/// (the evaluation keeps its values and claims).
pub(crate) fn collect(
    evaluation: &mut Evaluation,
    qrels: &Qrels,
    context: RunContext<'_>,
) -> Results {
    let metric_names: Vec<String> = evaluation.metrics.iter().map(ToString::to_string).collect();
    let mut queries = BTreeMap::new();
    for scores in &mut evaluation.per_query {
        let query = qrels.position(&scores.qid).map(|p| &qrels.queries()[p]);
        let slices: BTreeMap<String, String> = context
            .slices
            .iter()
            .map(|field| {
                let value = query.and_then(|q| q.attributes.get(field)).cloned();
                (field.clone(), value.unwrap_or_else(|| "<none>".to_string()))
            })
            .collect();
        let record = QueryRecord {
            query: query.and_then(|q| q.text.clone()),
            slices,
            metrics: metric_names
                .iter()
                .zip(&scores.values)
                .filter_map(|(name, value)| Some((name.clone(), (*value)?)))
                .collect(),
            retrieved: std::mem::take(&mut scores.ranked),
            answer: scores.answer.take(),
            answer_sha256: None,
            claims: scores
                .claims
                .iter()
                .map(|c| StoredClaim {
                    claim: c.claim.clone(),
                    grade: c.grade,
                    reason: c.reason.clone(),
                })
                .collect(),
            answer_relevance_embedding: scores.relevance,
            must_pass: query.filter(|q| q.must_pass).map(|q| MustPassRecord {
                relevant: q
                    .judgments
                    .iter()
                    .filter(|(_, judgment)| judgment.relevant)
                    .map(|(doc, _)| doc.to_string())
                    .collect(),
                repeats: Vec::new(),
            }),
        };
        queries.insert(scores.qid.clone(), record);
    }
    results(metric_names, queries, context)
}

/// Results over `queries`, with their summaries.
pub(crate) fn results(
    metric_names: Vec<String>,
    queries: BTreeMap<String, QueryRecord>,
    context: RunContext<'_>,
) -> Results {
    let summary = summarise(&metric_names, &queries);
    let conventions = context.conventions;
    let mut results = Results {
        format: FORMAT.to_string(),
        tier: context.tier.to_string(),
        status: RunStatus::Pass,
        provenance: Provenance {
            ragate_version: env!("CARGO_PKG_VERSION").to_string(),
            qrels_sha256: context.qrels_sha256,
            config_hash: context.config_hash,
            git_commit: context.git_commit,
            judges: context.judges,
            embeddings: context.embeddings,
            sample: context.sample,
            relevance_level: None,
            no_relevant: None,
            accepted_utc: None,
        },
        metrics: metric_names,
        summary,
        noise: None,
        baseline_mismatch: None,
        queries,
    };
    results.provenance.set_conventions(conventions);
    results
}

/// The results as stored when the tier keeps no text (`store_text: false`): answers replaced by
/// their sha256, queries and claims left out.
pub(crate) fn strip_text(mut results: Results) -> Results {
    for record in results.queries.values_mut() {
        record.query = None;
        record.claims.clear();
        if let Some(answer) = record.answer.take() {
            record.answer_sha256 = Some(sha256_hex(answer.as_bytes()));
        }
    }
    results
}

/// Mean and n of every metric over `all` and over every slice value; a metric no query of a
/// slice has a value for (every answer of the slice excluded, say) has no entry there, rather
/// than a mean of nothing.
pub(crate) fn summarise(
    metrics: &[String],
    queries: &BTreeMap<String, QueryRecord>,
) -> BTreeMap<String, BTreeMap<String, SliceSummary>> {
    let mut members: BTreeMap<String, Vec<&QueryRecord>> = BTreeMap::new();
    for record in queries.values() {
        members.entry("all".to_string()).or_default().push(record);
        for (field, value) in &record.slices {
            members
                .entry(format!("{field}={value}"))
                .or_default()
                .push(record);
        }
    }
    members
        .into_iter()
        .map(|(slice, records)| {
            let per_metric = metrics
                .iter()
                .filter_map(|metric| {
                    let values: Vec<f64> = records
                        .iter()
                        .filter_map(|r| r.metrics.get(metric).copied())
                        .collect();
                    if values.is_empty() {
                        return None;
                    }
                    let mean = values.iter().sum::<f64>() / values.len() as f64;
                    Some((
                        metric.clone(),
                        SliceSummary {
                            mean,
                            n: values.len(),
                        },
                    ))
                })
                .collect();
            (slice, per_metric)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(class: &str, metrics: &[(&str, f64)]) -> QueryRecord {
        QueryRecord {
            slices: BTreeMap::from([("class".to_string(), class.to_string())]),
            metrics: metrics.iter().map(|(m, v)| (m.to_string(), *v)).collect(),
            ..QueryRecord::default()
        }
    }

    #[test]
    fn a_metric_without_values_in_a_slice_has_no_mean_there() {
        let queries = BTreeMap::from([
            (
                "q1".to_string(),
                record("a", &[("recall@5", 1.0), ("faithfulness", 0.5)]),
            ),
            ("q2".to_string(), record("b", &[("recall@5", 0.0)])),
            ("q3".to_string(), record("b", &[("recall@5", 0.0)])),
        ]);
        let metrics = ["recall@5".to_string(), "faithfulness".to_string()];
        let summary = summarise(&metrics, &queries);
        assert_eq!(summary["class=b"].len(), 1, "{summary:?}");
        let recall = summary["class=b"]["recall@5"];
        assert_eq!((recall.n, recall.mean.to_bits()), (2, 0.0f64.to_bits()));
        assert_eq!(
            summary["all"]["faithfulness"],
            SliceSummary { mean: 0.5, n: 1 }
        );
        let json = serde_json::to_string(&summary).unwrap();
        assert!(!json.contains("-0.0"), "{json}");
    }
}
