//! The test against the limit on real per-query deltas: two systems (the example pipeline's
//! `bm25` and `rerank`) on the NFCorpus test split (323 queries), their per-query values as
//! `bench/nfcorpus_pairs.sh OUTDIR` writes them from ../shared/data (the collection stays out of the
//! repo). Without `RAGATE_PAIRS=OUTDIR` the test prints that it is skipped; .ci/real-data-check
//! writes the files and runs it with `RAGATE_PAIRS_TRIALS=400`, a tenth of the trials;
//! `RAGATE_PAIRS=OUTDIR cargo test --test integration statistics_real_nfcorpus -- --nocapture`
//! runs every trial (the figures recorded in docs/statistics.md).
//!
//! For each metric the population is the 323 per-query deltas `rerank - bm25`. Centred on mean
//! zero it is a real, skewed null; shifted so that the mean worsening is a multiple of the limit it
//! is a tolerated change (0.5x, 0.8x) or a regression (2x, 5x). Each trial draws 323 deltas with
//! replacement and runs the four `all` checks through `gate::verdict::decide` (Holm over 4).

mod runs;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rand_chacha::ChaCha8Rng;

use ragate::baseline::results::{FORMAT, Provenance, QueryRecord, Results, RunStatus};
use ragate::config::{
    AlphaScope, Correction, Decision, GateSettings, InconclusivePolicy, Limits, Rule,
    SliceCorrection,
};
use ragate::gate::checks::{Check, Slice};
use ragate::gate::verdict::{CheckStatus, decide};
use ragate::stats::{self, limit_test};

const METRICS: [&str; 4] = ["recall@10", "ndcg@10", "mrr", "precision@5"];
const LIMIT: f64 = 0.02;
const ALPHA: f64 = 0.05;
const TRIALS: usize = 4_000;

/// Per-query values of one `ragate eval --per-query --format tsv` file: metric -> qid -> value.
fn per_query(path: &Path) -> BTreeMap<String, BTreeMap<String, f64>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut values: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        if fields.len() == 3 && fields[1] != "all" {
            let value = fields[2].parse().expect("a number");
            values
                .entry(fields[0].to_string())
                .or_default()
                .insert(fields[1].to_string(), value);
        }
    }
    values
}

fn uniform(rng: &mut ChaCha8Rng) -> f64 {
    use rand::Rng;
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Results whose per-query values of every metric are `values[metric][i]` (qids q000..).
fn results(values: &BTreeMap<&str, Vec<f64>>) -> Results {
    let n = values.values().next().map_or(0, Vec::len);
    let queries = (0..n)
        .map(|i| {
            let record = QueryRecord {
                query: None,
                slices: BTreeMap::new(),
                metrics: values.iter().map(|(m, v)| (m.to_string(), v[i])).collect(),
                retrieved: Vec::new(),
                answer: None,
                answer_sha256: None,
                claims: Vec::new(),
                answer_relevance_embedding: None,
                must_pass: None,
            };
            (format!("q{i:04}"), record)
        })
        .collect();
    Results {
        format: FORMAT.to_string(),
        tier: "nf".to_string(),
        status: RunStatus::Pass,
        provenance: Provenance::default(),
        metrics: values.keys().map(|m| m.to_string()).collect(),
        summary: BTreeMap::new(),
        noise: None,
        baseline_mismatch: None,
        queries,
    }
}

#[test]
fn statistics_real_nfcorpus_pairs() {
    // Real data stays out of the repo: without RAGATE_PAIRS there is nothing to read, and the
    // test says so (.ci/real-data-check writes the files from ../shared/data and sets it).
    let Some(dir) = std::env::var_os("RAGATE_PAIRS").map(PathBuf::from) else {
        println!(
            "statistics_real_nfcorpus_pairs: skipped (RAGATE_PAIRS is not set; \
             bench/nfcorpus_pairs.sh DIR writes the files from ../shared/data)"
        );
        return;
    };
    let trials = match std::env::var("RAGATE_PAIRS_TRIALS") {
        Ok(text) => text.parse().expect("RAGATE_PAIRS_TRIALS is a whole number"),
        Err(_) => TRIALS,
    };
    let source = "RAGATE_PAIRS";
    println!(
        "per-query values from {} ({source}), {trials} trials",
        dir.display()
    );
    let bm25 = per_query(&dir.join("bm25.tsv"));
    let rerank = per_query(&dir.join("rerank.tsv"));
    // Per metric: the deltas (rerank - bm25), centred on mean zero.
    let centred: BTreeMap<&str, Vec<f64>> = METRICS
        .iter()
        .map(|&metric| {
            let deltas: Vec<f64> = bm25[metric]
                .iter()
                .map(|(qid, before)| rerank[metric][qid] - before)
                .collect();
            let mean = stats::mean(&deltas);
            println!(
                "{metric}: {} queries, mean delta {mean:+.4}, sd {:.4}, {} non-zero",
                deltas.len(),
                stats::sample_sd(&deltas),
                deltas.iter().filter(|d| **d != 0.0).count()
            );
            (metric, deltas.iter().map(|d| d - mean).collect())
        })
        .collect();
    let population_deltas: BTreeMap<&str, Vec<f64>> = METRICS
        .iter()
        .map(|&metric| {
            let deltas = bm25[metric]
                .iter()
                .map(|(qid, before)| rerank[metric][qid] - before)
                .collect();
            (metric, deltas)
        })
        .collect();
    let n = centred["ndcg@10"].len();
    // Per-check rate under the skewed null at the limit, both directions, at alpha and alpha / 4.
    // The uncentred deltas tested at their own mean as the limit: unchanged queries stay at 0, so
    // the betting check applies as it would to real pairs (centring would shift every query).
    for (&metric, population) in &population_deltas {
        let mean = stats::mean(population);
        for sign in [1.0, -1.0] {
            let worsening: Vec<f64> = population.iter().map(|d| -sign * d).collect();
            let limit = -sign * mean;
            for level in [ALPHA, ALPHA / 4.0] {
                let mut rng = stats::rng_for(7, &format!("{metric} {sign} {level}"));
                let rejected = (0..trials * 5)
                    .filter(|_| {
                        let sample: Vec<f64> = (0..n)
                            .map(|_| worsening[(uniform(&mut rng) * n as f64) as usize])
                            .collect();
                        limit_test::test(&sample, limit, Some(1.0)).p_value <= level
                    })
                    .count();
                let rate = rejected as f64 / (trials * 5) as f64;
                let direction = if sign > 0.0 {
                    "as measured"
                } else {
                    "mirrored"
                };
                println!(
                    "null {metric} ({direction}): level {level}: rate {rate:.4} = {:.2}x",
                    rate / level
                );
                // Measured up to 1.65x (ndcg@10 mirrored at alpha / 4, the known gap of
                // docs/statistics.md); twice the level would be a new one.
                assert!(
                    rate <= 2.0 * level,
                    "null {metric} ({direction}), level {level}: rate {rate}"
                );
            }
        }
    }
    // Tolerated changes and regressions: every metric's mean worsening set to factor x LIMIT.
    let rules = all_rules(&METRICS, &[LIMIT; 4]);
    let checks = all_checks(&rules);
    let settings = significant(rules.clone(), Correction::Holm);
    let baseline_values: BTreeMap<&str, Vec<f64>> =
        METRICS.iter().map(|&m| (m, vec![0.5; n])).collect();
    let baseline = results(&baseline_values);
    for factor in [0.5, 0.8, 1.0, 2.0, 5.0] {
        let mut rng = stats::rng_for(11, &format!("factor {factor}"));
        let (mut any_fail, mut any_inconclusive) = (0, 0);
        let mut failing_checks = 0;
        for _ in 0..trials {
            // One draw of queries, the same for every metric (the metrics move together).
            let picks: Vec<usize> = (0..n)
                .map(|_| (uniform(&mut rng) * n as f64) as usize)
                .collect();
            let current_values: BTreeMap<&str, Vec<f64>> = centred
                .iter()
                .map(|(&m, population)| {
                    let values = picks
                        .iter()
                        .map(|&i| 0.5 + population[i] - factor * LIMIT)
                        .collect();
                    (m, values)
                })
                .collect();
            let outcomes = decide(
                &checks,
                &baseline,
                &results(&current_values),
                &settings,
                "nf",
            );
            let failed = outcomes
                .iter()
                .filter(|o| o.status == CheckStatus::Fail)
                .count();
            failing_checks += failed;
            any_fail += usize::from(failed > 0);
            any_inconclusive += usize::from(
                outcomes
                    .iter()
                    .any(|o| o.status == CheckStatus::Inconclusive),
            );
        }
        println!(
            "true worsening {factor}x the limit {LIMIT} on all 4 metrics, {trials} trials: runs failing {:.4}, \
             failing checks {:.4} per check, runs with an inconclusive check {:.4}",
            any_fail as f64 / trials as f64,
            failing_checks as f64 / (trials * 4) as f64,
            any_inconclusive as f64 / trials as f64
        );
        let failing = any_fail as f64 / trials as f64;
        if factor < 1.0 {
            assert!(failing <= ALPHA, "a tolerated change failed too often");
        }
        // Measured: every run fails at 2x and 5x the limit (docs/statistics.md).
        if factor >= 2.0 {
            assert!(failing >= 0.95, "{factor}x the limit caught in {failing}");
        }
    }
}

/// One `all` rule per metric, `limits[i]` as its `max_drop`.
fn all_rules(metrics: &[&str], limits: &[f64]) -> Vec<Rule> {
    metrics
        .iter()
        .zip(limits)
        .map(|(m, &limit)| Rule {
            metric: m.parse().unwrap(),
            slice: None,
            limits: Limits {
                max_drop: Some(limit),
                ..Limits::default()
            },
        })
        .collect()
}

/// The `all` check of every rule.
fn all_checks(rules: &[Rule]) -> Vec<Check<'_>> {
    rules
        .iter()
        .map(|rule| Check {
            rule,
            slice: Slice::All,
        })
        .collect()
}

/// `decision: significant` at ALPHA, the primary family corrected with `correction`.
fn significant(rules: Vec<Rule>, correction: Correction) -> GateSettings {
    GateSettings {
        decision: Decision::Significant,
        alpha: ALPHA,
        alpha_scope: AlphaScope::Family,
        correction,
        slice_correction: SliceCorrection::Holm,
        inconclusive: InconclusivePolicy::Pass,
        min_queries: 5,
        min_share: 0.9,
        seed: 0,
        rules,
        notices: Vec::new(),
    }
}
