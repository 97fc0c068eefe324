//! Statistics evidence on real score distributions (docs/statistics.md).
//!
//! The fixture `tests/fixtures/simulation/cranfield_bm25.json` holds, for each of the 225
//! Cranfield queries, the BM25 scores and grades of its top 100 docs (numbers only; see
//! `generate.py` there). A simulated run re-ranks every query's top 100 by `score + N(0, sigma)`,
//! `sigma = NOISE x (top score - 100th score)` of that query, and computes five metrics per query
//! with the library's own metric code. A candidate may also "break" a random share of the queries
//! (every relevant doc lost): each metric's expected mean then drops by that share of its mean,
//! through a few large per-query losses among many small noisy deltas, which is the skewed shape
//! of real regressions. The verdicts come from `gate::verdict::decide`, the code the CLI uses, on
//! `Results` built in memory, with relative limits (`max_drop_pct`) so that every one of the 20
//! checks (5 metrics x [all, part=0..2]) faces the same tolerated share.
//!
//! - Tolerated changes (a true drop of 0.5x and 0.8x the limit) must fail a run (any of its 20
//!   checks) at most alpha of the time, plus binomial slack.
//! - Drops of 2x and 5x the limit are detected (rates printed and bounded below).
//! - Skewed zero-mean null: per-query deltas of a real candidate, centred on zero mean, resampled;
//!   the per-check rejection rate must stay within 1.5x alpha in both skew directions (and within
//!   2.5x at alpha / 20, where left skew measured 2x: a documented gap).
//! - Coverage of the one-sided decision bound at n = 8, 15, 30, 100 on the same population.
//!
//! `cargo test --test integration statistics -- --nocapture` prints the measured rates.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;

use ragate::baseline::results::{FORMAT, Provenance, QueryRecord, Results, RunStatus};
use ragate::config::{
    AlphaScope, Correction, Decision, GateSettings, InconclusivePolicy, Limits, Rule,
    SliceCorrection, SliceValue,
};
use ragate::gate::checks::{Check, expand};
use ragate::gate::verdict::{CheckOutcome, CheckStatus, decide};
use ragate::input::qrels::{Judgment, Ranked};
use ragate::metrics::metric::Metric;
use ragate::metrics::retrieval::{QueryTruth, RetrievalMetric};
use ragate::stats::{self, limit_test};

/// The gated metrics; with `all` and three pseudo-slices they give 20 checks per run.
const METRICS: [&str; 5] = ["precision@5", "recall@10", "mrr", "ndcg@10", "map"];
/// Pseudo-slices: field `part`, value `query position mod 3` (75 queries each).
const PARTS: usize = 3;
const ALPHA: f64 = 0.05;
/// Simulated runs per experiment.
const RUNS: usize = 200;
/// Noise standard deviation as a share of each query's top-100 score range.
const NOISE: f64 = 0.1;
const SEED: u64 = 20_261_201;
/// The tolerated relative drop of every rule, in percent.
const LIMIT_PCT: f64 = 10.0;
const POWER_CHECK: &str = "recall@10 [all]";

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
    judgments: Vec<Ranked>,
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
                        .map(|&(_, g)| Ranked::Judged(Judgment::from_grade(g)))
                        .collect(),
                    truth: QueryTruth {
                        num_relevant: q.relevant,
                        num_non_relevant: q.top.iter().filter(|&&(_, g)| g == 0).count(),
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
            let ranking: Vec<Ranked> = keyed
                .iter()
                .map(|&(_, j)| query.judgments[j])
                .filter(|j| !(broken.get(i).copied().unwrap_or(false) && j.relevant()))
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
                must_pass: None,
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
        noise: None,
        baseline_mismatch: None,
        queries,
    }
}

/// One rule per metric with the same relative limit, for `all` and every part.
fn rules() -> Vec<Rule> {
    metrics()
        .into_iter()
        .map(|metric| Rule {
            metric: metric.into(),
            slice: None,
            limits: Limits {
                max_drop_pct: Some(LIMIT_PCT),
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
        alpha_scope: AlphaScope::Family,
        correction: Correction::Holm,
        slice_correction: SliceCorrection::Holm,
        inconclusive: InconclusivePolicy::Pass,
        min_queries: 5,
        min_share: 0.9,
        seed,
        rules: rules.to_vec(),
        notices: Vec::new(),
    }
}

/// The gate's verdicts on a baseline and a candidate, after checking that all 20 were tested.
fn verdicts(
    checks: &[Check<'_>],
    baseline: &[Vec<f64>],
    current: &[Vec<f64>],
) -> Vec<CheckOutcome> {
    let rules: Vec<Rule> = checks.iter().map(|c| c.rule.clone()).collect();
    let outcomes = decide(
        checks,
        &results(baseline),
        &results(current),
        &settings(&rules, SEED),
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
fn slack_bound(rate: f64, runs: usize) -> f64 {
    rate + 2.5 * (rate * (1.0 - rate) / runs as f64).sqrt()
}

/// Shares of `RUNS` runs in which a candidate that breaks each query with probability
/// `factor x LIMIT_PCT / 100` (a true relative drop of `factor` times the limit on every metric)
/// has (any failing check, `POWER_CHECK` failing, any inconclusive check).
fn rates_at(checks: &[Check<'_>], factor: f64) -> (f64, f64, f64) {
    let share = factor * LIMIT_PCT / 100.0;
    let (mut any_fail, mut power_fail, mut inconclusive) = (0, 0, 0);
    for run in 0..RUNS {
        let mut rng = stats::rng_for(SEED, &format!("factor {factor} run {run}"));
        let baseline = simulate(&mut rng, &[]);
        let broken: Vec<bool> = (0..baseline.len())
            .map(|_| uniform(&mut rng) < share)
            .collect();
        let current = simulate(&mut rng, &broken);
        let outcomes = verdicts(checks, &baseline, &current);
        let failing = |o: &&CheckOutcome| o.status == CheckStatus::Fail;
        any_fail += usize::from(outcomes.iter().any(|o| failing(&o)));
        power_fail += usize::from(
            outcomes
                .iter()
                .any(|o| o.name == POWER_CHECK && failing(&o)),
        );
        inconclusive += usize::from(
            outcomes
                .iter()
                .any(|o| o.status == CheckStatus::Inconclusive),
        );
    }
    let share_of = |count: usize| count as f64 / RUNS as f64;
    (
        share_of(any_fail),
        share_of(power_fail),
        share_of(inconclusive),
    )
}

#[test]
fn tolerated_changes_fail_at_most_alpha_and_large_drops_are_caught() {
    let rules = rules();
    let checks = expand(&rules, &parts(), &gated_metrics());
    assert_eq!(checks.len(), 20);
    let bound = slack_bound(ALPHA, RUNS);
    for factor in [0.5, 0.8] {
        let (any_fail, _, inconclusive) = rates_at(&checks, factor);
        println!(
            "tolerated {factor}x the limit ({LIMIT_PCT}% of each mean), {RUNS} runs x 20 checks: \
             runs with any failure {any_fail:.3} (bound {bound:.3}), with any inconclusive {inconclusive:.3}"
        );
        assert!(
            any_fail <= bound,
            "{factor}x: family-wise false failures {any_fail} > {bound}"
        );
    }
    for (factor, required) in [(2.0, 0.5), (5.0, 0.99)] {
        let (any_fail, power, _) = rates_at(&checks, factor);
        println!(
            "drop {factor}x the limit: {POWER_CHECK} failed in {power:.3} of runs, any check in {any_fail:.3}"
        );
        assert!(
            power >= required,
            "{factor}x: detection {power} < {required}"
        );
    }
}

/// Per-query recall@10 deltas (current - baseline) of one noisy candidate that breaks 10% of
/// the queries, centred on mean zero: a real, right-skewed population with a known mean.
fn skewed_population() -> Vec<f64> {
    let mut rng = stats::rng_for(SEED, "skewed population");
    let recall = METRICS.iter().position(|&m| m == "recall@10").unwrap();
    let baseline = simulate(&mut rng, &[]);
    let broken: Vec<bool> = (0..baseline.len())
        .map(|_| uniform(&mut rng) < 0.1)
        .collect();
    let current = simulate(&mut rng, &broken);
    let deltas: Vec<f64> = (current.iter().zip(&baseline))
        .map(|(c, b)| c[recall] - b[recall])
        .collect();
    let mean = stats::mean(&deltas);
    deltas.iter().map(|d| d - mean).collect()
}

fn third_moment_skewness(values: &[f64]) -> f64 {
    let mean = stats::mean(values);
    let sd = stats::sample_sd(values);
    values
        .iter()
        .map(|v| ((v - mean) / sd).powi(3))
        .sum::<f64>()
        / values.len() as f64
}

/// `n` draws with replacement from `population`.
fn resample(rng: &mut ChaCha8Rng, population: &[f64], n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| population[(uniform(rng) * population.len() as f64) as usize])
        .collect()
}

#[test]
fn the_test_holds_its_level_under_a_skewed_zero_mean_null() {
    let population = skewed_population();
    let skewness = third_moment_skewness(&population);
    let trials = 20_000;
    for (direction, sign) in [
        ("losses skewed (right)", 1.0),
        ("gains skewed (left)", -1.0),
    ] {
        // Worsening = -delta; sign -1 mirrors the population.
        let worsening: Vec<f64> = population.iter().map(|d| -sign * d).collect();
        for (n, level) in [(225, ALPHA), (225, ALPHA / 20.0), (75, ALPHA)] {
            let mut rng = stats::rng_for(SEED, &format!("skewed null {direction} {n} {level}"));
            let rejected = (0..trials)
                .filter(|_| {
                    let sample = resample(&mut rng, &worsening, n);
                    limit_test::test(&sample, 0.0, Some(1.0)).p_value <= level
                })
                .count();
            let rate = rejected as f64 / trials as f64;
            println!(
                "skewed null ({direction}, population skewness {:.2}), n = {n}, level {level}: \
                 rejection rate {rate:.4} = {:.2}x the level",
                -sign * skewness,
                rate / level
            );
            // At alpha the rate stays within 1.5x; at Holm's smallest level of a 20-check family
            // rare large gains still push it to about 2x (docs/statistics.md, known gap).
            let allowed = if level == ALPHA { 1.5 } else { 2.5 };
            assert!(
                rate <= allowed * level,
                "{direction}, n {n}, level {level}: {rate}"
            );
        }
    }
}

/// Per-query recall@10 deltas of a candidate that changes nothing but breaks 10% of the queries
/// (recall to 0): sparse like real IR deltas (most queries unchanged, at exactly 0). Not centred:
/// the null is tested at the population's mean as the limit, so the unchanged queries stay 0.
fn sparse_population() -> Vec<f64> {
    let mut rng = stats::rng_for(SEED, "sparse population");
    let recall = METRICS.iter().position(|&m| m == "recall@10").unwrap();
    let deltas: Vec<f64> = simulate(&mut rng, &[])
        .iter()
        .map(|values| {
            let broken = uniform(&mut rng) < 0.1;
            if broken { -values[recall] } else { 0.0 }
        })
        .collect();
    deltas
}

#[test]
fn few_changed_queries_hold_the_level_through_the_betting_check() {
    let population = sparse_population();
    let changed = population.iter().filter(|d| **d != 0.0).count();
    let trials = 20_000;
    for (direction, sign) in [("losses rare", 1.0), ("gains rare", -1.0)] {
        let worsening: Vec<f64> = population.iter().map(|d| -sign * d).collect();
        // The true mean worsening is the limit: the boundary of the null.
        let limit = stats::mean(&worsening);
        for level in [ALPHA, ALPHA / 4.0, ALPHA / 20.0] {
            let mut rng = stats::rng_for(SEED, &format!("sparse null {direction} {level}"));
            let (mut checked, mut analytic, mut betting) = (0, 0, 0);
            for _ in 0..trials {
                let sample = resample(&mut rng, &worsening, 225);
                let test = limit_test::test(&sample, limit, Some(1.0));
                betting += usize::from(test.method == limit_test::Method::SkewCorrectedTAndBetting);
                checked += usize::from(test.p_value <= level);
                analytic += usize::from(limit_test::test(&sample, limit, None).p_value <= level);
            }
            let rate = checked as f64 / trials as f64;
            let analytic_rate = analytic as f64 / trials as f64;
            println!(
                "sparse null ({direction}, {changed} of 225 queries changed), level {level}: \
                 rejection rate {rate:.4} = {:.2}x the level (skew-corrected t alone: {:.2}x; \
                 betting check in {:.0}% of samples)",
                rate / level,
                analytic_rate / level,
                100.0 * betting as f64 / trials as f64
            );
            assert!(
                betting > trials / 2,
                "the betting check applies to this population"
            );
            assert!(rate <= 1.5 * level, "{direction}, level {level}: {rate}");
        }
    }
}

#[test]
fn coverage_of_the_decision_bound() {
    let population = skewed_population();
    let trials = 4_000;
    for n in [8, 15, 30, 100] {
        for (direction, sign) in [("right", 1.0), ("left", -1.0)] {
            let worsening: Vec<f64> = population.iter().map(|d| -sign * d).collect();
            let mut rng = stats::rng_for(SEED, &format!("coverage {n} {direction}"));
            let mut covered = 0;
            let mut bounded = 0;
            for _ in 0..trials {
                let sample = resample(&mut rng, &worsening, n);
                // The true mean worsening is 0: the lower bound must not exceed it.
                if let Some(bound) = limit_test::lower_bound(&sample, ALPHA, Some(1.0), 0.0) {
                    bounded += 1;
                    covered += usize::from(bound <= 1e-12);
                } else {
                    covered += 1;
                }
            }
            let coverage = covered as f64 / trials as f64;
            println!(
                "coverage of the one-sided 95% bound, n = {n}, {direction}-skewed: {coverage:.4} \
                 ({bounded} of {trials} samples had a bound)"
            );
            // Measured (docs/statistics.md): 0.94-0.99 where the losses are the skewed side; as low
            // as 0.87 at n = 8 where rare large gains are (a known gap of every mean test there).
            let required = if sign > 0.0 && n >= 30 { 0.93 } else { 0.85 };
            assert!(
                coverage >= required,
                "n {n}, {direction}: coverage {coverage}"
            );
        }
    }
}

/// The config of [`verdicts_depend_on_the_seed_only_through_the_sampled_queries`]: a tier
/// sampled from the 120 queries of `gate_flow::setup` by `gate.seed`, and a plain tier whose gate
/// settings carry another seed.
const SAMPLED_CONFIG: &str = "version: 1
metrics: [recall@5, mrr]
slices: [class]
tiers:
  sampled: { from: qrels.jsonl, sample: 30, stratify: class, baseline: baselines/sampled.json }
  plain: { qrels: plain.jsonl, baseline: baselines/plain.json, gate: { seed: OTHER } }
gate:
  decision: significant
  min_queries: 5
  seed: SEED
  rules:
    - { metric: recall@5, max_drop: 0.02 }
    - { metric: mrr, max_drop: 0.05 }
";

/// The exit code and the JSON document of a gate run's `--format json`.
fn code_and_document(outcome: crate::Outcome) -> (i32, serde_json::Value) {
    let document = serde_json::from_str(&outcome.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", outcome.stdout, outcome.stderr));
    (outcome.code, document)
}

/// The one seeded input of a gate run is the sample of a `from:` tier (`gate.seed`, src/tier.rs);
/// no verdict reads a seed. For each seed the sampled tier's checks (statuses, verdicts, p-values,
/// bounds) must be those of a plain tier whose qrels are exactly the sampled queries and whose
/// `GateSettings::seed` differs in every bit (`!seed`), so a verdict that read the seed in any other way would fail
/// here; and the seeds must pick different samples
/// and, near the limit, different verdicts, or the comparison would show nothing.
#[test]
fn verdicts_depend_on_the_seed_only_through_the_sampled_queries() {
    let mut samples = BTreeSet::new();
    let mut verdicts = BTreeSet::new();
    for seed in 1u64..=4 {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        crate::gate_flow::setup(dir);
        let config = (SAMPLED_CONFIG.replace("SEED", &seed.to_string()))
            .replace("OTHER", &(!seed).to_string());
        std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
        // One relevant doc of about one query in 13 falls out of the top 5: a drop near the limit.
        crate::gate_flow::write_run(&dir.join("candidate.jsonl"), |i, class| {
            if (i * 7 + class.len()) % 13 == 0 {
                [1, 7]
            } else {
                [1, 2 + i % 3]
            }
        });

        let (code, first) = code_and_document(
            crate::Ragate::gate("sampled", "base.jsonl", "out-sampled-base.jsonl")
                .args(["--format", "json"])
                .run_in(dir),
        );
        assert_eq!(code, 2, "no baseline yet: {first}");
        let sampled: Vec<String> = first["results"]["queries"]
            .as_object()
            .unwrap_or_else(|| panic!("per-query results: {first}"))
            .keys()
            .cloned()
            .collect();
        assert_eq!(sampled.len(), 30);
        let qrels = std::fs::read_to_string(dir.join("qrels.jsonl")).unwrap();
        let plain: String = qrels
            .lines()
            .filter(|line| {
                let qid = serde_json::from_str::<serde_json::Value>(line).unwrap()["qid"].clone();
                sampled.iter().any(|s| qid == s.as_str())
            })
            .map(|line| format!("{line}\n"))
            .collect();
        std::fs::write(dir.join("plain.jsonl"), plain).unwrap();
        crate::accept_baseline(dir, "sampled", "out-sampled-base.jsonl/results.json", &[]);
        let (code, _) = code_and_document(
            crate::Ragate::gate("plain", "base.jsonl", "out-plain-base.jsonl")
                .args(["--format", "json"])
                .run_in(dir),
        );
        assert_eq!(code, 2);
        crate::accept_baseline(dir, "plain", "out-plain-base.jsonl/results.json", &[]);

        let (sampled_code, sampled_gate) = code_and_document(
            crate::Ragate::gate("sampled", "candidate.jsonl", "out-sampled-candidate.jsonl")
                .args(["--format", "json"])
                .run_in(dir),
        );
        let (plain_code, plain_gate) = code_and_document(
            crate::Ragate::gate("plain", "candidate.jsonl", "out-plain-candidate.jsonl")
                .args(["--format", "json"])
                .run_in(dir),
        );
        assert_eq!(sampled_gate["paired_queries"], 30, "{sampled_gate}");
        assert_eq!(
            (sampled_code, &sampled_gate["checks"]),
            (plain_code, &plain_gate["checks"]),
            "seed {seed}"
        );
        let statuses: Vec<String> = (sampled_gate["checks"].as_array().unwrap().iter())
            .map(|c| format!("{} {}", c["name"], c["status"]))
            .collect();
        println!("seed {seed}: {}", statuses.join(", "));
        samples.insert(sampled);
        verdicts.insert(statuses);
    }
    assert_eq!(samples.len(), 4, "every seed picks another sample");
    assert!(verdicts.len() > 1, "the samples' verdicts differ");
}
