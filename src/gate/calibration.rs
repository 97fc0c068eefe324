//! Judge calibration against human labels: the prediction-powered estimate of each judged
//! metric's mean over the tier, from the judge's values on every query and the human labels of
//! the queries whose labelled answer is still the current one.

use std::collections::BTreeMap;

use crate::baseline::results::Results;
use crate::config::{InconclusivePolicy, Rule};
use crate::format::interval_text;
use crate::gate::verdict::{CheckOutcome, CheckStatus, Family};
use crate::input::labels::{self, Label};
use crate::metrics::metric::{Metric, MetricSpec};
use crate::stats::agreement::{Agreement, agreement};
use crate::stats::binomial::clopper_pearson_lower;
use crate::stats::ppi::{self, PpiEstimate};
use crate::stats::student_t_quantile;

/// A value at least this counts as positive (supported, relevant) when the judge's and the
/// human's values of a labelled answer are compared as verdicts.
pub const AGREEMENT_CUT: f64 = 0.5;

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
    /// The judge's verdicts against the humans' on the labelled answers (a value of at least
    /// [`AGREEMENT_CUT`] is positive on both sides).
    pub agreement: Agreement,
    /// The human labels as successes of trials, when every one is 0 or 1 (None: graded labels).
    pub binary_labels: Option<BinaryLabels>,
}

/// Human labels that are all 0 or 1: how many are 1 (`successes`) of how many (`n`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BinaryLabels {
    /// Labels that are 1.
    pub successes: usize,
    /// Labels.
    pub n: usize,
}

impl BinaryLabels {
    /// The counts of `labels` when every one is 0 or 1.
    pub fn of(labels: &[f64]) -> Option<BinaryLabels> {
        labels
            .iter()
            .all(|&y| y == 0.0 || y == 1.0)
            .then(|| BinaryLabels {
                successes: labels.iter().filter(|&&y| y == 1.0).count(),
                n: labels.len(),
            })
    }
}

impl Calibration {
    /// One line for the report: both estimates with their 95% intervals, the judge's mean, stale
    /// labels. (The judge's agreement with the labels is [`Self::agreement_text`], in the
    /// judges note.)
    pub fn describe(&self) -> String {
        let range = self
            .metric
            .parse::<Metric>()
            .ok()
            .and_then(|m| m.value_range());
        format!(
            "{} calibrated on {} human labels of {} queries: PPI {:.4} (95% CI {}), \
             PPI++ {:.4} ({}, lambda {:.2}); judge alone {:.4}; {} stale labels not used",
            self.metric,
            self.ppi.n_labelled,
            self.ppi.n_total,
            self.ppi.estimate,
            interval_text(self.ppi.ci, range.as_ref()),
            self.ppi_plus_plus.estimate,
            interval_text(self.ppi_plus_plus.ci, range.as_ref()),
            self.ppi_plus_plus.lambda,
            self.judge_mean,
            self.stale,
        )
    }

    /// How often the judge's verdict matched the human one on the labelled answers, with
    /// Cohen's kappa: `judge agrees with 9 of 10 labels (values >= 0.5 positive), kappa 0.78`.
    pub fn agreement_text(&self) -> String {
        let [yy, _, _, nn] = self.agreement.confusion;
        let n: usize = self.agreement.confusion.iter().sum();
        format!(
            "judge agrees with {} of {n} labels (values >= {AGREEMENT_CUT} positive), Cohen's kappa {}",
            yy + nn,
            self.agreement.kappa.map_or(
                "undefined (one verdict throughout)".to_string(),
                |k| format!("{:.2}", crate::format::no_negative_zero(k))
            ),
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
        let verdicts: Vec<(bool, bool)> = judge_labelled
            .iter()
            .zip(&human)
            .map(|(&j, &h)| (j >= AGREEMENT_CUT, h >= AGREEMENT_CUT))
            .collect();
        let (Some(classic), Some(tuned), Some(agreement)) = (
            ppi::ppi_mean(&all, &judge_labelled, &human),
            ppi::ppi_plus_plus(&all, &judge_labelled, &human),
            agreement(&verdicts),
        ) else {
            continue;
        };
        calibrations.push(Calibration {
            metric: name,
            ppi: classic,
            ppi_plus_plus: tuned,
            judge_mean: all.iter().sum::<f64>() / all.len() as f64,
            stale: matched.stale,
            agreement,
            binary_labels: BinaryLabels::of(&human),
        });
    }
    calibrations
}

/// The note that names the judge of each judged metric and, per metric, its measured agreement
/// with the tier's human labels (or that it was not measured): None without a judged metric.
/// `judges` is the results' provenance (judge name -> identity).
pub fn judges_note(
    specs: &[MetricSpec],
    judges: &BTreeMap<String, String>,
    calibrations: &[Calibration],
) -> Option<String> {
    let mut by_judge: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for spec in specs.iter().filter(|s| s.is_judged()) {
        by_judge
            .entry(spec.judge.as_str())
            .or_default()
            .push(spec.metric.to_string());
    }
    if by_judge.is_empty() {
        return None;
    }
    let named: Vec<String> = by_judge
        .iter()
        .map(|(name, metrics)| {
            let identity = judges.get(*name).map_or("", String::as_str);
            format!("{} by `{name}` ({identity})", metrics.join(", "))
        })
        .collect();
    let measured: Vec<String> = calibrations
        .iter()
        .map(|c| format!("{}: {}", c.metric, c.agreement_text()))
        .collect();
    let measured = if measured.is_empty() {
        "not measured against human labels here (a tier's `labels:` file measures it on every \
         run; `ragate judge-eval` on labelled items)"
            .to_string()
    } else {
        measured.join("; ")
    };
    Some(format!("judged metrics: {}; {measured}", named.join("; ")))
}

/// Fewer current labels than this give no floor verdict: the floor is skipped (too few labels),
/// saying how many more it needs. With the variance floor and the cross-fitted lambda of
/// `stats::ppi`, the lower bound held its level from 10 labels on in simulation (binary human
/// labels with means 0.6 to 0.95, judges agreeing 70-95%, 50 to 2,000 queries: the
/// `floor_simulation` tests); without them, 10 labels passed a floor at the truth in up to 66% of
/// tiers.
pub const MIN_LABELS_FOR_FLOOR: usize = 10;

/// The one-sided level of a calibrated floor's lower bound by default (`alpha_scope: family`): the
/// lower end of the two-sided 95% interval.
pub const FLOOR_LEVEL: f64 = (1.0 - ppi::CONFIDENCE) / 2.0;

/// The status of a floor `min` on a calibrated estimate, `None` when too few labels decide it:
/// pass when the lower bound of the 95% interval reaches `min`, fail when the estimate is below
/// it, inconclusive in between. `binary`: the labels' counts when they are all 0 or 1.
pub fn floor_status(
    estimate: &PpiEstimate,
    binary: Option<BinaryLabels>,
    min: f64,
) -> Option<CheckStatus> {
    floor_status_at(estimate, binary, min, FLOOR_LEVEL)
}

/// The lower confidence bound of a calibrated estimate at one-sided `level`: the 95% interval's
/// lower end at [`FLOOR_LEVEL`], else the same standard error with Student's t quantile of
/// `1 - level`. When the labels are all 0 or 1 and all but at most one of them is 1, the exact
/// binomial (Clopper-Pearson) bound of the labels alone when it is lower: there the interval's
/// normal approximation claims too much (50 labels all 1 gave 0.951 where the exact one-sided
/// 97.5% bound is 0.929, and a floor of 0.95 passed 7.3% of tiers whose true rate is 0.95).
pub fn lower_bound_at(estimate: &PpiEstimate, binary: Option<BinaryLabels>, level: f64) -> f64 {
    let n = estimate.n_labelled;
    let approximate = if level == FLOOR_LEVEL || n < 2 {
        estimate.ci.0
    } else {
        let df = (n - 1) as f64;
        let standard = student_t_quantile(1.0 - FLOOR_LEVEL, df);
        let wanted = student_t_quantile(1.0 - level, df);
        estimate.estimate - (estimate.estimate - estimate.ci.0) * wanted / standard
    };
    match exact_bound(binary, level) {
        Some(exact) => approximate.min(exact),
        None => approximate,
    }
}

/// The Clopper-Pearson lower bound at one-sided `level` of binary labels all but at most one of
/// which are 1 (None otherwise), which [`lower_bound_at`] takes when it is the lower.
fn exact_bound(binary: Option<BinaryLabels>, level: f64) -> Option<f64> {
    binary
        .filter(|b| b.n >= 1 && b.successes + 1 >= b.n)
        .map(|b| clopper_pearson_lower(b.successes, b.n, level))
}

/// [`floor_status`] with the lower bound at one-sided `level`.
pub fn floor_status_at(
    estimate: &PpiEstimate,
    binary: Option<BinaryLabels>,
    min: f64,
    level: f64,
) -> Option<CheckStatus> {
    if estimate.n_labelled < MIN_LABELS_FOR_FLOOR {
        None
    } else if lower_bound_at(estimate, binary, level) >= min {
        Some(CheckStatus::Pass)
    } else if estimate.estimate < min {
        Some(CheckStatus::Fail)
    } else {
        Some(CheckStatus::Inconclusive)
    }
}

/// The checks of rules on calibrated estimates (`faithfulness_ppi` with `min`). The system must
/// prove its case: the floor passes when the lower bound of the PPI++ 95% interval reaches it;
/// it fails when the estimate itself is below the floor; between the two (estimate above, lower
/// bound below) it is inconclusive. Without a calibration (no labels file, or no current label)
/// the check is an error; with fewer than [`MIN_LABELS_FOR_FLOOR`] current labels it is skipped.
/// `level` is the lower bound's one-sided level ([`FLOOR_LEVEL`] unless `alpha_scope: run` splits
/// alpha).
pub fn checks(
    rules: &[Rule],
    calibrations: &[Calibration],
    inconclusive: InconclusivePolicy,
    level: f64,
) -> Vec<CheckOutcome> {
    rules
        .iter()
        .filter_map(|rule| match rule.metric {
            Metric::Ppi(calibrated) => Some((rule, calibrated.base().to_string())),
            _ => None,
        })
        .map(|(rule, base)| {
            // The estimate calibrates `base`, whose values bound it.
            let range = match rule.metric {
                Metric::Ppi(calibrated) => calibrated.base().value_range(),
                _ => None,
            };
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
            outcome.n = estimate.n_labelled;
            outcome.current_mean = estimate.estimate;
            outcome.ci = Some(estimate.ci);
            let figures = format!(
                "PPI++ {:.4} (95% CI {}) from {} labels of {} queries",
                estimate.estimate,
                interval_text(estimate.ci, range.as_ref()),
                estimate.n_labelled,
                estimate.n_total
            );
            let exact = exact_bound(calibration.binary_labels, level)
                .filter(|&exact| exact < lower_bound_at(estimate, None, level));
            let lower = if let Some(exact) = exact {
                format!(
                    "the exact binomial lower bound of the labels, {exact:.4} (the interval's \
                     normal approximation claims too much when nearly every label is 1)"
                )
            } else if level == FLOOR_LEVEL {
                "the lower bound".to_string()
            } else {
                format!(
                    "the one-sided {:.2}% lower bound {:.4} (its share of alpha, `alpha_scope: run`)",
                    100.0 * (1.0 - level),
                    lower_bound_at(estimate, calibration.binary_labels, level)
                )
            };
            let (status, verdict) =
                match floor_status_at(estimate, calibration.binary_labels, min, level) {
                None => (
                    CheckStatus::Skipped,
                    format!(
                        "{name}: skipped (too few labels): {figures}; a floor needs at least \
                         {MIN_LABELS_FOR_FLOOR} current labels, this tier has {}: label {} more",
                        estimate.n_labelled,
                        MIN_LABELS_FOR_FLOOR - estimate.n_labelled
                    ),
                ),
                Some(CheckStatus::Pass) => (
                    CheckStatus::Pass,
                    format!("{name}: {figures}; {lower} meets min {min}"),
                ),
                Some(CheckStatus::Fail) => (
                    CheckStatus::Fail,
                    format!("{name} failed: {figures}; the estimate is below min {min}"),
                ),
                Some(status) => {
                    let effect = match inconclusive {
                        InconclusivePolicy::Pass => "passes",
                        InconclusivePolicy::Fail => "fails (inconclusive: fail)",
                    };
                    (
                        status,
                        format!(
                            "{name} inconclusive: {figures}; the estimate meets min {min} but \
                             {lower} does not: more labels would decide it; {effect}"
                        ),
                    )
                }
            };
            outcome.status = status;
            outcome.verdict = verdict;
            outcome
        })
        .collect()
}

#[cfg(test)]
mod floor_simulation;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::mean;

    fn estimate(estimate: f64, ci: (f64, f64), lambda: f64) -> PpiEstimate {
        PpiEstimate {
            estimate,
            ci,
            lambda,
            n_labelled: 4,
            n_total: 20,
        }
    }

    #[test]
    fn a_proportions_interval_is_clamped_to_its_range_and_says_so() {
        let calibration = Calibration {
            metric: "faithfulness".into(),
            ppi: estimate(0.75, (-0.0091, 1.5091), 1.0),
            ppi_plus_plus: estimate(0.74, (0.02, 0.9), 0.25),
            judge_mean: 0.8,
            stale: 0,
            agreement: agreement(&[(true, true), (true, false), (false, false), (true, true)])
                .unwrap(),
            binary_labels: None,
        };
        assert_eq!(
            calibration.describe(),
            "faithfulness calibrated on 4 human labels of 20 queries: PPI 0.7500 (95% CI \
             [0.0000, 1.0000] (clamped to [0, 1])), PPI++ 0.7400 ([0.0200, 0.9000], lambda \
             0.25); judge alone 0.8000; 0 stale labels not used"
        );
        assert_eq!(
            calibration.agreement_text(),
            "judge agrees with 3 of 4 labels (values >= 0.5 positive), Cohen's kappa 0.50"
        );
        let rule = Rule {
            metric: "faithfulness_ppi".parse().unwrap(),
            slice: None,
            limits: crate::config::Limits {
                min: Some(0.5),
                ..Default::default()
            },
        };
        let mut wide = calibration.clone();
        wide.ppi_plus_plus = PpiEstimate {
            n_labelled: 30,
            ..estimate(0.9, (0.7, 1.1), 0.5)
        };
        let outcome = &checks(&[rule], &[wide], InconclusivePolicy::Pass, FLOOR_LEVEL)[0];
        assert_eq!(outcome.status, CheckStatus::Pass);
        assert!(
            outcome
                .verdict
                .contains("(95% CI [0.7000, 1.0000] (clamped to [0, 1]))"),
            "{}",
            outcome.verdict
        );
        assert_eq!(outcome.ci, Some((0.7, 1.1)), "the numbers stay as computed");
    }

    fn floor_rule(min: f64) -> Rule {
        Rule {
            metric: "faithfulness_ppi".parse().unwrap(),
            slice: None,
            limits: crate::config::Limits {
                min: Some(min),
                ..Default::default()
            },
        }
    }

    /// The calibration of `labels` (judge and human values) among `n_total` queries whose
    /// judge's mean is `judge_mean` (the unlabelled ones at 1 or 0).
    fn calibration_of(labels: &[(f64, f64)], n_total: usize, judge_mean: f64) -> Calibration {
        let (f_lab, y_lab): (Vec<f64>, Vec<f64>) = labels.iter().copied().unzip();
        let zeros = (n_total as f64 * (1.0 - judge_mean)).round() as usize;
        let mut f_all = f_lab.clone();
        f_all.extend((f_all.len()..n_total).map(|i| f64::from(u8::from(i < n_total - zeros))));
        let verdicts: Vec<(bool, bool)> =
            labels.iter().map(|&(f, y)| (f >= 0.5, y >= 0.5)).collect();
        Calibration {
            metric: "faithfulness".into(),
            ppi: ppi::ppi_mean(&f_all, &f_lab, &y_lab).unwrap(),
            ppi_plus_plus: ppi::ppi_plus_plus(&f_all, &f_lab, &y_lab).unwrap(),
            judge_mean: mean(&f_all),
            stale: 0,
            agreement: agreement(&verdicts).unwrap(),
            binary_labels: BinaryLabels::of(&y_lab),
        }
    }

    #[test]
    fn ten_labels_that_are_all_one_do_not_pass_a_floor_at_0_95() {
        // The review's case: the interval was [1.0000, 1.0000] and the floor passed.
        for judge_mean in [1.0, 0.9] {
            let calibration = calibration_of(&[(1.0, 1.0); 10], 200, judge_mean);
            let estimate = calibration.ppi_plus_plus;
            // The judge's lower mean on the tier pulls the estimate down (0.9643 at 0.9).
            assert!(estimate.estimate > 0.95, "{estimate:?}");
            assert!(estimate.ci.0 < 0.8, "{estimate:?}");
            let outcome = &checks(
                &[floor_rule(0.95)],
                &[calibration],
                InconclusivePolicy::Pass,
                FLOOR_LEVEL,
            )[0];
            assert_eq!(
                outcome.status,
                CheckStatus::Inconclusive,
                "{}",
                outcome.verdict
            );
            assert!(
                !outcome.verdict.contains("[1.0000, 1.0000]"),
                "{}",
                outcome.verdict
            );
        }
    }

    #[test]
    fn a_floor_with_too_few_labels_says_how_many_more_it_needs() {
        let calibration =
            calibration_of(&[(1.0, 1.0), (1.0, 0.0), (0.0, 0.0), (1.0, 1.0)], 50, 0.8);
        let outcome = &checks(
            &[floor_rule(0.5)],
            &[calibration],
            InconclusivePolicy::Pass,
            FLOOR_LEVEL,
        )[0];
        assert_eq!(outcome.status, CheckStatus::Skipped);
        assert!(
            outcome.verdict.ends_with(
                "from 4 labels of 50 queries; a floor needs at least 10 current labels, this tier \
                 has 4: label 6 more"
            ),
            "{}",
            outcome.verdict
        );
    }

    #[test]
    fn the_judges_note_names_each_judge_and_says_when_nothing_measured_it() {
        let spec = |metric: &str, judge: &str| MetricSpec {
            judge: judge.to_string(),
            ..MetricSpec::new(metric.parse().unwrap())
        };
        let judges: BTreeMap<String, String> = [
            ("default".to_string(), "lexical-2 x".to_string()),
            ("llm".to_string(), "openai m".to_string()),
        ]
        .into();
        let specs = [
            spec("recall@5", "default"),
            spec("faithfulness", "llm"),
            spec("answer_relevance", "default"),
        ];
        assert_eq!(
            judges_note(&specs, &judges, &[]).unwrap(),
            "judged metrics: answer_relevance by `default` (lexical-2 x); faithfulness by `llm` \
             (openai m); not measured against human labels here (a tier's `labels:` file \
             measures it on every run; `ragate judge-eval` on labelled items)"
        );
        assert_eq!(judges_note(&specs[..1], &judges, &[]), None);
    }
}
