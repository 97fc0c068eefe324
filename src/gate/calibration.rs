//! Judge calibration against human labels: the prediction-powered estimate of each judged
//! metric's mean over the tier, from the judge's values on every query and the human labels of
//! the queries whose labelled answer is still the current one.

use std::collections::BTreeMap;

use crate::baseline::results::Results;
use crate::config::{InconclusivePolicy, Rule, Tier};
use crate::error::Result;
use crate::gate::verdict::{CheckOutcome, CheckStatus, Family};
use crate::input::labels::{self, Label};
use crate::input::text_file::TextFile;
use crate::metrics::metric::{Metric, MetricSpec};
use crate::stats::ppi::{self, PpiEstimate};

/// The calibration of one judged metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// The judged metric's name.
    pub metric: String,
    /// Classic PPI: mean(judge, all) - mean(judge - human, labelled).
    pub ppi: PpiEstimate,
    /// PPI++ (power-tuned).
    pub ppi_plus_plus: PpiEstimate,
    /// The judge's own mean over all queries.
    pub judge_mean: f64,
    /// Labels whose answer changed since they were given: counted, not used.
    pub stale: usize,
}

impl Calibration {
    /// One line for the report: both estimates with their 95% intervals, the judge's mean, stale
    /// labels.
    pub fn describe(&self) -> String {
        format!(
            "{} calibrated on {} human labels of {} queries: PPI {:.4} (95% CI [{:.4}, {:.4}]), \
             PPI++ {:.4} ([{:.4}, {:.4}], lambda {:.2}); judge alone {:.4}; {} stale labels not used",
            self.metric,
            self.ppi.n_labelled,
            self.ppi.n_total,
            self.ppi.estimate,
            self.ppi.ci.0,
            self.ppi.ci.1,
            self.ppi_plus_plus.estimate,
            self.ppi_plus_plus.ci.0,
            self.ppi_plus_plus.ci.1,
            self.ppi_plus_plus.lambda,
            self.judge_mean,
            self.stale,
        )
    }
}

/// Calibrations of every judged metric that has at least two current labels.
pub fn calibrate(results: &Results, specs: &[MetricSpec], labels: &[Label]) -> Vec<Calibration> {
    let answers: BTreeMap<String, String> = results
        .queries
        .iter()
        .filter_map(|(qid, q)| Some((qid.clone(), q.answer.clone()?)))
        .collect();
    let mut calibrations = Vec::new();
    for spec in specs.iter().filter(|s| s.is_judged()) {
        let name = spec.metric.to_string();
        let values: BTreeMap<&str, f64> = results
            .queries
            .iter()
            .filter_map(|(qid, q)| Some((qid.as_str(), *q.metrics.get(&name)?)))
            .collect();
        let matched = labels::current_labels(labels, &answers, &name);
        let (judge_labelled, human): (Vec<f64>, Vec<f64>) = matched
            .usable
            .iter()
            .filter_map(|label| Some((*values.get(label.qid.as_str())?, label.value(&name)?)))
            .unzip();
        let all: Vec<f64> = values.values().copied().collect();
        let (Some(classic), Some(tuned)) = (
            ppi::ppi_mean(&all, &judge_labelled, &human),
            ppi::ppi_plus_plus(&all, &judge_labelled, &human),
        ) else {
            continue;
        };
        calibrations.push(Calibration {
            metric: name,
            ppi: classic,
            ppi_plus_plus: tuned,
            judge_mean: all.iter().sum::<f64>() / all.len() as f64,
            stale: matched.stale,
        });
    }
    calibrations
}

/// Fewer current labels than this give no floor verdict: the floor is skipped (too few labels).
/// With 3 to 5 labels the PPI++ interval covered only 61-79% in simulation.
pub const MIN_LABELS_FOR_FLOOR: usize = 10;

/// The checks of rules on calibrated estimates (`faithfulness_ppi` with `min`). The system must
/// prove its case: the floor passes when the lower bound of the PPI++ 95% interval reaches it;
/// it fails when the estimate itself is below the floor; between the two (estimate above, lower
/// bound below) it is inconclusive. Without a calibration (no labels file, or no current label)
/// the check is an error; with fewer than [`MIN_LABELS_FOR_FLOOR`] current labels it is skipped.
pub fn checks(
    rules: &[Rule],
    calibrations: &[Calibration],
    inconclusive: InconclusivePolicy,
) -> Vec<CheckOutcome> {
    rules
        .iter()
        .filter_map(|rule| match rule.metric {
            Metric::Ppi(calibrated) => Some((rule, calibrated.base().to_string())),
            _ => None,
        })
        .map(|(rule, base)| {
            let metric = rule.metric.to_string();
            let name = format!("{metric} [all]");
            let min = rule.limits.min.unwrap_or(f64::NEG_INFINITY);
            let mut outcome =
                CheckOutcome::bare(name.clone(), metric, "all".into(), Family::Calibration);
            let Some(calibration) = calibrations.iter().find(|c| c.metric == base) else {
                outcome.verdict = format!(
                    "{name}: no calibration: expected the tier's `labels:` to hold at least two labels of current answers for {base}"
                );
                return outcome;
            };
            let estimate = &calibration.ppi_plus_plus;
            let (lower, upper) = estimate.ci;
            outcome.n = estimate.n_labelled;
            outcome.current_mean = estimate.estimate;
            outcome.ci = Some(estimate.ci);
            let figures = format!(
                "PPI++ {:.4} (95% CI [{lower:.4}, {upper:.4}]) from {} labels of {} queries",
                estimate.estimate, estimate.n_labelled, estimate.n_total
            );
            let (status, verdict) = if estimate.n_labelled < MIN_LABELS_FOR_FLOOR {
                (
                    CheckStatus::Skipped,
                    format!(
                        "{name}: skipped (too few labels): {figures}; a floor needs at least \
                         {MIN_LABELS_FOR_FLOOR} current labels"
                    ),
                )
            } else if lower >= min {
                (
                    CheckStatus::Pass,
                    format!("{name}: {figures}; the lower bound meets min {min}"),
                )
            } else if estimate.estimate < min {
                (
                    CheckStatus::Fail,
                    format!("{name} failed: {figures}; the estimate is below min {min}"),
                )
            } else {
                let effect = match inconclusive {
                    InconclusivePolicy::Pass => "passes",
                    InconclusivePolicy::Fail => "fails (inconclusive: fail)",
                };
                (
                    CheckStatus::Inconclusive,
                    format!(
                        "{name} inconclusive: {figures}; the estimate meets min {min} but the \
                         lower bound does not: more labels would decide it; {effect}"
                    ),
                )
            };
            outcome.status = status;
            outcome.verdict = verdict;
            outcome
        })
        .collect()
}

/// The calibrations of a tier's judged metrics on `results`, from the tier's labels file (none
/// when the tier has no `labels:`).
pub fn for_tier(tier: &Tier, specs: &[MetricSpec], results: &Results) -> Result<Vec<Calibration>> {
    match &tier.labels {
        Some(path) => Ok(calibrate(
            results,
            specs,
            &labels::read(&TextFile::read(path)?)?,
        )),
        None => Ok(Vec::new()),
    }
}
