//! The verdict's wording at its edges: a change that cancels exactly, unchanged values, and the
//! queries an inconclusive check needs (p-values that round alike: `report::format`).

use super::*;

#[test]
fn an_exactly_cancelling_change_is_not_beyond_a_zero_limit() {
    // Every query moves, but the means agree: the mean worsening is 3.7e-17 from rounding alone.
    let baseline: Vec<f64> = [0.1, 0.2, 0.9].repeat(10);
    let current: Vec<f64> = [0.2, 0.9, 0.1].repeat(10);
    let worsening: Vec<f64> = baseline.iter().zip(&current).map(|(b, c)| b - c).collect();
    let mean = stats::mean(&worsening);
    assert!(mean > 0.0 && mean < 1e-15, "{mean}");
    for decision in [Decision::Significant, Decision::Point] {
        let outcomes = run(
            &baseline,
            &current,
            &settings(decision, 5, vec![rule(limited(0.0), None)]),
        );
        let all = &outcomes[0];
        assert_eq!(all.status, CheckStatus::Pass, "{}", all.verdict);
        assert!(
            all.verdict.starts_with(
                "mrr [all] within the limit 0.0000: worsening 0.0000: 0.4000 -> 0.4000 (delta +0.0000, n = 30)"
            ),
            "{}",
            all.verdict
        );
        for outcome in &outcomes {
            assert!(!outcome.verdict.contains("-0.0000"), "{}", outcome.verdict);
        }
    }
}

#[test]
fn a_worsening_beyond_the_tolerance_is_still_beyond() {
    // 1e-6 past a limit of 0 on a [0, 1] metric is far above 1e-9 of the range: point decides it.
    let baseline = vec![0.5; 30];
    let current = vec![0.5 - 1e-6; 30];
    let all = &run(
        &baseline,
        &current,
        &settings(Decision::Point, 5, vec![rule(limited(0.0), None)]),
    )[0];
    assert_eq!(all.status, CheckStatus::Fail, "{}", all.verdict);
}

#[test]
fn an_underpowered_check_prints_its_smallest_p_apart_from_the_level() {
    // 12 queries that all lose everything: smallest p 7.514e-4 (the betting check's, which a
    // bounded metric below 30 pairs gets: half of (1 + 0.95 / 1.05)^12 plus half the grid's mean
    // capital, inverted) against alpha 0.00075; both would print 0.0008 with four decimals.
    let mut settings = settings(Decision::Significant, 5, vec![rule(DROP, None)]);
    settings.alpha = 0.00075;
    let all = &run(&[1.0; 12], &[0.0; 12], &settings)[0];
    assert_eq!(all.status, CheckStatus::Skipped, "{}", all.verdict);
    assert_eq!(
        all.verdict,
        "mrr [all]: skipped (underpowered): with 12 queries the smallest attainable p is 7.51e-4, \
         above the 7.50e-4 needed (alpha 0.00075 over this family's checks), so it could never \
         fail; detectable drop: none at this size; 1.0000 -> 0.0000 (delta -1.0000, n = 12)"
    );
}

#[test]
fn an_underpowered_check_of_unchanged_values_says_so() {
    let all = &run(
        &[0.5; 7],
        &[0.5; 7],
        &settings(Decision::Significant, 5, vec![rule(limited(0.0), None)]),
    )[0];
    assert_eq!(all.status, CheckStatus::Skipped, "{}", all.verdict);
    assert_eq!(
        all.verdict,
        "mrr [all]: skipped (underpowered): all 7 paired values are unchanged, so the test has no \
         evidence either way, so it could never fail; detectable drop: none at this size; \
         0.5000 -> 0.5000 (delta +0.0000, n = 7)"
    );
}

#[test]
fn a_change_a_hair_past_its_limit_needs_no_realistic_tier_rather_than_a_million_queries() {
    // 1,000 queries worse by 0.0204 +- 0.1 against a limit of 0.02: the estimate,
    // ((z(0.95) + z(0.8)) 0.1 / 0.0004)^2, is about 386,000 paired queries, past the bound.
    let baseline = vec![0.5; 1000];
    let current = spread_around(0.4796, 0.1, 1000);
    let all = &run(
        &baseline,
        &current,
        &significant(vec![rule(limited(0.02), None)]),
    )[0];
    assert_eq!(all.status, CheckStatus::Inconclusive, "{}", all.verdict);
    assert_eq!(all.queries_needed, Some(QueriesNeeded::Unrealistic));
    assert!(
        all.verdict.contains(
            "; no realistic tier decides a change this close to its limit (it would take over \
             100000 paired queries): "
        ),
        "{}",
        all.verdict
    );
    assert!(!all.verdict.contains("about"), "{}", all.verdict);
}

#[test]
fn the_queries_an_inconclusive_check_needs_are_counted_at_80_percent_power() {
    // 1,000 queries worse by 0.025 +- 0.1 against a limit of 0.02 (threshold 0.05):
    // n = ((z(0.95) + z(0.8)) sd / 0.005)^2 with sd = 0.1 sqrt(1000 / 999).
    let baseline = vec![0.5; 1000];
    let current = spread_around(0.475, 0.1, 1000);
    let all = &run(
        &baseline,
        &current,
        &significant(vec![rule(limited(0.02), None)]),
    )[0];
    assert_eq!(all.status, CheckStatus::Inconclusive, "{}", all.verdict);
    let sd = 0.1 * (1000.0f64 / 999.0).sqrt();
    let z = normal::quantile(0.95) + normal::quantile(0.8);
    let expected = (z * sd / 0.005).powi(2).ceil() as usize;
    assert_eq!(all.queries_needed, Some(QueriesNeeded::About(expected)));
    assert!(
        all.verdict.contains(&format!(
            "; about {expected} paired queries with this effect and spread would decide it with \
             80% power: "
        )),
        "{}",
        all.verdict
    );
}
