//! How well a binary classifier (a judge) matches labels: the confusion matrix, TPR, TNR,
//! precision, F1, balanced accuracy and ROC AUC, each with a 95% interval, and the score
//! threshold that maximises balanced accuracy.
//!
//! Conventions (`judge-eval`, docs/metrics.md): the positive class is "supported".
//! - TPR = TP / (TP + FN), TNR = TN / (TN + FP), precision = TP / (TP + FP): proportions, with
//!   Wilson score intervals (no interval, and no value, when the denominator is 0);
//! - balanced accuracy = (TPR + TNR) / 2, F1 = 2 TP / (2 TP + FP + FN), AUC = P(score of a
//!   positive > score of a negative) + P(tie) / 2 (Mann-Whitney, ties as halves): intervals by a
//!   stratified percentile bootstrap (positives and negatives resampled apart, so every resample
//!   has both classes), [`BOOTSTRAP_RESAMPLES`] resamples from [`super::rng_for`]`(seed, name)`.

use super::{rng_for, uniform_below};

/// Resamples of the percentile bootstrap.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;

/// The two-sided 95% normal quantile.
const Z_95: f64 = 1.959_963_984_540_054;

/// One labelled prediction: the label, the classifier's verdict and its score when it has one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    /// The label: positive (supported) or not.
    pub label: bool,
    /// The classifier's verdict.
    pub predicted: bool,
    /// A score that orders the items (higher = more likely positive), when the classifier has one.
    pub score: Option<f64>,
}

/// A value with its 95% interval (absent when there is no data to estimate it).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Estimate {
    /// The point estimate.
    pub value: f64,
    /// The interval's lower end.
    pub low: f64,
    /// The interval's upper end.
    pub high: f64,
}

/// Counts of the confusion matrix.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Confusion {
    /// Labelled positive, predicted positive.
    pub true_positive: usize,
    /// Labelled positive, predicted negative.
    pub false_negative: usize,
    /// Labelled negative, predicted positive.
    pub false_positive: usize,
    /// Labelled negative, predicted negative.
    pub true_negative: usize,
}

impl Confusion {
    /// The confusion matrix of `predictions`.
    pub fn of(predictions: &[Prediction]) -> Confusion {
        let mut confusion = Confusion::default();
        for p in predictions {
            match (p.label, p.predicted) {
                (true, true) => confusion.true_positive += 1,
                (true, false) => confusion.false_negative += 1,
                (false, true) => confusion.false_positive += 1,
                (false, false) => confusion.true_negative += 1,
            }
        }
        confusion
    }

    /// Labelled positives.
    pub fn positives(&self) -> usize {
        self.true_positive + self.false_negative
    }

    /// Labelled negatives.
    pub fn negatives(&self) -> usize {
        self.true_negative + self.false_positive
    }

    fn balanced_accuracy(&self) -> Option<f64> {
        let tpr = ratio(self.true_positive, self.positives())?;
        let tnr = ratio(self.true_negative, self.negatives())?;
        Some((tpr + tnr) / 2.0)
    }

    fn f1(&self) -> Option<f64> {
        let denominator = 2 * self.true_positive + self.false_positive + self.false_negative;
        ratio(2 * self.true_positive, denominator)
    }
}

/// Everything `judge-eval` reports about one classifier on one set of labels.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Scores {
    /// The labelled items.
    pub n: usize,
    /// The confusion matrix.
    pub confusion: Confusion,
    /// Mean of TPR and TNR (needs both classes).
    pub balanced_accuracy: Option<Estimate>,
    /// Share of positives predicted positive (Wilson interval).
    pub tpr: Option<Estimate>,
    /// Share of negatives predicted negative (Wilson interval).
    pub tnr: Option<Estimate>,
    /// Share of positive predictions that are labelled positive (Wilson interval).
    pub precision: Option<Estimate>,
    /// Harmonic mean of precision and TPR (needs both classes, for its interval).
    pub f1: Option<Estimate>,
    /// Share of items whose verdict matches the label (Wilson interval).
    pub accuracy: Option<Estimate>,
    /// ROC AUC of the scores (needs both classes and a score on every item).
    pub auc: Option<Estimate>,
    /// The threshold on the score that maximises balanced accuracy on these labels.
    pub best_threshold: Option<Threshold>,
}

/// A threshold on the score (`score >= at` predicts positive) and what it gives on the labels.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Threshold {
    /// The smallest score predicted positive.
    pub at: f64,
    /// Balanced accuracy on these labels at that threshold.
    pub balanced_accuracy: f64,
}

/// `part / whole`, or None for an empty whole.
fn ratio(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// The Wilson score interval (95%) of `successes` out of `n`; None when `n` is 0.
pub fn wilson(successes: usize, n: usize) -> Option<Estimate> {
    let value = ratio(successes, n)?;
    let n = n as f64;
    let z2 = Z_95 * Z_95;
    let centre = (value + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z_95 / (1.0 + z2 / n) * (value * (1.0 - value) / n + z2 / (4.0 * n * n)).sqrt();
    Some(Estimate {
        value,
        low: (centre - half).max(0.0),
        high: (centre + half).min(1.0),
    })
}

/// ROC AUC of positives' and negatives' scores (Mann-Whitney U / (n+ n-), ties as halves);
/// None when a class is empty. Sorts both inputs.
pub fn auc(positives: &mut [f64], negatives: &mut [f64]) -> Option<f64> {
    if positives.is_empty() || negatives.is_empty() {
        return None;
    }
    positives.sort_unstable_by(f64::total_cmp);
    negatives.sort_unstable_by(f64::total_cmp);
    // For each positive, the negatives below it and those tied with it (two moving cursors).
    let (mut below, mut up_to) = (0usize, 0usize);
    let mut wins = 0.0;
    for &p in positives.iter() {
        while below < negatives.len() && negatives[below] < p {
            below += 1;
        }
        up_to = up_to.max(below);
        while up_to < negatives.len() && negatives[up_to] <= p {
            up_to += 1;
        }
        wins += below as f64 + (up_to - below) as f64 / 2.0;
    }
    Some(wins / (positives.len() as f64 * negatives.len() as f64))
}

/// The threshold on `score` that maximises balanced accuracy (the lowest of equally good ones);
/// None without both classes or without a score on every item.
pub fn best_threshold(predictions: &[Prediction]) -> Option<Threshold> {
    let mut scored: Vec<(f64, bool)> = predictions
        .iter()
        .map(|p| p.score.map(|s| (s, p.label)))
        .collect::<Option<_>>()?;
    let positives = scored.iter().filter(|(_, label)| *label).count();
    let negatives = scored.len() - positives;
    if positives == 0 || negatives == 0 {
        return None;
    }
    scored.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    // Threshold at each distinct score, ascending: everything from it on is predicted positive.
    let mut best: Option<Threshold> = None;
    let (mut positives_below, mut negatives_below) = (0usize, 0usize);
    let mut i = 0;
    while i < scored.len() {
        let at = scored[i].0;
        let tpr = (positives - positives_below) as f64 / positives as f64;
        let tnr = negatives_below as f64 / negatives as f64;
        let balanced_accuracy = (tpr + tnr) / 2.0;
        if best.is_none_or(|b| balanced_accuracy > b.balanced_accuracy) {
            best = Some(Threshold {
                at,
                balanced_accuracy,
            });
        }
        while i < scored.len() && scored[i].0 == at {
            if scored[i].1 {
                positives_below += 1;
            } else {
                negatives_below += 1;
            }
            i += 1;
        }
    }
    best
}

/// Percentile interval of `values` (sorted here) around `value`.
fn percentile_interval(value: f64, values: &mut [f64]) -> Estimate {
    values.sort_unstable_by(f64::total_cmp);
    let at = |q: f64| {
        let index = (q * (values.len() - 1) as f64).round() as usize;
        values[index]
    };
    Estimate {
        value,
        low: at(0.025),
        high: at(0.975),
    }
}

/// The scores of `predictions`; `seed` and `name` pick the bootstrap's generator, so the same
/// input gives the same intervals.
pub fn scores(predictions: &[Prediction], seed: u64, name: &str) -> Scores {
    let confusion = Confusion::of(predictions);
    let correct = confusion.true_positive + confusion.true_negative;
    let positives: Vec<&Prediction> = predictions.iter().filter(|p| p.label).collect();
    let negatives: Vec<&Prediction> = predictions.iter().filter(|p| !p.label).collect();
    let all_scored = predictions.iter().all(|p| p.score.is_some());
    let score_of = |p: &&Prediction| p.score.unwrap_or(f64::NAN);
    let auc_of = |pos: &[&Prediction], neg: &[&Prediction]| {
        let mut pos: Vec<f64> = pos.iter().map(score_of).collect();
        let mut neg: Vec<f64> = neg.iter().map(score_of).collect();
        auc(&mut pos, &mut neg)
    };
    let mut balanced_accuracy = None;
    let mut f1 = None;
    let mut auc_estimate = None;
    if let (Some(ba), false, false) = (
        confusion.balanced_accuracy(),
        positives.is_empty(),
        negatives.is_empty(),
    ) {
        let mut rng = rng_for(seed, name);
        let mut ba_samples = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
        let mut f1_samples = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
        let mut auc_samples = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
        let resample = |from: &[&Prediction], rng: &mut rand_chacha::ChaCha8Rng| {
            (0..from.len())
                .map(|_| *from[uniform_below(rng, from.len() as u64) as usize])
                .collect::<Vec<Prediction>>()
        };
        for _ in 0..BOOTSTRAP_RESAMPLES {
            let pos = resample(&positives, &mut rng);
            let neg = resample(&negatives, &mut rng);
            let both: Vec<Prediction> = pos.iter().chain(&neg).copied().collect();
            let c = Confusion::of(&both);
            ba_samples.push(c.balanced_accuracy().unwrap_or(f64::NAN));
            // F1's denominator is 0 only when every positive is missed and no negative is
            // called positive: F1 is then 0.
            f1_samples.push(c.f1().unwrap_or(0.0));
            if all_scored {
                let pos: Vec<&Prediction> = pos.iter().collect();
                let neg: Vec<&Prediction> = neg.iter().collect();
                auc_samples.push(auc_of(&pos, &neg).unwrap_or(f64::NAN));
            }
        }
        balanced_accuracy = Some(percentile_interval(ba, &mut ba_samples));
        f1 = confusion
            .f1()
            .map(|value| percentile_interval(value, &mut f1_samples));
        if all_scored {
            auc_estimate =
                auc_of(&positives, &negatives).map(|v| percentile_interval(v, &mut auc_samples));
        }
    }
    Scores {
        n: predictions.len(),
        confusion,
        balanced_accuracy,
        tpr: wilson(confusion.true_positive, confusion.positives()),
        tnr: wilson(confusion.true_negative, confusion.negatives()),
        precision: wilson(
            confusion.true_positive,
            confusion.true_positive + confusion.false_positive,
        ),
        f1,
        accuracy: wilson(correct, predictions.len()),
        auc: auc_estimate,
        best_threshold: best_threshold(predictions),
    }
}

#[cfg(test)]
mod tests;
