//! Tests of the verdict rules: limits, floors, significance, Holm, skips, errors.

use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::baseline::results::{Provenance, QueryRecord, RunStatus};
use crate::config::{Rule, SliceValue};
use crate::gate::checks::{self, Slice};
use crate::metrics::metric::Metric;
use crate::metrics::retrieval::RetrievalMetric;

/// Results with one metric, `mrr`, whose per-query values are `values`; every third query is
/// in slice `part=b`, the rest in `part=a`.
fn results(values: &[f64]) -> Results {
    let queries = values
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let part = if i % 3 == 0 { "b" } else { "a" };
            let record = QueryRecord {
                query: Some(format!("question {i}")),
                slices: [("part".to_string(), part.to_string())]
                    .into_iter()
                    .collect(),
                metrics: [("mrr".to_string(), v)].into_iter().collect(),
                retrieved: vec![],
                answer: None,
                answer_sha256: None,
                claims: Vec::new(),
                answer_relevance_embedding: None,
            };
            (format!("q{i:03}"), record)
        })
        .collect();
    Results {
        format: String::new(),
        tier: "t".into(),
        status: RunStatus::Pass,
        provenance: Provenance::default(),
        metrics: vec!["mrr".into()],
        summary: BTreeMap::new(),
        queries,
    }
}

fn settings(decision: Decision, min_queries: usize, rules: Vec<Rule>) -> GateSettings {
    GateSettings {
        decision,
        alpha: 0.05,
        correction: Correction::Holm,
        min_queries,
        resamples: 2000,
        seed: 1,
        rules,
    }
}

fn rule(limits: Limits, slice: Option<&str>) -> Rule {
    Rule {
        metric: RetrievalMetric::Mrr(None).into(),
        slice: slice.map(|v| SliceValue {
            field: "part".into(),
            value: v.into(),
        }),
        limits,
    }
}

fn run(baseline: &[f64], current: &[f64], settings: &GateSettings) -> Vec<CheckOutcome> {
    let values: BTreeSet<SliceValue> = ["a", "b"]
        .iter()
        .map(|v| SliceValue {
            field: "part".into(),
            value: (*v).into(),
        })
        .collect();
    let checks = checks::expand(
        &settings.rules,
        &values,
        &[RetrievalMetric::Mrr(None).into()],
    );
    decide(
        &checks,
        &results(baseline),
        &results(current),
        settings,
        "t",
    )
}

const DROP: Limits = Limits {
    max_drop: Some(0.05),
    max_drop_pct: None,
    min: None,
    max_increase: None,
    max_increase_pct: None,
    max: None,
};

#[test]
fn a_large_consistent_drop_fails_and_names_the_worst_queries() {
    let baseline = vec![1.0; 30];
    let current: Vec<f64> = (0..30)
        .map(|i| if i % 2 == 0 { 0.0 } else { 1.0 })
        .collect();
    let outcomes = run(
        &baseline,
        &current,
        &settings(Decision::Significant, 5, vec![rule(DROP, None)]),
    );
    let all = &outcomes[0];
    assert_eq!(
        (all.name.as_str(), all.status),
        ("mrr [all]", CheckStatus::Fail)
    );
    assert!((all.delta + 0.5).abs() < 1e-12);
    assert_eq!(all.worse_count, 15);
    assert_eq!(all.worst.len(), WORST_QUERIES);
    assert!(all.worst[0].hit_to_miss);
    assert_eq!(all.worst[0].qid, "q000", "ties by qid");
    assert!(all.p_value.unwrap() < 1e-3);
    assert!(
        all.verdict.starts_with(
            "mrr [all] regressed by 0.5000, more than tolerated 0.0500, significant at"
        ),
        "{}",
        all.verdict
    );
}

#[test]
fn a_drop_within_the_limit_passes_and_noise_is_not_significant() {
    let baseline = vec![0.5; 30];
    let small: Vec<f64> = vec![0.48; 30];
    let outcome = &run(
        &baseline,
        &small,
        &settings(Decision::Significant, 5, vec![rule(DROP, None)]),
    )[0];
    assert_eq!(outcome.status, CheckStatus::Pass, "{}", outcome.verdict);
    // a drop beyond the limit but from two queries only: not significant
    let mut noisy = baseline.clone();
    noisy[0] = 0.0;
    noisy[1] = 0.0;
    noisy[2] = 1.0;
    let outcome = &run(
        &baseline,
        &noisy,
        &settings(
            Decision::Significant,
            5,
            vec![rule(
                Limits {
                    max_drop: Some(0.0),
                    ..DROP
                },
                None,
            )],
        ),
    )[0];
    assert_eq!(outcome.status, CheckStatus::Pass, "{}", outcome.verdict);
    assert!(
        outcome.verdict.contains("but not significantly"),
        "{}",
        outcome.verdict
    );
    // the same drop fails on the point estimate
    let outcome = &run(
        &baseline,
        &noisy,
        &settings(
            Decision::Point,
            5,
            vec![rule(
                Limits {
                    max_drop: Some(0.0),
                    ..DROP
                },
                None,
            )],
        ),
    )[0];
    assert_eq!(outcome.status, CheckStatus::Fail, "{}", outcome.verdict);
}

#[test]
fn relative_limits_floors_and_improvements() {
    let baseline = vec![0.5; 30];
    let current = vec![0.47; 30];
    let pct = Limits {
        max_drop: None,
        max_drop_pct: Some(5.0),
        ..DROP
    };
    let outcome = &run(
        &baseline,
        &current,
        &settings(Decision::Point, 5, vec![rule(pct, None)]),
    )[0];
    assert_eq!(
        outcome.status,
        CheckStatus::Fail,
        "6% > 5%: {}",
        outcome.verdict
    );
    let floor = Limits {
        max_drop: Some(1.0),
        min: Some(0.48),
        ..DROP
    };
    let outcome = &run(
        &baseline,
        &current,
        &settings(Decision::Significant, 5, vec![rule(floor, None)]),
    )[0];
    assert_eq!(outcome.status, CheckStatus::Fail);
    assert!(
        outcome.verdict.contains("is below min 0.48"),
        "{}",
        outcome.verdict
    );
    let better = vec![0.9; 30];
    let outcome = &run(
        &baseline,
        &better,
        &settings(Decision::Significant, 5, vec![rule(DROP, None)]),
    )[0];
    assert_eq!(outcome.status, CheckStatus::Improved, "{}", outcome.verdict);
    assert!(
        outcome
            .verdict
            .ends_with("run `ragate baseline accept --tier t`"),
        "{}",
        outcome.verdict
    );
}

#[test]
fn small_slices_are_skipped_and_slice_rules_override() {
    let baseline = vec![1.0; 12];
    let current = vec![0.0; 12];
    // part=b has 4 queries (0, 3, 6, 9), fewer than min_queries 5
    let rules = vec![
        rule(DROP, None),
        rule(
            Limits {
                max_drop: Some(2.0),
                ..DROP
            },
            Some("a"),
        ),
    ];
    let outcomes = run(
        &baseline,
        &current,
        &settings(Decision::Significant, 5, rules),
    );
    let by_slice: BTreeMap<&str, &CheckOutcome> =
        outcomes.iter().map(|o| (o.slice.as_str(), o)).collect();
    assert_eq!(by_slice["part=b"].status, CheckStatus::Skipped);
    assert_eq!(by_slice["part=b"].n, 4);
    assert_eq!(
        by_slice["part=a"].status,
        CheckStatus::Pass,
        "the slice rule tolerates 2.0"
    );
    assert_eq!(by_slice["all"].status, CheckStatus::Fail);
    assert_eq!(Slice::All.to_string(), "all");
}

#[test]
fn a_metric_missing_from_the_baseline_is_an_error() {
    let mut baseline = results(&[1.0; 10]);
    baseline.metrics.clear();
    let settings = settings(Decision::Significant, 5, vec![rule(DROP, None)]);
    let checks = checks::expand(
        &settings.rules,
        &BTreeSet::new(),
        &[RetrievalMetric::Mrr(None).into()],
    );
    let outcomes = decide(&checks, &baseline, &results(&[1.0; 10]), &settings, "t");
    assert_eq!(outcomes[0].status, CheckStatus::Error);
    assert!(
        outcomes[0]
            .verdict
            .contains("the baseline has no `mrr` values")
    );
}

#[test]
fn holm_stops_at_the_first_p_value_above_its_threshold() {
    // Two checks with the same exact p = 1/32 (5 of 10 queries drop from 1 to 0, 5 unchanged).
    // Holm compares the first with alpha/2 = 0.025 and stops there: neither fails, although
    // the second's own threshold (alpha = 0.05) is above 1/32.
    let before: Vec<f64> = vec![1.0; 10];
    let after: Vec<f64> = (0..10).map(|i| if i < 5 { 0.0 } else { 1.0 }).collect();
    let with_recall = |values: &[f64]| {
        let mut r = results(values);
        for record in r.queries.values_mut() {
            let v = record.metrics["mrr"];
            record.metrics.insert("recall@5".into(), v);
        }
        r.metrics.push("recall@5".into());
        r
    };
    let limits = Limits {
        max_drop: Some(0.0),
        ..DROP
    };
    let recall: Metric = RetrievalMetric::Recall(5).into();
    let mrr: Metric = RetrievalMetric::Mrr(None).into();
    let rules = vec![
        Rule {
            metric: recall,
            slice: None,
            limits,
        },
        Rule {
            metric: mrr,
            slice: None,
            limits,
        },
    ];
    let s = settings(Decision::Significant, 5, rules);
    let checks = checks::expand(&s.rules, &BTreeSet::new(), &[recall, mrr]);
    let outcomes = decide(
        &checks,
        &with_recall(&before),
        &with_recall(&after),
        &s,
        "t",
    );
    for outcome in &outcomes {
        assert!((outcome.p_value.unwrap() - 1.0 / 32.0).abs() < 1e-12);
        assert_eq!(outcome.status, CheckStatus::Pass, "{}", outcome.verdict);
    }
    assert_eq!(outcomes[0].threshold, Some(0.025));
    assert_eq!(outcomes[1].threshold, Some(0.05));
    // without correction both fail
    let mut none = s.clone();
    none.correction = Correction::None;
    let outcomes = decide(
        &checks,
        &with_recall(&before),
        &with_recall(&after),
        &none,
        "t",
    );
    assert!(outcomes.iter().all(|o| o.status == CheckStatus::Fail));
}

#[test]
fn verdicts_are_reproducible() {
    let baseline: Vec<f64> = (0..40).map(|i| (i % 5) as f64 / 4.0).collect();
    let current: Vec<f64> = (0..40).map(|i| ((i + 1) % 5) as f64 / 4.0).collect();
    let s = settings(Decision::Significant, 5, vec![rule(DROP, None)]);
    let first = run(&baseline, &current, &s);
    let second = run(&baseline, &current, &s);
    assert_eq!(
        first.iter().map(|o| &o.verdict).collect::<Vec<_>>(),
        second.iter().map(|o| &o.verdict).collect::<Vec<_>>()
    );
}
