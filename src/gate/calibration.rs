//! Judge calibration against human labels: the prediction-powered estimate of each judged
//! metric's mean over the tier, from the judge's values on every query and the human labels of
//! the queries whose labelled answer is still the current one.

use std::collections::BTreeMap;

use crate::baseline::results::Results;
use crate::config::Rule;
use crate::gate::verdict::{CheckOutcome, CheckStatus};
use crate::input::labels::{self, Label};
use crate::metrics::metric::{Metric, MetricSpec};
use crate::stats::ppi::{self, PpiEstimate};

/// The calibration of one judged metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
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

fn calibrated_outcome(
    name: String,
    metric: String,
    status: CheckStatus,
    verdict: String,
    estimate: Option<&PpiEstimate>,
) -> CheckOutcome {
    CheckOutcome {
        name,
        metric,
        slice: "all".to_string(),
        status,
        verdict,
        n: estimate.map_or(0, |e| e.n_labelled),
        baseline_mean: f64::NAN,
        current_mean: estimate.map_or(f64::NAN, |e| e.estimate),
        delta: f64::NAN,
        ci: estimate.map(|e| e.ci),
        p_value: None,
        threshold: None,
        detectable_drop: None,
        worst: Vec::new(),
        worse_count: 0,
    }
}

/// The checks of rules on calibrated estimates (`faithfulness_ppi` with `min`): the lower bound
/// of the PPI++ 95% interval must reach the floor. Without a calibration (no labels, or fewer than
/// two current ones) the check is an error: it cannot be evaluated.
pub fn checks(rules: &[Rule], calibrations: &[Calibration]) -> Vec<CheckOutcome> {
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
            match calibrations.iter().find(|c| c.metric == base) {
                None => {
                    let verdict = format!(
                        "{name}: no calibration: expected the tier's `labels:` to hold at least two labels of current answers for {base}"
                    );
                    calibrated_outcome(name, metric, CheckStatus::Error, verdict, None)
                }
                Some(calibration) => {
                    let estimate = &calibration.ppi_plus_plus;
                    let (lower, upper) = estimate.ci;
                    let status = if lower < min { CheckStatus::Fail } else { CheckStatus::Pass };
                    let relation = if lower < min { "is below" } else { "meets" };
                    let verdict = format!(
                        "{name}: PPI++ {:.4} (95% CI [{lower:.4}, {upper:.4}]) from {} labels of {} queries; \
                         the lower bound {relation} min {min}",
                        estimate.estimate, estimate.n_labelled, estimate.n_total
                    );
                    calibrated_outcome(name, metric, status, verdict, Some(estimate))
                }
            }
        })
        .collect()
}
