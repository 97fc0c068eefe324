//! Floors (`min`, `max`) decided on every current query of the slice: new queries, new slice
//! values, ceilings of lower-is-better metrics, and too few current queries.

use super::*;
use crate::metrics::metric::AnswerMetric;

fn floor(min: f64, max_drop: Option<f64>) -> Limits {
    Limits {
        min: Some(min),
        max_drop,
        ..Limits::default()
    }
}

#[test]
fn a_floor_counts_the_new_queries_not_only_the_paired_ones() {
    // 40 paired queries at 1.0 in both runs, 20 new ones scoring 0: the current mean is 0.667.
    let baseline = vec![1.0; 40];
    let mut current = vec![1.0; 40];
    current.extend([0.0; 20]);
    for (decision, rules) in [
        (Decision::Significant, vec![rule(floor(0.9, None), None)]),
        (Decision::Point, vec![rule(floor(0.9, Some(0.05)), None)]),
    ] {
        let outcomes = run(&baseline, &current, &settings(decision, 5, rules));
        let all = outcomes.iter().find(|o| o.slice == "all").unwrap();
        assert_eq!(all.status, CheckStatus::Fail, "{}", all.verdict);
        assert!(
            all.verdict
                .contains("0.6667 is below min 0.9 (the current mean over 60 queries)"),
            "{}",
            all.verdict
        );
        assert_eq!(all.n, 40, "the change is still paired");
        assert_eq!(
            all.floor,
            Some(Floor {
                bound: 0.9,
                mean: 40.0 / 60.0,
                n: 60
            })
        );
    }
    // The same floor holds when the new queries score well.
    let current = vec![1.0; 60];
    let outcomes = run(
        &baseline,
        &current,
        &significant(vec![rule(floor(0.9, None), None)]),
    );
    assert!(outcomes.iter().all(|o| o.status == CheckStatus::Pass));
}

/// `results(values)` with the queries from `new_from` on moved to the new slice value `part=c`.
fn with_new_slice(values: &[f64], new_from: usize) -> Results {
    let mut results = results(values);
    for (i, record) in results.queries.values_mut().enumerate() {
        if i >= new_from {
            record.slices.insert("part".into(), "c".into());
        }
    }
    results
}

#[test]
fn a_new_slice_value_gets_its_floor_without_a_baseline() {
    let baseline = results(&[1.0; 30]);
    let mut values = vec![1.0; 30];
    values.extend([0.0; 6]);
    let current = with_new_slice(&values, 30);
    let part_c = SliceValue {
        field: "part".into(),
        value: "c".into(),
    };
    let decide_with = |limits: Limits, current: &Results| {
        let settings = significant(vec![rule(limits, None)]);
        let values: BTreeSet<SliceValue> = ["a", "b", "c"]
            .iter()
            .map(|v| SliceValue {
                field: "part".into(),
                value: (*v).into(),
            })
            .collect();
        let checks = checks::expand(
            &settings.rules,
            &values,
            &[RetrievalMetric::Mrr(None).into()],
        );
        let outcomes = decide(&checks, &baseline, current, &settings, "t");
        outcomes
            .into_iter()
            .find(|o| o.slice == part_c.to_string())
            .unwrap()
    };
    // A floor-only rule: 6 new queries scoring 0 fail `min: 0.9` (before: "skipped: 0 paired").
    let c = decide_with(floor(0.9, None), &current);
    assert_eq!(c.status, CheckStatus::Fail, "{}", c.verdict);
    assert!(
        c.verdict
            .contains("0.0000 is below min 0.9 (the current mean over 6 queries)"),
        "{}",
        c.verdict
    );
    assert_eq!((c.n, c.current_mean), (0, 0.0));
    assert!(c.baseline_mean.is_nan());
    // With a drop limit too, a broken floor still fails; a floor that holds leaves the change
    // skipped (it cannot be paired), never "pass".
    let c = decide_with(floor(0.9, Some(0.05)), &current);
    assert_eq!(c.status, CheckStatus::Fail, "{}", c.verdict);
    let good = with_new_slice(&[1.0; 36], 30);
    let c = decide_with(floor(0.9, Some(0.05)), &good);
    assert_eq!(c.status, CheckStatus::Skipped, "{}", c.verdict);
    assert!(c.verdict.contains("the floor holds"), "{}", c.verdict);
    let c = decide_with(floor(0.9, None), &good);
    assert_eq!(c.status, CheckStatus::Pass, "{}", c.verdict);
    // Fewer current queries than min_queries (5): the floor is not decided either.
    let few = with_new_slice(&[1.0, 1.0, 1.0, 0.0, 0.0, 0.0], 3);
    let c = decide_with(floor(0.9, None), &few);
    assert_eq!(c.status, CheckStatus::Skipped, "{}", c.verdict);
    assert!(
        c.verdict.contains("its floor is not decided either"),
        "{}",
        c.verdict
    );
}

#[test]
fn a_ceiling_of_a_lower_is_better_metric_counts_the_new_queries() {
    let mut baseline = results(&[0.0; 20]);
    let mut current = results(&[0.0; 30]);
    for (results, empty_from) in [(&mut baseline, 20), (&mut current, 20)] {
        results.metrics = vec!["empty_answers".into()];
        for (i, record) in results.queries.values_mut().enumerate() {
            let value = f64::from(u8::from(i >= empty_from));
            record.metrics = [("empty_answers".to_string(), value)].into_iter().collect();
        }
    }
    let ceiling = Rule {
        metric: Metric::Answer(AnswerMetric::Empty),
        slice: None,
        limits: Limits {
            max: Some(0.2),
            ..Limits::default()
        },
    };
    let settings = significant(vec![ceiling]);
    let checks = checks::expand(
        &settings.rules,
        &BTreeSet::new(),
        &[Metric::Answer(AnswerMetric::Empty)],
    );
    let outcome = &decide(&checks, &baseline, &current, &settings, "t")[0];
    assert_eq!(outcome.status, CheckStatus::Fail, "{}", outcome.verdict);
    assert!(
        outcome
            .verdict
            .contains("0.3333 is above max 0.2 (the current mean over 30 queries)"),
        "{}",
        outcome.verdict
    );
}
