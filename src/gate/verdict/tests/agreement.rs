//! The numbers a verdict shows agree with it, on many random families (seeded): a tested check is
//! rejected exactly when its adjusted p is at most the family's alpha, exactly when its raw p is at
//! most its bound level, and exactly when the bound shown is past the limit; it fails exactly when
//! it is rejected and beyond the limit on the point estimate; the verdict's relation says the same.

use super::*;
use crate::stats::rng_for;
use rand::Rng;

/// A standard normal draw (Box-Muller).
pub(super) fn normal(rng: &mut impl Rng) -> f64 {
    let u = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let v = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// Results over `n` queries with one value per metric each (`values[metric][query]`); every
/// third query is in slice `part=b`, the rest in `part=a`.
pub(super) fn results_of(metrics: &[Metric], values: &[Vec<f64>]) -> Results {
    let n = values[0].len();
    let mut results = super::results(&vec![0.0; n]);
    results.metrics = metrics.iter().map(ToString::to_string).collect();
    for (i, record) in results.queries.values_mut().enumerate() {
        record.metrics = metrics
            .iter()
            .zip(values)
            .map(|(m, v)| (m.to_string(), v[i]))
            .collect();
    }
    results
}

#[test]
fn the_numbers_shown_agree_with_the_verdict_on_random_families() {
    let mut rng = rng_for(23, "verdict-agreement");
    let limit = 0.02;
    let slice_values: BTreeSet<SliceValue> = ["a", "b"]
        .iter()
        .map(|v| SliceValue {
            field: "part".into(),
            value: (*v).into(),
        })
        .collect();
    let mut seen = [0usize; 2];
    for trial in 0..120 {
        let m = 1 + trial % 5;
        let metrics: Vec<Metric> = (1..=m).map(|k| RetrievalMetric::Recall(k).into()).collect();
        // 60 queries (slices of 40 and 20: the analytic and the exact test), a true worsening
        // between 0 and 3x the limit, per-query spread 0.1.
        let n = 60;
        let mut before = Vec::new();
        let mut after = Vec::new();
        for _ in 0..m {
            let mu = 0.06 * (rng.next_u64() % 1000) as f64 / 1000.0;
            before.push(vec![0.5; n]);
            after.push((0..n).map(|_| 0.5 - mu - 0.1 * normal(&mut rng)).collect());
        }
        let rules: Vec<Rule> = metrics
            .iter()
            .map(|&metric| Rule {
                metric,
                slice: None,
                limits: limited(limit),
            })
            .collect();
        let (baseline, current) = (results_of(&metrics, &before), results_of(&metrics, &after));
        for (correction, slice_correction) in [
            (Correction::Holm, SliceCorrection::Holm),
            (Correction::Holm, SliceCorrection::Bh),
            (Correction::None, SliceCorrection::None),
        ] {
            let mut s = significant(rules.clone());
            s.correction = correction;
            s.slice_correction = slice_correction;
            let checks = checks::expand(&s.rules, &slice_values, &metrics);
            let outcomes = decide(&checks, &baseline, &current, &s, "t");
            for o in outcomes.iter().filter(|o| o.adjustment.is_some()) {
                let adjustment = o.adjustment.unwrap();
                let rejected = adjustment.rejected();
                seen[usize::from(rejected)] += 1;
                let context = format!("{correction:?}/{slice_correction:?}: {}", o.verdict);
                assert_eq!(adjustment.alpha, 0.05, "{context}");
                assert_eq!(
                    rejected,
                    o.p_value.unwrap() <= o.threshold.unwrap(),
                    "{context}"
                );
                let bound = o.bound.expect("a tested check shows its bound");
                let level = 1.0 - bound.confidence;
                assert!((level - o.threshold.unwrap()).abs() < 1e-12, "{context}");
                // Higher is better: the least worsening the data support is -delta.
                assert_eq!(rejected, -bound.delta > limit, "{context}");
                let beyond = -o.delta > limit + BEYOND_TOLERANCE;
                assert_eq!(
                    o.status == CheckStatus::Fail,
                    rejected && beyond,
                    "{context}"
                );
                let relation = if rejected { " <= alpha " } else { " > alpha " };
                if matches!(o.status, CheckStatus::Fail | CheckStatus::Inconclusive) {
                    assert!(o.verdict.contains(relation), "{context}");
                }
                if adjustment.adjusts() {
                    assert!(adjustment.adjusted >= o.p_value.unwrap(), "{context}");
                }
            }
        }
    }
    // Both outcomes were exercised many times.
    assert!(seen[0] > 300 && seen[1] > 300, "{seen:?}");
}
