//! The one place a run is decided: `gate`, `merge` and `compare` all turn (config, tier,
//! baseline, current results, judge calibrations) into a [`GateReport`] here, with every check
//! and the run's status. Reports only render what this returns.

use std::collections::BTreeSet;
use std::path::Path;

use crate::baseline::pairing::{self, Pairing};
use crate::baseline::results::{Results, RunStatus};
use crate::config::{
    AlphaScope, Config, Decision, GateSettings, InconclusivePolicy, SliceValue, Tier,
};
use crate::error::{Error, Result};
use crate::gate::calibration::{self, Calibration};
use crate::gate::checks::{self, Check, Slice};
use crate::gate::error_budget::ErrorBudget;
use crate::gate::verdict::{self, CheckOutcome, CheckStatus, Family, FamilyLevels};
use crate::gate::{
    GateReport, answer_changes, diagnosis, empty_answers, length_faithfulness_correlation, reported,
};
use crate::metrics::metric::Metric;
use crate::metrics::retrieval::Direction;
use crate::report::format::short_hash as short;
use crate::suggest;

/// Compares `current` with `baseline` under the tier's rules (calibrated floors included) and
/// decides the run.
pub fn decide(
    config: &Config,
    tier: &Tier,
    baseline: &Results,
    current: &Results,
    calibrations: &[Calibration],
) -> GateReport {
    let mut warnings = Vec::new();
    // Results from before `empty_answers` get its values from their stored answers.
    let baseline = empty_answers::with_values(baseline, "the baseline", &mut warnings);
    let current = empty_answers::with_values(current, "the current results", &mut warnings);
    let (baseline, current) = (baseline.as_ref(), current.as_ref());
    let pairing = Pairing::of(
        baseline,
        current.queries.keys().map(String::as_str),
        &pairing::gated_metrics(tier),
        tier.gate.min_queries,
    );
    // A baseline that no longer fits is said once, with the next step, by the caller
    // (`mismatch_message`); otherwise what changed and how many queries pair.
    if !pairing.broken() {
        warnings.splice(
            0..0,
            provenance_warnings(baseline, current, &pairing, &tier.name),
        );
    }
    warnings.extend(empty_answers::warning(config, baseline, current));
    let baseline_only = only_in(baseline, current);
    let current_only = only_in(current, baseline);
    let values = slice_values(config, [baseline, current]);
    warnings.extend(checks::many_values_warnings(&values));
    let metrics: Vec<Metric> = config.metrics.iter().map(|spec| spec.metric).collect();
    let all_checks = checks::expand(&tier.gate.rules, &values, &metrics);
    let (checks, unknown): (Vec<Check<'_>>, Vec<Check<'_>>) =
        all_checks
            .into_iter()
            .partition(|check| match &check.slice {
                Slice::All => true,
                Slice::Value(value) => values.contains(value),
            });
    let ppi_floors = tier
        .gate
        .rules
        .iter()
        .filter(|rule| matches!(rule.metric, Metric::Ppi(_)))
        .count();
    let (levels, floor_level) = family_levels(&tier.gate, &checks, ppi_floors);
    let mut outcomes =
        verdict::decide_at(&checks, baseline, current, &tier.gate, levels, &tier.name);
    for (outcome, check) in outcomes.iter_mut().zip(&checks) {
        let answer_metric = check.rule.metric.needs_answer();
        for drop in &mut outcome.worst {
            let (Some(before), Some(now)) = (
                baseline.queries.get(&drop.qid),
                current.queries.get(&drop.qid),
            ) else {
                continue;
            };
            drop.query = now.query.clone();
            if answer_metric {
                drop.details = answer_changes(before, now);
                drop.answers = before
                    .answer
                    .clone()
                    .zip(now.answer.clone())
                    .filter(|(old, new)| old != new);
            }
        }
    }
    outcomes.extend(unknown.iter().map(|check| unknown_slice(check, &values)));
    outcomes.extend(calibration::checks(
        &tier.gate.rules,
        calibrations,
        tier.gate.inconclusive,
        floor_level,
    ));
    let error_budget = ErrorBudget::of(&outcomes, &tier.gate, floor_level);
    warnings.extend(tier.gate.notices.iter().cloned());
    let diagnoses = current
        .summary
        .iter()
        .flat_map(|(slice, metrics)| diagnosis::diagnose(slice, metrics, &config.diagnosis))
        .collect();
    let notes = length_faithfulness_correlation(current)
        .into_iter()
        .chain(calibrations.iter().map(Calibration::describe))
        .collect();
    GateReport {
        tier: tier.name.clone(),
        status: run_status(&outcomes, tier.gate.inconclusive),
        inconclusive: tier.gate.inconclusive,
        outcomes,
        reported: reported::ungated(config, tier, baseline, current),
        paired_queries: current.queries.len() - current_only.len(),
        pairing: Some(pairing),
        baseline_only,
        current_only,
        judged_at_k: None,
        diagnoses,
        notes,
        warnings,
        error_budget: Some(error_budget),
    }
}

/// The level of each family of metric checks and each calibrated floor's one-sided level: the one
/// place they are set. By default (`alpha_scope: family`) every family is held at alpha and a
/// floor at the 95% interval's lower end ([`calibration::FLOOR_LEVEL`]). Under `alpha_scope: run`
/// alpha is split evenly across the families present (the `all` checks and the slice checks when
/// some check of theirs limits the change under `decision: significant`, the calibrated floors
/// when a rule has one; a floor gets its family's share divided by the number of floors), so that
/// the run's bound (`ErrorBudget`) is alpha.
pub fn family_levels(
    settings: &GateSettings,
    checks: &[Check<'_>],
    ppi_floors: usize,
) -> (FamilyLevels, f64) {
    let alpha = settings.alpha;
    if settings.alpha_scope == AlphaScope::Family {
        return (FamilyLevels::uniform(alpha), calibration::FLOOR_LEVEL);
    }
    let tested = settings.decision == Decision::Significant;
    let present = |primary: bool| {
        tested
            && checks
                .iter()
                .any(|c| matches!(c.slice, Slice::All) == primary && limits_change(c))
    };
    let families = [present(true), present(false), ppi_floors > 0];
    let share = alpha / families.iter().filter(|f| **f).count().max(1) as f64;
    let floor_level = if ppi_floors > 0 {
        share / ppi_floors as f64
    } else {
        calibration::FLOOR_LEVEL
    };
    (
        FamilyLevels {
            primary: share,
            slices: share,
        },
        floor_level,
    )
}

/// Whether the check's rule limits the change from the baseline in the metric's direction.
fn limits_change(check: &Check<'_>) -> bool {
    let l = &check.rule.limits;
    match check.rule.metric.direction() {
        Direction::HigherIsBetter => l.max_drop.is_some() || l.max_drop_pct.is_some(),
        Direction::LowerIsBetter => l.max_increase.is_some() || l.max_increase_pct.is_some(),
    }
}

/// The floors (`min`, `max`) of the tier's rules on a run without a baseline (its first run),
/// decided as the gate decides them (the current mean over every query of the slice, at least
/// `min_queries` of them): `❌ recall@5 [all]: 0.6000 is below min 0.9 (the current mean over 20
/// queries)`. Reported only: without a baseline nothing is gated (exit 2), but a baseline that
/// breaks its own floors should not be accepted unseen.
pub fn first_run_floors(config: &Config, tier: &Tier, current: &Results) -> Vec<String> {
    let values = slice_values(config, [current, current]);
    let metrics: Vec<Metric> = config.metrics.iter().map(|spec| spec.metric).collect();
    let currents = verdict::floor::index(current);
    checks::expand(&tier.gate.rules, &values, &metrics)
        .iter()
        .filter_map(|check| {
            let floor = verdict::floor::sample(check, &currents)?;
            let direction = check.rule.metric.direction();
            let line = if floor.n < tier.gate.min_queries {
                format!(
                    "⏭️ {}: not decided: {} queries, fewer than min_queries {}",
                    check.name(),
                    floor.n,
                    tier.gate.min_queries
                )
            } else {
                let mark = if floor.broken(direction) {
                    "❌"
                } else {
                    "✅"
                };
                format!("{mark} {}: {}", check.name(), floor.describe(direction))
            };
            Some(line)
        })
        .collect()
}

/// The run's status from its checks:
/// - `error` when any check is an error, when nothing was evaluated (every check skipped), or
///   when the tier has `all` checks and every one of them was skipped (the primary family said
///   nothing);
/// - `regression` when a check failed, or was inconclusive under `inconclusive: fail`;
/// - `pass` otherwise.
pub fn run_status(outcomes: &[CheckOutcome], inconclusive: InconclusivePolicy) -> RunStatus {
    let any = |status: CheckStatus| outcomes.iter().any(|o| o.status == status);
    let skipped = |o: &&CheckOutcome| o.status == CheckStatus::Skipped;
    let primary: Vec<&CheckOutcome> = outcomes
        .iter()
        .filter(|o| o.family == Family::Primary)
        .collect();
    let primary_silent = !primary.is_empty() && primary.iter().all(skipped);
    let nothing_evaluated = outcomes.iter().all(|o| skipped(&o));
    if any(CheckStatus::Error) || primary_silent || nothing_evaluated {
        RunStatus::Error
    } else if any(CheckStatus::Fail)
        || (inconclusive == InconclusivePolicy::Fail && any(CheckStatus::Inconclusive))
    {
        RunStatus::Regression
    } else {
        RunStatus::Pass
    }
}

/// The line that says the baseline no longer fits the run (too few queries pair, a gated
/// metric missing), what changed since it was accepted, and `next_step`; None when it fits.
/// `path` is the baseline's file.
pub fn mismatch_message(
    report: &GateReport,
    baseline: &Results,
    current: &Results,
    path: &Path,
    next_step: &str,
) -> Option<String> {
    let changed = pairing::changes(
        &baseline.provenance,
        &current.provenance.qrels_sha256,
        &current.provenance.config_hash,
    );
    let problem = report
        .pairing
        .as_ref()?
        .problem(&report.tier, changed.as_deref())?;
    Some(format!("{}: {problem}: {next_step}", path.display()))
}

/// How the baseline paired, when the run's status is `error` only because the baseline did not
/// fit it: every check that errored is one of a gated metric the baseline lacks (on a slice the
/// run has), and, unless too few queries pair (then every skip is for want of pairs), the other
/// checks alone would not make the run an error. None otherwise: results that errored for any
/// other reason are not accepted as a baseline (fail closed).
pub fn baseline_mismatch(report: &GateReport, current: &Results) -> Option<Pairing> {
    let pairing = report.pairing.as_ref().filter(|p| p.broken())?;
    if report.status != RunStatus::Error {
        return None;
    }
    let explained = |o: &CheckOutcome| {
        o.status == CheckStatus::Error
            && matches!(o.family, Family::Primary | Family::Slices)
            && pairing.missing_metrics.contains(&o.metric)
            && current.summary.contains_key(&o.slice)
    };
    let errors_explained = report
        .outcomes
        .iter()
        .filter(|o| o.status == CheckStatus::Error)
        .all(explained);
    if !errors_explained {
        return None;
    }
    let rest: Vec<CheckOutcome> = report
        .outcomes
        .iter()
        .filter(|o| !explained(o))
        .cloned()
        .collect();
    let rest_decided =
        rest.is_empty() || run_status(&rest, report.inconclusive) != RunStatus::Error;
    (pairing.too_few() || rest_decided).then(|| pairing.clone())
}

/// An error when `baseline` holds results of another tier than the one gated.
pub fn check_baseline_tier(baseline: &Results, tier: &str, path: &Path) -> Result<()> {
    if baseline.tier == tier {
        return Ok(());
    }
    Err(Error::input(
        path,
        format!(
            "a baseline of tier `{}`, but tier `{tier}` is gated: expected the baseline of \
             `{tier}` (check the tier's `baseline:` path in the config)",
            baseline.tier
        ),
    ))
}

/// How many slice values the verdict of a rule on an unknown slice value lists.
const LISTED_SLICE_VALUES: usize = 20;

/// A rule on a slice value that no query of either results has: an error, not a silent skip.
fn unknown_slice(check: &Check<'_>, values: &BTreeSet<SliceValue>) -> CheckOutcome {
    let mut outcome = CheckOutcome::bare(
        check.name(),
        check.rule.metric.to_string(),
        check.slice.to_string(),
        Family::Slices,
    );
    let named = check.slice.to_string();
    let existing: Vec<String> = values.iter().map(ToString::to_string).collect();
    // Thousands of values (a high-cardinality field) would make a verdict of megabytes.
    let listed = match existing.len() {
        0 => "no query has a slice value".to_string(),
        n if n <= LISTED_SLICE_VALUES => format!("the slice values are {}", existing.join(", ")),
        n => format!(
            "the slice values include {} and {} more",
            existing[..LISTED_SLICE_VALUES].join(", "),
            n - LISTED_SLICE_VALUES
        ),
    };
    outcome.verdict = suggest::did_you_mean(
        format!(
            "{}: no query has {named} ({listed}): expected a slice value the queries have",
            check.name()
        ),
        &named,
        existing.iter().map(String::as_str),
    );
    outcome
}

/// What changed since the baseline (qrels, config) and, when only part of the run's queries
/// pair, how many do, for a baseline that still fits the run.
fn provenance_warnings(
    baseline: &Results,
    current: &Results,
    pairing: &Pairing,
    tier: &str,
) -> Vec<String> {
    let mut warnings = Vec::new();
    let partial = pairing.partial(tier);
    if baseline.provenance.qrels_sha256 != current.provenance.qrels_sha256 {
        warnings.push(format!(
            "the qrels changed since the baseline (sha256 {} -> {}): {}",
            short(&baseline.provenance.qrels_sha256),
            short(&current.provenance.qrels_sha256),
            partial
                .as_deref()
                .unwrap_or("comparing the queries both have")
        ));
    } else if let Some(partial) = partial {
        warnings.push(partial);
    }
    if baseline.provenance.config_hash != current.provenance.config_hash {
        warnings.push(format!(
            "the metrics, slices or rules changed since the baseline (config hash {} -> {})",
            short(&baseline.provenance.config_hash),
            short(&current.provenance.config_hash)
        ));
    }
    warnings
}

/// The qids of `a` that `b` lacks.
fn only_in(a: &Results, b: &Results) -> Vec<String> {
    a.queries
        .keys()
        .filter(|q| !b.queries.contains_key(*q))
        .cloned()
        .collect()
}

/// The slice values that occur in either results, for the configured slice fields.
fn slice_values(config: &Config, results: [&Results; 2]) -> BTreeSet<SliceValue> {
    results
        .iter()
        .flat_map(|r| r.queries.values())
        .flat_map(|q| {
            config.slices.iter().filter_map(|field| {
                q.slices.get(field).map(|value| SliceValue {
                    field: field.clone(),
                    value: value.clone(),
                })
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn a_baseline_of_another_tier_is_an_error() {
        let mut baseline = Results {
            format: String::new(),
            tier: "regression".into(),
            status: RunStatus::Pass,
            provenance: Default::default(),
            metrics: vec![],
            summary: Default::default(),
            noise: None,
            baseline_mismatch: None,
            queries: Default::default(),
        };
        let error = check_baseline_tier(&baseline, "smoke", Path::new("b.json")).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("a baseline of tier `regression`, but tier `smoke` is gated"),
            "{error}"
        );
        baseline.tier = "smoke".into();
        assert!(check_baseline_tier(&baseline, "smoke", Path::new("b.json")).is_ok());
    }
}
