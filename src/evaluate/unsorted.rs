//! Full-depth scoring of a TREC query whose lines are not in score order, without sorting it:
//! only the judged entries are sorted, and each one's rank is the number of entries ahead of it.

use hashbrown::hash_table::{Entry, HashTable};

use super::{Outcome, Scorer};
use crate::input::judgments::{Judgments, id_hash};
use crate::input::qrels::{Judgment, Ranked};
use crate::input::trec_run::{self, RunEntry};

/// Scores the query at `position` from `entries` in file order, when that is cheaper than
/// ordering them: the entries are out of score order and the metrics read most of the ranking.
/// `None` when the scorer must rank the entries itself: they are in score order already, the
/// metrics read only a short prefix, retrieved ids are chunk ids (a later chunk of a document
/// gives up its rank), or a doc id repeats (the repeat gives up its rank).
///
/// With the judged entries `j_0 … j_m` in trec_eval order, an entry with `p` judged entries
/// strictly ahead of it ranks ahead of `j_p` (or is `j_p`), so the 0-based rank of `j_p` is
/// the number of entries with at most `p` judged entries ahead, minus one.
pub(super) fn score(
    scorer: &Scorer<'_>,
    position: usize,
    entries: &mut [RunEntry<'_>],
) -> Option<Outcome> {
    if scorer.separator.is_some()
        || !scorer.depth.reads_most_of(entries.len())
        || trec_run::is_in_score_order(entries)
    {
        return None;
    }
    if scorer.truths[position].num_relevant == 0 {
        // Excluded; or kept (`no_relevant: zero`), scored by the ordered path with its ranking.
        return (!scorer.is_scored(position)).then_some(Outcome::NoRelevant);
    }
    let ranking = ranking(&scorer.qrels.queries()[position].judgments, entries)?;
    let kept = top_doc_ids(entries, scorer.keep_ranked);
    Some(scorer.scored(position, &ranking, kept))
}

/// The judgments of `entries` (in file order) in trec_eval order: [`Ranked::Unjudged`] for a
/// document `judgments` does not judge. `None` when a doc id repeats.
fn ranking(judgments: &Judgments, entries: &[RunEntry<'_>]) -> Option<Vec<Ranked>> {
    // The doc ids seen (their positions in `entries`), each id hashed once for this table and
    // the judgments' index.
    let mut seen: HashTable<usize> = HashTable::with_capacity(entries.len());
    let rehash = |&index: &usize| id_hash(entries[index].doc_id);
    let mut judged: Vec<(RunEntry<'_>, Judgment)> = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let hash = id_hash(entry.doc_id);
        let same = |&other: &usize| entries[other].doc_id == entry.doc_id;
        match seen.entry(hash, same, rehash) {
            Entry::Occupied(_) => return None,
            Entry::Vacant(vacant) => vacant.insert(index),
        };
        if let Some(judgment) = judgments.get_hashed(hash, entry.doc_id) {
            judged.push((*entry, judgment));
        }
    }
    judged.sort_unstable_by(|a, b| trec_run::trec_cmp(&a.0, &b.0));
    // with_judged_ahead[p]: how many entries have exactly p judged entries ahead of them
    // (`trec_cmp`): those of a higher score, by a binary search on the judged scores (descending),
    // then those of the entry's own score with a greater doc id (they follow in descending doc id
    // order).
    let judged_scores: Vec<f64> = judged.iter().map(|(entry, _)| entry.score).collect();
    let mut with_judged_ahead = vec![0usize; judged.len() + 1];
    for entry in entries {
        let mut ahead = judged_scores.partition_point(|&score| score > entry.score);
        while judged_scores.get(ahead) == Some(&entry.score)
            && judged[ahead].0.doc_id > entry.doc_id
        {
            ahead += 1;
        }
        with_judged_ahead[ahead] += 1;
    }
    let mut ranking = vec![Ranked::Unjudged; entries.len()];
    let mut at_or_ahead = 0;
    for ((_, judgment), count) in judged.iter().zip(&with_judged_ahead) {
        at_or_ahead += count;
        ranking[at_or_ahead - 1] = Ranked::Judged(*judgment);
    }
    Some(ranking)
}

/// The first `count` doc ids in trec_eval order.
fn top_doc_ids(entries: &mut [RunEntry<'_>], count: usize) -> Vec<String> {
    let count = count.min(entries.len());
    if count == 0 {
        return Vec::new();
    }
    if count < entries.len() {
        entries.select_nth_unstable_by(count - 1, trec_run::trec_cmp);
    }
    entries[..count].sort_unstable_by(trec_run::trec_cmp);
    entries[..count]
        .iter()
        .map(|entry| String::from_utf8_lossy(entry.doc_id).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use proptest::prelude::*;

    use super::*;
    use crate::input::qrels::{Qrels, QueryQrels};
    use crate::metrics::conventions::NoRelevant;
    use crate::metrics::retrieval::{Depth, QueryTruth, RetrievalMetric};

    const FULL_DEPTH: [RetrievalMetric; 8] = [
        RetrievalMetric::Bpref,
        RetrievalMetric::Rbp(crate::metrics::retrieval::Persistence::TREC_EVAL),
        RetrievalMetric::RbpResidual(crate::metrics::retrieval::Persistence::TREC_EVAL),
        RetrievalMetric::Map(None),
        RetrievalMetric::Ndcg(None),
        RetrievalMetric::NdcgLinear(None),
        RetrievalMetric::Mrr(None),
        RetrievalMetric::RPrecision,
    ];

    fn qrels(grades: &[(usize, i32)]) -> Qrels {
        let mut query = QueryQrels::new("q");
        for &(doc, grade) in grades {
            query
                .judgments
                .push(&format!("d{doc}"), Judgment::from_grade(grade));
        }
        let mut qrels = Qrels::new(Path::new("qrels"));
        qrels.push(query);
        qrels.finish().expect("distinct judged docs")
    }

    fn scorer<'a>(
        qrels: &'a Qrels,
        metrics: &[RetrievalMetric],
        separator: Option<&'a str>,
        keep_ranked: usize,
    ) -> Scorer<'a> {
        Scorer {
            qrels,
            truths: qrels.queries().iter().map(QueryTruth::new).collect(),
            metrics: metrics.iter().copied().enumerate().collect(),
            metric_count: metrics.len(),
            depth: Depth::of(metrics),
            separator,
            keep_ranked,
            no_relevant: Default::default(),
            relevance_level: 1,
        }
    }

    fn values_and_kept(outcome: Outcome) -> (Vec<Option<f64>>, Vec<String>) {
        match outcome {
            Outcome::Scored { scores, .. } => (scores.values, scores.ranked),
            _ => panic!("expected a scored query"),
        }
    }

    fn entries<'a>(ids: &'a [String], scores: &[f64]) -> Vec<RunEntry<'a>> {
        ids.iter()
            .zip(scores)
            .map(|(id, &score)| RunEntry {
                doc_id: id.as_bytes(),
                score,
            })
            .collect()
    }

    /// A query: distinct doc ids in file order with scores drawn from few values (many ties),
    /// the grades of some docs (relevant, graded, zero and negative), the cut-off of a metric
    /// added to the full-depth ones, and how many ids to keep.
    type Query = (Vec<usize>, Vec<f64>, Vec<(usize, i32)>, usize, usize);

    fn query() -> impl Strategy<Value = Query> {
        (1usize..40)
            .prop_flat_map(|len| {
                (
                    Just((0..60).collect::<Vec<usize>>()).prop_shuffle(),
                    proptest::collection::vec(0..6i32, len),
                    proptest::collection::btree_map(0usize..60, -1..4i32, 1..20),
                    1usize..50,
                    0usize..6,
                )
                    .prop_map(move |(docs, scores, grades, cut, keep)| {
                        let docs = docs[..len].to_vec();
                        let scores = scores.into_iter().map(|s| f64::from(s) / 2.0).collect();
                        (
                            docs,
                            scores,
                            grades.into_iter().collect::<Vec<_>>(),
                            cut,
                            keep,
                        )
                    })
            })
            .prop_filter("a relevant doc", |(_, _, grades, _, _)| {
                grades.iter().any(|&(_, g)| g > 0)
            })
    }

    proptest! {
        #[test]
        fn ranks_from_the_judged_entries_score_as_the_full_order(
            (docs, scores, grades, cut, keep) in query()
        ) {
            let qrels = qrels(&grades);
            let mut metrics = FULL_DEPTH.to_vec();
            metrics.extend([RetrievalMetric::Precision(cut), RetrievalMetric::Ndcg(Some(cut)), RetrievalMetric::Judged(cut)]);
            let scorer = scorer(&qrels, &metrics, None, keep);
            let ids: Vec<String> = docs.iter().map(|d| format!("d{d}")).collect();
            let mut file_order = entries(&ids, &scores);
            let mut sorted = file_order.clone();
            let expected = values_and_kept(scorer.score(0, trec_run::in_trec_order(&mut sorted)));
            let ordered = scorer.rank(0, trec_run::in_trec_order(&mut sorted.clone())).judgments;
            prop_assert_eq!(ranking(&qrels.queries()[0].judgments, &file_order), Some(ordered));
            match score(&scorer, 0, &mut file_order) {
                Some(outcome) => prop_assert_eq!(values_and_kept(outcome), expected),
                // Only a query already in score order is left to the scorer here.
                None => prop_assert!(trec_run::is_in_score_order(&file_order)),
            }
        }
    }

    #[test]
    fn rankings_tell_unjudged_documents_from_judged_non_relevant_ones() {
        let qrels = qrels(&[(1, 0), (3, -1), (4, 2)]);
        let ids: Vec<String> = ["d1", "d2", "d3", "d4", "d5"].map(String::from).to_vec();
        let mut file_order = entries(&ids, &[4.0, 5.0, 2.0, 1.0, 3.0]);
        let judged = |grade| Ranked::Judged(Judgment::from_grade(grade));
        let expected = [
            Ranked::Unjudged,
            judged(0),
            Ranked::Unjudged,
            judged(-1),
            judged(2),
        ];
        assert_eq!(
            ranking(&qrels.queries()[0].judgments, &file_order).unwrap(),
            expected
        );
        let scorer = scorer(&qrels, &FULL_DEPTH, None, 0);
        let ordered = scorer.rank(0, trec_run::in_trec_order(&mut file_order));
        assert_eq!(ordered.judgments, expected);
        assert!(expected[1].is_assessed() && !expected[1].relevant());
        assert!(!expected[0].is_assessed() && !expected[3].is_assessed());
    }

    fn shuffled_query(ids: &[String]) -> Vec<RunEntry<'_>> {
        let scores: Vec<f64> = (0..ids.len()).map(|i| (i % 3) as f64).collect();
        entries(ids, &scores)
    }

    #[test]
    fn a_query_without_a_relevant_doc_is_excluded_or_left_to_the_scorer_to_score_zero() {
        let qrels = qrels(&[(1, 0), (2, -1)]);
        let ids: Vec<String> = ["d1", "d2", "d3", "d4"].map(String::from).to_vec();
        let excluding = scorer(&qrels, &FULL_DEPTH, None, 2);
        assert!(matches!(
            score(&excluding, 0, &mut shuffled_query(&ids)),
            Some(Outcome::NoRelevant)
        ));
        let zero = Scorer {
            no_relevant: NoRelevant::Zero,
            ..scorer(&qrels, &FULL_DEPTH, None, 2)
        };
        let mut shuffled = shuffled_query(&ids);
        assert!(score(&zero, 0, &mut shuffled).is_none());
        // the ordered path: every metric of relevance 0, the ranking kept for the report; RBP's
        // residual reads the judgments alone (d3, d2 pooled, d4 unassessed; d1 judged 0)
        let (values, kept) = values_and_kept(zero.score(0, trec_run::in_trec_order(&mut shuffled)));
        let residual = 0.1 * (1.0 + 0.9 + 0.81) + 0.9f64.powi(4);
        assert!((values[2].unwrap() - residual).abs() < 1e-12, "{values:?}");
        let mut others = values.clone();
        others.remove(2);
        assert_eq!(others, vec![Some(0.0); FULL_DEPTH.len() - 1]);
        assert_eq!(kept, ["d3", "d2"]);
    }

    #[test]
    fn chunk_ids_repeats_sorted_queries_and_short_prefixes_are_left_to_the_scorer() {
        let qrels = qrels(&[(1, 2)]);
        let ids: Vec<String> = ["d1", "d2", "d3", "d4"].map(String::from).to_vec();
        let full = scorer(&qrels, &FULL_DEPTH, None, 0);
        assert!(score(&full, 0, &mut shuffled_query(&ids)).is_some());

        let chunked = scorer(&qrels, &FULL_DEPTH, Some("#"), 0);
        assert!(score(&chunked, 0, &mut shuffled_query(&ids)).is_none());

        let repeated: Vec<String> = ["d1", "d2", "d1", "d4"].map(String::from).to_vec();
        assert!(score(&full, 0, &mut shuffled_query(&repeated)).is_none());

        let mut in_order = entries(&ids, &[3.0, 2.0, 2.0, 1.0]);
        assert!(score(&full, 0, &mut in_order).is_none());

        let top_one = scorer(&qrels, &[RetrievalMetric::Precision(1)], None, 0);
        assert!(score(&top_one, 0, &mut shuffled_query(&ids)).is_none());
    }
}
