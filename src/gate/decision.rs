//! The one place a run is decided: `gate`, `merge`, `compare`, `report` and `history add` all
//! turn their [`DecisionInputs`] (config, tier, baseline, current results, judge calibrations,
//! judged@k, the history's drift inputs) into a [`DecidedRun`] here: every check, the run's status
//! decided once, the warnings (a baseline that no longer fits the run first) and notes. Reports
//! only render what this returns; the inputs that live in files (labels, history, baseline) are
//! read by the caller, so the gate does no I/O.

use std::collections::BTreeSet;
use std::path::Path;

use crate::baseline::noise_share;
use crate::baseline::pairing::{self, Pairing};
use crate::baseline::results::{Results, RunStatus};
use crate::config::{
    AlphaScope, Config, Decision, DriftPolicy, GateSettings, InconclusivePolicy, SliceValue, Tier,
};
use crate::format::short_hash as short;
use crate::gate::calibration::{self, Calibration};
use crate::gate::checks::{self, Check, Slice};
use crate::gate::drift::{self, DriftInputs};
use crate::gate::error_budget::ErrorBudget;
use crate::gate::verdict::{self, CheckOutcome, CheckStatus, Family, FamilyLevels};
use crate::gate::{
    GateReport, answer_changes, causes, diagnosis, empty_answers, length_faithfulness_correlation,
    must_pass, reported, zero_limit,
};
use crate::metrics::metric::Metric;
use crate::suggest;

/// A judged@k share below this warns that most retrieved docs are unjudged.
const JUDGED_SHARE_WARNING: f64 = 0.5;

/// Everything a run's decision reads, gathered by the command that decides it.
pub struct DecisionInputs<'a> {
    /// The config: metrics, slices, judges, diagnosis thresholds.
    pub config: &'a Config,
    /// The tier decided: its rules and gate settings.
    pub tier: &'a Tier,
    /// The results compared with (the tier's baseline, or `compare`'s A).
    pub baseline: &'a Results,
    /// The results decided (the run, or `compare`'s B).
    pub current: &'a Results,
    /// The calibrations of the judged metrics from the tier's labels (none without labels).
    pub calibrations: &'a [Calibration],
    /// judged@k of the current run against its qrels: (k, share), None when not measured.
    pub judged_at_k: Option<(usize, f64)>,
    /// The share of the same top-k docs that model judgments judge; None when the qrels hold
    /// none (then nothing reports the split).
    pub model_judged_at_k: Option<f64>,
    /// The run history's series (`--history`): a drift check per `all` check; None without one.
    pub drift: Option<DriftInputs<'a>>,
    /// Notes about the run from the command (re-judging, noise, judging work, operational
    /// figures), after the decision's own notes and before the judges note.
    pub run_notes: Vec<String>,
    /// What the warning that the baseline no longer fits the run names (None: no such warning,
    /// for a decision only its checks are taken from).
    pub mismatch: Option<MismatchHint<'a>>,
}

/// What the warning that the baseline no longer fits the run says besides the problem.
pub struct MismatchHint<'a> {
    /// The baseline's file (`compare`: A).
    pub path: &'a Path,
    /// What to do about it.
    pub next_step: NextStep<'a>,
}

/// The next step of the warning that the baseline no longer fits the run.
pub enum NextStep<'a> {
    /// The same words whatever the decision (`compare`).
    Given(String),
    /// Replacing the baseline with the run's results ([`pairing::next_step`]), after fixing the
    /// run's other errors when the results are not acceptable.
    Accept {
        /// The command that accepts the run's results.
        command: &'a str,
        /// Whether the results record a baseline mismatch (`report` of stored results: as the
        /// gate said it); None: decided here. Results that errored are acceptable only when the
        /// baseline's mismatch alone made them an error.
        recorded: Option<bool>,
    },
}

/// A decided run.
#[derive(Debug)]
pub struct DecidedRun {
    /// Every check and the run's status, with the warnings (the mismatch first) and notes.
    pub report: GateReport,
    /// How the baseline paired, when the run is an error only because the baseline no longer
    /// fits it (what results.json records for `baseline accept`).
    pub baseline_mismatch: Option<Pairing>,
    /// The warning that the baseline no longer fits the run (the report's first warning too).
    pub mismatch: Option<String>,
}

/// Compares `current` with `baseline` under the tier's rules (calibrated floors and, with a
/// history, drift checks included) and decides the run, once.
pub fn decide(mut inputs: DecisionInputs<'_>) -> DecidedRun {
    let (baseline, current, hint) = (inputs.baseline, inputs.current, inputs.mismatch.take());
    let mut report = decide_checks(inputs);
    let recorded_mismatch = baseline_mismatch(&report, current);
    let mismatch = hint.and_then(|hint| {
        let next_step = match hint.next_step {
            NextStep::Given(words) => words,
            NextStep::Accept { command, recorded } => {
                let recorded = recorded.unwrap_or(recorded_mismatch.is_some());
                pairing::next_step(command, recorded || report.status != RunStatus::Error)
            }
        };
        mismatch_message(&report, baseline, current, hint.path, &next_step)
    });
    if let Some(message) = &mismatch {
        report.warnings.insert(0, message.clone());
    }
    DecidedRun {
        report,
        baseline_mismatch: recorded_mismatch,
        mismatch,
    }
}

/// Every check of the run and its status, with the decision's warnings and notes.
fn decide_checks(inputs: DecisionInputs<'_>) -> GateReport {
    let DecisionInputs {
        config,
        tier,
        baseline,
        current,
        calibrations,
        judged_at_k,
        model_judged_at_k,
        drift,
        run_notes,
        mismatch: _,
    } = inputs;
    let mut warnings = Vec::new();
    // Results from before `empty_answers` get its values from their stored answers.
    let baseline = empty_answers::with_values(baseline, "the baseline", &mut warnings);
    let current = empty_answers::with_values(current, "the current results", &mut warnings);
    let (baseline, current) = (baseline.as_ref(), current.as_ref());
    let pairing = Pairing::of(
        baseline,
        current.queries.keys().map(String::as_str),
        &pairing::gated_metrics(tier),
        (tier.gate.min_queries, tier.gate.min_share),
    );
    // A baseline that no longer fits is said once, with the next step, by the caller
    // (`mismatch_message`); otherwise what changed and how many queries pair.
    if !pairing.broken() {
        warnings.splice(
            0..0,
            provenance_warnings(baseline, current, &pairing, &tier.name),
        );
    }
    warnings.extend(empty_answers::warning(tier, baseline, current));
    let baseline_only = only_in(baseline, current);
    let current_only = only_in(current, baseline);
    let values = slice_values(tier, [baseline, current]);
    warnings.extend(checks::many_values_warnings(&values));
    let metrics: Vec<Metric> = tier.metrics.iter().map(|spec| spec.metric).collect();
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
    if let Some(noise) = &current.noise {
        for outcome in outcomes
            .iter_mut()
            .filter(|o| o.status == CheckStatus::Inconclusive)
        {
            outcome.noise_share = noise_share::of(noise, &outcome.metric, baseline, current)
                .map(|share| share.fraction);
        }
    }
    outcomes.extend(unknown.iter().map(|check| unknown_slice(check, &values)));
    // The must-pass queries lead every output: each one fails the run whatever the
    // statistics say.
    outcomes.splice(0..0, must_pass::checks(tier, baseline, current));
    outcomes.extend(calibration::checks(
        &tier.gate.rules,
        calibrations,
        tier.gate.inconclusive,
        floor_level,
    ));
    let mut error_budget = ErrorBudget::of(&outcomes, &tier.gate, floor_level);
    if let Some(drift) = &drift {
        let baseline_runs = baseline.noise.as_ref().map_or(1, |noise| noise.repeats);
        let drift_checks = drift::checks(&outcomes, drift, baseline_runs);
        add_drift_to_budget(&mut error_budget, &drift_checks, drift.policy);
        outcomes.extend(drift_checks);
    }
    warnings.extend(tier.gate.notices.iter().cloned());
    warnings.extend(zero_limit::failed_checks_warning(&outcomes));
    warnings.extend(judged_at_k.and_then(|judged| judged_warning(judged, model_judged_at_k)));
    let diagnoses = current
        .summary
        .iter()
        .flat_map(|(slice, metrics)| diagnosis::diagnose(slice, metrics, &config.diagnosis))
        .collect();
    let causes = causes::likely_causes(&causes::CauseInputs {
        baseline,
        current,
        outcomes: &outcomes,
        slice_fields: &tier.slices,
        chunk_separator: config.chunk_separator.as_deref(),
    });
    let notes = length_faithfulness_correlation(current)
        .into_iter()
        .chain(calibrations.iter().map(Calibration::describe))
        .chain(run_notes)
        .chain(calibration::judges_note(
            &tier.metrics,
            &current.provenance.judges,
            calibrations,
        ))
        .collect();
    GateReport {
        tier: tier.name.clone(),
        // Too few of the tier's queries pair with the baseline: whatever the checks said of
        // them, it is not a verdict on the tier.
        status: if pairing.too_few() {
            RunStatus::Error
        } else {
            run_status(&outcomes, tier.gate.inconclusive)
        },
        inconclusive: tier.gate.inconclusive,
        outcomes,
        reported: reported::ungated(tier, baseline, current),
        paired_queries: current.queries.len() - current_only.len(),
        pairing: Some(pairing),
        baseline_only,
        current_only,
        judged_at_k,
        model_judged_at_k,
        diagnoses,
        causes,
        notes,
        warnings,
        error_budget: Some(error_budget),
    }
}

/// The warning of a judged@k share below [`JUDGED_SHARE_WARNING`], with the human and model
/// shares when the qrels hold model judgments.
fn judged_warning((k, share): (usize, f64), model: Option<f64>) -> Option<String> {
    (share < JUDGED_SHARE_WARNING).then(|| {
        format!(
            "judged@{k} is {share:.2}{}: most retrieved docs are unjudged and count as irrelevant, \
             so recall and nDCG look worse than they are; judge more docs",
            judged_split(share, model)
        )
    })
}

/// ` (human 0.29, model 0.57)` when the qrels hold model judgments, else nothing.
pub(crate) fn judged_split(share: f64, model: Option<f64>) -> String {
    model.map_or(String::new(), |model| {
        format!(" (human {:.2}, model {model:.2})", (share - model).max(0.0))
    })
}

/// The drift checks' part of the run's bound on false verdicts.
fn add_drift_to_budget(
    budget: &mut ErrorBudget,
    drift_checks: &[CheckOutcome],
    policy: DriftPolicy,
) {
    // The drift check has no calibrated level yet: a drift that fails the run leaves the
    // run's bound open (TODO(issue 23, item 3): its level once calibrated).
    let decided = drift_checks
        .iter()
        .filter(|o| !matches!(o.status, CheckStatus::Skipped | CheckStatus::Error))
        .count();
    // The drift checks share one calibrated budget: false warnings over the last
    // `drift::NIGHTS` runs at most `drift::BUDGET` across the metrics (src/history/drift.rs).
    let per_check = crate::history::drift::BUDGET / decided.max(1) as f64;
    budget.add_drift(decided, Some(per_check), policy == DriftPolicy::Fail);
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
                .any(|c| matches!(c.slice, Slice::All) == primary && verdict::has_change_limit(c))
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

/// The floors (`min`, `max`) of the tier's rules on a run without a baseline (its first run),
/// decided as the gate decides them (the current mean over every query of the slice, at least
/// `min_queries` of them): `❌ recall@5 [all]: 0.6000 is below min 0.9 (the current mean over 20
/// queries)`. Reported only: without a baseline nothing is gated (exit 2), but a baseline that
/// breaks its own floors should not be accepted unseen.
pub fn first_run_floors(tier: &Tier, current: &Results) -> Vec<String> {
    let values = slice_values(tier, [current, current]);
    let metrics: Vec<Metric> = tier.metrics.iter().map(|spec| spec.metric).collect();
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
fn run_status(outcomes: &[CheckOutcome], inconclusive: InconclusivePolicy) -> RunStatus {
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

/// [`run_status`] for the tests of other gate modules (the verdicts' effect on the run); no
/// production code decides a run's status outside [`decide`].
#[cfg(test)]
pub(crate) fn run_status_of(
    outcomes: &[CheckOutcome],
    inconclusive: InconclusivePolicy,
) -> RunStatus {
    run_status(outcomes, inconclusive)
}

/// The line that says the baseline no longer fits the run (too few queries pair, a gated
/// metric missing), what changed since it was accepted, and `next_step`; None when it fits.
/// `path` is the baseline's file.
fn mismatch_message(
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
        current.provenance.sample.as_deref(),
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
fn baseline_mismatch(report: &GateReport, current: &Results) -> Option<Pairing> {
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
        let changed = format!(
            "the qrels changed since the baseline, sha256 {} -> {}",
            short(&baseline.provenance.qrels_sha256),
            short(&current.provenance.qrels_sha256),
        );
        // How many pair first: a list that cuts long warnings keeps the numbers.
        warnings.push(match partial {
            Some(partial) => format!("{partial} ({changed})"),
            None => format!("{changed}: comparing the queries both have"),
        });
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

/// The slice values that occur in either results, for the tier's slice fields.
fn slice_values(tier: &Tier, results: [&Results; 2]) -> BTreeSet<SliceValue> {
    results
        .iter()
        .flat_map(|r| r.queries.values())
        .flat_map(|q| {
            tier.slices.iter().filter_map(|field| {
                q.slices.get(field).map(|value| SliceValue {
                    field: field.clone(),
                    value: value.clone(),
                })
            })
        })
        .collect()
}

#[cfg(test)]
mod properties;
#[cfg(test)]
mod tests;
