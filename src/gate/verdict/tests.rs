//! Tests of the verdict rules: the test against the limit, inconclusive, underpowered, floors,
//! families and their corrections, skips, errors.
//! Over 600 lines: one table of cases per rule, each read beside the rule it checks.

use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::baseline::results::{Provenance, QueryRecord, RunStatus};
use crate::config::{Rule, SliceCorrection, SliceValue};
use crate::gate::checks::{self, Slice};
use crate::metrics::metric::Metric;
use crate::metrics::retrieval::RetrievalMetric;
use crate::stats::limit_test::Method;

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
                must_pass: None,
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
        noise: None,
        baseline_mismatch: None,
        queries,
    }
}

fn settings(decision: Decision, min_queries: usize, rules: Vec<Rule>) -> GateSettings {
    GateSettings {
        decision,
        alpha: 0.05,
        alpha_scope: crate::config::AlphaScope::Family,
        correction: Correction::Holm,
        slice_correction: SliceCorrection::Holm,
        inconclusive: crate::config::InconclusivePolicy::Pass,
        min_queries,
        min_share: 0.9,
        seed: 1,
        rules,
        notices: Vec::new(),
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

fn limited(max_drop: f64) -> Limits {
    Limits {
        max_drop: Some(max_drop),
        ..DROP
    }
}

fn significant(rules: Vec<Rule>) -> GateSettings {
    settings(Decision::Significant, 5, rules)
}

/// `n` values around `centre` with a deterministic spread of +-`spread` (mean exactly `centre`).
fn spread_around(centre: f64, spread: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| centre + if i % 2 == 0 { spread } else { -spread })
        .collect()
}

#[test]
fn a_large_consistent_drop_fails_and_names_the_worst_queries() {
    let baseline = vec![1.0; 30];
    let current: Vec<f64> = (0..30)
        .map(|i| if i % 2 == 0 { 0.0 } else { 1.0 })
        .collect();
    let outcomes = run(&baseline, &current, &significant(vec![rule(DROP, None)]));
    let all = &outcomes[0];
    assert_eq!(
        (all.name.as_str(), all.status),
        ("mrr [all]", CheckStatus::Fail)
    );
    assert_eq!(all.family, Family::Primary);
    assert!((all.delta + 0.5).abs() < 1e-12);
    assert_eq!(all.limit, Some(0.05));
    // Half the queries unchanged: too few changed for the t test alone.
    assert_eq!(all.method, Some(Method::SkewCorrectedTAndBetting));
    assert_eq!(all.worse_count, 15);
    assert_eq!(all.worst.len(), WORST_QUERIES);
    assert!(all.worst[0].hit_to_miss);
    assert_eq!(all.worst[0].qid, "q000", "ties by qid");
    assert!(all.p_value.unwrap() < 1e-3);
    // The decision bound: the delta is at most this, and that is beyond the limit.
    let bound = all.bound.unwrap();
    assert!(bound.delta < -0.05 && bound.delta > -0.5, "{bound:?}");
    assert!(
        all.verdict.starts_with(&format!(
            "mrr [all] regressed: worsening 0.5000 exceeds the limit 0.0500 ({} <= alpha 0.0500 (skew-corrected t test checked by a betting test: few queries changed); worsening >= ",
            super::p_text(all.p_value.unwrap())
        )),
        "{}",
        all.verdict
    );
}

#[test]
fn a_tolerated_change_is_tested_against_the_limit_not_against_zero() {
    // 1,000 queries, each worse by 0.025 +- 0.1: the drop is clearly real (significant against
    // zero), but only 0.005 beyond a limit of 0.02: the old rule failed, the test against the
    // limit calls it inconclusive.
    let baseline = vec![0.5; 1000];
    let current = spread_around(0.475, 0.1, 1000);
    let outcome = &run(
        &baseline,
        &current,
        &significant(vec![rule(limited(0.02), None)]),
    )[0];
    assert_eq!(
        outcome.status,
        CheckStatus::Inconclusive,
        "{}",
        outcome.verdict
    );
    assert!(outcome.p_value.unwrap() > 0.05);
    let needed = outcome
        .queries_needed
        .and_then(QueriesNeeded::count)
        .unwrap();
    assert!(needed > 1000, "{needed}");
    assert!(
        outcome.verdict.contains("about")
            && outcome.verdict.contains(
                "paired queries with this effect and spread would decide it with 80% power"
            ),
        "{}",
        outcome.verdict
    );
    // Half the limit: a pass, although the drop is significant against zero.
    let half = spread_around(0.49, 0.1, 1000);
    let outcome = &run(
        &baseline,
        &half,
        &significant(vec![rule(limited(0.02), None)]),
    )[0];
    assert_eq!(outcome.status, CheckStatus::Pass, "{}", outcome.verdict);
    // Far beyond the limit: a failure.
    let far = spread_around(0.43, 0.1, 1000);
    let outcome = &run(
        &baseline,
        &far,
        &significant(vec![rule(limited(0.02), None)]),
    )[0];
    assert_eq!(outcome.status, CheckStatus::Fail, "{}", outcome.verdict);
}

#[test]
fn a_drop_beyond_the_limit_without_evidence_is_inconclusive_and_fails_on_the_point_estimate() {
    let baseline = vec![0.5; 30];
    let small: Vec<f64> = vec![0.48; 30];
    let outcome = &run(&baseline, &small, &significant(vec![rule(DROP, None)]))[0];
    assert_eq!(outcome.status, CheckStatus::Pass, "{}", outcome.verdict);
    // A drop beyond the limit from two queries only: not enough evidence.
    let mut noisy = baseline.clone();
    noisy[0] = 0.0;
    noisy[1] = 0.0;
    noisy[2] = 1.0;
    let outcome = &run(
        &baseline,
        &noisy,
        &significant(vec![rule(limited(0.0), None)]),
    )[0];
    assert_eq!(
        outcome.status,
        CheckStatus::Inconclusive,
        "{}",
        outcome.verdict
    );
    assert!(
        outcome.verdict.contains("but the evidence is not enough"),
        "{}",
        outcome.verdict
    );
    // The same drop fails on the point estimate.
    let outcome = &run(
        &baseline,
        &noisy,
        &settings(Decision::Point, 5, vec![rule(limited(0.0), None)]),
    )[0];
    assert_eq!(outcome.status, CheckStatus::Fail, "{}", outcome.verdict);
    assert_eq!((outcome.p_value, outcome.bound), (None, None));
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
    assert!((outcome.limit.unwrap() - 0.025).abs() < 1e-12);
    let floor = Limits {
        max_drop: Some(1.0),
        min: Some(0.48),
        ..DROP
    };
    let outcome = &run(&baseline, &current, &significant(vec![rule(floor, None)]))[0];
    assert_eq!(outcome.status, CheckStatus::Fail);
    assert!(
        outcome.verdict.contains("is below min 0.48"),
        "{}",
        outcome.verdict
    );
    let better = vec![0.9; 30];
    let outcome = &run(&baseline, &better, &significant(vec![rule(DROP, None)]))[0];
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
fn a_check_that_cannot_fail_is_skipped_as_underpowered_never_passed() {
    // 21 checks' worth of family: one rule, 20 slices... simpler: with min_queries 1, a slice of
    // 4 queries that all lose everything has p = 2^-4 = 0.0625 > alpha: it could never fail.
    let baseline = vec![1.0; 12];
    let current = vec![0.0; 12];
    let outcomes = run(
        &baseline,
        &current,
        &settings(Decision::Significant, 1, vec![rule(DROP, None)]),
    );
    let by_slice: BTreeMap<&str, &CheckOutcome> =
        outcomes.iter().map(|o| (o.slice.as_str(), o)).collect();
    // part=b: 4 queries, alone... two slice checks share the slice family: alpha / 2 = 0.025.
    let b = by_slice["part=b"];
    assert_eq!(b.status, CheckStatus::Skipped, "{}", b.verdict);
    assert!(
        b.verdict.contains("skipped (underpowered)"),
        "{}",
        b.verdict
    );
    assert!(b.verdict.contains("none at this size"), "{}", b.verdict);
    assert_eq!(b.detectable_drop, None);
    // part=a: 8 queries, 2^-8 < 0.025: tested, and it fails.
    assert_eq!(by_slice["part=a"].status, CheckStatus::Fail);
    assert_eq!(by_slice["all"].status, CheckStatus::Fail);
    // A broken floor still fails an underpowered check.
    let floor = Limits {
        min: Some(0.5),
        ..DROP
    };
    let outcomes = run(
        &baseline,
        &current,
        &settings(Decision::Significant, 1, vec![rule(floor, None)]),
    );
    assert!(outcomes.iter().all(|o| o.status == CheckStatus::Fail));
}

#[test]
fn small_slices_are_skipped_and_slice_rules_override() {
    let baseline = vec![1.0; 12];
    let current = vec![0.0; 12];
    // part=b has 4 queries (0, 3, 6, 9), fewer than min_queries 5
    let rules = vec![rule(DROP, None), rule(limited(2.0), Some("a"))];
    let outcomes = run(&baseline, &current, &significant(rules));
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
fn a_metric_missing_from_the_baseline_or_a_non_finite_value_is_an_error() {
    let mut baseline = results(&[1.0; 10]);
    baseline.metrics.clear();
    let settings = significant(vec![rule(DROP, None)]);
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
    let mut values = vec![1.0; 10];
    values[4] = f64::NAN;
    let outcomes = decide(
        &checks,
        &results(&[1.0; 10]),
        &results(&values),
        &settings,
        "t",
    );
    assert_eq!(outcomes[0].status, CheckStatus::Error);
    assert!(
        outcomes[0]
            .verdict
            .contains("query `q004` has a non-finite value"),
        "{}",
        outcomes[0].verdict
    );
}

/// Results carrying `recall@5` beside `mrr`, with the same values.
fn with_recall(values: &[f64]) -> Results {
    let mut r = results(values);
    for record in r.queries.values_mut() {
        let v = record.metrics["mrr"];
        record.metrics.insert("recall@5".into(), v);
    }
    r.metrics.push("recall@5".into());
    r
}

#[test]
fn holm_stops_at_the_first_p_value_above_its_threshold() {
    // Two checks with the same p between 0.025 and 0.05: 40 queries, worsening 0.3 + 0.0893 and
    // -0.3 + 0.0893 alternating (symmetric, so the plain and the corrected t agree; every query
    // changed, so no betting check). Holm compares the first with alpha/2 = 0.025 and stops
    // there: neither fails, although the second's own threshold (alpha = 0.05) is above p.
    let before: Vec<f64> = vec![0.6; 40];
    let after: Vec<f64> = (0..40)
        .map(|i| 0.6 - 0.0893 + if i % 2 == 0 { -0.3 } else { 0.3 })
        .collect();
    let limits = limited(0.0);
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
    let s = significant(rules);
    let checks = checks::expand(&s.rules, &BTreeSet::new(), &[recall, mrr]);
    let outcomes = decide(
        &checks,
        &with_recall(&before),
        &with_recall(&after),
        &s,
        "t",
    );
    let p = outcomes[0].p_value.unwrap();
    assert!(p > 0.025 && p < 0.05, "{p}");
    for outcome in &outcomes {
        assert_eq!(outcome.p_value, Some(p));
        assert_eq!(outcome.method, Some(Method::SkewCorrectedT));
        assert_eq!(
            outcome.status,
            CheckStatus::Inconclusive,
            "{}",
            outcome.verdict
        );
    }
    // Both bounds at the level where Holm stopped (alpha / 2), which both raw p-values exceed;
    // both adjusted p-values are 2 p > alpha, as the verdicts say.
    assert_eq!(outcomes[0].threshold, Some(0.025));
    assert_eq!(outcomes[1].threshold, Some(0.025));
    for outcome in &outcomes {
        let adjustment = outcome.adjustment.unwrap();
        assert_eq!(adjustment.adjusted, 2.0 * p);
        let expected = format!(
            "(Holm-adjusted p = {:.4} over 2 checks > alpha 0.0500 (raw p = {p:.4}, ",
            2.0 * p
        );
        assert!(outcome.verdict.contains(&expected), "{}", outcome.verdict);
    }
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
fn slice_checks_form_their_own_family() {
    // One rule: the `all` check is alone in the primary family (threshold alpha), the two slice
    // checks share the slice family (Holm: alpha / 2 for the smaller p).
    let baseline = vec![1.0; 60];
    let current = vec![0.0; 60];
    let outcomes = run(&baseline, &current, &significant(vec![rule(DROP, None)]));
    let families: Vec<(Family, Option<f64>)> =
        outcomes.iter().map(|o| (o.family, o.threshold)).collect();
    assert_eq!(
        families,
        [
            (Family::Primary, Some(0.05)),
            (Family::Slices, Some(0.025)),
            (Family::Slices, Some(0.05)),
        ]
    );
    // Benjamini-Hochberg for the slices: both rejected (R = 2), so both bounds at R alpha / m =
    // alpha.
    let mut bh = significant(vec![rule(DROP, None)]);
    bh.slice_correction = SliceCorrection::Bh;
    let outcomes = run(&baseline, &current, &bh);
    assert_eq!(outcomes[1].threshold, Some(0.05));
    assert_eq!(outcomes[2].threshold, Some(0.05));
    assert!(
        outcomes[1]
            .verdict
            .contains("BH-adjusted q < 0.0001 over 2 checks <= alpha 0.0500"),
        "{}",
        outcomes[1].verdict
    );
    assert!(outcomes.iter().all(|o| o.status == CheckStatus::Fail));
}

#[test]
fn the_bound_shown_is_the_one_the_verdict_used() {
    for (centre, status) in [
        (0.43, CheckStatus::Fail),
        (0.475, CheckStatus::Inconclusive),
    ] {
        let outcome = &run(
            &vec![0.5; 200],
            &spread_around(centre, 0.1, 200),
            &significant(vec![rule(limited(0.02), None)]),
        )[0];
        assert_eq!(outcome.status, status, "{}", outcome.verdict);
        let bound = outcome.bound.unwrap();
        let least_worsening = -bound.delta;
        assert_eq!(
            least_worsening > 0.02,
            status == CheckStatus::Fail,
            "{bound:?}"
        );
        assert_eq!(bound.confidence, 1.0 - outcome.threshold.unwrap());
    }
}

#[test]
fn verdicts_are_reproducible() {
    let baseline: Vec<f64> = (0..40).map(|i| (i % 5) as f64 / 4.0).collect();
    let current: Vec<f64> = (0..40).map(|i| ((i + 1) % 5) as f64 / 4.0).collect();
    let s = significant(vec![rule(DROP, None)]);
    let first = run(&baseline, &current, &s);
    let second = run(&baseline, &current, &s);
    assert_eq!(
        first.iter().map(|o| &o.verdict).collect::<Vec<_>>(),
        second.iter().map(|o| &o.verdict).collect::<Vec<_>>()
    );
}

#[test]
fn the_index_pairs_each_slice_with_its_own_queries_by_the_current_slice_values() {
    let mut baseline = results(&[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]);
    let mut current = results(&[0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1]);
    // q001 moved from `a` to `b` in the current run: the current value decides. q002 is only in
    // the baseline and q007 only in the current run: neither is paired.
    current.queries.get_mut("q001").unwrap().slices =
        [("part".to_string(), "b".to_string())].into();
    baseline.queries.get_mut("q001").unwrap().slices =
        [("part".to_string(), "a".to_string())].into();
    current.queries.remove("q002");
    let extra = current.queries["q003"].clone();
    current.queries.insert("q007".into(), extra);
    let index = pair_index(&baseline, &current);
    let rules = [rule(limited(0.1), None)];
    let paired_qids = |slice: Slice| {
        let check = Check {
            rule: &rules[0],
            slice,
        };
        pair(&check, &baseline, &index).unwrap().qids
    };
    let value = |v: &str| {
        Slice::Value(SliceValue {
            field: "part".into(),
            value: v.into(),
        })
    };
    assert_eq!(
        paired_qids(Slice::All),
        ["q000", "q001", "q003", "q004", "q005", "q006"]
    );
    assert_eq!(paired_qids(value("b")), ["q000", "q001", "q003", "q006"]);
    assert_eq!(paired_qids(value("a")), ["q004", "q005"]);
    assert!(paired_qids(value("none")).is_empty());
    let check = Check {
        rule: &rules[0],
        slice: value("b"),
    };
    let paired = pair(&check, &baseline, &index).unwrap();
    assert_eq!(paired.baseline, [0.1, 0.2, 0.4, 0.7]);
    assert_eq!(paired.current, [0.7, 0.6, 0.4, 0.1]);
}

mod agreement;
mod floors;
mod messages;
mod proof;

#[test]
fn a_uniform_large_shift_fails_with_p_near_zero() {
    // 30 queries that all lost 0.3 against a limit of 0.02: before, "few queries changed" counted
    // the values off the most common one (none), the betting check capped p at 0.0045.
    let baseline = vec![0.8; 30];
    let current = vec![0.5; 30];
    let all = &run(
        &baseline,
        &current,
        &significant(vec![rule(limited(0.02), None)]),
    )[0];
    assert_eq!(all.status, CheckStatus::Fail, "{}", all.verdict);
    assert_eq!(all.method, Some(Method::SkewCorrectedT));
    assert_eq!(all.p_value, Some(0.0));
}

#[test]
fn a_change_limit_is_a_drop_limit_upward_and_an_increase_limit_downward() {
    // The one test of `has_change_limit`, which both the verdicts and the error budget's families
    // (`decision::family_levels`) read: each limit alone, on a higher- and a lower-is-better metric.
    let higher: Metric = RetrievalMetric::Mrr(None).into();
    let lower: Metric = "latency_ms".parse().unwrap();
    let one = |set: fn(&mut Limits)| {
        let mut limits = Limits::default();
        set(&mut limits);
        limits
    };
    let cases: [(&str, Limits, bool, bool); 7] = [
        ("none", Limits::default(), false, false),
        ("max_drop", one(|l| l.max_drop = Some(0.1)), true, false),
        (
            "max_drop_pct",
            one(|l| l.max_drop_pct = Some(5.0)),
            true,
            false,
        ),
        ("min", one(|l| l.min = Some(0.5)), false, false),
        (
            "max_increase",
            one(|l| l.max_increase = Some(1.0)),
            false,
            true,
        ),
        (
            "max_increase_pct",
            one(|l| l.max_increase_pct = Some(5.0)),
            false,
            true,
        ),
        ("max", one(|l| l.max = Some(100.0)), false, false),
    ];
    for (name, limits, upward, downward) in cases {
        for (metric, expected) in [(higher, upward), (lower, downward)] {
            let rule = Rule {
                metric,
                slice: None,
                limits,
            };
            let check = Check {
                rule: &rule,
                slice: Slice::All,
            };
            assert_eq!(has_change_limit(&check), expected, "{name} on {metric}");
        }
    }
}
