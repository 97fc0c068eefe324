//! Properties of [`decide`] on whole runs (proptest): a larger worsening never improves a status,
//! adding a passing check never turns a regression into a pass, and no check's status depends on
//! the order of the rules (Holm's step-down ranks the checks by p-value, not by position:
//! docs/statistics.md); and what `decide` adds to the checks (judged@k, drift, a baseline that no
//! longer fits), decided once.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;
use crate::baseline::collect;
use crate::baseline::results::{Provenance, QueryRecord};
use crate::config::{Correction, SliceCorrection};
use crate::history::record::{self, Record, RecordedCheck};

/// The metrics of the fixture config, whose rules are set per test.
const METRICS: [&str; 3] = ["mrr", "recall@5", "ndcg@5"];

/// A config with [`METRICS`], slice field `class` and tier `t` gated by `rules` (YAML flow
/// sequence entries).
fn config(rules: &str) -> Config {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("eval-config.yaml");
    std::fs::write(
        &path,
        format!(
            "version: 1\nmetrics: [{}]\nslices: [class]\ngate: {{ rules: [ {rules} ] }}\n\
             tiers:\n  t: {{ qrels: q.jsonl, baseline: b.json }}\n",
            METRICS.join(", ")
        ),
    )
    .unwrap();
    crate::config::load(&path).unwrap()
}

/// Results whose query i has `values[metric][i]`; even queries are in `class=a`, odd in `class=b`.
fn results(values: &BTreeMap<&str, Vec<f64>>) -> Results {
    let n = values.values().map(Vec::len).max().unwrap_or(0);
    let queries: BTreeMap<String, QueryRecord> = (0..n)
        .map(|i| {
            let class = if i % 2 == 0 { "a" } else { "b" };
            let record = QueryRecord {
                query: None,
                slices: [("class".to_string(), class.to_string())].into(),
                metrics: values
                    .iter()
                    .map(|(metric, v)| (metric.to_string(), v[i]))
                    .collect(),
                retrieved: Vec::new(),
                answer: None,
                answer_sha256: None,
                claims: Vec::new(),
                answer_relevance_embedding: None,
                must_pass: None,
            };
            (format!("q{i:03}"), record)
        })
        .collect();
    let metrics: Vec<String> = values.keys().map(|m| m.to_string()).collect();
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

/// The decision of `current` against `baseline` under `config`'s tier `t`, without labels,
/// judged@k or history.
fn decided(config: &Config, tier: &Tier, baseline: &Results, current: &Results) -> GateReport {
    decided_as(config, tier, baseline, current, None).report
}

/// The decision of `current` against `baseline`, with `mismatch` as the hint of the warning
/// that the baseline no longer fits (None: no such warning asked for).
fn decided_as<'a>(
    config: &'a Config,
    tier: &'a Tier,
    baseline: &'a Results,
    current: &'a Results,
    mismatch: Option<MismatchHint<'a>>,
) -> DecidedRun {
    decide(DecisionInputs {
        config,
        tier,
        baseline,
        current,
        calibrations: &[],
        judged_at_k: None,
        model_judged_at_k: None,
        drift: None,
        run_notes: Vec::new(),
        mismatch,
    })
}

/// How bad a decided check's status is (None: not decided on the values: skipped, an error).
fn check_rank(status: CheckStatus) -> Option<u8> {
    match status {
        CheckStatus::Improved => Some(0),
        CheckStatus::Pass | CheckStatus::Warn => Some(1),
        CheckStatus::Inconclusive => Some(2),
        CheckStatus::Fail => Some(3),
        CheckStatus::Skipped | CheckStatus::Error => None,
    }
}

/// How bad a run's status is.
fn run_rank(status: RunStatus) -> u8 {
    match status {
        RunStatus::Pass => 0,
        RunStatus::Regression => 1,
        RunStatus::Error | RunStatus::NoBaseline => 2,
    }
}

fn statuses(report: &GateReport) -> BTreeMap<String, CheckStatus> {
    report
        .outcomes
        .iter()
        .map(|o| (o.name.clone(), o.status))
        .collect()
}

/// Per query: a baseline value and the current run's change from it (noise), for mrr and
/// recall@5.
fn paired_values() -> impl Strategy<Value = Vec<[(f64, f64); 2]>> {
    prop::collection::vec(
        [(0.3f64..0.7, -0.15f64..0.15), (0.3f64..0.7, -0.15f64..0.15)],
        10..60,
    )
}

/// The baseline and the current run of `values`, every current value worse by `shift`.
fn runs(values: &[[(f64, f64); 2]], shift: f64) -> (Results, Results) {
    let column = |metric: usize, current: bool| -> Vec<f64> {
        values
            .iter()
            .map(|q| {
                let (base, noise) = q[metric];
                if current { base + noise - shift } else { base }
            })
            .collect()
    };
    let side = |current: bool| {
        results(&BTreeMap::from([
            ("mrr", column(0, current)),
            ("recall@5", column(1, current)),
        ]))
    };
    (side(false), side(true))
}

/// The cases of a property: few enough for the test build, none persisted to a file.
fn cases(n: u32) -> ProptestConfig {
    ProptestConfig {
        cases: n,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(cases(48))]

    #[test]
    fn a_larger_worsening_never_improves_a_status(
        values in paired_values(),
        shift in -0.1f64..0.1,
        extra in 0.0f64..0.05,
        prove in any::<bool>(),
    ) {
        let config = config("{ metric: mrr, max_drop: 0.02 }, { metric: recall@5, max_drop_pct: 5 }");
        let mut tier = config.tiers["t"].clone();
        if prove {
            tier.gate.inconclusive = InconclusivePolicy::Fail;
        }
        let (baseline, less) = runs(&values, shift);
        let (_, more) = runs(&values, shift + extra);
        let (before, after) = (
            decided(&config, &tier, &baseline, &less),
            decided(&config, &tier, &baseline, &more),
        );
        let (before_checks, after_checks) = (statuses(&before), statuses(&after));
        prop_assert_eq!(before_checks.len(), after_checks.len());
        for (name, status) in &before_checks {
            let worse = after_checks[name];
            match (check_rank(*status), check_rank(worse)) {
                (Some(was), Some(now)) => prop_assert!(
                    now >= was,
                    "{name}: {status:?} -> {worse:?} with {extra} more worsening"
                ),
                _ => prop_assert_eq!(*status, worse, "{} is not decided on its values", name),
            }
        }
        prop_assert!(
            run_rank(after.status) >= run_rank(before.status),
            "{:?} -> {:?}",
            before.status,
            after.status
        );
    }

    #[test]
    fn adding_a_passing_check_never_turns_a_regression_into_a_pass(
        values in paired_values(),
        shift in -0.05f64..0.1,
    ) {
        // Without a correction, a check's level does not depend on how many checks there are:
        // the other checks keep their statuses (with Holm, one more check in a family makes its
        // first rejection stricter: the documented Holm step).
        let rules = "{ metric: mrr, max_drop: 0.02 }";
        let config = config(&format!("{rules}, {{ metric: recall@5, max_drop: 0.5 }}"));
        let mut tier = config.tiers["t"].clone();
        tier.gate.correction = Correction::None;
        tier.gate.slice_correction = SliceCorrection::None;
        let mut fewer = tier.clone();
        fewer.gate.rules.truncate(1);
        let (baseline, current) = runs(&values, shift);
        // recall@5 changes by its noise only, far within its limit of 0.5.
        let (with, without) = (
            decided(&config, &tier, &baseline, &current),
            decided(&config, &fewer, &baseline, &current),
        );
        let added: Vec<&CheckOutcome> = with
            .outcomes
            .iter()
            .filter(|o| o.metric == "recall@5")
            .collect();
        prop_assume!(added.iter().all(|o| o.status == CheckStatus::Pass));
        for outcome in without.outcomes.iter() {
            let kept = with.outcomes.iter().find(|o| o.name == outcome.name).unwrap();
            prop_assert_eq!(kept.status, outcome.status, "{}", &outcome.name);
        }
        if without.status == RunStatus::Regression {
            prop_assert_eq!(with.status, RunStatus::Regression);
        }
        if without.status == RunStatus::Pass {
            prop_assert_eq!(with.status, RunStatus::Pass);
        }
    }

    #[test]
    fn a_passing_outcome_added_to_any_outcomes_never_improves_the_run(
        outcomes in prop::collection::vec((0usize..4, 0usize..7), 0..12),
        family in 0usize..4,
        prove in any::<bool>(),
    ) {
        let families = [Family::Primary, Family::Slices, Family::Calibration, Family::Drift];
        let all_statuses = [
            CheckStatus::Pass,
            CheckStatus::Improved,
            CheckStatus::Fail,
            CheckStatus::Inconclusive,
            CheckStatus::Skipped,
            CheckStatus::Error,
            CheckStatus::Warn,
        ];
        let policy = if prove { InconclusivePolicy::Fail } else { InconclusivePolicy::Pass };
        let outcome = |family: Family, status: CheckStatus| {
            let mut o = CheckOutcome::bare("m [s]".into(), "m".into(), "s".into(), family);
            o.status = status;
            o
        };
        let mut checks: Vec<CheckOutcome> = outcomes
            .iter()
            .map(|&(f, s)| outcome(families[f], all_statuses[s]))
            .collect();
        let before = run_status(&checks, policy);
        checks.push(outcome(families[family], CheckStatus::Pass));
        let after = run_status(&checks, policy);
        match before {
            RunStatus::Regression => prop_assert_eq!(after, RunStatus::Regression),
            RunStatus::Pass => prop_assert_eq!(after, RunStatus::Pass),
            _ => {}
        }
        if checks.iter().any(|o| o.status == CheckStatus::Error) {
            prop_assert_eq!(after, RunStatus::Error);
        }
    }

    #[test]
    fn no_check_status_depends_on_the_order_of_the_rules(
        values in paired_values(),
        shift in -0.05f64..0.1,
        order in Just(vec![0usize, 1, 2]).prop_shuffle(),
    ) {
        let config = config(
            "{ metric: mrr, max_drop: 0.02 }, { metric: recall@5, max_drop: 0.01 }, \
             { metric: ndcg@5, max_drop_pct: 3 }",
        );
        let tier = &config.tiers["t"];
        let mut shuffled = tier.clone();
        shuffled.gate.rules = order.iter().map(|&i| tier.gate.rules[i].clone()).collect();
        let (baseline, current) = runs(&values, shift);
        // ndcg@5 moves with mrr, by half as much.
        let with_ndcg = |r: &Results| {
            let mut r = r.clone();
            for q in r.queries.values_mut() {
                let mrr = q.metrics["mrr"];
                q.metrics.insert("ndcg@5".into(), 0.5 + (mrr - 0.5) / 2.0);
            }
            r.metrics.push("ndcg@5".into());
            r.summary = collect::summarise(&r.metrics, &r.queries);
            r
        };
        let (baseline, current) = (with_ndcg(&baseline), with_ndcg(&current));
        let (given, reordered) = (
            decided(&config, tier, &baseline, &current),
            decided(&config, &shuffled, &baseline, &current),
        );
        prop_assert_eq!(statuses(&given), statuses(&reordered));
        prop_assert_eq!(given.status, reordered.status);
    }
}

/// 100 paired mrr values worse by 0.035 on average, with a standard error of 0.005: beyond the
/// limit 0.03 by one standard error (inconclusive, a pass by default), in both slice values.
fn one_standard_error_beyond() -> (Results, Results) {
    let baseline: Vec<f64> = vec![0.5; 100];
    let current: Vec<f64> = (0..100)
        .map(|i| 0.5 - 0.035 + if matches!(i % 4, 0 | 3) { 0.05 } else { -0.05 })
        .collect();
    let column = |v: Vec<f64>| results(&BTreeMap::from([("mrr", v)]));
    (column(baseline), column(current))
}

/// A recorded run whose `mrr [all]` check was worse than its baseline `b` by `delta` (se 0.005).
fn night(delta: f64) -> Record {
    Record {
        format: record::FORMAT.into(),
        tier: "t".into(),
        time: "2026-12-01T03:00:00Z".into(),
        commit: None,
        ragate_version: "0".into(),
        config_hash: String::new(),
        judges: Default::default(),
        embeddings: None,
        status: RunStatus::Pass,
        baseline_sha256: Some("b".into()),
        metrics: Default::default(),
        checks: vec![RecordedCheck {
            name: "mrr [all]".into(),
            metric: "mrr".into(),
            slice: "all".into(),
            status: "pass".into(),
            n: 100,
            delta: Some(delta),
            se: Some(0.005),
            limit: Some(0.03),
        }],
        queries: None,
    }
}

#[test]
fn a_drift_decides_the_run_status_with_the_other_checks_under_drift_fail() {
    let config = config("{ metric: mrr, max_drop: 0.03 }");
    let tier = &config.tiers["t"];
    let (mut baseline, current) = one_standard_error_beyond();
    // A baseline of 10 runs (`repeats:`): a one-run baseline may be off by as much as the nights
    // vary, which would leave these nights within the drift's threshold.
    baseline.noise = Some(crate::baseline::noise::RunNoise {
        repeats: 10,
        metrics: Default::default(),
    });
    let series: Vec<Record> = (0..29)
        .map(|i| night(if i % 2 == 0 { -0.045 } else { -0.035 }))
        .collect();
    let with_policy = |policy: DriftPolicy| {
        decide(DecisionInputs {
            config: &config,
            tier,
            baseline: &baseline,
            current: &current,
            calibrations: &[],
            judged_at_k: None,
            model_judged_at_k: None,
            drift: Some(DriftInputs {
                series: &series,
                baseline_sha256: "b",
                policy,
            }),
            run_notes: Vec::new(),
            mismatch: None,
        })
        .report
    };
    let without = decided(&config, tier, &baseline, &current);
    assert_eq!(without.status, RunStatus::Pass, "{:?}", statuses(&without));
    assert_eq!(without.outcomes[0].status, CheckStatus::Inconclusive);
    for (policy, drift_status, run) in [
        (DriftPolicy::Warn, CheckStatus::Warn, RunStatus::Pass),
        (DriftPolicy::Fail, CheckStatus::Fail, RunStatus::Regression),
    ] {
        let report = with_policy(policy);
        let drift = report
            .outcomes
            .iter()
            .find(|o| o.name == "drift mrr [all]")
            .expect("a drift check per `all` check");
        assert_eq!(drift.status, drift_status, "{}", drift.verdict);
        assert_eq!(report.status, run, "{policy:?}");
        let budget = report.error_budget.as_ref().unwrap();
        assert_eq!(
            budget.statement().contains("drift"),
            policy == DriftPolicy::Fail,
            "{}",
            budget.statement()
        );
    }
}

#[test]
fn a_low_judged_at_k_warns_last_and_is_reported() {
    let config = config("{ metric: mrr, max_drop: 0.03 }");
    let tier = &config.tiers["t"];
    let (baseline, current) = one_standard_error_beyond();
    let with_shares = |share: f64, model: Option<f64>| {
        decide(DecisionInputs {
            config: &config,
            tier,
            baseline: &baseline,
            current: &current,
            calibrations: &[],
            judged_at_k: Some((10, share)),
            model_judged_at_k: model,
            drift: None,
            run_notes: vec!["a note of the run".into()],
            mismatch: None,
        })
        .report
    };
    let with_share = |share: f64| with_shares(share, None);
    let low = with_share(0.3);
    assert_eq!(low.judged_at_k, Some((10, 0.3)));
    assert_eq!(
        low.warnings.last().map(String::as_str),
        Some(
            "judged@10 is 0.30: most retrieved docs are unjudged and count as irrelevant, so \
             recall and nDCG look worse than they are; judge more docs"
        )
    );
    assert!(low.notes.contains(&"a note of the run".to_string()));
    let high = with_share(0.5);
    assert!(
        high.warnings.iter().all(|w| !w.starts_with("judged@")),
        "{:?}",
        high.warnings
    );
    assert_eq!(high.status, low.status);
    // With model judgments in the qrels, the warning splits the share.
    let split = with_shares(0.3, Some(0.1));
    assert_eq!(split.model_judged_at_k, Some(0.1));
    assert!(
        split
            .warnings
            .last()
            .is_some_and(|w| w.starts_with("judged@10 is 0.30 (human 0.20, model 0.10): most")),
        "{:?}",
        split.warnings
    );
}

#[test]
fn a_baseline_that_no_longer_fits_is_warned_first_with_the_next_step_and_recorded() {
    let config = config("{ metric: mrr, max_drop: 0.03 }, { metric: recall@5, max_drop: 0.02 }");
    let tier = &config.tiers["t"];
    let (baseline, mrr_only) = one_standard_error_beyond();
    let mut current = mrr_only.clone();
    for q in current.queries.values_mut() {
        q.metrics.insert("recall@5".into(), 0.5);
    }
    current.metrics.push("recall@5".into());
    current.summary = collect::summarise(&current.metrics, &current.queries);
    let with_recorded = |recorded: Option<bool>| {
        decide(DecisionInputs {
            config: &config,
            tier,
            baseline: &baseline,
            current: &current,
            calibrations: &[],
            judged_at_k: None,
            model_judged_at_k: None,
            drift: None,
            run_notes: Vec::new(),
            mismatch: Some(MismatchHint {
                path: Path::new("b.json"),
                next_step: NextStep::Accept {
                    command: "ragate baseline accept --tier t",
                    recorded,
                },
            }),
        })
    };
    // The baseline lacks recall@5: only its checks error, so accepting the run fixes the tier.
    let decided = with_recorded(None);
    assert_eq!(decided.report.status, RunStatus::Error);
    assert_eq!(
        decided
            .baseline_mismatch
            .as_ref()
            .map(|p| &p.missing_metrics),
        Some(&vec!["recall@5".to_string()])
    );
    let message = decided.mismatch.clone().expect("the mismatch is warned");
    assert!(message.starts_with("b.json: "), "{message}");
    assert!(
        message.ends_with(
            "replace the baseline with `ragate baseline accept --tier t` (it shows what the new \
             baseline drops)"
        ),
        "{message}"
    );
    assert_eq!(decided.report.warnings.first(), Some(&message));
    // Stored results that recorded no mismatch: fix the other errors first.
    let stored = with_recorded(Some(false));
    let message = stored.mismatch.expect("the mismatch is warned");
    assert!(message.contains("fix the run's other errors"), "{message}");
    // A baseline that fits the rules: no mismatch.
    let mrr_rule = self::config("{ metric: mrr, max_drop: 0.03 }");
    let fitting = decided_with_mismatch(&mrr_rule, &mrr_rule.tiers["t"], &baseline, &mrr_only);
    assert_eq!((fitting.mismatch, fitting.baseline_mismatch), (None, None));
}

/// [`decided`] with the mismatch warning asked for.
fn decided_with_mismatch(
    config: &Config,
    tier: &Tier,
    baseline: &Results,
    current: &Results,
) -> DecidedRun {
    let hint = MismatchHint {
        path: Path::new("b.json"),
        next_step: NextStep::Given("compare other results".into()),
    };
    decided_as(config, tier, baseline, current, Some(hint))
}
