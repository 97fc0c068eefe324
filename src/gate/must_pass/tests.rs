//! Must-pass checks decided by hand: limits, slices, the lost document, pass^k and the errors.

use std::collections::BTreeMap;

use super::*;
use crate::baseline::collect;
use crate::baseline::results::{MustPassRecord, Provenance, RunStatus};

/// Tier `t` of a config with metrics recall@5 and answer_length, slice field `class`, `rules`
/// (YAML flow entries) and `tier_extra` (more tier keys).
fn tier(rules: &str, tier_extra: &str) -> Tier {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("eval-config.yaml");
    std::fs::write(
        &path,
        format!(
            "version: 1\nmetrics: [recall@5, answer_length]\nslices: [class]\n\
             gate: {{ rules: [ {rules} ] }}\n\
             tiers:\n  t: {{ qrels: q.jsonl, baseline: b.json{tier_extra} }}\n"
        ),
    )
    .unwrap();
    crate::config::load(&path).unwrap().tiers["t"].clone()
}

/// A must-pass record with `values`, in `class`, ranking `retrieved`, relevant docs `d1`, `d2`.
fn record(values: &[(&str, f64)], class: &str, retrieved: &[&str]) -> QueryRecord {
    QueryRecord {
        slices: [("class".to_string(), class.to_string())].into(),
        metrics: values.iter().map(|(m, v)| (m.to_string(), *v)).collect(),
        retrieved: retrieved.iter().map(ToString::to_string).collect(),
        must_pass: Some(MustPassRecord {
            relevant: vec!["d1".into(), "d2".into()],
            repeats: Vec::new(),
        }),
        ..QueryRecord::default()
    }
}

fn results(queries: Vec<(&str, QueryRecord)>) -> Results {
    let queries: BTreeMap<String, QueryRecord> = queries
        .into_iter()
        .map(|(qid, record)| (qid.to_string(), record))
        .collect();
    let metrics = vec!["recall@5".to_string()];
    Results {
        format: String::new(),
        tier: "t".into(),
        status: RunStatus::Pass,
        provenance: Provenance::default(),
        summary: collect::summarise(&metrics, &queries),
        metrics,
        noise: None,
        baseline_mismatch: None,
        queries,
    }
}

/// The one check of query `q` from `before` to `now` under `tier`.
fn one(tier: &Tier, before: QueryRecord, now: QueryRecord) -> CheckOutcome {
    let outcomes = checks(
        tier,
        &results(vec![("q", before)]),
        &results(vec![("q", now)]),
    );
    assert_eq!(outcomes.len(), 1);
    outcomes.into_iter().next().unwrap()
}

#[test]
fn a_floor_only_rule_tolerates_no_drop_and_names_the_lost_document() {
    let tier = tier("{ metric: recall@5, min: 0.1 }", "");
    let before = record(&[("recall@5", 1.0)], "a", &["d1", "x", "d2"]);
    let now = record(&[("recall@5", 0.5)], "a", &["x", "y", "d2"]);
    let check = one(&tier, before.clone(), now);
    assert_eq!(check.status, CheckStatus::Fail);
    assert_eq!(check.family, Family::MustPass);
    assert_eq!(check.name, "must-pass q");
    assert_eq!(
        check.verdict,
        "must-pass q broke: recall@5 1.0000 -> 0.5000; lost its relevant document d1 (rank 1 in \
         the baseline)"
    );
    assert_eq!(check.limit, Some(0.0));
    assert_eq!(check.worst[0].qid, "q");
    let same = one(&tier, before.clone(), before);
    assert_eq!(same.status, CheckStatus::Pass);
    assert_eq!(
        same.verdict,
        "must-pass q held: recall@5 1.0000 -> 1.0000 within its limit 0.0000"
    );
}

#[test]
fn the_tightest_limit_of_the_query_s_rules_holds_and_a_slice_s_rule_only_in_its_slice() {
    let rules =
        "{ metric: recall@5, max_drop: 0.5 }, { metric: recall@5, slice: class=b, max_drop: 0.1 }";
    let tier = tier(rules, "");
    let before = record(&[("recall@5", 1.0)], "a", &[]);
    let now = record(&[("recall@5", 0.6)], "a", &[]);
    assert_eq!(one(&tier, before, now).status, CheckStatus::Pass);
    let before = record(&[("recall@5", 1.0)], "b", &[]);
    let now = record(&[("recall@5", 0.6)], "b", &[]);
    let check = one(&tier, before, now);
    assert_eq!(check.status, CheckStatus::Fail);
    assert_eq!(check.limit, Some(0.1));
}

#[test]
fn a_lower_is_better_metric_may_not_rise_beyond_its_limit() {
    let tier = tier("{ metric: answer_length, max_increase_pct: 10 }", "");
    let before = record(&[("answer_length", 100.0)], "a", &[]);
    let held = one(
        &tier,
        before.clone(),
        record(&[("answer_length", 110.0)], "a", &[]),
    );
    assert_eq!(held.status, CheckStatus::Pass, "{}", held.verdict);
    let broke = one(&tier, before, record(&[("answer_length", 111.0)], "a", &[]));
    assert_eq!(broke.status, CheckStatus::Fail);
    assert_eq!(
        broke.verdict,
        "must-pass q broke: answer_length 100.0000 -> 111.0000"
    );
}

#[test]
fn a_query_the_baseline_lacks_or_a_value_on_one_side_only_is_not_decided() {
    let tier = tier("{ metric: recall@5, max_drop: 0.1 }", "");
    let now = record(&[("recall@5", 1.0)], "a", &[]);
    let outcomes = checks(
        &tier,
        &results(Vec::new()),
        &results(vec![("q", now.clone())]),
    );
    assert_eq!(outcomes[0].status, CheckStatus::Error);
    assert!(
        outcomes[0]
            .verdict
            .contains("the baseline has no record of it")
    );
    let check = one(&tier, record(&[], "a", &[]), now.clone());
    assert_eq!(check.status, CheckStatus::Error);
    assert_eq!(
        check.verdict,
        "must-pass q is not decided: the baseline has no recall@5 for it"
    );
    // Queries not marked must-pass get no check.
    let plain = QueryRecord {
        must_pass: None,
        ..now
    };
    assert!(
        checks(
            &tier,
            &results(vec![("q", plain.clone())]),
            &results(vec![("q", plain)])
        )
        .is_empty()
    );
}

/// A must-pass record whose repeats have `values` of recall@5 (their mean as its value).
fn repeated(values: &[f64]) -> QueryRecord {
    let mut record = record(
        &[("recall@5", values.iter().sum::<f64>() / values.len() as f64)],
        "a",
        &[],
    );
    record.must_pass.as_mut().unwrap().repeats = values
        .iter()
        .map(|v| [("recall@5".to_string(), *v)].into())
        .collect();
    record
}

#[test]
fn with_repeats_every_run_must_pass_by_default_or_at_least_min_repeats() {
    let before = record(&[("recall@5", 1.0)], "a", &[]);
    let all = tier("{ metric: recall@5, max_drop: 0.1 }", ", repeats: 3");
    let two_of_three = one(&all, before.clone(), repeated(&[1.0, 0.0, 1.0]));
    assert_eq!(two_of_three.status, CheckStatus::Fail);
    assert_eq!(
        two_of_three.verdict,
        "must-pass q broke: recall@5 1.0000 -> 0.0000; passed 2 of 3 runs (3 required): pass, \
         fail, pass"
    );
    let three = one(&all, before.clone(), repeated(&[1.0, 1.0, 1.0]));
    assert_eq!(three.status, CheckStatus::Pass);
    assert!(
        three
            .verdict
            .ends_with("passed 3 of 3 runs (3 required): pass, pass, pass")
    );
    let lenient = tier(
        "{ metric: recall@5, max_drop: 0.1 }",
        ", repeats: 3, must_pass: { min_repeats: 2 }",
    );
    assert_eq!(
        one(&lenient, before.clone(), repeated(&[1.0, 0.0, 1.0])).status,
        CheckStatus::Pass
    );
    assert_eq!(
        one(&lenient, before, repeated(&[0.0, 0.0, 1.0])).status,
        CheckStatus::Fail
    );
}

#[test]
fn min_repeats_is_checked_against_the_tier_s_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("eval-config.yaml");
    for (extra, message) in [
        (
            ", repeats: 2, must_pass: { min_repeats: 3 }",
            "tiers.t.must_pass.min_repeats",
        ),
        (", must_pass: { min_repeats: 0 }", "0: expected 1 to 1"),
        (", must_pass: { min_repat: 1 }", "min_repat"),
    ] {
        std::fs::write(
            &path,
            format!(
                "version: 1\nmetrics: [recall@5]\ngate: {{ rules: [{{ metric: recall@5, max_drop: 0.1 }}] }}\n\
                 tiers:\n  t: {{ qrels: q.jsonl, baseline: b.json{extra} }}\n"
            ),
        )
        .unwrap();
        let error = crate::config::load(&path).unwrap_err().to_string();
        assert!(error.contains(message), "{extra}: {error}");
    }
}
