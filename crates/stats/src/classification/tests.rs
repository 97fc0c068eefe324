//! Tests of the classification scores against scikit-learn 1.9.1 and statsmodels (expected
//! values computed there and written here; the tools are not part of the repository).

use super::*;

const LABELS: [u8; 20] = [1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0];
const PREDICTED: [u8; 20] = [1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1];
const SCORES: [f64; 20] = [
    0.9, 0.8, 0.8, 0.7, 0.6, 0.55, 0.3, 0.2, 0.8, 0.5, 0.3, 0.3, 0.2, 0.1, 0.1, 0.05, 0.0, 0.4,
    0.45, 0.45,
];

fn reference_set() -> Vec<Prediction> {
    (0..20)
        .map(|i| Prediction {
            label: LABELS[i] == 1,
            predicted: PREDICTED[i] == 1,
            score: Some(SCORES[i]),
        })
        .collect()
}

fn close(actual: f64, expected: f64, what: &str) {
    assert!(
        (actual - expected).abs() < 1e-12,
        "{what}: {actual} != {expected}"
    );
}

#[test]
fn point_values_equal_scikit_learns() {
    let scores = scores(&reference_set(), 7, "reference");
    assert_eq!(
        scores.confusion,
        Confusion {
            true_positive: 7,
            false_negative: 2,
            false_positive: 3,
            true_negative: 8,
        }
    );
    // roc_auc_score, balanced_accuracy_score, f1_score, precision_score
    close(scores.auc.unwrap().value, 0.8181818181818181, "auc");
    close(
        scores.balanced_accuracy.unwrap().value,
        0.7525252525252526,
        "balanced accuracy",
    );
    close(scores.f1.unwrap().value, 0.7368421052631579, "f1");
    close(scores.precision.unwrap().value, 0.7, "precision");
    // the maximum of (tpr + 1 - fpr) / 2 over roc_curve's thresholds, reached only at 0.55
    let best = scores.best_threshold.unwrap();
    close(best.at, 0.55, "best threshold");
    close(
        best.balanced_accuracy,
        0.7878787878787878,
        "best balanced accuracy",
    );
}

#[test]
fn wilson_intervals_equal_statsmodels() {
    // proportion_confint(k, n, alpha=0.05, method='wilson')
    let cases = [
        (7, 9, 0.45258896910698887, 0.9367748928821533),
        (8, 11, 0.4343546988238708, 0.9025394070997511),
        (7, 10, 0.39677814746114537, 0.8922087325936989),
        (15, 20, 0.5312991223812559, 0.8881382985923344),
        (0, 5, 0.0, 0.43448246478317487),
        (5, 5, 0.5655175352168252, 1.0),
    ];
    for (k, n, low, high) in cases {
        let estimate = wilson(k, n).unwrap();
        close(estimate.low, low, &format!("{k}/{n} low"));
        close(estimate.high, high, &format!("{k}/{n} high"));
    }
    assert_eq!(wilson(0, 0), None);
    let scores = scores(&reference_set(), 7, "reference");
    close(scores.tpr.unwrap().low, 0.45258896910698887, "tpr low");
    close(scores.tnr.unwrap().high, 0.9025394070997511, "tnr high");
    close(
        scores.accuracy.unwrap().low,
        0.5312991223812559,
        "accuracy low",
    );
}

#[test]
fn auc_counts_ties_as_halves() {
    let auc_of = |pos: &[f64], neg: &[f64]| auc(&mut pos.to_vec(), &mut neg.to_vec());
    assert_eq!(auc_of(&[0.9, 0.8], &[0.1, 0.2]), Some(1.0));
    assert_eq!(auc_of(&[0.1, 0.2], &[0.9, 0.8]), Some(0.0));
    assert_eq!(auc_of(&[0.5, 0.5], &[0.5]), Some(0.5));
    // 0.5 beats 0.2, ties 0.5, loses to 0.7: (1 + 0.5 + 0) / 3
    assert_eq!(auc_of(&[0.5], &[0.2, 0.5, 0.7]), Some(0.5));
    assert_eq!(auc_of(&[], &[0.5]), None);
}

#[test]
fn bootstrap_intervals_are_seeded_and_hold_the_estimate() {
    let set = reference_set();
    let first = scores(&set, 7, "reference");
    assert_eq!(
        first,
        scores(&set, 7, "reference"),
        "same seed, same intervals"
    );
    assert_ne!(
        first.balanced_accuracy,
        scores(&set, 8, "reference").balanced_accuracy,
        "another seed draws other resamples"
    );
    for estimate in [first.balanced_accuracy, first.f1, first.auc] {
        let e = estimate.unwrap();
        assert!(
            e.low <= e.value && e.value <= e.high && e.low < e.high,
            "{e:?}"
        );
    }
}

#[test]
fn one_class_has_rates_of_that_class_only() {
    let positives: Vec<Prediction> = reference_set().into_iter().filter(|p| p.label).collect();
    let scores = scores(&positives, 7, "positives");
    assert_eq!(scores.tpr.unwrap().value, 7.0 / 9.0);
    assert_eq!(
        (
            scores.tnr,
            scores.balanced_accuracy,
            scores.auc,
            scores.best_threshold
        ),
        (None, None, None, None)
    );
    assert_eq!(scores.accuracy.unwrap().value, 7.0 / 9.0);
}

#[test]
fn a_missing_score_leaves_auc_and_threshold_out() {
    let mut set = reference_set();
    set[3].score = None;
    let scores = scores(&set, 7, "reference");
    assert_eq!((scores.auc, scores.best_threshold), (None, None));
    assert!(scores.balanced_accuracy.is_some());
}
