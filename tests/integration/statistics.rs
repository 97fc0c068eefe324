//! Statistics evidence on real score distributions (docs/statistics.md).
//!
//! The fixture `tests/fixtures/simulation/cranfield_bm25.json` holds, for each of the 225
//! Cranfield queries, the BM25 scores and grades of its top 100 docs (numbers only; see
//! `generate.py` there). A simulated run re-ranks every query's top 100 by `score + N(0, sigma)`,
//! `sigma = NOISE x (top score - 100th score)` of that query, and computes five metrics per query
//! with the library's own metric code. The verdicts come from `gate::verdict::decide`, the code
//! the CLI uses, on `Results` built in memory.
//!
//! - Null: baseline and candidate are two independent noisy copies of the same ranking, so each
//!   per-query delta is symmetric around 0 (no clipping: the noise moves docs, never values).
//!   With `max_drop: 0` only the significance test protects against noise; the share of runs
//!   with any failing check among 20 must stay within alpha plus binomial slack.
//! - Power: a candidate whose expected drop of `recall@10 [all]` equals the detectable drop the
//!   gate reported for that check must fail that check in at least 75% of runs.
//!
//! `cargo test --test integration statistics -- --nocapture` prints the measured rates.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;

use ragate::baseline::results::{FORMAT, Provenance, QueryRecord, Results, RunStatus};
use ragate::config::{Correction, Decision, GateSettings, Limits, Rule, SliceValue};
use ragate::gate::checks::{Check, Slice, expand};
use ragate::gate::verdict::{CheckOutcome, CheckStatus, decide};
use ragate::input::qrels::Judgment;
use ragate::metrics::metric::Metric;
use ragate::metrics::retrieval::{QueryTruth, RetrievalMetric};
use ragate::stats;

/// The gated metrics; with `all` and three pseudo-slices they give 20 checks per run.
const METRICS: [&str; 5] = ["precision@5", "recall@10", "mrr", "ndcg@10", "map"];
/// Pseudo-slices: field `part`, value `query position mod 3` (75 queries each).
const PARTS: usize = 3;
const ALPHA: f64 = 0.05;
/// Fewer than the default 10,000 to keep the simulation fast; p-values stay valid
/// ((b + 1) / (R + 1) is exact for any R), only a little coarser.
const RESAMPLES: usize = 1000;
/// Simulated runs per experiment.
const RUNS: usize = 200;
/// Noise standard deviation as a share of each query's top-100 score range.
const NOISE: f64 = 0.1;
const SEED: u64 = 20_261_201;
/// The realistic limit of the power experiment.
const POWER_LIMIT: f64 = 0.02;
const POWER_CHECK: &str = "recall@10 [all]";
/// The power the gate's detectable drop promises is 80%; the issue asks for at least 75% here.
const REQUIRED_POWER: f64 = 0.75;

#[derive(Deserialize)]
struct FixtureQuery {
    relevant: usize,
    ideal: Vec<i32>,
    /// `(bm25 score, grade or 0)`, best first.
    top: Vec<(f64, i32)>,
}

/// One query, ready to be re-ranked.
struct SimQuery {
    scores: Vec<f64>,
    judgments: Vec<Judgment>,
    truth: QueryTruth,
    sigma: f64,
}

fn queries() -> &'static [SimQuery] {
    static QUERIES: OnceLock<Vec<SimQuery>> = OnceLock::new();
    QUERIES.get_or_init(|| {
        let path = crate::fixture("simulation/cranfield_bm25.json");
        let text = std::fs::read_to_string(&path).expect("the simulation fixture exists");
        let fixture: Vec<FixtureQuery> = serde_json::from_str(&text).expect("valid fixture");
        assert_eq!(
            fixture.len(),
            225,
            "every Cranfield query has a relevant doc"
        );
        fixture
            .into_iter()
            .map(|q| {
                assert_eq!(q.top.len(), 100);
                assert!(q.relevant > 0 && q.ideal.len() >= q.relevant);
                let scores: Vec<f64> = q.top.iter().map(|&(s, _)| s).collect();
                let range = scores[0] - scores[scores.len() - 1];
                SimQuery {
                    judgments: q
                        .top
                        .iter()
                        .map(|&(_, g)| Judgment::from_grade(g))
                        .collect(),
                    truth: QueryTruth {
                        num_relevant: q.relevant,
                        ideal_gains: q.ideal,
                    },
                    sigma: NOISE * range,
                    scores,
                }
            })
            .collect()
    })
}

fn metrics() -> Vec<RetrievalMetric> {
    METRICS.iter().map(|m| m.parse().unwrap()).collect()
}

fn gated_metrics() -> Vec<Metric> {
    metrics().into_iter().map(Metric::from).collect()
}

/// A standard normal draw (Box-Muller on two 53-bit uniforms).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1 = 1.0 - uniform(rng); // (0, 1]: ln is finite
    let u2 = uniform(rng);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A uniform draw in [0, 1).
fn uniform(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Per-query metric values of one simulated run: every query's top 100 re-ranked by
/// `score + N(0, sigma)`. A `broken` query loses all its relevant docs below rank 100.
fn simulate(rng: &mut ChaCha8Rng, broken: &[bool]) -> Vec<Vec<f64>> {
    let metrics = metrics();
    let mut keyed: Vec<(f64, usize)> = Vec::with_capacity(100);
    queries()
        .iter()
        .enumerate()
        .map(|(i, query)| {
            keyed.clear();
            keyed.extend(
                (query.scores.iter().enumerate()).map(|(j, &s)| (s + query.sigma * normal(rng), j)),
            );
            keyed.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
            let ranking: Vec<Judgment> = keyed
                .iter()
                .map(|&(_, j)| query.judgments[j])
                .filter(|j| !(broken.get(i).copied().unwrap_or(false) && j.relevant))
                .collect();
            metrics
                .iter()
                .map(|m| m.value(&ranking, &query.truth))
                .collect()
        })
        .collect()
}

/// A results file holding these per-query values (qids `q000`.. sort in position order).
fn results(values: &[Vec<f64>]) -> Results {
    let queries = values
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let record = QueryRecord {
                query: None,
                slices: BTreeMap::from([("part".to_string(), (i % PARTS).to_string())]),
                metrics: METRICS
                    .iter()
                    .map(|m| m.to_string())
                    .zip(row.iter().copied())
                    .collect(),
                retrieved: Vec::new(),
                answer: None,
                answer_sha256: None,
                claims: Vec::new(),
                answer_relevance_embedding: None,
            };
            (format!("q{i:03}"), record)
        })
        .collect();
    Results {
        format: FORMAT.to_string(),
        tier: "simulation".to_string(),
        status: RunStatus::Pass,
        provenance: Provenance::default(),
        metrics: METRICS.iter().map(|m| m.to_string()).collect(),
        summary: BTreeMap::new(),
        queries,
    }
}

/// One rule per metric with the same absolute limit, for `all` and every part.
fn rules(max_drop: f64) -> Vec<Rule> {
    metrics()
        .into_iter()
        .map(|metric| Rule {
            metric: metric.into(),
            slice: None,
            limits: Limits {
                max_drop: Some(max_drop),
                ..Limits::default()
            },
        })
        .collect()
}

fn parts() -> BTreeSet<SliceValue> {
    (0..PARTS)
        .map(|p| SliceValue {
            field: "part".to_string(),
            value: p.to_string(),
        })
        .collect()
}

fn settings(rules: &[Rule], seed: u64) -> GateSettings {
    GateSettings {
        decision: Decision::Significant,
        alpha: ALPHA,
        correction: Correction::Holm,
        min_queries: 5,
        resamples: RESAMPLES,
        seed,
        rules: rules.to_vec(),
    }
}

/// The gate's verdicts on a baseline and a candidate, after checking that all 20 were tested.
fn verdicts(
    checks: &[Check<'_>],
    baseline: &[Vec<f64>],
    current: &[Vec<f64>],
    seed: u64,
) -> Vec<CheckOutcome> {
    let rules: Vec<Rule> = checks.iter().map(|c| c.rule.clone()).collect();
    let outcomes = decide(
        checks,
        &results(baseline),
        &results(current),
        &settings(&rules, seed),
        "simulation",
    );
    for outcome in &outcomes {
        assert!(
            !matches!(outcome.status, CheckStatus::Skipped | CheckStatus::Error),
            "{}",
            outcome.verdict
        );
        assert_eq!(outcome.n, if outcome.slice == "all" { 225 } else { 75 });
    }
    outcomes
}

/// `alpha + 2.5` standard errors of a binomial share over `runs`.
fn slack_bound(runs: usize) -> f64 {
    ALPHA + 2.5 * (ALPHA * (1.0 - ALPHA) / runs as f64).sqrt()
}

#[test]
fn null_runs_fail_at_most_alpha_of_the_time() {
    let rules = rules(0.0);
    let checks = expand(&rules, &parts(), &gated_metrics());
    assert_eq!(checks.len(), 20);
    assert_eq!(checks.iter().filter(|c| c.slice == Slice::All).count(), 5);
    let family = checks.len() * RUNS;
    let (mut runs_failing, mut failures, mut uncorrected) = (0, 0, 0);
    let (mut runs_improved, mut covered, mut beyond_holm) = (0, 0, 0);
    let mut nonzero_deltas = 0.0;
    for run in 0..RUNS {
        let mut rng = stats::rng_for(SEED, &format!("null run {run}"));
        let baseline = simulate(&mut rng, &[]);
        let current = simulate(&mut rng, &[]);
        let outcomes = verdicts(&checks, &baseline, &current, SEED + run as u64);
        let failing = outcomes
            .iter()
            .filter(|o| o.status == CheckStatus::Fail)
            .count();
        failures += failing;
        runs_failing += usize::from(failing > 0);
        runs_improved += usize::from(outcomes.iter().any(|o| o.status == CheckStatus::Improved));
        let p_values: Vec<f64> = outcomes.iter().map(|o| o.p_value.unwrap()).collect();
        let holm = stats::holm::holm(&p_values, ALPHA);
        for (outcome, holm) in outcomes.iter().zip(&holm) {
            let p = outcome.p_value.unwrap();
            uncorrected += usize::from(outcome.delta < 0.0 && p <= ALPHA);
            let (low, high) = outcome.ci.unwrap();
            covered += usize::from(low <= 0.0 && 0.0 <= high);
            beyond_holm += usize::from(outcome.status == CheckStatus::Fail && !holm.rejected);
        }
        let changed = (baseline.iter().zip(&current))
            .filter(|(b, c)| b[1] != c[1])
            .count();
        nonzero_deltas += changed as f64 / baseline.len() as f64;
    }
    let rate = runs_failing as f64 / RUNS as f64;
    let bound = slack_bound(RUNS);
    println!(
        "null: {RUNS} runs x {} checks (5 metrics x [all, part=0..2], max_drop 0, alpha {ALPHA}, Holm, {RESAMPLES} resamples), noise sd {NOISE} x score range",
        checks.len()
    );
    println!(
        "null: recall@10 changed in {:.1}% of queries per run",
        100.0 * nonzero_deltas / RUNS as f64
    );
    println!(
        "null: runs with any false failure: {runs_failing}/{RUNS} = {rate:.3} (bound {bound:.3}); failing checks {failures}/{family}"
    );
    println!(
        "null: checks with delta < 0 and p <= alpha (uncorrected): {uncorrected}/{family} = {:.4}",
        uncorrected as f64 / family as f64
    );
    println!(
        "null: failures Holm's step-down would not reject: {beyond_holm}; runs with any `improved`: {runs_improved}/{RUNS} = {:.3}",
        runs_improved as f64 / RUNS as f64
    );
    println!(
        "null: 95% bootstrap CIs covering the true mean delta 0: {covered}/{family} = {:.4}",
        covered as f64 / family as f64
    );
    assert!(rate <= bound, "false-failure rate {rate} > {bound}");
    assert_eq!(beyond_holm, 0, "every failure is a Holm rejection");
    let improved_rate = runs_improved as f64 / RUNS as f64;
    assert!(
        improved_rate <= bound,
        "`improved` on noise in {improved_rate} of runs > {bound}"
    );
    let coverage = covered as f64 / family as f64;
    assert!((0.92..=0.98).contains(&coverage), "coverage {coverage}");
}

/// Share of `RUNS` runs in which `POWER_CHECK` fails when a random share of the queries
/// (`drop / level`) is broken, which lowers the expected mean of recall@10 by `drop`; and the
/// mean realised drop.
fn power_at(checks: &[Check<'_>], drop: f64, level: f64, label: &str) -> (f64, f64) {
    // Breaking a query sets its recall@10 to 0, so breaking each query with probability
    // `drop / level` lowers the expected mean by exactly `drop`.
    let share = drop / level;
    assert!(share > 0.0 && share < 1.0, "share {share}");
    let (mut caught, mut realised) = (0, 0.0);
    for run in 0..RUNS {
        let mut rng = stats::rng_for(SEED, &format!("{label} run {run}"));
        let baseline = simulate(&mut rng, &[]);
        let broken: Vec<bool> = (0..baseline.len())
            .map(|_| uniform(&mut rng) < share)
            .collect();
        let current = simulate(&mut rng, &broken);
        let outcomes = verdicts(checks, &baseline, &current, SEED + run as u64);
        let outcome = outcomes.iter().find(|o| o.name == POWER_CHECK).unwrap();
        caught += usize::from(outcome.status == CheckStatus::Fail);
        realised -= outcome.delta;
    }
    (caught as f64 / RUNS as f64, realised / RUNS as f64)
}

#[test]
fn a_drop_of_the_detectable_size_is_caught() {
    let rules = rules(POWER_LIMIT);
    let checks = expand(&rules, &parts(), &gated_metrics());
    // The detectable drop the gate reports for the check on a null run.
    let mut rng = stats::rng_for(SEED, "power reference");
    let baseline = simulate(&mut rng, &[]);
    let current = simulate(&mut rng, &[]);
    let reference = verdicts(&checks, &baseline, &current, SEED);
    let reference = reference.iter().find(|o| o.name == POWER_CHECK).unwrap();
    assert_eq!(reference.status, CheckStatus::Pass, "{}", reference.verdict);
    let detectable = reference.detectable_drop.unwrap();
    let threshold = reference.threshold.unwrap();
    let level = (reference.baseline_mean + reference.current_mean) / 2.0;
    let (power, realised) = power_at(&checks, detectable, level, "power");
    println!(
        "power: {POWER_CHECK}, max_drop {POWER_LIMIT}, {RUNS} runs: reported detectable drop {detectable:.4} \
         (computed at alpha / m = {:.4}; this run's Holm threshold {threshold:.4}; n {}, mean {level:.4}, {:.1}% of queries broken per run)",
        ALPHA / checks.len() as f64,
        reference.n,
        100.0 * detectable / level,
    );
    println!(
        "power: caught in {power:.3} of runs at the reported size (mean realised drop {realised:.4})"
    );
    // The reported size does not depend on the check's rank among the run's p-values: it is
    // computed at alpha / m, the level the check has when it is the run's only regression.
    let recall = METRICS.iter().position(|&m| m == "recall@10").unwrap();
    let deltas: Vec<f64> = (current.iter().zip(&baseline))
        .map(|(c, b)| c[recall] - b[recall])
        .collect();
    let sd = stats::sample_sd(&deltas);
    let expected = stats::normal::detectable_drop(
        POWER_LIMIT,
        ALPHA / checks.len() as f64,
        0.8,
        sd,
        deltas.len(),
    );
    assert!(
        (detectable - expected).abs() < 1e-12,
        "{detectable} vs {expected}"
    );
    assert!(power >= REQUIRED_POWER, "power {power} < {REQUIRED_POWER}");
}
