//! The gate's verdicts on real A/A pairs: repeated runs of one stochastic BM25 pipeline on
//! NFCorpus's 3,210 queries (issue 23). Any two runs are the same system: their per-query deltas
//! are real sparse, skewed noise (about 15% of queries change recall@5 between two runs).
//!
//! Data step: `bench/nfcorpus_runs.sh DIR [RUNS]` (the example pipeline with `--noise 0.05 --seed
//! S`), which writes `DIR/<metric>.tsv` matrices (and `DIR/runs/<seed>.tsv` per run, which this
//! test reads when the matrices are not there yet). Ignored in CI (it needs that data); run with
//! `RAGATE_RUNS=DIR cargo test --release --test integration statistics_real::runs -- --ignored
//! --nocapture` (`RAGATE_TRIALS_SCALE=X` scales the trials, `RAGATE_SCENARIO=aa,gains,coverage,power` picks scenarios; about 3 minutes at the default). The figures
//! are recorded in docs/statistics.md. Every verdict comes from `gate::verdict::decide` on the
//! five `all` checks (recall@5, recall@10, ndcg@10, mrr, precision@5), as the CLI decides them.
//!
//! Scenarios (each trial: two distinct runs A and B, n queries drawn without replacement):
//! - **A/A**: baseline A, current B, `max_drop` 0 and 0.02: the per-check false-alarm rate at
//!   Holm's levels for 5 and 20 checks (0.01, 0.0025), the run's false failures under Holm at alpha
//!   0.05 (a Wilson 95% interval), and the runs with an `improved` hint.
//! - **Rare large gains** (issue 23, item 2): 5% of the baseline's queries broken (value 0), the
//!   current run scaled elsewhere so that the mean worsening over all 3,210 queries is exactly the
//!   limit: the runs failed.
//! - **Coverage** of the one-sided 95% bound (each check at alpha, no correction, the limit at the
//!   population's true mean worsening, so a failure is exactly a bound that misses it) on rare
//!   large gains, rare large losses (5% of the current run broken, the baseline scaled) and A/A.
//! - **Power**: a regression of 1.5x and 2x the limit 0.02, as a drop of `k` on a random share of
//!   queries (the same queries for every metric) on top of the A/A noise.

use std::collections::BTreeMap;
use std::path::Path;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use statrs::distribution::{ContinuousCDF, StudentsT};

use ragate::baseline::results::Results;
use ragate::config::Correction;
use ragate::gate::verdict::{CheckOutcome, CheckStatus, decide};
use ragate::stats;
use ragate::stats::betting::Tallied;

const METRICS: [&str; 5] = ["recall@5", "recall@10", "ndcg@10", "mrr", "precision@5"];
const ALPHA: f64 = 0.05;
const SEED: u64 = 23;
/// Holm's smallest levels for families of 5 and 20 checks at alpha 0.05.
const LEVELS: [f64; 2] = [0.01, 0.0025];

/// Per-query values: `values[metric][run][query]`, queries in one order for every run.
struct Runs {
    values: Vec<Vec<Vec<f64>>>,
    queries: usize,
}

impl Runs {
    fn load(dir: &Path) -> Runs {
        let matrices = METRICS
            .iter()
            .all(|m| dir.join(format!("{m}.tsv")).exists());
        let values: Vec<Vec<Vec<f64>>> = if matrices {
            METRICS
                .iter()
                .map(|m| read_matrix(&dir.join(format!("{m}.tsv"))))
                .collect()
        } else {
            read_run_files(&dir.join("runs"))
        };
        let values = without_broken_runs(values);
        let queries = values[0][0].len();
        assert!(
            values[0].len() >= 2,
            "at least two runs in {}",
            dir.display()
        );
        for metric in &values {
            assert!(metric.iter().all(|run| run.len() == queries));
        }
        println!(
            "{} runs x {queries} queries from {}",
            values[0].len(),
            dir.display()
        );
        Runs { values, queries }
    }

    fn runs(&self) -> usize {
        self.values[0].len()
    }

    /// Two distinct runs.
    fn pair(&self, rng: &mut ChaCha8Rng) -> (usize, usize) {
        let first = below(rng, self.runs());
        let second = (first + 1 + below(rng, self.runs() - 1)) % self.runs();
        (first, second)
    }

    fn run(&self, metric: usize, run: usize) -> &[f64] {
        &self.values[metric][run]
    }
}

/// The runs whose recall@5 mean is within 10% of the median run's: a run whose pipeline died
/// part-way scores its missing queries 0 (one of the first 88 runs has a recall@5 of 0.049 where
/// the others have 0.107-0.111), which is not run-to-run noise.
fn without_broken_runs(values: Vec<Vec<Vec<f64>>>) -> Vec<Vec<Vec<f64>>> {
    let means: Vec<f64> = values[0].iter().map(|run| stats::mean(run)).collect();
    let mut sorted = means.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let kept: Vec<bool> = means
        .iter()
        .map(|m| (m - median).abs() <= 0.1 * median)
        .collect();
    let dropped = kept.iter().filter(|k| !**k).count();
    if dropped > 0 {
        println!(
            "left out {dropped} broken run(s): recall@5 mean off the median {median:.4} by more than 10%"
        );
    }
    values
        .into_iter()
        .map(|metric| {
            (metric.into_iter().zip(&kept))
                .filter(|(_, k)| **k)
                .map(|(run, _)| run)
                .collect()
        })
        .collect()
}

/// `<metric>.tsv` of bench/nfcorpus_runs.sh: a header, then a seed and the values per line.
fn read_matrix(path: &Path) -> Vec<Vec<f64>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .skip(1)
        .map(|line| {
            line.split('\t')
                .skip(1)
                .map(|v| v.parse().expect("a number"))
                .collect()
        })
        .collect()
}

/// The per-run files (`metric<TAB>qid<TAB>value`), qids sorted, as `[metric][run][query]`.
fn read_run_files(dir: &Path) -> Vec<Vec<Vec<f64>>> {
    let mut files: Vec<(u64, std::path::PathBuf)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "tsv"))
        .filter_map(|path| Some((path.file_stem()?.to_str()?.parse().ok()?, path)))
        .collect();
    files.sort();
    // `RAGATE_RUN_SEEDS=K` uses seeds 1..=K only, so that figures can be compared while more runs
    // are being written.
    if let Some(k) = std::env::var("RAGATE_RUN_SEEDS")
        .ok()
        .and_then(|k| k.parse().ok())
    {
        files.retain(|(seed, _)| *seed <= k);
    }
    let files: Vec<std::path::PathBuf> = files.into_iter().map(|(_, path)| path).collect();
    let mut values: Vec<Vec<Vec<f64>>> = vec![Vec::new(); METRICS.len()];
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let mut run: Vec<BTreeMap<&str, f64>> = vec![BTreeMap::new(); METRICS.len()];
        for line in text.lines() {
            let fields: Vec<&str> = line.split('\t').collect();
            let metric = METRICS.iter().position(|m| *m == fields[0]);
            if let (Some(metric), true) = (metric, fields.len() == 3 && fields[1] != "all") {
                run[metric].insert(fields[1], fields[2].parse().expect("a number"));
            }
        }
        for (metric, by_qid) in run.into_iter().enumerate() {
            values[metric].push(by_qid.into_values().collect());
        }
    }
    values
}

/// A uniform index below `n`.
fn below(rng: &mut ChaCha8Rng, n: usize) -> usize {
    (((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64) * n as f64) as usize
}

/// `n` distinct indices below `population` (a partial Fisher-Yates shuffle).
fn sample(rng: &mut ChaCha8Rng, population: usize, n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..population).collect();
    for i in 0..n {
        let j = i + below(rng, population - i);
        order.swap(i, j);
    }
    order.truncate(n);
    order
}

/// Results with `values[metric][i]` for queries `q0000`...
fn results(values: &[Vec<f64>]) -> Results {
    super::results(
        &METRICS
            .iter()
            .copied()
            .zip(values.iter().cloned())
            .collect(),
    )
}

/// The five `all` checks' verdicts, `limits[metric]` as `max_drop`.
fn verdicts(
    limits: &[f64],
    correction: Correction,
    baseline: &[Vec<f64>],
    current: &[Vec<f64>],
) -> Vec<CheckOutcome> {
    let rules = super::all_rules(&METRICS, limits);
    let checks = super::all_checks(&rules);
    let settings = super::significant(rules.clone(), correction);
    let outcomes = decide(
        &checks,
        &results(baseline),
        &results(current),
        &settings,
        "nf",
    );
    assert_eq!(outcomes.len(), METRICS.len());
    outcomes
}

/// The values of `indices`, per metric.
fn pick(values: &[Vec<f64>], indices: &[usize]) -> Vec<Vec<f64>> {
    values
        .iter()
        .map(|v| indices.iter().map(|&i| v[i]).collect())
        .collect()
}

/// A share with its Wilson 95% interval.
fn share(count: usize, trials: usize) -> String {
    let n = trials as f64;
    let p = count as f64 / n;
    let z: f64 = 1.959_964;
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z / (1.0 + z * z / n) * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    format!(
        "{p:.4} [{:.4}, {:.4}]",
        (centre - half).max(0.0),
        centre + half
    )
}

/// The plain one-sample t test's one-sided p-value of "mean worsening <= limit" (a reference).
fn plain_t(worsening: &[f64], limit: f64) -> f64 {
    let n = worsening.len() as f64;
    let sd = stats::sample_sd(worsening);
    if sd <= 0.0 {
        return if stats::mean(worsening) > limit {
            0.0
        } else {
            1.0
        };
    }
    let t = (stats::mean(worsening) - limit) / (sd / n.sqrt());
    StudentsT::new(0.0, 1.0, n - 1.0).unwrap().sf(t)
}

fn trials(default: usize) -> usize {
    let scale: f64 = std::env::var("RAGATE_TRIALS_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    ((default as f64) * scale).round().max(10.0) as usize
}

/// Per-check rejections at each of [`LEVELS`], the gate's and the plain t test's.
#[derive(Default)]
struct Rejections {
    gate: [[usize; 2]; METRICS.len()],
    plain: [[usize; 2]; METRICS.len()],
}

impl Rejections {
    fn add(&mut self, outcomes: &[CheckOutcome], baseline: &[Vec<f64>], current: &[Vec<f64>]) {
        for (m, outcome) in outcomes.iter().enumerate() {
            let worsening: Vec<f64> = (baseline[m].iter().zip(&current[m]))
                .map(|(b, c)| b - c)
                .collect();
            let limit = outcome.limit.unwrap();
            let plain = plain_t(&worsening, limit);
            for (l, level) in LEVELS.iter().enumerate() {
                self.gate[m][l] += usize::from(outcome.p_value.is_some_and(|p| p <= *level));
                self.plain[m][l] += usize::from(plain <= *level);
            }
        }
    }

    fn print(&self, label: &str, trials: usize) {
        for (l, level) in LEVELS.iter().enumerate() {
            let per_metric: Vec<String> = (0..METRICS.len())
                .map(|m| {
                    format!(
                        "{} {:.2}x (t {:.2}x)",
                        METRICS[m],
                        self.gate[m][l] as f64 / trials as f64 / level,
                        self.plain[m][l] as f64 / trials as f64 / level
                    )
                })
                .collect();
            let pooled: usize = self.gate.iter().map(|g| g[l]).sum();
            let checks = trials * METRICS.len();
            println!(
                "{label}: per check at {level}: all metrics {} = {:.2}x; {}",
                share(pooled, checks),
                pooled as f64 / checks as f64 / level,
                per_metric.join(", ")
            );
        }
    }
}

/// The checks that fail and whose betting test (`stats::betting`, valid for every distribution on
/// [0, 1]) also rejects at the check's threshold: what a betting check at every n would fail (a
/// reference for the tradeoff, docs/statistics.md).
fn failing_with_betting(
    outcomes: &[CheckOutcome],
    baseline: &[Vec<f64>],
    current: &[Vec<f64>],
) -> Vec<bool> {
    (outcomes.iter().enumerate())
        .map(|(m, outcome)| {
            let worsening: Vec<f64> = (baseline[m].iter().zip(&current[m]))
                .map(|(b, c)| b - c)
                .collect();
            let betting = Tallied::new(&worsening).p_value(outcome.limit.unwrap(), 1.0);
            outcome.status == CheckStatus::Fail && betting <= outcome.threshold.unwrap()
        })
        .collect()
}

fn count(outcomes: &[CheckOutcome], status: CheckStatus) -> usize {
    outcomes.iter().filter(|o| o.status == status).count()
}

fn aa(runs: &Runs) {
    let trials = trials(4_000);
    for limit in [0.0, 0.02] {
        for n in [20, 100, 300, 1000] {
            let mut rng = stats::rng_for(SEED, &format!("A/A {n} {limit}"));
            let mut rejections = Rejections::default();
            let (mut failed, mut improved, mut skipped) = (0, 0, 0);
            for _ in 0..trials {
                let (a, b) = runs.pair(&mut rng);
                let indices = sample(&mut rng, runs.queries, n);
                let baseline: Vec<Vec<f64>> = (0..METRICS.len())
                    .map(|m| indices.iter().map(|&i| runs.run(m, a)[i]).collect())
                    .collect();
                let current: Vec<Vec<f64>> = (0..METRICS.len())
                    .map(|m| indices.iter().map(|&i| runs.run(m, b)[i]).collect())
                    .collect();
                let outcomes = verdicts(&[limit; 5], Correction::Holm, &baseline, &current);
                rejections.add(&outcomes, &baseline, &current);
                failed += usize::from(count(&outcomes, CheckStatus::Fail) > 0);
                improved += usize::from(count(&outcomes, CheckStatus::Improved) > 0);
                skipped += count(&outcomes, CheckStatus::Skipped);
            }
            let label = format!("A/A n = {n}, max_drop {limit}, {trials} trials");
            rejections.print(&label, trials);
            println!(
                "{label}: runs failed (Holm, alpha {ALPHA}) {}; runs with an improved hint {}; \
                 checks skipped {:.3}",
                share(failed, trials),
                share(improved, trials),
                skipped as f64 / (trials * METRICS.len()) as f64
            );
        }
    }
}

/// Baseline A with `broken` queries at 0, current B scaled elsewhere so that the mean worsening
/// over every query is `limit` (per metric). With `mirrored`, the current run's queries are the
/// broken ones and the baseline is scaled (rare large losses); the mean worsening is then 0.
fn broken_pair(
    runs: &Runs,
    (a, b): (usize, usize),
    broken: &[bool],
    limit: f64,
    mirrored: bool,
) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let total = runs.queries as f64;
    let (mut baseline, mut current) = (Vec::new(), Vec::new());
    for m in 0..METRICS.len() {
        let (first, second) = (runs.run(m, a), runs.run(m, b));
        // Broken side: `zeroed` (0 on broken queries); scaled side: `scaled` times `second`.
        let (zeroed, other) = if mirrored {
            (second, first)
        } else {
            (first, second)
        };
        let kept = |values: &[f64]| -> f64 {
            (values.iter().zip(broken))
                .filter(|(_, b)| !**b)
                .map(|(v, _)| v)
                .sum()
        };
        let lost: f64 = (other.iter().zip(broken))
            .filter(|(_, b)| **b)
            .map(|(v, _)| v)
            .sum();
        // Not mirrored: sum(zeroed kept) - s sum(other kept) - sum(other broken) = total limit.
        // Mirrored: s sum(other kept) + sum(other broken) - sum(zeroed kept) = 0.
        let scale = if mirrored {
            (kept(zeroed) - lost) / kept(other)
        } else {
            (kept(zeroed) - lost - total * limit) / kept(other)
        };
        assert!((0.5..1.0).contains(&scale), "scale {scale}");
        let zeroed: Vec<f64> = (zeroed.iter().zip(broken))
            .map(|(v, b)| if *b { 0.0 } else { *v })
            .collect();
        let scaled: Vec<f64> = (other.iter().zip(broken))
            .map(|(v, b)| if *b { *v } else { scale * v })
            .collect();
        if mirrored {
            baseline.push(scaled);
            current.push(zeroed);
        } else {
            baseline.push(zeroed);
            current.push(scaled);
        }
    }
    (baseline, current)
}

fn broken_share(rng: &mut ChaCha8Rng, queries: usize) -> Vec<bool> {
    let mut broken = vec![false; queries];
    for i in sample(rng, queries, queries / 20) {
        broken[i] = true;
    }
    broken
}

fn rare_gains(runs: &Runs) {
    let trials = trials(2_000);
    for limit in [0.0, 0.02] {
        for n in [20, 100, 300] {
            let mut rng = stats::rng_for(SEED, &format!("rare gains {n} {limit}"));
            let mut rejections = Rejections::default();
            let (mut failed, mut failing_checks, mut failed_betting) = (0, 0, 0);
            for _ in 0..trials {
                let pair = runs.pair(&mut rng);
                let broken = broken_share(&mut rng, runs.queries);
                let (baseline, current) = broken_pair(runs, pair, &broken, limit, false);
                let indices = sample(&mut rng, runs.queries, n);
                let (baseline, current) = (pick(&baseline, &indices), pick(&current, &indices));
                let outcomes = verdicts(&[limit; 5], Correction::Holm, &baseline, &current);
                rejections.add(&outcomes, &baseline, &current);
                let fails = count(&outcomes, CheckStatus::Fail);
                failing_checks += fails;
                failed += usize::from(fails > 0);
                failed_betting += usize::from(
                    failing_with_betting(&outcomes, &baseline, &current).contains(&true),
                );
            }
            let label = format!("rare large gains, n = {n}, max_drop {limit}, {trials} trials");
            rejections.print(&label, trials);
            println!(
                "{label}: runs failed (Holm, alpha {ALPHA}) {}; failing checks {:.4} per check; \
                 with a betting check at every n: runs failed {}",
                share(failed, trials),
                failing_checks as f64 / (trials * METRICS.len()) as f64,
                share(failed_betting, trials)
            );
        }
    }
}

fn coverage(runs: &Runs) {
    let trials = trials(2_000);
    for population in ["rare large gains", "rare large losses", "A/A"] {
        for n in [8, 10, 15, 30, 100] {
            let mut rng = stats::rng_for(SEED, &format!("coverage {population} {n}"));
            let (mut missed, mut unbounded) = ([0usize; 5], 0);
            for _ in 0..trials {
                let pair = runs.pair(&mut rng);
                let (baseline, current) = match population {
                    "A/A" => {
                        let values = |run: usize| -> Vec<Vec<f64>> {
                            (0..METRICS.len())
                                .map(|m| runs.run(m, run).to_vec())
                                .collect()
                        };
                        (values(pair.0), values(pair.1))
                    }
                    _ => {
                        let broken = broken_share(&mut rng, runs.queries);
                        let mirrored = population == "rare large losses";
                        broken_pair(runs, pair, &broken, 0.0, mirrored)
                    }
                };
                // The true mean worsening of the population, the limit of the check.
                let truth: Vec<f64> = (baseline.iter().zip(&current))
                    .map(|(b, c)| stats::mean(b) - stats::mean(c))
                    .collect();
                let indices = sample(&mut rng, runs.queries, n);
                let (baseline, current) = (pick(&baseline, &indices), pick(&current, &indices));
                let outcomes = verdicts(&truth, Correction::None, &baseline, &current);
                for (m, outcome) in outcomes.iter().enumerate() {
                    match outcome.bound {
                        // The bound is a delta (current - baseline) <= -worsening.
                        Some(bound) => missed[m] += usize::from(-bound.delta > truth[m] + 1e-9),
                        None => unbounded += 1,
                    }
                }
            }
            let per_metric: Vec<String> = (0..METRICS.len())
                .map(|m| {
                    format!(
                        "{} {:.3}",
                        METRICS[m],
                        1.0 - missed[m] as f64 / trials as f64
                    )
                })
                .collect();
            let checks = trials * METRICS.len();
            let all_missed: usize = missed.iter().sum();
            println!(
                "coverage of the 95% bound, {population}, n = {n}, {trials} trials: all metrics {} \
                 (no bound in {:.3}); {}",
                share(checks - all_missed, checks),
                unbounded as f64 / checks as f64,
                per_metric.join(", ")
            );
        }
    }
}

/// Current run B with a drop of at most `k` on queries in `order` until the mean worsening over
/// every query is `target` (the last drop partial), per metric.
fn regressed(
    runs: &Runs,
    (a, b): (usize, usize),
    order: &[usize],
    k: f64,
    target: f64,
) -> Vec<Vec<f64>> {
    (0..METRICS.len())
        .map(|m| {
            let (baseline, mut current) = (runs.run(m, a), runs.run(m, b).to_vec());
            let mut needed = runs.queries as f64 * target
                - (stats::mean(baseline) - stats::mean(&current)) * runs.queries as f64;
            for &q in order {
                if needed <= 0.0 {
                    break;
                }
                let drop = k.min(current[q]).min(needed);
                current[q] -= drop;
                needed -= drop;
            }
            assert!(needed <= 1e-9, "not enough to drop");
            current
        })
        .collect()
}

fn power(runs: &Runs) {
    let trials = trials(1_000);
    let limit = 0.02;
    for k in [0.1, 0.4] {
        for factor in [1.5, 2.0] {
            for n in [20, 100, 300, 1000] {
                let mut rng = stats::rng_for(SEED, &format!("power {k} {factor} {n}"));
                let mut failing = [0usize; 5];
                let (mut failed, mut betting_checks) = (0, 0);
                for _ in 0..trials {
                    let pair = runs.pair(&mut rng);
                    let order = sample(&mut rng, runs.queries, runs.queries);
                    let current = regressed(runs, pair, &order, k, factor * limit);
                    let baseline: Vec<Vec<f64>> = (0..METRICS.len())
                        .map(|m| runs.run(m, pair.0).to_vec())
                        .collect();
                    let indices = sample(&mut rng, runs.queries, n);
                    let (baseline, current) = (pick(&baseline, &indices), pick(&current, &indices));
                    let outcomes = verdicts(&[limit; 5], Correction::Holm, &baseline, &current);
                    betting_checks += failing_with_betting(&outcomes, &baseline, &current)
                        .iter()
                        .filter(|f| **f)
                        .count();
                    for (m, outcome) in outcomes.iter().enumerate() {
                        failing[m] += usize::from(outcome.status == CheckStatus::Fail);
                    }
                    failed += usize::from(count(&outcomes, CheckStatus::Fail) > 0);
                }
                let per_metric: Vec<String> = (0..METRICS.len())
                    .map(|m| format!("{} {:.3}", METRICS[m], failing[m] as f64 / trials as f64))
                    .collect();
                let checks = trials * METRICS.len();
                println!(
                    "power, drop of {k} on a random share, {factor}x the limit {limit}, n = {n}, \
                     {trials} trials: per check {}; runs failed {}; {}; with a betting check at \
                     every n: per check {}",
                    share(failing.iter().sum(), checks),
                    share(failed, trials),
                    per_metric.join(", "),
                    share(betting_checks, checks)
                );
            }
        }
    }
}

/// A scenario's name (for `RAGATE_SCENARIO`) and its simulation.
type Scenario = (&'static str, fn(&Runs));

#[test]
#[ignore = "needs repeated NFCorpus runs from bench/nfcorpus_runs.sh (RAGATE_RUNS=DIR)"]
fn statistics_real_nfcorpus_runs() {
    let dir = std::env::var("RAGATE_RUNS").expect("RAGATE_RUNS=DIR from bench/nfcorpus_runs.sh");
    let runs = Runs::load(Path::new(&dir));
    let only = std::env::var("RAGATE_SCENARIO").unwrap_or_default();
    let scenarios: [Scenario; 4] = [
        ("aa", aa),
        ("gains", rare_gains),
        ("coverage", coverage),
        ("power", power),
    ];
    for (name, scenario) in scenarios {
        if only.is_empty() || only.split(',').any(|s| s == name) {
            scenario(&runs);
        }
    }
}
