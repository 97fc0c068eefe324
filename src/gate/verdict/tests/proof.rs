//! `inconclusive: fail` as a non-inferiority test: a check with a limit passes only when proven
//! within it, underpowered and too-small checks fail with the queries needed, and the simulation
//! of its error rates.

use super::agreement::normal;
use super::*;
use crate::gate::decision::run_status_of as run_status;
use crate::gate::verdict::proof::Proof;
use crate::stats::rng_for;
use rand::Rng;

fn proving(rules: Vec<Rule>) -> GateSettings {
    let mut s = significant(rules);
    s.inconclusive = InconclusivePolicy::Fail;
    s
}

/// The one `all` check of `mrr` (no slice checks) on these values.
fn decide_all(baseline: &[f64], current: &[f64], s: &GateSettings) -> CheckOutcome {
    let mrr: Metric = RetrievalMetric::Mrr(None).into();
    let checks = checks::expand(&s.rules, &BTreeSet::new(), &[mrr]);
    decide(&checks, &results(baseline), &results(current), s, "t").remove(0)
}

#[test]
fn no_change_on_enough_queries_is_proven_within_the_limit() {
    let outcome = decide_all(
        &vec![0.5; 400],
        &spread_around(0.5, 0.1, 400),
        &proving(vec![rule(limited(0.02), None)]),
    );
    assert_eq!(outcome.status, CheckStatus::Pass, "{}", outcome.verdict);
    assert!(
        outcome.verdict.starts_with(
            "mrr [all] proven within the limit 0.0200 (`inconclusive: fail` requires proof): \
             worsening 0.0000, at most 0.0083 at 95.00% confidence (non-inferiority p < 0.0001 \
             <= alpha 0.0500)"
        ),
        "{}",
        outcome.verdict
    );
    assert!(outcome.proof.unwrap().proven());
    assert_eq!(
        run_status(&[outcome], InconclusivePolicy::Fail),
        RunStatus::Pass
    );
}

#[test]
fn half_the_limit_on_few_queries_is_not_proven_and_fails_the_run() {
    // Worsening 0.01 (half the limit) +- 0.1 on 100 queries: the regular test passes it, the
    // proof needs about 625 queries.
    let s = proving(vec![rule(limited(0.02), None)]);
    let outcome = decide_all(&vec![0.5; 100], &spread_around(0.49, 0.1, 100), &s);
    assert_eq!(
        outcome.status,
        CheckStatus::Inconclusive,
        "{}",
        outcome.verdict
    );
    let proof = outcome.proof.unwrap();
    assert!(!proof.proven() && proof.upper.unwrap() > 0.02, "{proof:?}");
    assert!(
        outcome.verdict.starts_with(
            "mrr [all] not proven within the limit 0.0200 (`inconclusive: fail` requires proof): \
             worsening 0.0100; the worsening is at most 0.0267 at 95.00% confidence, not below \
             the limit (non-inferiority p = 0.1611 > alpha 0.0500); about 625 paired queries with \
             this effect and spread would prove it with 80% power; fails the run"
        ),
        "{}",
        outcome.verdict
    );
    // sd = 0.1 x sqrt(100 / 99): ((1.645 + 0.842) x 0.1005 / 0.01)^2 = 625.
    assert_eq!(outcome.queries_needed, Some(QueriesNeeded::About(625)));
    assert_eq!(
        run_status(std::slice::from_ref(&outcome), InconclusivePolicy::Fail),
        RunStatus::Regression
    );
    // The same data under the default policy: a pass, no proof asked.
    let mut default = s.clone();
    default.inconclusive = InconclusivePolicy::Pass;
    let outcome = decide_all(&vec![0.5; 100], &spread_around(0.49, 0.1, 100), &default);
    assert_eq!(outcome.status, CheckStatus::Pass, "{}", outcome.verdict);
    assert!(outcome.proof.is_none());
}

#[test]
fn a_change_beyond_the_limit_is_not_proven_and_more_queries_would_not_help() {
    let outcome = decide_all(
        &vec![0.5; 40],
        &spread_around(0.47, 0.2, 40),
        &proving(vec![rule(limited(0.02), None)]),
    );
    assert_eq!(
        outcome.status,
        CheckStatus::Inconclusive,
        "{}",
        outcome.verdict
    );
    assert!(
        outcome.verdict.contains(
            "so more queries with this effect would not prove it; beyond the limit on the point \
             estimate without the evidence to fail (p = "
        ),
        "{}",
        outcome.verdict
    );
    assert_eq!(outcome.queries_needed, None);
}

#[test]
fn underpowered_and_too_small_checks_fail_in_this_mode() {
    // Four unchanged queries: the exact test cannot go below 2^-4 > alpha (nor the betting
    // check below 0.0832), so no proof is possible; min_queries 4 lets the check be tested at all.
    let mut s = proving(vec![rule(limited(0.02), None)]);
    s.min_queries = 4;
    let outcome = decide_all(&[0.5; 4], &[0.5; 4], &s);
    assert_eq!(
        outcome.status,
        CheckStatus::Inconclusive,
        "{}",
        outcome.verdict
    );
    assert!(
        outcome.verdict.contains(
            "with 4 queries the smallest attainable p is 0.0832, above alpha 0.0500, so it can \
             never be proven at this size"
        ),
        "{}",
        outcome.verdict
    );
    // Fewer pairs than min_queries: the change cannot be shown within the limit.
    let s = proving(vec![rule(limited(0.02), None)]);
    let outcome = decide_all(&[0.5; 3], &[0.5; 3], &s);
    assert_eq!(
        outcome.status,
        CheckStatus::Inconclusive,
        "{}",
        outcome.verdict
    );
    assert_eq!(
        outcome.verdict,
        "mrr [all] not proven within its limit (`inconclusive: fail` requires proof): the change \
         is skipped (underpowered): 3 paired queries, fewer than min_queries 5, so it cannot be \
         shown within the limit and fails the run"
    );
    // Five unchanged queries are not proof for a metric in [0, 1] (the betting check: a small
    // chance of a large loss is not ruled out); 300 are.
    let outcome = decide_all(&[0.5; 5], &[0.5; 5], &s);
    assert_eq!(
        outcome.status,
        CheckStatus::Inconclusive,
        "{}",
        outcome.verdict
    );
    assert!(
        outcome
            .verdict
            .contains("non-inferiority p = 0.9262 > alpha 0.0500"),
        "{}",
        outcome.verdict
    );
    let outcome = decide_all(&[0.5; 300], &[0.5; 300], &s);
    assert_eq!(outcome.status, CheckStatus::Pass, "{}", outcome.verdict);
}

#[test]
fn a_regression_with_evidence_still_fails_as_a_regression() {
    let outcome = decide_all(
        &vec![1.0; 30],
        &vec![0.0; 30],
        &proving(vec![rule(limited(0.02), None)]),
    );
    assert_eq!(outcome.status, CheckStatus::Fail, "{}", outcome.verdict);
    assert!(outcome.verdict.contains("regressed"), "{}", outcome.verdict);
}

/// The share of `trials` checks of `n` queries with per-query worsening `mu + sd x noise`
/// (`noise` draws a centred value) that the non-inferiority test proves within the limit 0.02 at
/// alpha 0.05: the checks that pass under `inconclusive: fail` (the tests above take the same
/// test through `decide`; this calls it directly, which keeps thousands of trials fast).
fn pass_rate(n: usize, mu: f64, sd: f64, trials: usize, stream: &str, noise: Noise) -> f64 {
    let mut rng = rng_for(23, stream);
    let mut passed = 0;
    for _ in 0..trials {
        let worsening: Vec<f64> = (0..n).map(|_| mu + sd * noise(&mut rng)).collect();
        passed += usize::from(Proof::of(&worsening, 0.02, 0.05, Some(1.0)).proven());
    }
    passed as f64 / trials as f64
}

/// A draw of centred noise.
type Noise = fn(&mut rand_chacha::ChaCha8Rng) -> f64;

/// Exp(1) - 1: mean 0, skewness 2.
fn skewed(rng: &mut rand_chacha::ChaCha8Rng) -> f64 {
    let u = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    -u.ln() - 1.0
}

fn mirrored(rng: &mut rand_chacha::ChaCha8Rng) -> f64 {
    -skewed(rng)
}

/// The simulation behind docs/statistics.md's "prove it" figures (`cargo test --lib
/// prove_it_simulation -- --nocapture` prints them): a true worsening exactly at the limit passes
/// at most alpha (plus binomial slack), and no change on enough queries passes.
#[test]
fn prove_it_simulation() {
    const TRIALS: usize = 2000;
    let slack = 0.05 + 2.5 * (0.05f64 * 0.95 / TRIALS as f64).sqrt();
    let cases: [(&str, usize, Noise); 5] = [
        ("normal", 15, normal),
        ("normal", 100, normal),
        ("normal", 400, normal),
        ("skewed losses", 100, skewed),
        ("skewed gains", 100, mirrored),
    ];
    for (shape, n, noise) in cases {
        let rate = pass_rate(
            n,
            0.02,
            0.1,
            TRIALS,
            &format!("prove-at-limit-{shape}-{n}"),
            noise,
        );
        println!("worsening at the limit, {shape}, n = {n}: passes {rate:.4} (alpha 0.05)");
        assert!(rate <= slack, "{shape} n = {n}: {rate}");
    }
    // No change, sd 0.1, limit 0.02: about 155 queries give 80% power, 400 about 99.6%.
    for (n, at_least) in [(160, 0.7), (400, 0.95)] {
        let rate = pass_rate(n, 0.0, 0.1, 500, &format!("prove-no-change-{n}"), normal);
        println!("no change, normal, n = {n}: passes {rate:.4}");
        assert!(rate >= at_least, "n = {n}: {rate}");
    }
    // Half the limit: about 619 queries for 80% power; at 100 it mostly fails.
    for (n, range) in [(100, 0.0..0.35), (620, 0.7..0.9)] {
        let rate = pass_rate(n, 0.01, 0.1, 500, &format!("prove-half-{n}"), normal);
        println!("half the limit, normal, n = {n}: passes {rate:.4}");
        assert!(range.contains(&rate), "n = {n}: {rate}");
    }
}

/// The share of `trials` runs of `checks` independent checks (per-query worsening `mu + 0.1 x`
/// normal noise on `n` queries, against `limit` at alpha 0.05) in which some check is not proven:
/// the runs `inconclusive: fail` fails although nothing regressed beyond its limit.
fn run_failure_rate(n: usize, mu: f64, limit: f64, checks: usize, trials: usize) -> f64 {
    let mut rng = rng_for(47, &format!("prove-it runs {n} {mu} {limit} {checks}"));
    let failed = (0..trials)
        .filter(|_| {
            let proven = (0..checks)
                .map(|_| {
                    let worsening: Vec<f64> = (0..n).map(|_| mu + 0.1 * normal(&mut rng)).collect();
                    Proof::of(&worsening, limit, 0.05, Some(1.0)).proven()
                })
                .filter(|&p| p)
                .count();
            proven < checks
        })
        .count();
    failed as f64 / trials as f64
}

/// The whole-run cost of `inconclusive: fail` behind docs/statistics.md ("Prove it: what it
/// costs a run", issue 47, item 5; `cargo test --lib prove_it_whole_runs -- --nocapture` prints
/// it): runs of 1 and 5 checks with a limit of 0.02, no change or half the limit, 100 to 1,000
/// queries; and a limit of 0, which no unchanged run can be proven within.
#[test]
fn prove_it_whole_runs() {
    const TRIALS: usize = 400;
    let mut failures = Vec::new();
    for (effect, mu) in [("no change", 0.0), ("half the limit", 0.01)] {
        for n in [100, 300, 1_000] {
            let one = run_failure_rate(n, mu, 0.02, 1, TRIALS);
            let five = run_failure_rate(n, mu, 0.02, 5, TRIALS);
            println!("| {effect} | {n} | {one:.3} | {five:.3} |");
            failures.push((effect, n, one, five));
        }
    }
    // More checks, more to prove: a run of five fails at least as often as a run of one (up
    // to sampling), and more queries fail fewer runs.
    for &(effect, n, one, five) in &failures {
        assert!(five + 0.05 >= one, "{effect}, n {n}: {one} vs {five}");
    }
    for pair in failures.windows(2).filter(|w| w[0].0 == w[1].0) {
        assert!(pair[1].3 <= pair[0].3 + 0.05, "{pair:?}");
    }
    // Half the limit on 100 queries: about 0.26 of checks pass (prove_it_simulation), so nearly
    // every run of five fails.
    assert!(failures[3].3 > 0.95, "{:?}", failures[3]);
    // A limit of 0: an unchanged pipeline must be proven better than its baseline. Every check
    // of identical values fails, and noisy ones pass at most alpha of the time.
    let zero = run_failure_rate(300, 0.0, 0.0, 1, TRIALS);
    println!("| no change, limit 0 | 300 | {zero:.3} | |");
    assert!(zero >= 0.93, "{zero}");
    assert!(!Proof::of(&[0.0; 300], 0.0, 0.05, Some(1.0)).proven());
}
