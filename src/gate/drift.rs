//! The `drift` checks of a gate run given `--history DIR`: per `all` check, a one-sided scan test
//! of "the recent runs worsen beyond the limit" ([`crate::history::drift`]) over the deltas
//! against the baseline of the runs of the current series (same config hash and judges, the same
//! baseline file) and of this run, at its share of [`drift::BUDGET`] (Bonferroni over the `all`
//! checks); and the trends (sparkline values) the summary shows. A drift fails the run only under
//! `gate: { drift: fail }`; by default it is a warning.

use crate::baseline::results::Results;
use crate::config::DriftPolicy;
use crate::gate::verdict::{CheckOutcome, CheckStatus, Family};
use crate::history::drift::{self, RunDelta};
use crate::history::record::Record;
use crate::history::sparkline::{RUNS, Trend};
use crate::metrics::metric::Metric;
use crate::metrics::retrieval::Direction;

/// The runs of the history that belong to the current run's series: the latest records back to
/// the first whose config hash, judges or embeddings differ from the current run's; and whether
/// older records were left out for that reason (a break). A run is one observation however often
/// it was recorded or gated: consecutive records of the same run (the same commit and the same
/// means) count once, and a last record that is the current run itself (recorded before it was
/// gated again) is left out.
pub fn series_of(records: &[Record], current: &Results, now: &Record) -> (Vec<Record>, bool) {
    let same = |r: &Record| {
        r.config_hash == current.provenance.config_hash
            && r.judges == current.provenance.judges
            && r.embeddings == current.provenance.embeddings
    };
    let start = records
        .iter()
        .rposition(|r| !same(r))
        .map_or(0, |last_other| last_other + 1);
    let mut series: Vec<Record> = Vec::new();
    for record in &records[start..] {
        if !series.last().is_some_and(|last| last.is_same_run(record)) {
            series.push(record.clone());
        }
    }
    if series.last().is_some_and(|last| last.is_same_run(now)) {
        series.pop();
    }
    (series, start > 0)
}

/// What the drift checks need besides the report's outcomes.
pub struct DriftInputs<'a> {
    /// The records of the current series, oldest first.
    pub series: &'a [Record],
    /// sha256 of the baseline file this run was compared with.
    pub baseline_sha256: &'a str,
    /// What a drift does to the run (`gate: { drift }`).
    pub policy: DriftPolicy,
}

/// The worsening of `delta` (`current - baseline`) for `metric`: positive when worse.
fn worsening(metric: &str, delta: f64) -> f64 {
    match metric.parse::<Metric>().map(Metric::direction) {
        Ok(Direction::LowerIsBetter) => delta,
        _ => -delta,
    }
}

/// One drift check per `all` metric check of `outcomes`, each at `BUDGET / m` for m such checks;
/// `baseline_runs` is how many runs the baseline's per-query values average (1 for a plain run).
pub fn checks(
    outcomes: &[CheckOutcome],
    inputs: &DriftInputs<'_>,
    baseline_runs: usize,
) -> Vec<CheckOutcome> {
    let primary: Vec<&CheckOutcome> = outcomes
        .iter()
        .filter(|o| o.family == Family::Primary)
        .collect();
    let alpha = drift::BUDGET / primary.len().max(1) as f64;
    primary
        .into_iter()
        .map(|o| check(o, inputs, alpha, baseline_runs))
        .collect()
}

fn check(
    outcome: &CheckOutcome,
    inputs: &DriftInputs<'_>,
    alpha: f64,
    baseline_runs: usize,
) -> CheckOutcome {
    let name = format!("drift {}", outcome.name);
    let mut drift_outcome = CheckOutcome::bare(
        name.clone(),
        outcome.metric.clone(),
        outcome.slice.clone(),
        Family::Drift,
    );
    drift_outcome.baseline_mean = outcome.baseline_mean;
    drift_outcome.current_mean = outcome.current_mean;
    drift_outcome.delta = outcome.delta;
    drift_outcome.limit = outcome.limit;
    drift_outcome.se = outcome.se;
    let (Some(se), true) = (outcome.se, outcome.delta.is_finite()) else {
        drift_outcome.status = CheckStatus::Skipped;
        drift_outcome.verdict = format!(
            "{name}: skipped: this run's check has no paired values ({}), so there is no delta to add to the series",
            outcome.verdict
        );
        return drift_outcome;
    };
    let same_baseline = |r: &&Record| r.baseline_sha256.as_deref() == Some(inputs.baseline_sha256);
    let mut runs = Vec::new();
    let mut other_baseline = 0;
    let mut without_value = 0;
    for record in inputs.series {
        if !same_baseline(&record) {
            other_baseline += 1;
            continue;
        }
        match record
            .check_of(&outcome.metric, &outcome.slice)
            .and_then(|c| c.delta.zip(c.se))
        {
            Some((delta, se)) => runs.push(RunDelta {
                worsening: worsening(&outcome.metric, delta),
                se,
            }),
            None => without_value += 1,
        }
    }
    runs.push(RunDelta {
        worsening: worsening(&outcome.metric, outcome.delta),
        se,
    });
    drift_outcome.n = runs.len();
    let mut left_out = Vec::new();
    if other_baseline > 0 {
        left_out.push(format!("{other_baseline} against another baseline"));
    }
    if without_value > 0 {
        left_out.push(format!(
            "{without_value} whose record has no delta and standard error for this check"
        ));
    }
    let left_out = if left_out.is_empty() {
        String::new()
    } else {
        format!(
            " ({} runs of the series left out: {})",
            other_baseline + without_value,
            left_out.join(", ")
        )
    };
    let limit = outcome.limit.unwrap_or(0.0);
    let Some(result) = drift::scan(&runs, limit, alpha, baseline_runs) else {
        drift_outcome.status = CheckStatus::Skipped;
        drift_outcome.verdict = format!(
            "{name}: skipped: {} run against this baseline, this one included; the drift test \
             averages at least {} runs{left_out}",
            runs.len(),
            drift::MIN_WINDOW
        );
        return drift_outcome;
    };
    let direction = outcome.metric.parse::<Metric>().map(Metric::direction);
    let shown = |worsening: f64| {
        let delta = match direction {
            Ok(Direction::LowerIsBetter) => worsening,
            _ => -worsening,
        };
        crate::format::no_negative_zero(delta)
    };
    let against_limit = if result.z > 0.0 {
        format!(
            "{:.2} standard errors beyond the limit {limit:.4}",
            result.z
        )
    } else {
        format!(
            "within the limit {limit:.4} by {:.2} standard errors",
            -result.z
        )
    };
    let window = format!(
        "the last {} of {} runs against this baseline (this one included) average a delta of \
         {:+.4}, {against_limit} (se {:.4}; run-to-run sd {:.4}); threshold {:.2}, for {}% \
         false warnings over {} runs{left_out}",
        result.window,
        result.runs,
        shown(result.mean),
        result.se,
        result.night_sd,
        result.threshold,
        crate::format::percent_text(alpha),
        drift::NIGHTS,
    );
    if result.fires() {
        drift_outcome.status = match inputs.policy {
            DriftPolicy::Fail => CheckStatus::Fail,
            DriftPolicy::Warn => CheckStatus::Warn,
        };
        let consequence = match inputs.policy {
            DriftPolicy::Fail => "fails the run (`gate: { drift: fail }`)",
            DriftPolicy::Warn => "a warning (`gate: { drift: fail }` makes it fail the run)",
        };
        drift_outcome.verdict = format!(
            "{name}: drifting: the recent runs together worsen beyond the limit: {window}; \
             {consequence}; `ragate history show` lists the runs"
        );
    } else {
        drift_outcome.status = CheckStatus::Pass;
        drift_outcome.verdict = format!("{name}: no drift: {window}");
    }
    drift_outcome
}

/// The trends the summary shows: each `all` check and each failing slice check, over the last
/// [`RUNS`] runs of the series (the current run last), with the current run's means.
pub fn trends(
    outcomes: &[CheckOutcome],
    series: &[Record],
    after_break: bool,
    current: &Record,
) -> Vec<Trend> {
    outcomes
        .iter()
        .filter(|o| {
            o.family == Family::Primary
                || (o.family == Family::Slices && o.status == CheckStatus::Fail)
        })
        .filter_map(|o| {
            let mean = |r: &Record| Some(r.metrics.get(&o.metric)?.get(&o.slice)?.mean);
            let now = mean(current)?;
            let skip = series.len().saturating_sub(RUNS - 1);
            let mut values: Vec<f64> = series[skip..].iter().filter_map(mean).collect();
            values.push(now);
            Some(Trend {
                name: o.name.clone(),
                values,
                after_break,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::results::{Provenance, RunStatus};
    use crate::history::record::RecordedCheck;

    fn record(config_hash: &str, delta: f64, baseline: &str) -> Record {
        Record {
            format: crate::history::record::FORMAT.into(),
            tier: "nightly".into(),
            time: "2026-12-01T03:00:00Z".into(),
            commit: None,
            ragate_version: "0".into(),
            config_hash: config_hash.into(),
            judges: Default::default(),
            embeddings: None,
            status: RunStatus::Pass,
            baseline_sha256: Some(baseline.into()),
            metrics: Default::default(),
            checks: vec![RecordedCheck {
                name: "recall@10 [all]".into(),
                metric: "recall@10".into(),
                slice: "all".into(),
                status: "pass".into(),
                n: 200,
                delta: Some(delta),
                se: Some(0.005),
                limit: Some(0.03),
            }],
            queries: None,
        }
    }

    fn current_check(delta: f64) -> CheckOutcome {
        let mut o = CheckOutcome::bare(
            "recall@10 [all]".into(),
            "recall@10".into(),
            "all".into(),
            Family::Primary,
        );
        o.status = CheckStatus::Pass;
        (o.baseline_mean, o.current_mean, o.delta) = (0.8, 0.8 + delta, delta);
        o.limit = Some(0.03);
        o.se = Some(0.005);
        o
    }

    fn drift_of(series: &[Record], outcome: &CheckOutcome, baseline: &str) -> Vec<CheckOutcome> {
        let inputs = DriftInputs {
            series,
            baseline_sha256: baseline,
            policy: DriftPolicy::Warn,
        };
        checks(std::slice::from_ref(outcome), &inputs, 1)
    }

    #[test]
    fn noisy_nights_beyond_the_limit_warn_or_fail_as_configured_and_tolerated_ones_pass() {
        // 29 recorded nights and this one alternate -0.045 and -0.035 (se 0.005, limit 0.03):
        // each night alone is 1 to 3 standard errors beyond the limit; together they drift. The
        // baseline averages 10 runs (`repeats:`): a one-run baseline may be as far off as the
        // nights vary from each other, and would not let them drift.
        let series: Vec<Record> = (0..29)
            .map(|i| record("h", if i % 2 == 0 { -0.045 } else { -0.035 }, "b"))
            .collect();
        let outcome = current_check(-0.035);
        for (policy, status) in [
            (DriftPolicy::Warn, CheckStatus::Warn),
            (DriftPolicy::Fail, CheckStatus::Fail),
        ] {
            let inputs = DriftInputs {
                series: &series,
                baseline_sha256: "b",
                policy,
            };
            let drift = checks(std::slice::from_ref(&outcome), &inputs, 10);
            assert_eq!(drift.len(), 1);
            assert_eq!(drift[0].status, status, "{}", drift[0].verdict);
            assert_eq!(drift[0].family, Family::Drift);
            assert_eq!(drift[0].n, 30);
            assert!(
                drift[0].verdict.contains("drifting")
                    && drift[0]
                        .verdict
                        .contains("standard errors beyond the limit 0.0300")
                    && drift[0]
                        .verdict
                        .contains("for 1% false warnings over 30 runs"),
                "{}",
                drift[0].verdict
            );
        }
        // Two metrics share the budget: each at 0.5%.
        let mut other = outcome.clone();
        other.metric = "ndcg@10".into();
        other.name = "ndcg@10 [all]".into();
        let inputs = DriftInputs {
            series: &series,
            baseline_sha256: "b",
            policy: DriftPolicy::Warn,
        };
        let both = checks(&[outcome.clone(), other], &inputs, 10);
        assert!(
            both[0].verdict.contains("for 0.5% false warnings"),
            "{}",
            both[0].verdict
        );
        // A steady worsening of 0.01 (a third of the limit) passes: it is tolerated.
        let tolerated: Vec<Record> = (0..29).map(|_| record("h", -0.01, "b")).collect();
        let drift = drift_of(&tolerated, &current_check(-0.01), "b");
        assert_eq!(drift[0].status, CheckStatus::Pass, "{}", drift[0].verdict);
        assert!(
            drift[0].verdict.contains("no drift") && drift[0].verdict.contains("within the limit"),
            "{}",
            drift[0].verdict
        );
        // The same nights against another baseline are left out: one run is no series.
        let drift = drift_of(&series, &outcome, "other");
        assert_eq!(
            drift[0].status,
            CheckStatus::Skipped,
            "{}",
            drift[0].verdict
        );
        assert!(
            drift[0].verdict.contains("29 against another baseline")
                && drift[0].verdict.contains("averages at least 2 runs"),
            "{}",
            drift[0].verdict
        );
    }

    #[test]
    fn a_series_starts_after_the_last_record_of_another_config_or_judge() {
        let mut results_provenance = Provenance {
            config_hash: "h".into(),
            ..Provenance::default()
        };
        let records = vec![
            record("h", 0.0, "b"),
            record("old", 0.0, "b"),
            record("h", 0.0, "b"),
        ];
        let current = Results {
            format: String::new(),
            tier: "nightly".into(),
            status: RunStatus::Pass,
            provenance: results_provenance.clone(),
            metrics: vec![],
            summary: Default::default(),
            noise: None,
            baseline_mismatch: None,
            queries: Default::default(),
        };
        let now = record("h", 0.0, "b");
        let (series, after_break) = series_of(&records, &current, &now);
        assert_eq!(series.len(), 1);
        assert!(after_break);
        results_provenance
            .judges
            .insert("default".into(), "lexical v2".into());
        let current = Results {
            provenance: results_provenance,
            ..current
        };
        let (series, after_break) = series_of(&records, &current, &now);
        assert!(
            series.is_empty() && after_break,
            "a judge change breaks the series"
        );
    }

    #[test]
    fn the_current_run_recorded_before_it_is_gated_again_counts_once() {
        let current = Results {
            format: String::new(),
            tier: "nightly".into(),
            status: RunStatus::Pass,
            provenance: Provenance {
                config_hash: "h".into(),
                ..Provenance::default()
            },
            metrics: vec![],
            summary: Default::default(),
            noise: None,
            baseline_mismatch: None,
            queries: Default::default(),
        };
        let at = |commit: Option<&str>, mean: f64| {
            let mut r = record("h", 0.0, "b");
            r.commit = commit.map(str::to_string);
            r.metrics.insert(
                "recall@10".into(),
                [(
                    "all".to_string(),
                    crate::history::record::slice_mean(&[mean]),
                )]
                .into(),
            );
            r
        };
        let records = vec![at(Some("c1"), 0.8), at(Some("c2"), 0.7)];
        let series_len = |now: &Record| series_of(&records, &current, now).0.len();
        assert_eq!(
            series_len(&at(Some("c2"), 0.7)),
            1,
            "the same run is left out"
        );
        assert_eq!(
            series_len(&at(Some("c2"), 0.6)),
            2,
            "same commit, other means: a new run"
        );
        assert_eq!(
            series_len(&at(Some("c3"), 0.7)),
            2,
            "another commit: a new run"
        );
        let unknown = vec![at(None, 0.8), at(None, 0.7)];
        assert_eq!(
            series_of(&unknown, &current, &at(None, 0.7)).0.len(),
            2,
            "without a commit, no run is taken for another"
        );
    }
}
