//! The verdict of every check: paired statistics over the queries of both runs, Holm correction
//! over the run's checks, and the decision. This is the only place where verdicts are decided.

use crate::baseline::results::Results;
use crate::config::{Correction, Decision, GateSettings, Limits};
use crate::gate::checks::Check;
use crate::metrics::retrieval::Direction;
use crate::stats::{self, bootstrap, holm, normal, randomization};

/// Power at which the detectable drop is reported.
const POWER: f64 = 0.8;
/// Confidence of the reported interval of the mean delta.
const CONFIDENCE: f64 = 0.95;
/// How many regressed queries a check lists.
pub const WORST_QUERIES: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckStatus {
    Pass,
    Improved,
    Fail,
    Skipped,
    Error,
}

/// A query that got worse, for the report.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryDrop {
    pub qid: String,
    pub query: Option<String>,
    pub baseline: f64,
    pub current: f64,
    /// It had a positive value (a hit) and now has none.
    pub hit_to_miss: bool,
    /// For answer metrics: how the answer changed, and the claims that lost support.
    pub details: Vec<String>,
}

/// Everything a report shows about one check.
#[derive(Debug, Clone)]
pub struct CheckOutcome {
    pub name: String,
    pub metric: String,
    pub slice: String,
    pub status: CheckStatus,
    /// The one-line verdict.
    pub verdict: String,
    pub n: usize,
    pub baseline_mean: f64,
    pub current_mean: f64,
    pub delta: f64,
    pub ci: Option<(f64, f64)>,
    pub p_value: Option<f64>,
    /// The (Holm-adjusted) significance threshold p was compared with.
    pub threshold: Option<f64>,
    /// The smallest drop beyond the limit this check detects with 80% power.
    pub detectable_drop: Option<f64>,
    /// Queries that got worse, worst first (at most `WORST_QUERIES`).
    pub worst: Vec<QueryDrop>,
    /// How many paired queries got worse in all.
    pub worse_count: usize,
}

/// Paired values of one check, before the family-wide correction.
struct Paired {
    qids: Vec<String>,
    baseline: Vec<f64>,
    current: Vec<f64>,
    /// Per query, positive when the current value is better (direction-aware).
    gains: Vec<f64>,
}

fn empty_outcome(
    check: &Check<'_>,
    status: CheckStatus,
    verdict: String,
    n: usize,
) -> CheckOutcome {
    CheckOutcome {
        name: check.name(),
        metric: check.rule.metric.to_string(),
        slice: check.slice.to_string(),
        status,
        verdict,
        n,
        baseline_mean: f64::NAN,
        current_mean: f64::NAN,
        delta: f64::NAN,
        ci: None,
        p_value: None,
        threshold: None,
        detectable_drop: None,
        worst: Vec::new(),
        worse_count: 0,
    }
}

fn pair(check: &Check<'_>, baseline: &Results, current: &Results) -> Result<Paired, String> {
    let metric = check.rule.metric.to_string();
    if !baseline.metrics.contains(&metric) {
        return Err(format!(
            "{}: the baseline has no `{metric}` values: accept a baseline computed with this metric",
            check.name()
        ));
    }
    let sign = match check.rule.metric.direction() {
        Direction::HigherIsBetter => 1.0,
        Direction::LowerIsBetter => -1.0,
    };
    let mut paired = Paired {
        qids: Vec::new(),
        baseline: Vec::new(),
        current: Vec::new(),
        gains: Vec::new(),
    };
    for (qid, now) in &current.queries {
        let Some(before) = baseline.queries.get(qid) else {
            continue;
        };
        if !check.slice.contains(&now.slices) {
            continue;
        }
        // A query without the value on either side is not paired: answer metrics leave out excluded
        // empty answers and queries without a reference.
        let (Some(&b), Some(&c)) = (before.metrics.get(&metric), now.metrics.get(&metric)) else {
            continue;
        };
        paired.qids.push(qid.clone());
        paired.baseline.push(b);
        paired.current.push(c);
        paired.gains.push(sign * (c - b));
    }
    Ok(paired)
}

/// The absolute worsening that a rule tolerates: the tighter of its absolute and relative limits.
fn tolerated(limits: &Limits, direction: Direction, baseline_mean: f64) -> Option<f64> {
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

fn floor_broken(limits: &Limits, direction: Direction, current_mean: f64) -> Option<String> {
    match direction {
        Direction::HigherIsBetter => limits
            .min
            .filter(|&min| current_mean < min)
            .map(|min| format!("{current_mean:.4} is below min {min}")),
        Direction::LowerIsBetter => limits
            .max
            .filter(|&max| current_mean > max)
            .map(|max| format!("{current_mean:.4} is above max {max}")),
    }
}

/// Decides every check of a run. `tier` names the tier in the "accept" hint.
pub fn decide(
    checks: &[Check<'_>],
    baseline: &Results,
    current: &Results,
    settings: &GateSettings,
    tier: &str,
) -> Vec<CheckOutcome> {
    let mut outcomes = Vec::with_capacity(checks.len());
    let mut tested: Vec<(usize, Paired, f64)> = Vec::new();
    for check in checks {
        let index = outcomes.len();
        match pair(check, baseline, current) {
            Err(message) => outcomes.push(empty_outcome(check, CheckStatus::Error, message, 0)),
            Ok(paired) if paired.qids.len() < settings.min_queries => {
                let n = paired.qids.len();
                let verdict = format!(
                    "{}: skipped (underpowered): {n} paired queries, fewer than min_queries {}",
                    check.name(),
                    settings.min_queries
                );
                outcomes.push(empty_outcome(check, CheckStatus::Skipped, verdict, n));
            }
            Ok(paired) => {
                let mut rng = stats::rng_for(settings.seed, &check.name());
                let p_worse =
                    randomization::drop_p_value(&paired.gains, settings.resamples, &mut rng);
                outcomes.push(empty_outcome(
                    check,
                    CheckStatus::Pass,
                    String::new(),
                    paired.qids.len(),
                ));
                tested.push((index, paired, p_worse));
            }
        }
    }
    let p_values: Vec<f64> = tested.iter().map(|(_, _, p)| *p).collect();
    let family = p_values.len().max(1) as f64;
    let decisions: Vec<Significance> = match settings.correction {
        Correction::Holm => holm::holm(&p_values, settings.alpha)
            .iter()
            .map(|d| Significance {
                threshold: d.threshold,
                rejected: d.rejected,
                per_check_alpha: settings.alpha / family,
            })
            .collect(),
        Correction::None => p_values
            .iter()
            .map(|&p| Significance {
                threshold: settings.alpha,
                rejected: p <= settings.alpha,
                per_check_alpha: settings.alpha,
            })
            .collect(),
    };
    for ((index, paired, p_worse), significance) in tested.into_iter().zip(decisions) {
        let check = &checks[index];
        outcomes[index] = judge(check, paired, p_worse, significance, settings, tier);
    }
    outcomes
}

/// A check's place in the run's family of tests.
#[derive(Debug, Clone, Copy)]
struct Significance {
    /// The Holm-adjusted threshold its p-value was compared with.
    threshold: f64,
    /// Whether Holm's step-down procedure rejects "no drop" for it (it stops at the first
    /// p-value above its threshold, so a larger p is never rejected after a smaller one was not).
    rejected: bool,
    /// The level a check gets when it is the only regression of the run (alpha / m with Holm):
    /// used for the detectable drop and for `improved`, so that neither depends on the check's
    /// rank among unrelated p-values.
    per_check_alpha: f64,
}

fn judge(
    check: &Check<'_>,
    paired: Paired,
    p_worse: f64,
    significance: Significance,
    settings: &GateSettings,
    tier: &str,
) -> CheckOutcome {
    let threshold = significance.threshold;
    let name = check.name();
    let direction = check.rule.metric.direction();
    let n = paired.qids.len();
    let baseline_mean = stats::mean(&paired.baseline);
    let current_mean = stats::mean(&paired.current);
    let delta = current_mean - baseline_mean;
    let deltas: Vec<f64> = paired
        .current
        .iter()
        .zip(&paired.baseline)
        .map(|(c, b)| c - b)
        .collect();
    let mut rng = stats::rng_for(settings.seed, &format!("{name} ci"));
    let ci = bootstrap::mean_ci(&deltas, settings.resamples, CONFIDENCE, &mut rng);
    let sd = stats::sample_sd(&deltas);
    let worsening = -stats::mean(&paired.gains);
    let limit = tolerated(&check.rule.limits, direction, baseline_mean);
    let exceeded = limit.is_some_and(|l| worsening > l);
    let significant = significance.rejected;
    let floor = floor_broken(&check.rule.limits, direction, current_mean);
    let detectable_drop =
        limit.map(|l| normal::detectable_drop(l, significance.per_check_alpha, POWER, sd, n));
    let stats_text = format!(
        "{baseline_mean:.4} -> {current_mean:.4} (delta {delta:+.4}, 95% CI [{:+.4}, {:+.4}], p = {p_worse:.4}, threshold {threshold:.4}, n = {n})",
        ci.map_or(f64::NAN, |c| c.0),
        ci.map_or(f64::NAN, |c| c.1),
    );
    let limit_text = limit.map_or("no drop limit".to_string(), |l| format!("tolerated {l:.4}"));
    let (status, verdict) = if let Some(floor) = floor {
        (
            CheckStatus::Fail,
            format!("{name} failed: {floor}; {stats_text}"),
        )
    } else if exceeded && (settings.decision == Decision::Point || significant) {
        let why = match settings.decision {
            Decision::Point => "on the point estimate".to_string(),
            Decision::Significant => format!("significant at {threshold:.4}"),
        };
        (
            CheckStatus::Fail,
            format!(
                "{name} regressed by {worsening:.4}, more than {limit_text}, {why}: {stats_text}"
            ),
        )
    } else {
        let mut improve_rng = stats::rng_for(settings.seed, &format!("{name} improvement"));
        let gains_reversed: Vec<f64> = paired.gains.iter().map(|g| -g).collect();
        // Bonferroni over the run's checks: a suggestion to accept must not fire on noise.
        let improved = worsening < 0.0
            && randomization::drop_p_value(&gains_reversed, settings.resamples, &mut improve_rng)
                <= significance.per_check_alpha;
        if improved {
            (
                CheckStatus::Improved,
                format!(
                    "{name} improved: {stats_text}; if intended, run `ragate baseline accept --tier {tier}`"
                ),
            )
        } else if exceeded {
            (
                CheckStatus::Pass,
                format!(
                    "{name} dropped by {worsening:.4}, more than {limit_text}, but not significantly \
                     (detectable drop at 80% power: {:.4}): {stats_text}",
                    detectable_drop.unwrap_or(f64::NAN)
                ),
            )
        } else {
            (
                CheckStatus::Pass,
                format!("{name} within limits ({limit_text}): {stats_text}"),
            )
        }
    };
    let mut order: Vec<usize> = (0..n).filter(|&i| paired.gains[i] < 0.0).collect();
    let worse_count = order.len();
    order.sort_by(|&a, &b| {
        paired.gains[a]
            .total_cmp(&paired.gains[b])
            .then_with(|| paired.qids[a].cmp(&paired.qids[b]))
    });
    let worst = order
        .into_iter()
        .take(WORST_QUERIES)
        .map(|i| QueryDrop {
            qid: paired.qids[i].clone(),
            query: None,
            baseline: paired.baseline[i],
            current: paired.current[i],
            details: Vec::new(),
            hit_to_miss: direction == Direction::HigherIsBetter
                && paired.baseline[i] > 0.0
                && paired.current[i] == 0.0,
        })
        .collect();
    CheckOutcome {
        name,
        metric: check.rule.metric.to_string(),
        slice: check.slice.to_string(),
        status,
        verdict,
        n,
        baseline_mean,
        current_mean,
        delta,
        ci,
        p_value: Some(p_worse),
        threshold: Some(threshold),
        detectable_drop,
        worst,
        worse_count,
    }
}

#[cfg(test)]
mod tests;
