//! Tests of the likely causes of a change (`gate::causes`).

use std::collections::BTreeMap;

use super::*;
use crate::baseline::results::{Provenance, RunStatus};

/// A query: its class, its ranking and its metric values.
struct Q {
    class: &'static str,
    retrieved: &'static [&'static str],
    metrics: &'static [(&'static str, f64)],
}

fn results(queries: &[Q]) -> Results {
    let records: BTreeMap<String, QueryRecord> = queries
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let record = QueryRecord {
                query: None,
                slices: [("class".to_string(), q.class.to_string())].into(),
                metrics: q.metrics.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
                retrieved: q.retrieved.iter().map(|d| d.to_string()).collect(),
                answer: None,
                answer_sha256: None,
                claims: Vec::new(),
                answer_relevance_embedding: None,
                must_pass: None,
            };
            (format!("q{i}"), record)
        })
        .collect();
    let mut summary = BTreeMap::new();
    for slice in ["all", "class=literal", "class=other"] {
        summary.insert(slice.to_string(), BTreeMap::new());
    }
    Results {
        format: String::new(),
        tier: "t".into(),
        status: RunStatus::Pass,
        provenance: Provenance::default(),
        metrics: vec![],
        summary,
        noise: None,
        baseline_mismatch: None,
        queries: records,
    }
}

/// A decided check of `metric` on `slice` with its paired change and limit.
fn check(metric: &str, slice: &str, delta: f64, limit: f64) -> CheckOutcome {
    let family = if slice == "all" {
        Family::Primary
    } else {
        Family::Slices
    };
    let mut o = CheckOutcome::bare(
        format!("{metric} [{slice}]"),
        metric.into(),
        slice.into(),
        family,
    );
    o.delta = delta;
    o.limit = Some(limit);
    o
}

fn causes(baseline: &[Q], current: &[Q], outcomes: &[CheckOutcome]) -> Vec<Cause> {
    let (baseline, current) = (results(baseline), results(current));
    likely_causes(&CauseInputs {
        baseline: &baseline,
        current: &current,
        outcomes,
        slice_fields: &["class".to_string()],
        chunk_separator: Some("#"),
    })
}

const HIT: &[(&str, f64)] = &[
    ("recall@5", 1.0),
    ("mrr", 1.0),
    ("ndcg@10", 1.0),
    ("faithfulness", 1.0),
    ("answer_relevance", 0.5),
];
const LOST: &[(&str, f64)] = &[
    ("recall@5", 0.0),
    ("mrr", 0.0),
    ("ndcg@10", 0.0),
    ("faithfulness", 1.0),
    ("answer_relevance", 0.7),
];

fn q(
    class: &'static str,
    retrieved: &'static [&'static str],
    metrics: &'static [(&str, f64)],
) -> Q {
    Q {
        class,
        retrieved,
        metrics,
    }
}

#[test]
fn lost_top_documents_name_retrieval_with_their_count_and_slice() {
    let baseline: Vec<Q> = ["literal", "literal", "literal", "other", "other", "other"]
        .into_iter()
        .map(|class| q(class, &["d1", "x"], HIT))
        .collect();
    let mut current: Vec<Q> = (0..6)
        .map(|i| q(baseline[i].class, &["d1", "x"], HIT))
        .collect();
    for i in [0, 1, 4] {
        current[i] = q(baseline[i].class, &["x", "y"], LOST);
    }
    let outcomes = [
        check("recall@5", "all", -0.5, 0.03),
        check("ndcg@10", "all", -0.5, 0.05),
        check("faithfulness", "all", 0.0, 0.05),
        check("recall@5", "class=literal", -0.6667, 0.03),
    ];
    let found = causes(&baseline, &current, &outcomes);
    assert_eq!(found.len(), 1, "{found:#?}");
    let cause = &found[0];
    assert_eq!(
        (
            cause.kind,
            cause.slice.as_str(),
            cause.queries,
            cause.paired
        ),
        (CauseKind::RetrievalLostEvidence, "all", 3, 6)
    );
    assert_eq!(cause.top_slice, Some(("class=literal".to_string(), 2)));
    assert_eq!(
        cause.describe(),
        "[all] retrieval lost evidence: recall@5 -0.5000, ndcg@10 -0.5000 down; faithfulness \
         +0.0000 flat · 3 of 6 queries lost their top relevant document; 2 of them in \
         class=literal -> hybrid retrieval (BM25 + dense), query expansion, chunk overlap"
    );
    // answer_relevance rose (no rule: its paired change against FLAT): no "dodge" cause.
    assert!(
        found
            .iter()
            .all(|c| c.kind != CauseKind::AnswersDodgeQuestion)
    );
}

#[test]
fn a_top_document_ranked_lower_is_the_ranking_not_retrieval() {
    const LOWER: &[(&str, f64)] = &[
        ("recall@5", 1.0),
        ("mrr", 0.5),
        ("ndcg@10", 0.63),
        ("faithfulness", 1.0),
    ];
    let baseline: Vec<Q> = (0..4).map(|_| q("other", &["d1", "x"], HIT)).collect();
    let current: Vec<Q> = (0..4)
        .map(|i| {
            if i < 3 {
                q("other", &["x", "d1"], LOWER)
            } else {
                q("other", &["d1", "x"], HIT)
            }
        })
        .collect();
    let outcomes = [
        check("recall@5", "all", 0.0, 0.03),
        check("ndcg@10", "all", -0.28, 0.05),
    ];
    let found = causes(&baseline, &current, &outcomes);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].kind, CauseKind::RankingPushedEvidenceDown);
    assert_eq!(found[0].queries, 3);
    assert!(
        found[0]
            .describe()
            .contains("3 of 4 queries rank their top relevant document lower"),
        "{}",
        found[0].describe()
    );
}

#[test]
fn chunks_of_one_document_count_once_when_finding_the_top_relevant_document() {
    const SECOND: &[(&str, f64)] = &[("recall@5", 1.0), ("mrr", 0.5)];
    const NONE: &[(&str, f64)] = &[("recall@5", 0.0), ("mrr", 0.0)];
    // The baseline's second document is d2 (d1's two chunks count once); it is gone now.
    let baseline = [q("other", &["d1#1", "d1#2", "d2#1"], SECOND)];
    let current = [q("other", &["d1#1", "d3#1", "d1#2"], NONE)];
    let found = causes(&baseline, &current, &[check("recall@5", "all", -1.0, 0.03)]);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].kind, CauseKind::RetrievalLostEvidence);
    // Still retrieved (a chunk of it, lower): the ranking.
    let lower = [q(
        "other",
        &["d1#1", "d3#1", "d2#7"],
        &[("recall@5", 1.0), ("mrr", 0.33)],
    )];
    let found = causes(
        &baseline,
        &lower,
        &[
            check("recall@5", "all", 0.0, 0.03),
            check("mrr", "all", -0.17, 0.05),
        ],
    );
    assert_eq!(
        found[0].kind,
        CauseKind::RankingPushedEvidenceDown,
        "{found:#?}"
    );
}

#[test]
fn the_generator_is_named_only_where_retrieval_held() {
    const UNFAITHFUL: &[(&str, f64)] = &[
        ("recall@5", 1.0),
        ("mrr", 1.0),
        ("ndcg@10", 1.0),
        ("faithfulness", 0.5),
    ];
    const LOST_UNFAITHFUL: &[(&str, f64)] = &[
        ("recall@5", 0.0),
        ("mrr", 0.0),
        ("ndcg@10", 0.0),
        ("faithfulness", 0.5),
    ];
    let baseline: Vec<Q> = (0..4).map(|_| q("other", &["d1"], HIT)).collect();
    // Faithfulness fell on two queries whose retrieval held.
    let held = [
        q("other", &["d1"], UNFAITHFUL),
        q("other", &["d1"], UNFAITHFUL),
        q("other", &["d1"], HIT),
        q("other", &["d1"], HIT),
    ];
    let faithfulness = [check("faithfulness", "all", -0.25, 0.05)];
    let found = causes(&baseline, &held, &faithfulness);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].kind, CauseKind::GeneratorLeftContext);
    assert_eq!(found[0].queries, 2);
    // Faithfulness fell only where the evidence was lost: retrieval explains it.
    let lost = [
        q("other", &["x"], LOST_UNFAITHFUL),
        q("other", &["x"], LOST_UNFAITHFUL),
        q("other", &["d1"], HIT),
        q("other", &["d1"], HIT),
    ];
    let outcomes = [
        check("faithfulness", "all", -0.25, 0.05),
        check("recall@5", "all", -0.5, 0.03),
    ];
    let found = causes(&baseline, &lost, &outcomes);
    let kinds: Vec<CauseKind> = found.iter().map(|c| c.kind).collect();
    assert_eq!(kinds, [CauseKind::RetrievalLostEvidence], "{found:#?}");
}

#[test]
fn answers_dodge_only_while_faithfulness_held() {
    const DODGE: &[(&str, f64)] = &[("faithfulness", 1.0), ("answer_relevance", 0.1)];
    const DODGE_UNFAITHFUL: &[(&str, f64)] = &[("faithfulness", 0.0), ("answer_relevance", 0.1)];
    const BEFORE: &[(&str, f64)] = &[("faithfulness", 1.0), ("answer_relevance", 0.9)];
    let baseline = [q("other", &["d1"], BEFORE), q("other", &["d1"], BEFORE)];
    let dodged = [q("other", &["d1"], DODGE), q("other", &["d1"], BEFORE)];
    let found = causes(&baseline, &dodged, &[]);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].kind, CauseKind::AnswersDodgeQuestion);
    assert!(
        found[0]
            .describe()
            .contains("answer_relevance -0.4000 down")
    );
    // Faithfulness fell too (no rule, beyond FLAT): not a dodge.
    let unfaithful = [
        q("other", &["d1"], DODGE_UNFAITHFUL),
        q("other", &["d1"], BEFORE),
    ];
    let found = causes(&baseline, &unfaithful, &[]);
    assert!(
        found
            .iter()
            .all(|c| c.kind != CauseKind::AnswersDodgeQuestion),
        "{found:#?}"
    );
}

#[test]
fn no_cause_without_a_move_past_the_limit_and_at_most_three() {
    let baseline: Vec<Q> = (0..4).map(|_| q("literal", &["d1"], HIT)).collect();
    let current: Vec<Q> = (0..4).map(|_| q("literal", &["x"], LOST)).collect();
    // The checks say recall held within a wide limit: no cause, whatever the queries show.
    let wide = [
        check("recall@5", "all", -1.0, 1.0),
        check("recall@5", "class=literal", -1.0, 1.0),
        check("ndcg@10", "all", -1.0, 1.0),
        check("ndcg@10", "class=literal", -1.0, 1.0),
        check("mrr", "all", -1.0, 1.0),
        check("mrr", "class=literal", -1.0, 1.0),
    ];
    assert_eq!(causes(&baseline, &current, &wide), []);
    // A slice's cause of the same kind as the `all` one is not repeated.
    let found = causes(
        &baseline,
        &current,
        &[
            check("recall@5", "all", -1.0, 0.03),
            check("recall@5", "class=literal", -1.0, 0.03),
        ],
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found.len() <= MOST);
}
