//! The failure-diagnosis matrix: from a slice's metric signature, the pipeline stage that most
//! likely fails and what usually fixes it. Only metrics that were computed are used.

use std::collections::BTreeMap;

use crate::baseline::results::SliceSummary;
pub use crate::config::DiagnosisThresholds as Thresholds;

/// The mean of the first metric (in `names` order) that starts with `prefix`, with its name;
/// `deepest` picks the largest cut-off instead of the smallest.
fn find<'a>(
    metrics: &'a BTreeMap<String, SliceSummary>,
    prefix: &str,
    deepest: bool,
) -> Option<(&'a str, f64)> {
    let mut found: Vec<(usize, &str, f64)> = metrics
        .iter()
        .filter_map(|(name, s)| {
            let k = name
                .strip_prefix(prefix)?
                .strip_prefix('@')?
                .parse::<usize>()
                .ok()?;
            Some((k, name.as_str(), s.mean))
        })
        .collect();
    found.sort_by_key(|&(k, _, _)| k);
    let pick = if deepest { found.last() } else { found.first() };
    pick.map(|&(_, name, mean)| (name, mean))
}

/// The diagnoses of one slice: each is `stage: evidence -> usual fix`.
pub fn diagnose(
    slice: &str,
    metrics: &BTreeMap<String, SliceSummary>,
    t: &Thresholds,
) -> Vec<String> {
    let get = |name: &str| metrics.get(name).map(|s| s.mean);
    let recall_shallow = find(metrics, "recall", false);
    let recall_deep = find(metrics, "recall", true);
    let ndcg_shallow = find(metrics, "ndcg", false);
    let faithfulness = get("faithfulness");
    let relevance = get("answer_relevance");
    let mut out = Vec::new();
    if let (Some((name, recall)), Some(f)) = (recall_shallow, faithfulness)
        && recall < t.low
        && f >= t.faithfulness
    {
        out.push(format!(
            "[{slice}] retriever misses evidence: {name} {recall:.2} is low while faithfulness {f:.2} is high \
             -> hybrid retrieval (BM25 + dense), query expansion, chunk overlap"
        ));
    }
    if let (Some((deep_name, deep)), Some((ndcg_name, ndcg))) = (recall_deep, ndcg_shallow)
        && deep >= t.high
        && ndcg < t.low
    {
        out.push(format!(
            "[{slice}] ranking buries evidence: {deep_name} {deep:.2} is high but {ndcg_name} {ndcg:.2} is low \
             -> add or tune a reranker"
        ));
    }
    if let (Some((ndcg_name, ndcg)), Some(f)) = (ndcg_shallow, faithfulness)
        && ndcg >= t.high
        && f < t.faithfulness
    {
        out.push(format!(
            "[{slice}] generator ignores the context: {ndcg_name} {ndcg:.2} is high but faithfulness {f:.2} is low \
             -> lower temperature, tighter grounding instructions, abstain when unsupported"
        ));
    }
    if let (Some(f), Some(r)) = (faithfulness, relevance)
        && f >= t.faithfulness
        && r < t.relevance
    {
        out.push(format!(
            "[{slice}] answers dodge the question: faithfulness {f:.2} is high but answer_relevance {r:.2} is low \
             -> answer the question asked (prompt), check query understanding"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(values: &[(&str, f64)]) -> BTreeMap<String, SliceSummary> {
        values
            .iter()
            .map(|&(n, mean)| (n.to_string(), SliceSummary { mean, n: 10 }))
            .collect()
    }

    #[test]
    fn each_signature_names_its_stage() {
        let t = Thresholds::default();
        let miss = diagnose(
            "all",
            &summary(&[("recall@5", 0.4), ("faithfulness", 0.9)]),
            &t,
        );
        assert_eq!(miss.len(), 1);
        assert!(
            miss[0].starts_with("[all] retriever misses evidence: recall@5 0.40"),
            "{miss:?}"
        );
        let buried = diagnose(
            "class=x",
            &summary(&[("recall@5", 0.7), ("recall@20", 0.9), ("ndcg@5", 0.5)]),
            &t,
        );
        assert!(
            buried[0].starts_with(
                "[class=x] ranking buries evidence: recall@20 0.90 is high but ndcg@5 0.50"
            ),
            "{buried:?}"
        );
        let ignores = diagnose(
            "all",
            &summary(&[("ndcg@10", 0.8), ("faithfulness", 0.5)]),
            &t,
        );
        assert!(
            ignores[0].contains("generator ignores the context"),
            "{ignores:?}"
        );
        let dodges = diagnose(
            "all",
            &summary(&[("faithfulness", 0.9), ("answer_relevance", 0.2)]),
            &t,
        );
        assert!(
            dodges[0].contains("answers dodge the question"),
            "{dodges:?}"
        );
        assert!(diagnose("all", &summary(&[("recall@5", 0.9), ("ndcg@10", 0.8)]), &t).is_empty());
        assert!(
            diagnose("all", &summary(&[("recall@5", 0.1)]), &t).is_empty(),
            "only computed metrics are used"
        );
    }
}
