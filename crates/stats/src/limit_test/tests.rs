//! Tests of the limit test: exact values, bounds that invert the test, and seeded level and
//! coverage checks on skewed and sparse populations modelled on real per-query deltas.
use super::*;
use crate::rng_for;
use rand::Rng;

fn uniform(rng: &mut impl Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn exponential(rng: &mut impl Rng) -> f64 {
    -(1.0 - uniform(rng)).ln()
}

#[test]
fn exact_test_is_the_sign_flip_share_of_the_shifted_values() {
    // w - L = [0.9, 0.9, -0.1] with L = 0.1: sign vectors whose signed sum is at least the
    // observed 1.7: (+,+,+) 1.7 and (+,+,-) 1.9, so p = 2/8.
    let result = test(&[1.0, 1.0, 0.0], 0.1, None);
    assert_eq!(result.method, Method::ExactSignFlip);
    assert_eq!(result.p_value, 0.25);
    assert_eq!(result.smallest_p, 0.125);
    // With L = 0 the unchanged query is a zero: only 2 non-zero values, p >= 1/4.
    let at_zero = test(&[1.0, 1.0, 0.0], 0.0, None);
    assert_eq!(at_zero.smallest_p, 0.25);
    assert_eq!(at_zero.p_value, 0.25);
}

#[test]
fn seven_total_losses_cannot_reach_a_holm_threshold_of_21_checks() {
    let result = test(&[1.0; 7], 0.03, None);
    assert_eq!(result.p_value, 1.0 / 128.0);
    assert!(result.smallest_p > 0.05 / 21.0);
}

#[test]
fn the_analytic_test_matches_a_t_test_on_symmetric_data() {
    // Symmetric values (skewness 0): T is the plain t statistic plus nothing.
    let values: Vec<f64> = (0..40)
        .map(|i| if i % 2 == 0 { 0.3 } else { -0.1 })
        .collect();
    let result = test(&values, 0.0, None);
    assert_eq!(result.method, Method::SkewCorrectedT);
    // mean 0.1, sd = 0.2 * sqrt(40 / 39); t = 0.1 / (sd / sqrt(40)) = 3.1225; t(39) upper tail.
    let sd = 0.2 * (40.0f64 / 39.0).sqrt();
    let t = 0.1 / (sd / 40.0f64.sqrt());
    let expected = StudentsT::new(0.0, 1.0, 39.0).unwrap().sf(t);
    assert!(
        (result.p_value - expected).abs() < 1e-12,
        "{result:?} {expected}"
    );
    // scipy.stats.t.sf(3.122498999199199, 39)
    assert!(
        (expected - 0.001_686_525_290_093_039).abs() < 1e-12,
        "{expected}"
    );
}

#[test]
fn the_bound_inverts_the_test() {
    let mut rng = rng_for(3, "bound");
    for n in [8, 15, 40, 200] {
        let values: Vec<f64> = (0..n).map(|_| exponential(&mut rng) - 0.7).collect();
        for level in [0.05, 0.0025] {
            let Some(bound) = lower_bound(&values, level, None, 0.0) else {
                assert!(test(&values, -10.0, None).p_value > level, "n = {n}");
                continue;
            };
            let just_below = test(&values, bound - 1e-6, None).p_value;
            let just_above = test(&values, bound + 1e-6, None).p_value;
            assert!(
                just_below <= level,
                "n = {n}, level {level}: p {just_below}"
            );
            assert!(just_above > level, "n = {n}, level {level}: p {just_above}");
        }
    }
}

/// 300 queries of which `changed` lost 0.5 and the rest did not change.
fn sparse(changed: usize) -> Vec<f64> {
    (0..300)
        .map(|i| if i < changed { 0.5 } else { 0.0 })
        .collect()
}

#[test]
fn few_changed_queries_of_a_bounded_metric_add_the_betting_test() {
    let values = sparse(20);
    let analytic = test(&values, 0.01, None);
    assert_eq!(analytic.method, Method::SkewCorrectedT);
    let checked = test(&values, 0.01, Some(1.0));
    assert_eq!(checked.method, Method::SkewCorrectedTAndBetting);
    let betting = Tallied::new(&values).p_value(0.01, 1.0);
    assert_eq!(checked.p_value, analytic.p_value.max(betting));
    assert!(betting > analytic.p_value, "{betting} vs {analytic:?}");
    assert!(checked.smallest_p > 0.0 && checked.smallest_p < 1e-12);
    // 29 changed queries (and the unchanged value) are enough for the analytic test alone.
    assert_eq!(
        test(&sparse(28), 0.01, Some(1.0)).method,
        Method::SkewCorrectedTAndBetting
    );
    assert_eq!(
        test(&sparse(29), 0.01, Some(1.0)).method,
        Method::SkewCorrectedT
    );
    let distinct: Vec<f64> = (0..30).map(|i| f64::from(i) / 100.0).collect();
    assert_eq!(
        test(&distinct, 0.01, Some(1.0)).method,
        Method::SkewCorrectedT
    );
}

#[test]
fn the_betting_check_holds_the_level_where_rare_large_gains_fool_the_analytic_test() {
    // 2% of queries better by 0.5, 8% worse by 0.125, the rest unchanged (mean 0), n = 100:
    // a sample with no gain looks like a clear regression. The analytic test alone rejects
    // more than 8% at 0.0125, the checked test less than the level.
    let mut rng = rng_for(5, "rare gains");
    let trials = 4_000;
    let (mut analytic, mut checked) = (0, 0);
    for _ in 0..trials {
        let values: Vec<f64> = (0..100)
            .map(|_| match uniform(&mut rng) {
                u if u < 0.02 => -0.5,
                u if u < 0.10 => 0.125,
                _ => 0.0,
            })
            .collect();
        analytic += usize::from(test(&values, 0.0, None).p_value <= 0.0125);
        checked += usize::from(test(&values, 0.0, Some(1.0)).p_value <= 0.0125);
    }
    assert!(
        analytic as f64 > 0.08 * trials as f64,
        "analytic: {analytic}"
    );
    assert!(
        checked as f64 <= 0.0125 * trials as f64,
        "checked: {checked}"
    );
}

#[test]
fn a_uniform_shift_is_decided_by_the_analytic_test_alone() {
    // Every query changed by the same amount: not "few queries changed". Before, the values off
    // the most common one were counted (none here), and the betting test capped the evidence.
    let thirty = test(&[0.3; 30], 0.02, Some(1.0));
    assert_eq!(thirty.method, Method::SkewCorrectedT);
    assert_eq!(thirty.p_value, 0.0, "before: 0.0045");
    // 40 queries each losing 10x the limit fail even at Holm's level of 300 slices.
    let forty = test(&[0.2; 40], 0.02, Some(1.0));
    assert_eq!(forty.method, Method::SkewCorrectedT);
    assert!(forty.p_value < 0.05 / 300.0, "before: 0.0090: {forty:?}");
    let bound = lower_bound(&[0.2; 40], 0.05 / 300.0, Some(1.0), 0.0).unwrap();
    assert!((bound - 0.2).abs() < 1e-12, "{bound}");
    // A shift at the limit is tolerated.
    assert_eq!(test(&[0.02; 40], 0.02, Some(1.0)).p_value, 1.0);
}

#[test]
fn counting_changed_queries_keeps_the_false_alarm_rate_where_most_queries_are_unchanged() {
    // A worsening at the limit (tolerated), seeded, 4,000 samples of 100 queries; 20% of the
    // queries move by +-0.3 around a common value. When the common value is 0 (most queries
    // unchanged, the usual shape of a ranking metric's deltas) the changed queries are the
    // ones off the most common value, so the check applies exactly as before (to 98% of the
    // samples): the rate stays below the level. When every query shifted (the common value is the limit), the betting
    // check no longer applies and the analytic test alone rejects 1.36x the level here
    // (before: 0): asserted at <= 1.5x so it cannot grow unnoticed.
    let mut rng = rng_for(13, "false alarms");
    let trials = 4_000;
    let level = 0.0125;
    for (label, common, limit, allowed) in [
        ("mostly unchanged", 0.0, 0.0, 1.0),
        ("uniform shift", 0.02, 0.02, 1.5),
    ] {
        let mut rejected = 0;
        let mut checked = 0;
        for _ in 0..trials {
            let values: Vec<f64> = (0..100)
                .map(|_| match uniform(&mut rng) {
                    u if u < 0.1 => common + 0.3,
                    u if u < 0.2 => common - 0.3,
                    _ => common,
                })
                .collect();
            let result = test(&values, limit, Some(1.0));
            checked += usize::from(result.method == Method::SkewCorrectedTAndBetting);
            rejected += usize::from(result.p_value <= level);
        }
        let rate = rejected as f64 / trials as f64;
        println!("{label}: {rate:.4} at {level} ({checked} of {trials} checked by betting)");
        assert!(rate <= allowed * level, "{label}: {rate}");
    }
}

#[test]
fn the_bound_inverts_the_checked_test() {
    for changed in [5, 12, 29] {
        let values = sparse(changed);
        for level in [0.05, 0.0025] {
            let bound = lower_bound(&values, level, Some(1.0), 0.0).expect("a bound");
            let just_below = test(&values, bound - 1e-6, Some(1.0)).p_value;
            let just_above = test(&values, bound + 1e-6, Some(1.0)).p_value;
            assert!(just_below <= level, "{changed}, {level}: p {just_below}");
            assert!(just_above > level, "{changed}, {level}: p {just_above}");
            let analytic = lower_bound(&values, level, None, 0.0).unwrap();
            assert!(bound <= analytic, "{changed}: {bound} > {analytic}");
        }
    }
}

#[test]
fn an_unreachable_level_has_no_bound() {
    assert_eq!(lower_bound(&[1.0; 5], 0.01, None, 0.0), None, "2^-5 > 0.01");
    assert!(lower_bound(&[1.0; 5], 0.05, None, 0.0).is_some());
    assert_eq!(lower_bound(&[], 0.05, None, 0.0), None);
    assert_eq!(lower_bound(&[f64::NAN; 40], 0.05, None, 0.0), None);
}

#[test]
fn constant_values_decide_without_spread() {
    let losses = vec![0.3; 570];
    assert_eq!(test(&losses, 0.05, None).p_value, 0.0);
    assert_eq!(test(&losses, 0.3, None).p_value, 1.0);
    assert!((lower_bound(&losses, 0.001, None, 0.0).unwrap() - 0.3).abs() < 1e-12);
}

/// Rejection rate of the upper-tail test at the null (true mean = limit) on skewed data.
fn rejection_rate(skew_sign: f64, corrected: bool, level: f64) -> f64 {
    let mut rng = rng_for(7, if skew_sign > 0.0 { "right" } else { "left" });
    let trials = 20_000;
    let n = 100;
    let mut rejected = 0;
    for _ in 0..trials {
        // Exponential(1) has mean 1 and skewness 2; centred on 0.
        let values: Vec<f64> = (0..n)
            .map(|_| skew_sign * (exponential(&mut rng) - 1.0))
            .collect();
        let p = if corrected {
            test(&values, 0.0, None).p_value
        } else {
            let t = mean(&values) / (sample_sd(&values) / (n as f64).sqrt());
            StudentsT::new(0.0, 1.0, n as f64 - 1.0).unwrap().sf(t)
        };
        rejected += usize::from(p <= level);
    }
    rejected as f64 / trials as f64
}

#[test]
fn the_skewness_correction_holds_the_level_where_the_t_test_does_not() {
    // Left-skewed worsening (rare large improvements), n = 100, skewness -2: the plain t
    // test's upper tail rejects about 7.3% at 5% (numpy/scipy, 40,000 trials); the corrected
    // test about 5.3%.
    let plain = rejection_rate(-1.0, false, 0.05);
    let corrected = rejection_rate(-1.0, true, 0.05);
    assert!(plain > 0.065, "plain t: {plain}");
    assert!(corrected < 0.058, "corrected: {corrected}");
    // Right-skewed worsening: the plain test is conservative (3.1%), and the corrected one
    // (4.7%) is not used where it is the smaller p-value (issue 23: its noisy skewness
    // over-rejects symmetric sparse deltas), so the rate is the plain test's.
    let right = rejection_rate(1.0, true, 0.05);
    let right_plain = rejection_rate(1.0, false, 0.05);
    assert_eq!(right, right_plain, "corrected, right skew");
    assert!((0.025..0.05).contains(&right), "right skew: {right}");
}

/// Per-query worsening of an A/A pair of a ranking metric, modelled on NFCorpus recall@5:
/// 85% of the queries unchanged, the rest moved either way by a relevant document or two
/// out of k, k spread log-uniformly over 1-100 (most steps small, a few of 0.5 or 1).
fn sparse_symmetric(rng: &mut impl Rng) -> f64 {
    let u = uniform(rng);
    if u >= 0.15 {
        return 0.0;
    }
    let relevant = 100f64.powf(uniform(rng)).ceil();
    let documents = if uniform(rng) < 0.25 { 2.0 } else { 1.0 };
    let step = (documents / relevant).min(1.0);
    if u < 0.075 { step } else { -step }
}

#[test]
fn the_level_holds_on_sparse_symmetric_deltas_where_the_correction_alone_does_not() {
    // Issue 23, item 1: on A/A pairs of 300 queries the corrected statistic alone rejected
    // 2.3-2.6x the level (its sample skewness is noisy and moves with the mean). The larger of
    // the plain and the corrected p-value holds the level (measured here: 0.79x at 0.01 and
    // 0.36x at 0.0025; the corrected p alone 2.15x and 3.00x).
    let mut rng = rng_for(23, "sparse symmetric");
    let trials = 10_000;
    let levels = [0.01, 0.0025];
    let (mut rejected, mut corrected_alone) = ([0usize; 2], [0usize; 2]);
    for _ in 0..trials {
        let values: Vec<f64> = (0..300).map(|_| sparse_symmetric(&mut rng)).collect();
        let result = test(&values, 0.0, Some(1.0));
        let moments = SkewCorrected::new(&values);
        let u = moments.mean / moments.sd;
        let corrected = moments.reference().sf(300f64.sqrt() * moments.transform(u));
        for (l, level) in levels.iter().enumerate() {
            rejected[l] += usize::from(result.p_value <= *level);
            corrected_alone[l] += usize::from(corrected <= *level);
        }
    }
    for (l, level) in levels.iter().enumerate() {
        let rate = rejected[l] as f64 / trials as f64 / level;
        let alone = corrected_alone[l] as f64 / trials as f64 / level;
        println!("sparse symmetric, level {level}: {rate:.2}x (corrected alone {alone:.2}x)");
        assert!(rate <= 1.5, "level {level}: {rate}x");
        assert!(alone > 1.5, "the population shows the fault: {alone}x");
    }
}

/// A zero-mean null with rare large gains (issue 23, item 2): 5% of the queries better by
/// 0.2-1.0 (a baseline that had them broken), 60% worse by a little, the rest unchanged.
fn rare_gains_population() -> Vec<f64> {
    let mut values: Vec<f64> = (0..1000)
        .map(|i| match i {
            0..50 => -(0.2 + 0.8 * f64::from(i) / 49.0),
            50..650 => 1.0,
            _ => 0.0,
        })
        .collect();
    let gains: f64 = values[..50].iter().sum::<f64>();
    for value in &mut values[50..650] {
        *value *= -gains / 600.0;
    }
    values
}

#[test]
fn below_30_pairs_the_betting_check_holds_the_level_where_rare_large_gains_fool_sign_flips() {
    // A sample of 20 holds no gain 36% of the time (0.95^20) and then looks like a uniform
    // small loss: the sign-flip test alone rejects it at 2^-12 or so. The betting check keeps
    // the level for every distribution on the range.
    let population = rare_gains_population();
    assert!(mean(&population).abs() < 1e-12);
    let mut rng = rng_for(23, "rare gains");
    let trials = 4_000;
    let (mut checked, mut sign_flip) = (0, 0);
    for _ in 0..trials {
        let values: Vec<f64> = (0..20)
            .map(|_| population[(uniform(&mut rng) * 1000.0) as usize])
            .collect();
        let result = test(&values, 0.0, Some(1.0));
        assert_eq!(result.method, Method::ExactSignFlipAndBetting);
        checked += usize::from(result.p_value <= 0.05);
        sign_flip += usize::from(test(&values, 0.0, None).p_value <= 0.05);
    }
    println!(
        "rare gains, n = 20, at 0.05: checked {checked}, sign-flip alone {sign_flip} of {trials}"
    );
    assert!(checked as f64 <= 0.05 * trials as f64, "{checked}");
    assert!(sign_flip as f64 > 0.25 * trials as f64, "{sign_flip}");
}

#[test]
fn below_30_pairs_the_bound_covers_skewed_deltas() {
    // The one-sided 95% bound (the inversion of the checked test) on the rare-gains null:
    // the exact sign-flip bound alone covered 66-84% there (issue 23).
    let population = rare_gains_population();
    for n in [8, 15] {
        let mut rng = rng_for(23, &format!("coverage {n}"));
        let trials = 1_000;
        let covered = (0..trials)
            .filter(|_| {
                let values: Vec<f64> = (0..n)
                    .map(|_| population[(uniform(&mut rng) * 1000.0) as usize])
                    .collect();
                lower_bound(&values, 0.05, Some(1.0), 0.0).is_none_or(|b| b <= 1e-12)
            })
            .count();
        assert!(covered as f64 >= 0.95 * trials as f64, "n = {n}: {covered}");
    }
}

#[test]
fn a_bounded_sample_below_30_pairs_takes_the_larger_p_value() {
    // 20 queries each worse by 0.01: the sign-flip p is 2^-20, but a population with 5% of
    // gains could give this sample a third of the time, and the betting test says so.
    let values = [0.01; 20];
    let exact = test(&values, 0.0, None);
    assert_eq!(exact.p_value, 0.5f64.powi(20));
    let checked = test(&values, 0.0, Some(1.0));
    assert_eq!(checked.method, Method::ExactSignFlipAndBetting);
    assert_eq!(checked.p_value, Tallied::new(&values).p_value(0.0, 1.0));
    assert!(checked.p_value > 0.5, "{checked:?}");
    assert_eq!(checked.smallest_p, betting::smallest_p(20, 0.0, 1.0));
    // Twenty total losses still fail at Holm's level of 20 checks.
    assert!(test(&[1.0; 20], 0.0, Some(1.0)).p_value < 0.05 / 20.0);
    let bound = lower_bound(&values, 0.05, Some(1.0), 0.0).unwrap();
    let just_above = test(&values, bound + 1e-6, Some(1.0)).p_value;
    assert!(test(&values, bound - 1e-6, Some(1.0)).p_value <= 0.05 && just_above > 0.05);
}
