//! The retrieval metrics' unit tests: by hand, and properties over random rankings.

use super::*;
use crate::input::qrels::Judgment;

fn ranking(grades: &[(Grade, bool)]) -> Vec<Ranked> {
    grades
        .iter()
        .map(|&(grade, relevant)| Ranked::Judged(Judgment { grade, relevant }))
        .collect()
}

fn truth(num_relevant: usize, ideal_gains: &[Grade]) -> QueryTruth {
    QueryTruth {
        num_relevant,
        num_non_relevant: 0,
        ideal_gains: ideal_gains.to_vec(),
    }
}

#[test]
fn names_round_trip_and_unknown_names_list_the_valid_ones() {
    for name in [
        "precision@5",
        "recall@10",
        "hit_rate@3",
        "mrr",
        "mrr@10",
        "ndcg",
        "ndcg@10",
        "ndcg_linear",
        "ndcg_linear@5",
        "map",
        "map@100",
        "r_precision",
        "bpref",
        "rbp@0.8",
        "rbp@0.95",
        "rbp_residual@0.9",
        "judged@10",
    ] {
        assert_eq!(name.parse::<RetrievalMetric>().unwrap().to_string(), name);
    }
    assert_eq!(
        "rbp@0.80".parse::<RetrievalMetric>().unwrap().to_string(),
        "rbp@0.8"
    );
    for bad in [
        "precision",
        "recall@0",
        "recall@x",
        "r_precision@5",
        "ndgc@10",
        "bpref@10",
        "judged",
        "rbp",
        "rbp@10",
        "rbp@1.0",
        "map@0.5",
        "",
    ] {
        let err = bad.parse::<RetrievalMetric>().unwrap_err().to_string();
        assert_eq!(
            err,
            format!("unknown metric `{bad}`: expected one of {VALID_NAMES}")
        );
    }
}

#[test]
fn precision_divides_by_k_even_when_fewer_are_retrieved() {
    let r = ranking(&[(1, true), (0, false)]);
    assert_eq!(
        RetrievalMetric::Precision(5).value(&r, &truth(3, &[1, 1, 1])),
        0.2
    );
    assert_eq!(
        RetrievalMetric::Recall(5).value(&r, &truth(3, &[1, 1, 1])),
        1.0 / 3.0
    );
    assert_eq!(
        RetrievalMetric::RPrecision.value(&r, &truth(3, &[1, 1, 1])),
        1.0 / 3.0
    );
}

#[test]
fn mrr_with_and_without_cut() {
    let r = ranking(&[(0, false), (0, false), (2, true)]);
    let t = truth(1, &[2]);
    assert_eq!(RetrievalMetric::Mrr(None).value(&r, &t), 1.0 / 3.0);
    assert_eq!(RetrievalMetric::Mrr(Some(2)).value(&r, &t), 0.0);
    assert_eq!(RetrievalMetric::HitRate(3).value(&r, &t), 1.0);
}

#[test]
fn ndcg_exponential_and_linear_by_hand() {
    // grades in rank order 1, 3; ideal 3, 1
    let r = ranking(&[(1, true), (3, true)]);
    let t = truth(2, &[3, 1]);
    let d2 = 1.0 / 3f64.log2();
    let exp = (1.0 + 7.0 * d2) / (7.0 + 1.0 * d2);
    let lin = (1.0 + 3.0 * d2) / (3.0 + 1.0 * d2);
    assert!((RetrievalMetric::Ndcg(Some(10)).value(&r, &t) - exp).abs() < 1e-15);
    assert!((RetrievalMetric::NdcgLinear(None).value(&r, &t) - lin).abs() < 1e-15);
    // ideal is cut at k too: @1 compares grade 1 with the ideal grade 3
    assert!((RetrievalMetric::Ndcg(Some(1)).value(&r, &t) - 1.0 / 7.0).abs() < 1e-15);
}

#[test]
fn ndcg_of_a_ranking_without_gains_is_positive_zero() {
    let r = ranking(&[(0, false), (0, false)]);
    let t = truth(1, &[1]);
    for metric in [
        RetrievalMetric::Ndcg(Some(10)),
        RetrievalMetric::NdcgLinear(None),
    ] {
        let value = metric.value(&r, &t);
        assert!(value == 0.0 && value.is_sign_positive(), "{value}");
    }
}

#[test]
fn graded_but_not_gold_docs_give_gain_but_not_hits() {
    let r = ranking(&[(1, false), (3, true)]);
    let t = truth(1, &[3, 1]);
    assert_eq!(RetrievalMetric::Precision(1).value(&r, &t), 0.0);
    assert!(RetrievalMetric::Ndcg(Some(1)).value(&r, &t) > 0.0);
}

#[test]
fn map_with_and_without_cut() {
    let r = ranking(&[(1, true), (0, false), (1, true)]);
    let t = truth(3, &[1, 1, 1]);
    assert!((RetrievalMetric::Map(None).value(&r, &t) - (1.0 + 2.0 / 3.0) / 3.0).abs() < 1e-15);
    assert!((RetrievalMetric::Map(Some(2)).value(&r, &t) - 1.0 / 3.0).abs() < 1e-15);
}

#[test]
fn depth_asks_for_what_the_metrics_read() {
    let t = truth(4, &[1, 1, 1, 1]);
    let cut = Depth::of(&[RetrievalMetric::Precision(5), RetrievalMetric::RPrecision]);
    assert!(!cut.is_satisfied(4, true, &t));
    assert!(cut.is_satisfied(5, false, &t));
    let mrr = Depth::of(&[RetrievalMetric::Mrr(None)]);
    assert!(!mrr.is_satisfied(100, false, &t));
    assert!(mrr.is_satisfied(3, true, &t));
    assert!(!Depth::of(&[RetrievalMetric::Map(None)]).is_satisfied(1000, true, &t));
}

/// A query's judgments (grade, relevant) and a ranking that lists some of them, plus unjudged docs.
fn query_and_ranking() -> impl Strategy<Value = (Vec<(Grade, bool)>, Vec<Option<usize>>)> {
    proptest::collection::vec((-1i32..4, any::<bool>()), 1..20)
        .prop_map(|docs| {
            docs.into_iter()
                .map(|(g, gold)| (g, gold && g >= 1))
                .collect::<Vec<_>>()
        })
        .prop_filter("needs a relevant doc", |docs| docs.iter().any(|d| d.1))
        .prop_flat_map(|docs| {
            let n = docs.len();
            let ranking = proptest::sample::subsequence((0..n).collect::<Vec<_>>(), 0..=n)
                .prop_shuffle()
                .prop_flat_map(|picked| {
                    let len = picked.len();
                    (
                        Just(picked),
                        proptest::collection::vec(any::<bool>(), len + 5),
                    )
                })
                .prop_map(|(picked, noise)| {
                    // interleave unjudged docs (None) between judged ones
                    let mut out = Vec::new();
                    for (i, doc) in picked.into_iter().enumerate() {
                        if noise[i] {
                            out.push(None);
                        }
                        out.push(Some(doc));
                    }
                    out
                });
            (Just(docs), ranking)
        })
}

fn build(docs: &[(Grade, bool)], ranked: &[Option<usize>]) -> (Vec<Ranked>, QueryTruth) {
    let judgments: Vec<Judgment> = docs
        .iter()
        .map(|&(grade, relevant)| Judgment { grade, relevant })
        .collect();
    let ranking = ranked
        .iter()
        .map(|d| Ranked::of(d.map(|i| judgments[i])))
        .collect();
    let mut ideal_gains: Vec<Grade> = judgments
        .iter()
        .map(|j| j.gain())
        .filter(|&g| g > 0)
        .collect();
    ideal_gains.sort_unstable_by(|a, b| b.cmp(a));
    let num_relevant = judgments.iter().filter(|j| j.relevant).count();
    let num_non_relevant = judgments
        .iter()
        .filter(|j| !j.relevant && j.grade >= 0)
        .count();
    (
        ranking,
        QueryTruth {
            num_relevant,
            num_non_relevant,
            ideal_gains,
        },
    )
}

const CUTS: [usize; 5] = [1, 3, 5, 10, 20];

fn all_metrics() -> Vec<RetrievalMetric> {
    let mut metrics = vec![
        RetrievalMetric::Mrr(None),
        RetrievalMetric::Ndcg(None),
        RetrievalMetric::NdcgLinear(None),
        RetrievalMetric::Map(None),
        RetrievalMetric::RPrecision,
        RetrievalMetric::Bpref,
        RetrievalMetric::Rbp(Persistence::IR_MEASURES),
        RetrievalMetric::RbpResidual(Persistence::TREC_EVAL),
    ];
    for k in CUTS {
        metrics.extend([
            RetrievalMetric::Precision(k),
            RetrievalMetric::Recall(k),
            RetrievalMetric::HitRate(k),
            RetrievalMetric::Mrr(Some(k)),
            RetrievalMetric::Ndcg(Some(k)),
            RetrievalMetric::NdcgLinear(Some(k)),
            RetrievalMetric::Map(Some(k)),
            RetrievalMetric::Judged(k),
        ]);
    }
    metrics
}

use proptest::prelude::*;

proptest! {
    #[test]
    fn every_metric_lies_in_unit_interval((docs, ranked) in query_and_ranking()) {
        let (ranking, truth) = build(&docs, &ranked);
        for metric in all_metrics() {
            let v = metric.value(&ranking, &truth);
            prop_assert!((0.0..=1.0 + 1e-12).contains(&v), "{metric} = {v}");
        }
    }

    #[test]
    fn bpref_reads_an_unjudged_doc_as_if_it_were_not_retrieved((docs, ranked) in query_and_ranking()) {
        let (ranking, truth) = build(&docs, &ranked);
        let judged_only: Vec<Ranked> = ranking.iter().copied().filter(|r| *r != Ranked::Unjudged).collect();
        prop_assert_eq!(RetrievalMetric::Bpref.value(&ranking, &truth), RetrievalMetric::Bpref.value(&judged_only, &truth));
    }

    #[test]
    fn recall_and_hit_rate_never_fall_as_k_grows((docs, ranked) in query_and_ranking()) {
        let (ranking, truth) = build(&docs, &ranked);
        for pair in CUTS.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            prop_assert!(RetrievalMetric::Recall(a).value(&ranking, &truth) <= RetrievalMetric::Recall(b).value(&ranking, &truth));
            prop_assert!(RetrievalMetric::HitRate(a).value(&ranking, &truth) <= RetrievalMetric::HitRate(b).value(&ranking, &truth));
        }
    }

    #[test]
    fn the_ideal_ranking_scores_one((docs, _ranked) in query_and_ranking()) {
        let mut order: Vec<usize> = (0..docs.len()).collect();
        // gold docs first (binary metrics), within them and then by grade descending
        order.sort_by_key(|&i| (std::cmp::Reverse(docs[i].1), std::cmp::Reverse(docs[i].0.max(0))));
        let ranked: Vec<Option<usize>> = order.into_iter().map(Some).collect();
        let (ranking, truth) = build(&docs, &ranked);
        for metric in [RetrievalMetric::Mrr(None), RetrievalMetric::Map(None), RetrievalMetric::RPrecision, RetrievalMetric::Bpref] {
            prop_assert!((metric.value(&ranking, &truth) - 1.0).abs() < 1e-12, "{metric}");
        }
        // nDCG is 1 for the ranking sorted by grade alone
        let mut by_grade: Vec<usize> = (0..docs.len()).collect();
        by_grade.sort_by_key(|&i| std::cmp::Reverse(docs[i].0.max(0)));
        let ranked: Vec<Option<usize>> = by_grade.into_iter().map(Some).collect();
        let (ranking, truth) = build(&docs, &ranked);
        for metric in [RetrievalMetric::Ndcg(None), RetrievalMetric::Ndcg(Some(3)), RetrievalMetric::NdcgLinear(Some(5))] {
            prop_assert!((metric.value(&ranking, &truth) - 1.0).abs() < 1e-12, "{metric}");
        }
    }
}
