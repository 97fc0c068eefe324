//! Must-pass queries (issue 49): a query the qrels mark `"must_pass": true` is decided on its own,
//! with no statistics and whatever the size of its slice. For that query, every per-query metric
//! the tier's rules gate (a rule of a slice only when the query is in it) may not worsen from its
//! baseline value by more than the rule's limit: `max_drop` / `max_increase` (their `_pct`
//! forms of the query's baseline value), the tightest when several rules gate the metric, and 0
//! when a rule has only a floor. Each query is one check (family [`Family::MustPass`]), so it is
//! one JUnit test case, it fails the run when broken, and the summary leads with it.
//!
//! With `repeats: n` the query's values of each run are kept ([`MustPassRecord::repeats`]): it
//! passes when at least `must_pass: { min_repeats: k }` of its n runs pass (pass^k; all n by
//! default), and the verdict gives the pattern of runs that passed and failed.
//!
//! [`MustPassRecord::repeats`]: crate::baseline::results::MustPassRecord::repeats

use std::collections::BTreeMap;

use crate::baseline::results::{QueryRecord, Results};
use crate::config::Tier;
use crate::format::value;
use crate::gate::verdict::{BEYOND_TOLERANCE, CheckOutcome, CheckStatus, Family, QueryDrop};
use crate::metrics::metric::Metric;
use crate::metrics::retrieval::Direction;

/// A metric that the tier's rules gate for the query, with the worsening they tolerate.
struct Gated {
    metric: Metric,
    name: String,
    limit: f64,
}

/// A gated metric that worsened beyond its limit in one run of the query.
#[derive(Debug, Clone, PartialEq)]
struct Broken {
    name: String,
    metric: Metric,
    baseline: f64,
    current: f64,
    limit: f64,
}

/// One check per must-pass query of `current` (qid order), against `baseline`.
pub fn checks(tier: &Tier, baseline: &Results, current: &Results) -> Vec<CheckOutcome> {
    current
        .queries
        .iter()
        .filter(|(_, record)| record.must_pass.is_some())
        .map(|(qid, record)| check(tier, qid, baseline.queries.get(qid), record))
        .collect()
}

/// The per-query metrics the tier's rules gate for `record` (a slice's rule when the query is in
/// the slice), each with the tightest worsening its rules tolerate, in rule order.
fn gated(tier: &Tier, record: &QueryRecord, baseline: &QueryRecord) -> Vec<Gated> {
    let mut gated: Vec<Gated> = Vec::new();
    for rule in &tier.gate.rules {
        if matches!(rule.metric, Metric::Ppi(_)) {
            continue;
        }
        let in_slice = rule.slice.as_ref().is_none_or(|slice| {
            record.slices.get(&slice.field).map(String::as_str) == Some(slice.value.as_str())
        });
        if !in_slice {
            continue;
        }
        let name = rule.metric.to_string();
        let before = baseline.metrics.get(&name).copied().unwrap_or(f64::NAN);
        let limit = crate::gate::verdict::tolerated(&rule.limits, rule.metric.direction(), before)
            .filter(|limit| limit.is_finite())
            .unwrap_or(0.0);
        match gated.iter_mut().find(|g| g.name == name) {
            Some(known) => known.limit = known.limit.min(limit),
            None => gated.push(Gated {
                metric: rule.metric,
                name,
                limit,
            }),
        }
    }
    gated
}

/// The gated metrics of one run's `values` that worsened beyond their limits from `baseline`;
/// an error when a value is there on one side only.
fn broken(
    gated: &[Gated],
    baseline: &QueryRecord,
    values: &BTreeMap<String, f64>,
) -> Result<Vec<Broken>, String> {
    let mut broken = Vec::new();
    for gate in gated {
        let (before, now) = match (baseline.metrics.get(&gate.name), values.get(&gate.name)) {
            (None, None) => continue,
            (Some(before), Some(now)) => (*before, *now),
            (None, Some(_)) => return Err(format!("the baseline has no {} for it", gate.name)),
            (Some(_), None) => return Err(format!("it has no {} now", gate.name)),
        };
        let worsening = match gate.metric.direction() {
            Direction::HigherIsBetter => before - now,
            Direction::LowerIsBetter => now - before,
        };
        let scale = gate
            .metric
            .range_width()
            .unwrap_or_else(|| before.abs().max(1.0));
        if !worsening.is_finite() || worsening > gate.limit + BEYOND_TOLERANCE * scale {
            broken.push(Broken {
                name: gate.name.clone(),
                metric: gate.metric,
                baseline: before,
                current: now,
                limit: gate.limit,
            });
        }
    }
    Ok(broken)
}

/// The check of the must-pass query `qid`.
fn check(
    tier: &Tier,
    qid: &str,
    baseline: Option<&QueryRecord>,
    record: &QueryRecord,
) -> CheckOutcome {
    let name = format!("must-pass {qid}");
    let mut outcome = CheckOutcome::bare(
        name.clone(),
        String::new(),
        format!("qid={qid}"),
        Family::MustPass,
    );
    outcome.n = 1;
    let not_decided = |mut outcome: CheckOutcome, why: &str| {
        outcome.status = CheckStatus::Error;
        outcome.verdict = format!("{name} is not decided: {why}");
        outcome
    };
    let Some(baseline) = baseline else {
        return not_decided(
            outcome,
            "the baseline has no record of it (accept a baseline that holds the query)",
        );
    };
    let gated = gated(tier, record, baseline);
    let Some(first) = gated.first() else {
        return not_decided(outcome, "no rule of the tier gates a per-query metric");
    };
    outcome.metric = first.name.clone();
    let repeats = record
        .must_pass
        .as_ref()
        .map(|must_pass| must_pass.repeats.as_slice())
        .unwrap_or_default();
    let runs: Vec<&BTreeMap<String, f64>> = if repeats.is_empty() {
        vec![&record.metrics]
    } else {
        repeats.iter().collect()
    };
    let per_run: Result<Vec<Vec<Broken>>, String> = runs
        .iter()
        .map(|values| broken(&gated, baseline, values))
        .collect();
    let per_run = match per_run {
        Ok(per_run) => per_run,
        Err(why) => return not_decided(outcome, &why),
    };
    decided(outcome, tier, (baseline, record), first, &per_run)
}

/// `outcome` decided from what broke in each run of the query (one run without repeats).
fn decided(
    mut outcome: CheckOutcome,
    tier: &Tier,
    (baseline, record): (&QueryRecord, &QueryRecord),
    first: &Gated,
    per_run: &[Vec<Broken>],
) -> CheckOutcome {
    let runs = per_run.len();
    let passed = per_run.iter().filter(|broken| broken.is_empty()).count();
    let required = tier.must_pass_min_repeats.min(runs);
    let shown = per_run.iter().find_map(|broken| broken.first());
    let (before, now, limit) = match shown {
        Some(broken) => (broken.baseline, broken.current, broken.limit),
        None => (
            baseline
                .metrics
                .get(&first.name)
                .copied()
                .unwrap_or(f64::NAN),
            record.metrics.get(&first.name).copied().unwrap_or(f64::NAN),
            first.limit,
        ),
    };
    if let Some(broken) = shown {
        outcome.metric = broken.name.clone();
    }
    outcome.baseline_mean = before;
    outcome.current_mean = now;
    outcome.delta = now - before;
    outcome.limit = Some(limit);
    let pattern = (runs > 1).then(|| repeat_pattern(per_run, required));
    let lost = shown.and_then(|broken| lost_relevant(baseline, record, broken.metric));
    if passed >= required {
        outcome.status = CheckStatus::Pass;
        outcome.verdict = format!(
            "{} held: {} {} -> {} within its limit {}{}",
            outcome.name,
            first.name,
            value(before),
            value(now),
            value(limit),
            pattern.map_or(String::new(), |p| format!("; {p}"))
        );
        return outcome;
    }
    let changes: Vec<String> = per_run
        .iter()
        .find(|broken| !broken.is_empty())
        .into_iter()
        .flatten()
        .map(|b| format!("{} {} -> {}", b.name, value(b.baseline), value(b.current)))
        .collect();
    outcome.status = CheckStatus::Fail;
    outcome.verdict = format!(
        "{} broke: {}{}{}",
        outcome.name,
        changes.join(", "),
        lost.as_ref()
            .map_or(String::new(), |lost| format!("; {lost}")),
        pattern.map_or(String::new(), |p| format!("; {p}"))
    );
    outcome.worse_count = 1;
    outcome.worst = vec![QueryDrop {
        qid: outcome.slice.trim_start_matches("qid=").to_string(),
        query: record.query.clone(),
        baseline: before,
        current: now,
        hit_to_miss: before > 0.0 && now == 0.0,
        details: lost.into_iter().collect(),
        answers: None,
    }];
    outcome
}

/// `passed 2 of 3 runs (3 required): pass, pass, fail`: the flip pattern over the repeats.
fn repeat_pattern(per_run: &[Vec<Broken>], required: usize) -> String {
    let words: Vec<&str> = per_run
        .iter()
        .map(|broken| if broken.is_empty() { "pass" } else { "fail" })
        .collect();
    let passed = words.iter().filter(|word| **word == "pass").count();
    format!(
        "passed {passed} of {} runs ({required} required): {}",
        per_run.len(),
        words.join(", ")
    )
}

/// `lost its relevant document d42 (rank 1 in the baseline)`: the first relevant doc that the
/// baseline ranked within the metric's cut-off and the current run does not, when the records
/// keep the rankings that deep; None for metrics of the answer.
fn lost_relevant(baseline: &QueryRecord, record: &QueryRecord, metric: Metric) -> Option<String> {
    let retrieval = metric.as_retrieval()?;
    let relevant = &record.must_pass.as_ref()?.relevant;
    let cut = retrieval.cutoff().unwrap_or(usize::MAX);
    let now: Vec<&String> = record.retrieved.iter().take(cut).collect();
    baseline
        .retrieved
        .iter()
        .take(cut)
        .enumerate()
        .find(|(_, doc)| relevant.contains(doc) && !now.contains(doc))
        .map(|(rank, doc)| {
            format!(
                "lost its relevant document {doc} (rank {} in the baseline)",
                rank + 1
            )
        })
}

#[cfg(test)]
mod tests;
