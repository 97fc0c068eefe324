//! The verdict of every metric check: paired per-query values, a one-sided test of "the mean
//! worsening is at most the tolerated one" (exact or skew-corrected, see `stats::limit_test`),
//! a multiplicity correction within each family of checks, and the status. The run's whole
//! decision, calibrated floors included, is assembled in `gate::decision`; this module is the part
//! that decides metric checks.
//!
//! Families: the `all` checks are the primary family, corrected with `correction` (Holm by
//! default: family-wise error at most alpha); the slice checks are a second, diagnostic family,
//! corrected with `slice_correction` (Holm, or Benjamini-Hochberg for a false-discovery rate).
//! Each family's level is set by `gate::decision` ([`FamilyLevels`]). A tested check shows its
//! adjusted p-value against that level (`adjusted`), and its bound at the level that agrees with
//! the verdict.
//!
//! Statuses, for `decision: significant` (the default), with W the mean worsening and L the
//! tolerated worsening:
//! - `fail`: the floor is broken, or the test rejects "W <= L" at the check's corrected level;
//! - `inconclusive`: W > L on the point estimate, without that evidence;
//! - `skipped (underpowered)`: fewer than `min_queries` pairs, or the test's smallest attainable
//!   p-value at this size is above alpha / m (m = the family's size): it could never fail;
//! - `improved`: W < 0 and "no improvement" is rejected at alpha / m (Bonferroni);
//! - `pass`: otherwise;
//! - `error`: the check could not be evaluated (the baseline lacks the metric, a value is not
//!   finite).
//!
//! `decision: point` fails when W > L on the point estimate alone (no test, never inconclusive).
//!
//! `inconclusive: fail` (with `decision: significant`) makes a check with a change limit pass only
//! when the data prove the worsening below the limit (`proof`); the rest fail the run.

use crate::baseline::results::Results;
use crate::config::{
    Correction, Decision, GateSettings, InconclusivePolicy, Limits, SliceCorrection,
};
use crate::format::{compared, no_negative_zero, p_against, p_text};
use crate::gate::checks::{Check, Slice};
use crate::metrics::retrieval::Direction;
use crate::stats::holm::{self, Procedure};
use crate::stats::limit_test::{self, LimitTest};
use crate::stats::{self, normal};
use family::decide_family;
use paired::{Paired, pair, pair_index, worst_queries};
use summary::Summary;

/// Power at which the detectable drop and the queries an inconclusive check needs are reported.
const POWER: f64 = 0.8;
/// How far past the limit a mean worsening must be to count as beyond it, relative to the metric's
/// range width (or, for an unbounded metric, to the larger of 1 and the means' size): a worsening
/// equal to the limit up to rounding, as an exactly cancelling change gives, is not beyond it.
pub const BEYOND_TOLERANCE: f64 = 1e-9;
/// How many regressed queries a check lists.
pub const WORST_QUERIES: usize = 10;

fn family_of(check: &Check<'_>) -> Family {
    match check.slice {
        Slice::All => Family::Primary,
        Slice::Value(_) => Family::Slices,
    }
}

fn outcome_for(check: &Check<'_>, status: CheckStatus, verdict: String, n: usize) -> CheckOutcome {
    let mut outcome = CheckOutcome::bare(
        check.name(),
        check.rule.metric.to_string(),
        check.slice.to_string(),
        family_of(check),
    );
    outcome.status = status;
    outcome.verdict = verdict;
    outcome.n = n;
    outcome
}

/// The absolute worsening that a rule tolerates: the tighter of its absolute and relative limits.
pub(crate) fn tolerated(limits: &Limits, direction: Direction, baseline_mean: f64) -> Option<f64> {
    let (absolute, percent) = match direction {
        Direction::HigherIsBetter => (limits.max_drop, limits.max_drop_pct),
        Direction::LowerIsBetter => (limits.max_increase, limits.max_increase_pct),
    };
    let relative = percent.map(|pct| pct / 100.0 * baseline_mean.abs());
    match (absolute, relative) {
        (Some(a), Some(r)) => Some(a.min(r)),
        (a, r) => a.or(r),
    }
}

/// A check with paired values, on its way to a verdict.
struct Candidate {
    index: usize,
    paired: Paired,
    /// The rule's floor over every current query of the slice.
    floor: Option<Floor>,
    family: Family,
    limit: Option<f64>,
    /// The test against the limit (significant decisions with a limit only).
    test: Option<LimitTest>,
}

/// Decides every metric check of a run, each family at `settings.alpha`. `tier` names the tier in
/// the "accept" hint.
pub fn decide(
    checks: &[Check<'_>],
    baseline: &Results,
    current: &Results,
    settings: &GateSettings,
    tier: &str,
) -> Vec<CheckOutcome> {
    let levels = FamilyLevels::uniform(settings.alpha);
    decide_at(checks, baseline, current, settings, levels, tier)
}

/// Decides every metric check of a run, each family at its level in `levels` (set by
/// `gate::decision`, which splits alpha under `alpha_scope: run`).
pub fn decide_at(
    checks: &[Check<'_>],
    baseline: &Results,
    current: &Results,
    settings: &GateSettings,
    levels: FamilyLevels,
    tier: &str,
) -> Vec<CheckOutcome> {
    let mut outcomes: Vec<CheckOutcome> = Vec::with_capacity(checks.len());
    let mut candidates: Vec<Candidate> = Vec::new();
    let pairs = pair_index(baseline, current);
    let currents = floor::index(current);
    for (index, check) in checks.iter().enumerate() {
        let floor = floor::sample(check, &currents);
        match pair(check, baseline, &pairs) {
            Err(message) => outcomes.push(outcome_for(check, CheckStatus::Error, message, 0)),
            Ok(paired) if paired.qids.len() < settings.min_queries => {
                outcomes.push(too_few_pairs(check, &paired, floor, settings));
            }
            Ok(paired) => {
                let direction = check.rule.metric.direction();
                let limit = tolerated(&check.rule.limits, direction, stats::mean(&paired.baseline));
                let test = match (settings.decision, limit) {
                    (Decision::Significant, Some(l)) => Some(limit_test::test(
                        &paired.worsening,
                        l,
                        check.rule.metric.range_width(),
                    )),
                    _ => None,
                };
                outcomes.push(outcome_for(check, CheckStatus::Pass, String::new(), 0));
                candidates.push(Candidate {
                    index,
                    paired,
                    floor,
                    family: family_of(check),
                    limit,
                    test,
                });
            }
        }
    }
    for family in [Family::Primary, Family::Slices] {
        let members: Vec<&Candidate> = candidates.iter().filter(|c| c.family == family).collect();
        let alpha = levels.of(family);
        decide_family(
            &members,
            family,
            alpha,
            checks,
            settings,
            tier,
            &mut outcomes,
        );
    }
    outcomes
}

/// A check with fewer than `min_queries` paired queries: its change cannot be tested, but a floor
/// needs no baseline and is decided on the current queries of the slice (new ones and new slice
/// values included) when there are at least `min_queries` of them.
fn too_few_pairs(
    check: &Check<'_>,
    paired: &Paired,
    floor: Option<Floor>,
    settings: &GateSettings,
) -> CheckOutcome {
    let name = check.name();
    let direction = check.rule.metric.direction();
    let pairs = paired.qids.len();
    let min_queries = settings.min_queries;
    let skipped = format!(
        "skipped (underpowered): {pairs} paired queries, fewer than min_queries {min_queries}"
    );
    let decided = floor.filter(|f| f.n >= min_queries);
    let (status, verdict) = match decided {
        Some(f) if f.broken(direction) => (
            CheckStatus::Fail,
            format!(
                "{name} failed: {} (floors need no baseline); the change is {skipped}",
                f.describe(direction)
            ),
        ),
        Some(f) if has_change_limit(check) && proving(settings) => (
            CheckStatus::Inconclusive,
            format!(
                "{name} not proven within its limit ({PROVE_MODE}): the floor holds: {}; the \
                 change is {skipped}, so it cannot be shown within the limit and fails the run",
                f.describe(direction)
            ),
        ),
        Some(f) if has_change_limit(check) => (
            CheckStatus::Skipped,
            format!(
                "{name}: the floor holds: {}; the change is {skipped}",
                f.describe(direction)
            ),
        ),
        Some(f) => (
            CheckStatus::Pass,
            format!(
                "{name} holds its floor: {} ({pairs} paired queries; floors need no baseline)",
                f.describe(direction)
            ),
        ),
        None if has_change_limit(check) && proving(settings) => (
            CheckStatus::Inconclusive,
            format!(
                "{name} not proven within its limit ({PROVE_MODE}): the change is {skipped}, so \
                 it cannot be shown within the limit and fails the run"
            ),
        ),
        None => (
            CheckStatus::Skipped,
            match floor {
                Some(f) => format!(
                    "{name}: {skipped}; its floor is not decided either: {} current queries, \
                     fewer than min_queries {min_queries}",
                    f.n
                ),
                None => format!("{name}: {skipped}"),
            },
        ),
    };
    let mut outcome = outcome_for(check, status, verdict, pairs);
    if pairs > 0 {
        outcome.baseline_mean = stats::mean(&paired.baseline);
        outcome.current_mean = stats::mean(&paired.current);
        outcome.delta = outcome.current_mean - outcome.baseline_mean;
    } else if let Some(f) = decided {
        // No pairs: the current mean shown is the one the floor was decided on.
        outcome.current_mean = f.mean;
    }
    outcome.floor = floor;
    outcome
}

/// How verdicts name the "prove it" mode.
pub const PROVE_MODE: &str = "`inconclusive: fail` requires proof";

/// Whether checks with a change limit must prove it (`inconclusive: fail` under `decision:
/// significant`).
fn proving(settings: &GateSettings) -> bool {
    settings.inconclusive == InconclusivePolicy::Fail && settings.decision == Decision::Significant
}

/// Whether the check's rule limits the change from the baseline in the metric's direction (not
/// only the current mean): what makes a check tested against a limit, here and in the error
/// budget's families (`decision::family_levels`). Every limit is named, so that a new kind of
/// limit has to be placed on one side or the other.
pub(crate) fn has_change_limit(check: &Check<'_>) -> bool {
    let Limits {
        max_drop,
        max_drop_pct,
        min: _,
        max_increase,
        max_increase_pct,
        max: _,
    } = check.rule.limits;
    match check.rule.metric.direction() {
        Direction::HigherIsBetter => max_drop.is_some() || max_drop_pct.is_some(),
        Direction::LowerIsBetter => max_increase.is_some() || max_increase_pct.is_some(),
    }
}

/// What one check's verdict needs besides its values.
struct Context<'a, 'c> {
    check: &'a Check<'c>,
    settings: &'a GateSettings,
    tier: &'a str,
    /// The family's level.
    alpha: f64,
    /// How many checks of the family have a change limit (m).
    tested: usize,
    /// alpha / m of the check's family (alpha without correction).
    lone_level: f64,
}

impl Context<'_, '_> {
    fn base(&self, candidate: &Candidate, summary: &Summary) -> CheckOutcome {
        let mut outcome = outcome_for(self.check, CheckStatus::Pass, String::new(), summary.n);
        outcome.baseline_mean = summary.baseline_mean;
        outcome.current_mean = summary.current_mean;
        outcome.delta = summary.delta;
        outcome.limit = candidate.limit;
        outcome.method = candidate.test.map(|t| t.method);
        outcome.p_value = candidate.test.map(|t| t.p_value);
        outcome.se = (summary.n > 0).then(|| summary.sd / (summary.n as f64).sqrt());
        outcome.floor = candidate.floor;
        (outcome.worst, outcome.worse_count) =
            worst_queries(&candidate.paired, self.check.rule.metric.direction());
        outcome
    }

    /// A check whose test could never reach its family's level at this size.
    fn underpowered(&self, candidate: &Candidate) -> CheckOutcome {
        let summary = Summary::of(&candidate.paired);
        let mut outcome = self.base(candidate, &summary);
        let name = self.check.name();
        let direction = self.check.rule.metric.direction();
        let smallest = candidate.test.map_or(1.0, |t| t.smallest_p);
        if let Some(floor) = candidate.floor.filter(|f| f.broken(direction)) {
            outcome.status = CheckStatus::Fail;
            outcome.verdict = format!(
                "{name} failed: {}; {}",
                floor.describe(direction),
                summary.text()
            );
            return outcome;
        }
        outcome.threshold = Some(self.lone_level);
        if let Some(proof) = self.proof(candidate) {
            // Too few queries to fail it, but perhaps enough to prove it within the limit.
            return self.proven_or_not(outcome, candidate, &summary, proof, None);
        }
        outcome.status = CheckStatus::Skipped;
        let unchanged = candidate.paired.worsening.iter().all(|w| *w == 0.0);
        let cause = if smallest >= 1.0 && unchanged {
            format!(
                "all {} paired values are unchanged, so the test has no evidence either way",
                summary.n
            )
        } else if smallest >= 1.0 {
            format!(
                "every one of the {} paired worsenings equals the limit, so the test has no \
                 evidence either way",
                summary.n
            )
        } else {
            let (smallest, needed) = compared(smallest, self.lone_level);
            format!(
                "with {} queries the smallest attainable p is {smallest}, above the {needed} needed \
                 (alpha {} over this family's checks)",
                summary.n, self.alpha
            )
        };
        outcome.verdict = format!(
            "{name}: skipped (underpowered): {cause}, so it could never fail; \
             detectable drop: none at this size; {}",
            summary.text()
        );
        outcome
    }

    /// The verdict of a tested (or point-decided) check, given its family's step decision.
    fn decide_check(
        &self,
        candidate: &Candidate,
        step: Option<holm::StepDecision>,
        adjustment: Option<Adjustment>,
    ) -> CheckOutcome {
        let summary = Summary::of(&candidate.paired);
        let mut outcome = self.base(candidate, &summary);
        outcome.threshold = step.map(|s| s.threshold);
        outcome.adjustment = adjustment;
        if let (Some(limit), Some(step)) = (candidate.limit, step) {
            self.attach_bound(&mut outcome, candidate, &summary, limit, step);
        }
        let evidence = self.evidence(candidate, &outcome);
        self.classify(outcome, candidate, &summary, step, &evidence)
    }

    /// The one-sided bound at the level that agrees with the family's decision (`threshold`: the
    /// check's own Holm level when rejected, the level where Holm stopped when not, BH's
    /// `R alpha / m`) and the drop the check would detect.
    fn attach_bound(
        &self,
        outcome: &mut CheckOutcome,
        candidate: &Candidate,
        summary: &Summary,
        limit: f64,
        step: holm::StepDecision,
    ) {
        let bound = limit_test::lower_bound(
            &candidate.paired.worsening,
            step.threshold,
            self.check.rule.metric.range_width(),
            limit,
        );
        let direction = self.check.rule.metric.direction();
        outcome.bound = bound.map(|b| DecisionBound {
            delta: match direction {
                Direction::HigherIsBetter => -b,
                Direction::LowerIsBetter => b,
            },
            confidence: 1.0 - step.threshold,
        });
        outcome.detectable_drop = Some(normal::detectable_drop(
            limit,
            self.lone_level,
            POWER,
            summary.sd,
            summary.n,
        ));
    }

    /// "Holm-adjusted p = ... over m checks <= alpha ... (raw p = ..., method); worsening >= ... at
    /// ...% confidence", or "on the point estimate" when nothing was tested.
    fn evidence(&self, candidate: &Candidate, outcome: &CheckOutcome) -> String {
        let (Some(test), Some(adjustment)) = (candidate.test, outcome.adjustment) else {
            return "on the point estimate".to_string();
        };
        let direction = self.check.rule.metric.direction();
        let raw = if adjustment.adjusts() {
            format!("raw {}, ", p_text(test.p_value))
        } else {
            String::new()
        };
        format!(
            "{} ({raw}{}){}",
            adjustment.describe(Notation::Ascii),
            test.method.describe(),
            outcome.bound.map_or(String::new(), |b| format!(
                "; worsening >= {:.4} at {:.2}% confidence",
                no_negative_zero(worsening_of(b.delta, direction)),
                100.0 * b.confidence
            ))
        )
    }

    /// The status and verdict text: a broken floor fails; beyond the limit fails with evidence
    /// (or on the point estimate in `point` mode) and is inconclusive without; in the "prove it"
    /// mode a check not proven within its limit is inconclusive (and fails the run); else improved
    /// or pass.
    fn classify(
        &self,
        mut outcome: CheckOutcome,
        candidate: &Candidate,
        summary: &Summary,
        step: Option<holm::StepDecision>,
        evidence: &str,
    ) -> CheckOutcome {
        let name = self.check.name();
        let direction = self.check.rule.metric.direction();
        let limit = candidate.limit;
        let limit_text = limit.map_or("no drop limit".to_string(), |l| format!("limit {l:.4}"));
        let range = self.check.rule.metric.range_width();
        let beyond = limit.is_some_and(|l| summary.beyond(l, range));
        let stats_text = summary.text();
        if let Some(floor) = candidate.floor.filter(|f| f.broken(direction)) {
            outcome.status = CheckStatus::Fail;
            outcome.verdict = format!("{name} failed: {}; {stats_text}", floor.describe(direction));
            return outcome;
        }
        let rejected = step.is_some_and(|s| s.rejected);
        let point = self.settings.decision == Decision::Point;
        if beyond && (point || rejected) {
            outcome.status = CheckStatus::Fail;
            outcome.verdict = format!(
                "{name} regressed: worsening {:.4} exceeds the {limit_text} ({evidence}): {stats_text}",
                no_negative_zero(summary.worsening)
            );
        } else if let Some(proof) = self.proof(candidate) {
            let evidence = beyond.then_some(evidence);
            return self.proven_or_not(outcome, candidate, summary, proof, evidence);
        } else if beyond {
            let level = step.map_or(self.alpha, |s| s.threshold);
            let needed = step
                .and(summary.queries_needed(limit.unwrap_or(0.0), level, POWER))
                .map(QueriesNeeded::of);
            outcome.queries_needed = needed;
            outcome.status = CheckStatus::Inconclusive;
            outcome.verdict = format!(
                "{name} inconclusive: worsening {:.4} is beyond the {limit_text} on the point estimate, \
                 but the evidence is not enough ({evidence}){}: {stats_text}",
                no_negative_zero(summary.worsening),
                needed.map_or(String::new(), |needed| match needed {
                    QueriesNeeded::About(q) => format!(
                        "; about {q} paired queries with this effect and spread would decide it \
                         with 80% power"
                    ),
                    QueriesNeeded::Unrealistic =>
                        format!("; {}", QueriesNeeded::unrealistic_text("decide")),
                })
            );
        } else {
            self.pass_or_improved(
                &mut outcome,
                candidate,
                summary,
                &format!(
                    "within the {limit_text}: worsening {:.4}",
                    no_negative_zero(summary.worsening)
                ),
            );
        }
        outcome
    }

    /// `improved` with its evidence when the check got better with evidence, else `pass`;
    /// `within` says why it passes.
    fn pass_or_improved(
        &self,
        outcome: &mut CheckOutcome,
        candidate: &Candidate,
        summary: &Summary,
        within: &str,
    ) {
        let name = self.check.name();
        let stats_text = summary.text();
        if let Some(gain_p) = self.improved(candidate, summary) {
            let (p, level) = p_against(gain_p, self.lone_level);
            let correction = if self.lone_level < self.alpha {
                format!("alpha {} / {} checks, Bonferroni", self.alpha, self.tested)
            } else {
                "no correction".to_string()
            };
            outcome.status = CheckStatus::Improved;
            outcome.verdict = format!(
                "{name} improved: {stats_text} (no improvement rejected: {p} <= {level}, \
                 {correction}); if intended, run `ragate baseline accept --tier {}`",
                self.tier
            );
        } else {
            outcome.status = CheckStatus::Pass;
            outcome.verdict = format!("{name} {within}: {stats_text}");
        }
    }

    /// The p-value of "no improvement" when the check got better with evidence at alpha / m
    /// (Bonferroni: a suggestion to accept must not fire on noise), else None.
    fn improved(&self, candidate: &Candidate, summary: &Summary) -> Option<f64> {
        if summary.worsening >= 0.0 {
            return None;
        }
        let gains: Vec<f64> = candidate.paired.worsening.iter().map(|w| -w).collect();
        let p = limit_test::test(&gains, 0.0, self.check.rule.metric.range_width()).p_value;
        (p <= self.lone_level).then_some(p)
    }
}

/// The worsening a delta bound stands for.
fn worsening_of(delta: f64, direction: Direction) -> f64 {
    match direction {
        Direction::HigherIsBetter => -delta,
        Direction::LowerIsBetter => delta,
    }
}

mod adjusted;
mod family;
pub(crate) mod floor;
mod outcome;
mod paired;
pub mod proof;
mod summary;
pub use adjusted::{Adjustment, FamilyLevels, Notation};
pub use outcome::{
    CheckOutcome, CheckStatus, DecisionBound, Family, Floor, QueriesNeeded, QueryDrop,
    REALISTIC_QUERIES,
};
#[cfg(test)]
mod tests;
