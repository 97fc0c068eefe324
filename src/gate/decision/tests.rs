//! Tests of the run's decision: the status table, the baseline-mismatch record, the split of
//! alpha across families.

use super::*;

fn outcome(family: Family, status: CheckStatus) -> CheckOutcome {
    let mut o = CheckOutcome::bare("m [s]".into(), "m".into(), "s".into(), family);
    o.status = status;
    o
}

use CheckStatus::Skipped as S;
use CheckStatus::{Error as E, Fail as F, Improved as I, Inconclusive as N, Pass as P};
use Family::{Calibration as Cal, Primary as All, Slices as Sl};

#[test]
fn run_status_table() {
    type Case<'a> = (&'a [(Family, CheckStatus)], InconclusivePolicy, RunStatus);
    let cases: &[Case<'_>] = &[
        (
            &[(All, P), (Sl, P)],
            InconclusivePolicy::Pass,
            RunStatus::Pass,
        ),
        (
            &[(All, I), (Sl, S)],
            InconclusivePolicy::Pass,
            RunStatus::Pass,
        ),
        (
            &[(All, P), (Sl, F)],
            InconclusivePolicy::Pass,
            RunStatus::Regression,
        ),
        (
            &[(All, F), (Sl, E)],
            InconclusivePolicy::Pass,
            RunStatus::Error,
        ),
        (
            &[(All, N), (Sl, P)],
            InconclusivePolicy::Pass,
            RunStatus::Pass,
        ),
        (
            &[(All, N), (Sl, P)],
            InconclusivePolicy::Fail,
            RunStatus::Regression,
        ),
        // No `all` check at all (every rule names a slice): decided by the slices.
        (
            &[(Sl, P), (Sl, P)],
            InconclusivePolicy::Pass,
            RunStatus::Pass,
        ),
        (
            &[(Sl, P), (Sl, S)],
            InconclusivePolicy::Pass,
            RunStatus::Pass,
        ),
        (
            &[(Sl, F), (Sl, S)],
            InconclusivePolicy::Pass,
            RunStatus::Regression,
        ),
        // Every `all` check skipped: the primary family said nothing.
        (
            &[(All, S), (Sl, P)],
            InconclusivePolicy::Pass,
            RunStatus::Error,
        ),
        (
            &[(All, S), (Sl, F)],
            InconclusivePolicy::Pass,
            RunStatus::Error,
        ),
        // Nothing evaluated at all.
        (
            &[(Sl, S), (Sl, S)],
            InconclusivePolicy::Pass,
            RunStatus::Error,
        ),
        (&[], InconclusivePolicy::Pass, RunStatus::Error),
        // JudgedMetric floors count like any check.
        (
            &[(All, P), (Cal, F)],
            InconclusivePolicy::Pass,
            RunStatus::Regression,
        ),
        (
            &[(All, P), (Cal, S)],
            InconclusivePolicy::Pass,
            RunStatus::Pass,
        ),
        (&[(Cal, S)], InconclusivePolicy::Pass, RunStatus::Error),
    ];
    for (checks, policy, expected) in cases {
        let outcomes: Vec<CheckOutcome> = checks
            .iter()
            .map(|&(family, status)| outcome(family, status))
            .collect();
        assert_eq!(
            run_status(&outcomes, *policy),
            *expected,
            "{checks:?} under {policy:?}"
        );
    }
}

#[test]
fn only_a_run_that_errored_because_its_baseline_does_not_fit_records_the_mismatch() {
    use crate::baseline::results::SliceSummary;
    let pairing = |shared: usize, missing: &[&str]| Pairing {
        shared_queries: shared,
        queries: 6,
        baseline_queries: 6,
        min_queries: 3,
        min_share: 0.9,
        missing_metrics: missing.iter().map(|m| m.to_string()).collect(),
    };
    let check = |metric: &str, slice: &str, family: Family, status: CheckStatus| {
        let mut o = CheckOutcome::bare(
            format!("{metric} [{slice}]"),
            metric.into(),
            slice.into(),
            family,
        );
        o.status = status;
        o
    };
    let mut current = Results {
        format: String::new(),
        tier: "smoke".into(),
        status: RunStatus::Error,
        provenance: Default::default(),
        metrics: vec!["mrr".into(), "recall@5".into()],
        summary: Default::default(),
        noise: None,
        baseline_mismatch: None,
        queries: Default::default(),
    };
    for slice in ["all", "class=a"] {
        current.summary.insert(
            slice.into(),
            [("mrr".to_string(), SliceSummary { mean: 0.5, n: 3 })].into(),
        );
    }
    let report = |outcomes: Vec<CheckOutcome>, pairing: Pairing| GateReport {
        status: run_status(&outcomes, InconclusivePolicy::Pass),
        outcomes,
        pairing: Some(pairing),
        ..GateReport::without_checks("smoke", RunStatus::Error, InconclusivePolicy::Pass)
    };
    // Nothing pairs: every check skipped for want of pairs.
    let unpaired = report(
        vec![check("mrr", "all", All, S), check("mrr", "class=a", Sl, S)],
        pairing(0, &[]),
    );
    assert_eq!(unpaired.status, RunStatus::Error);
    assert_eq!(
        baseline_mismatch(&unpaired, &current),
        Some(pairing(0, &[]))
    );
    // A gated metric the baseline lacks: its checks error, the others pass.
    let missing = report(
        vec![
            check("mrr", "all", All, P),
            check("recall@5", "all", All, E),
            check("recall@5", "class=a", Sl, E),
        ],
        pairing(6, &["recall@5"]),
    );
    assert_eq!(
        baseline_mismatch(&missing, &current),
        Some(pairing(6, &["recall@5"]))
    );
    // Fail closed: an error of another metric, on a slice the run lacks, or of a calibrated
    // floor; a baseline that fits; every remaining `all` check skipped while enough pair.
    for (outcomes, fits) in [
        (
            vec![check("mrr", "all", All, S), check("mrr", "all", All, E)],
            pairing(0, &[]),
        ),
        (
            vec![
                check("mrr", "all", All, P),
                check("recall@5", "class=zzz", Sl, E),
            ],
            pairing(6, &["recall@5"]),
        ),
        (
            vec![
                check("mrr", "all", All, S),
                check("faithfulness_ppi", "all", Cal, E),
            ],
            pairing(0, &[]),
        ),
        (vec![check("mrr", "all", All, E)], pairing(6, &[])),
        (
            vec![
                check("mrr", "all", All, S),
                check("recall@5", "all", All, E),
            ],
            pairing(6, &["recall@5"]),
        ),
    ] {
        let other = report(outcomes, fits);
        assert_eq!(other.status, RunStatus::Error, "{other:?}");
        assert_eq!(baseline_mismatch(&other, &current), None, "{other:?}");
    }
    // A run that is not an error needs no record (accept takes it as it is).
    let regression = report(vec![check("mrr", "all", All, F)], pairing(0, &[]));
    assert_eq!(baseline_mismatch(&regression, &current), None);
}

#[test]
fn alpha_is_split_across_the_families_present_only_under_run_scope() {
    use crate::config::{
        AlphaScope, Correction, Decision, GateSettings, Limits, Rule, SliceCorrection,
    };
    use crate::metrics::retrieval::RetrievalMetric;
    let recall: Metric = RetrievalMetric::Recall(5).into();
    let rule = |max_drop: Option<f64>, min: Option<f64>| Rule {
        metric: recall,
        slice: None,
        limits: Limits {
            max_drop,
            min,
            ..Limits::default()
        },
    };
    let settings = |scope, rules: Vec<Rule>| GateSettings {
        decision: Decision::Significant,
        alpha: 0.06,
        alpha_scope: scope,
        correction: Correction::Holm,
        slice_correction: SliceCorrection::Holm,
        inconclusive: InconclusivePolicy::Pass,
        min_queries: 5,
        min_share: 0.9,
        seed: 1,
        rules,
        notices: Vec::new(),
    };
    let values: BTreeSet<SliceValue> = [SliceValue {
        field: "class".into(),
        value: "a".into(),
    }]
    .into();
    let limited = settings(AlphaScope::Run, vec![rule(Some(0.02), None)]);
    let with_slices = checks::expand(&limited.rules, &values, &[recall]);
    let all_only = checks::expand(&limited.rules, &BTreeSet::new(), &[recall]);
    let close = |got: (FamilyLevels, f64), primary: f64, slices: f64, floor: f64| {
        let (levels, floor_level) = got;
        assert!((levels.primary - primary).abs() < 1e-15, "{levels:?}");
        assert!((levels.slices - slices).abs() < 1e-15, "{levels:?}");
        assert!((floor_level - floor).abs() < 1e-15, "{floor_level}");
    };
    // Default: every family at alpha, floors at the 95% interval's lower end.
    let family = settings(AlphaScope::Family, limited.rules.clone());
    close(family_levels(&family, &with_slices, 2), 0.06, 0.06, 0.025);
    // Primary and slices: half each; with two floors, a third each, a floor a sixth.
    close(family_levels(&limited, &with_slices, 0), 0.03, 0.03, 0.025);
    close(family_levels(&limited, &with_slices, 2), 0.02, 0.02, 0.01);
    // Only the `all` checks: all of alpha.
    close(family_levels(&limited, &all_only, 0), 0.06, 0.06, 0.025);
    // Floor-only rules limit no change: their checks are no family; point decisions neither.
    let floors_only = settings(AlphaScope::Run, vec![rule(None, Some(0.5))]);
    let floor_checks = checks::expand(&floors_only.rules, &values, &[recall]);
    close(
        family_levels(&floors_only, &floor_checks, 1),
        0.06,
        0.06,
        0.06,
    );
    let mut point = limited.clone();
    point.decision = Decision::Point;
    close(family_levels(&point, &with_slices, 1), 0.06, 0.06, 0.06);
}
