//! `ragate eval --format trec_eval`: trec_eval's own `measure<TAB>qid|all<TAB>value` lines, with
//! its measure names (`P_5`, `ndcg_cut_10`, `recip_rank`), its order and its 4 decimals, so that
//! `diff` against trec_eval's output (`trec_eval -q`) works for the measures in common.
//!
//! As trec_eval prints them: with `--per-query`, every query's measures, queries in byte order
//! of their ids, then `num_q` and the means under `all`; a measure's name is padded to 22
//! characters. trec_eval's `runid` line is not printed (a run's tag is not kept). A metric
//! without a trec_eval measure is an error ([`check`]), not a line left out: a diff against
//! trec_eval must not pass because a measure is missing.

use crate::evaluate::Evaluation;
use crate::metrics::aliases;
use crate::metrics::metric::Metric;
use crate::metrics::retrieval::RetrievalMetric;

/// Why `metrics` cannot be printed as trec_eval's lines: the ones without a trec_eval measure,
/// each with the metric to ask for instead when there is one.
pub fn check(metrics: &[Metric]) -> Result<(), String> {
    let unnamed: Vec<String> = metrics
        .iter()
        .filter(|&&metric| trec_eval_name(metric).is_none())
        .map(|&metric| format!("`{metric}` ({})", why_unnamed(metric)))
        .collect();
    if unnamed.is_empty() {
        return Ok(());
    }
    Err(format!(
        "--format trec_eval prints trec_eval's measures only, and trec_eval has none for {}: \
         name the metrics with -m (e.g. -m P_5 -m recall_10 -m ndcg_cut_10 -m recip_rank -m map), \
         or use --format tsv for ragate's names",
        unnamed.join(", ")
    ))
}

/// trec_eval's name of `metric` and its place in trec_eval's order, when trec_eval has it.
fn trec_eval_name(metric: Metric) -> Option<(usize, String)> {
    metric.as_retrieval().and_then(aliases::trec_eval_name)
}

/// Why trec_eval has no measure for `metric`, and what to ask for instead.
fn why_unnamed(metric: Metric) -> String {
    match metric {
        Metric::Retrieval(RetrievalMetric::Ndcg(cut)) => {
            let linear = Metric::Retrieval(RetrievalMetric::NdcgLinear(cut));
            let theirs = trec_eval_name(linear).map_or(String::new(), |(_, name)| name);
            format!(
                "its gain is 2^g - 1; trec_eval's {theirs} uses gain g and is ragate's `{linear}`"
            )
        }
        Metric::Retrieval(RetrievalMetric::Mrr(Some(_))) => {
            "trec_eval's recip_rank has no cut-off: it is ragate's `mrr`".to_string()
        }
        Metric::Retrieval(_) => "no trec_eval measure".to_string(),
        _ => "not a retrieval measure".to_string(),
    }
}

/// trec_eval's lines of `evaluation`, every query's first when `per_query`. Metrics without a
/// trec_eval name (refused by [`check`] before evaluating) print nothing.
pub fn render(evaluation: &Evaluation, per_query: bool) -> String {
    let mut measures: Vec<(usize, Option<usize>, String, usize)> = evaluation
        .metrics
        .iter()
        .enumerate()
        .filter_map(|(index, &metric)| {
            let (order, name) = trec_eval_name(metric)?;
            Some((order, metric.cutoff(), name, index))
        })
        .collect();
    measures.sort();
    measures.dedup_by(|a, b| a.2 == b.2);
    let mut out = String::new();
    if per_query {
        let mut queries: Vec<_> = evaluation.per_query.iter().collect();
        queries.sort_by(|a, b| a.qid.as_bytes().cmp(b.qid.as_bytes()));
        for query in queries {
            for (_, _, name, index) in &measures {
                if let Some(Some(value)) = query.values.get(*index) {
                    out.push_str(&line(name, &query.qid, &format!("{value:.4}")));
                }
            }
        }
    }
    let num_q = evaluation.per_query.len().to_string();
    out.push_str(&line("num_q", "all", &num_q));
    for (_, _, name, index) in &measures {
        if let Some(mean) = evaluation.means.get(*index) {
            out.push_str(&line(name, "all", &format!("{mean:.4}")));
        }
    }
    out
}

/// One line as trec_eval prints it: `printf("%-22s\t%s\t%.4f\n", ...)`.
fn line(measure: &str, qid: &str, value: &str) -> String {
    format!("{measure:<22}\t{qid}\t{value}\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::QueryScores;

    fn scores(qid: &str, values: Vec<Option<f64>>) -> QueryScores {
        QueryScores {
            qid: qid.into(),
            values,
            ranked: vec![],
            answer: None,
            claims: vec![],
            operational: Default::default(),
            relevance: None,
        }
    }

    fn sample() -> Evaluation {
        Evaluation {
            metrics: vec![
                RetrievalMetric::NdcgLinear(Some(10)).into(),
                RetrievalMetric::Precision(5).into(),
                RetrievalMetric::Mrr(None).into(),
            ],
            per_query: vec![
                scores("q2", vec![Some(0.5), Some(0.4), Some(1.0)]),
                scores("q10", vec![Some(0.03125), Some(0.0), Some(0.5)]),
            ],
            means: vec![0.265625, 0.2, 0.75],
            counts: vec![2, 2, 2],
            empty_answers_excluded: 0,
            judge_usage: Default::default(),
            embeddings: Vec::new(),
            excluded_no_relevant: 0,
            missing_from_run: 0,
            run_queries_not_in_qrels: 0,
            warnings: vec![],
        }
    }

    #[test]
    fn lines_follow_trec_eval_s_names_order_padding_and_decimals() {
        let text = render(&sample(), true);
        let expected = "\
recip_rank            \tq10\t0.5000
P_5                   \tq10\t0.0000
ndcg_cut_10           \tq10\t0.0312
recip_rank            \tq2\t1.0000
P_5                   \tq2\t0.4000
ndcg_cut_10           \tq2\t0.5000
num_q                 \tall\t2
recip_rank            \tall\t0.7500
P_5                   \tall\t0.2000
ndcg_cut_10           \tall\t0.2656
";
        assert_eq!(text, expected);
        assert_eq!(
            render(&sample(), false),
            expected
                .lines()
                .skip(6)
                .map(|l| format!("{l}\n"))
                .collect::<String>()
        );
    }

    #[test]
    fn metrics_without_a_trec_eval_measure_are_refused_by_name() {
        let metrics: Vec<Metric> = ["P_5", "ndcg@10", "mrr@10", "faithfulness", "hit_rate@5"]
            .iter()
            .map(|name| name.parse().unwrap())
            .collect();
        let message = check(&metrics).unwrap_err();
        assert!(
            message.contains(
                "`ndcg@10` (its gain is 2^g - 1; trec_eval's ndcg_cut_10 uses gain g and is ragate's `ndcg_linear@10`)"
            ),
            "{message}"
        );
        assert!(message.contains("`mrr@10` (trec_eval's recip_rank has no cut-off"));
        assert!(message.contains("`faithfulness` (not a retrieval measure)"));
        assert!(!message.contains("P_5`") && !message.contains("hit_rate@5"));
        assert_eq!(check(&metrics[..1]), Ok(()));
        assert!(
            check(&["ndcg".parse().unwrap()])
                .unwrap_err()
                .contains("trec_eval's ndcg uses gain g and is ragate's `ndcg_linear`")
        );
    }
}
