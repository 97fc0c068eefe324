//! `repeats: N` on a tier: the pipeline answers every query N times, the gate compares per-query
//! means over the N runs, and the report says how large the run-to-run noise is, per metric and
//! as a share of each `all` check's variance. `judge_repeats: N`: the judges are asked N times
//! about the first run's answers (each asking cached apart), and the report gives how often their
//! verdicts changed and which claims flipped; the gate uses the first asking.
//!
//! Run-to-run noise of a metric is the pooled within-query variance: for every query with the
//! metric in at least two runs, the sample variance (n - 1) of its values across the runs; their
//! sum and count are kept (so shards add up), and the reported standard deviation is
//! `sqrt(sum / count)`. The results file stores it, so a baseline accepted from a repeated run
//! knows its own. A per-query delta (this run's mean of N runs minus the baseline's mean of M)
//! carries `variance / N + baseline variance / M` of noise; its share of a check is that over the
//! variance of the check's per-query deltas. A baseline without stored noise is taken to have this
//! run's noise from a single run (M = 1), and the report says so.

use std::collections::BTreeMap;

use crate::baseline::collect;
use crate::baseline::noise::RunNoise;
use crate::baseline::noise_share;
use crate::baseline::results::Results;
use crate::evaluate::judge_consistency::{FlippedClaim, JudgeConsistency};
use crate::outputs::writer::Evaluated;
use crate::stats;

/// Compares the first asking of the judges with the later ones (same run, same answers).
pub(crate) fn judge_consistency(
    first: &Evaluated,
    later: &[Evaluated],
    judged_metrics: &[String],
) -> JudgeConsistency {
    let mut consistency = JudgeConsistency {
        askings: later.len() + 1,
        ..JudgeConsistency::default()
    };
    for (qid, record) in &first.results.queries {
        let others: Vec<_> = later
            .iter()
            .filter_map(|run| run.results.queries.get(qid))
            .collect();
        for (index, claim) in record.claims.iter().enumerate() {
            consistency.claims += 1;
            let supported = claim.grade == 2;
            let flipped = others.iter().any(|other| {
                other
                    .claims
                    .get(index)
                    .is_some_and(|c| c.claim == claim.claim && (c.grade == 2) != supported)
            });
            if flipped {
                consistency.flipped_claims.push(FlippedClaim {
                    qid: qid.clone(),
                    claim: claim.claim.clone(),
                });
            }
        }
        for metric in judged_metrics {
            let Some(value) = record.metrics.get(metric) else {
                continue;
            };
            let entry = consistency.metrics.entry(metric.clone()).or_default();
            entry.0 += 1;
            if others
                .iter()
                .any(|other| other.metrics.get(metric).is_some_and(|v| v != value))
            {
                entry.1 += 1;
            }
        }
    }
    consistency
}

/// One evaluation from `runs` (at least one) of the same queries: per-query metric values are
/// the means over the runs that have them (a must-pass query keeps each run's values too);
/// texts, claims and the trace come from the first run.
pub(crate) fn combine(runs: Vec<Evaluated>) -> Evaluated {
    let repeats = runs.len();
    let mut runs = runs.into_iter();
    let mut combined = runs.next().expect("at least one run");
    if repeats == 1 {
        return combined;
    }
    let others: Vec<Evaluated> = runs.collect();
    let mut noise = RunNoise {
        repeats,
        metrics: BTreeMap::new(),
    };
    for (qid, record) in combined.results.queries.iter_mut() {
        // A must-pass query keeps each run's values: the gate decides each run (pass^k).
        if let Some(must_pass) = record.must_pass.as_mut() {
            must_pass.repeats = std::iter::once(record.metrics.clone())
                .chain(others.iter().map(|run| {
                    run.results
                        .queries
                        .get(qid)
                        .map(|other| other.metrics.clone())
                        .unwrap_or_default()
                }))
                .collect();
        }
        for (metric, value) in record.metrics.iter_mut() {
            let mut values = vec![*value];
            values.extend(
                others
                    .iter()
                    .filter_map(|run| run.results.queries.get(qid)?.metrics.get(metric)),
            );
            *value = stats::mean(&values);
            if values.len() >= 2 {
                let within = noise.metrics.entry(metric.clone()).or_default();
                within.variance_sum += stats::sample_sd(&values).powi(2);
                within.queries += 1;
            }
        }
    }
    for run in &others {
        combined.judge_tasks += run.judge_tasks;
        combined.judge_calls += run.judge_calls;
        combined.evaluation_seconds += run.evaluation_seconds;
    }
    // The LLM clients count from the start of the process: the last run holds the totals.
    if let Some(last) = others.last() {
        combined.llm_usage = last.llm_usage.clone();
    }
    combined.results.summary =
        collect::summarise(&combined.results.metrics, &combined.results.queries);
    combined.noise = Some(noise);
    combined
}

/// What the noise means for the gate: one line for the whole run, and one per metric with the
/// share of its `all` check's per-query delta variance that run-to-run noise explains, this
/// run's and the baseline's: the baseline's stored noise, else (a baseline of one run, or one
/// written before ragate stored it) this run's noise from a single run, as the line says.
pub(crate) fn describe(noise: &RunNoise, baseline: &Results, current: &Results) -> Vec<String> {
    let sds: Vec<String> = noise
        .metrics
        .iter()
        .map(|(metric, within)| format!("{metric} {:.4}", within.sd()))
        .collect();
    let mut lines = vec![format!(
        "run-to-run noise over {} runs of the pipeline (the gate compares per-query means): \
         standard deviation of a query's value between runs: {}",
        noise.repeats,
        sds.join(", ")
    )];
    for metric in noise.metrics.keys() {
        if let Some(share) = share(noise, metric, baseline, current) {
            lines.push(format!(
                "{metric} [all]: run-to-run noise is about {:.0}% of the variance of the \
                 per-query deltas ({})",
                (100.0 * share.fraction).min(100.0),
                share.whose
            ));
        }
    }
    lines
}

/// The share of a metric's per-query delta variance that run-to-run noise explains, with whose
/// noise it counts.
struct Share {
    /// Noise variance over delta variance: not capped (a ratio of estimates can exceed 1).
    fraction: f64,
    /// Whose noise it counts, and where the baseline's comes from.
    whose: String,
}

/// The noise share of `metric` ([`noise_share::of`]) and whose noise it counts.
fn share(noise: &RunNoise, metric: &str, baseline: &Results, current: &Results) -> Option<Share> {
    let share = noise_share::of(noise, metric, baseline, current)?;
    let whose = match share.baseline_stored {
        Some((runs, sd)) => format!(
            "this run's mean of {} runs and the baseline's of {runs}, whose stored \
             standard deviation is {sd:.4}",
            noise.repeats
        ),
        None => format!(
            "this run's mean of {} runs and the baseline's, assuming the baseline has the \
             same run-to-run noise, from 1 run",
            noise.repeats
        ),
    };
    Some(Share {
        fraction: share.fraction,
        whose,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::noise::WithinQuery;
    use crate::baseline::results::{Provenance, QueryRecord, RunStatus};

    fn evaluated(values: &[f64]) -> Evaluated {
        let queries = values
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let record = QueryRecord {
                    query: None,
                    slices: Default::default(),
                    metrics: [("mrr".to_string(), v)].into_iter().collect(),
                    retrieved: vec![],
                    answer: None,
                    answer_sha256: None,
                    claims: Vec::new(),
                    answer_relevance_embedding: None,
                    must_pass: None,
                };
                (format!("q{i}"), record)
            })
            .collect();
        Evaluated {
            results: Results {
                format: String::new(),
                tier: "t".into(),
                status: RunStatus::Pass,
                provenance: Provenance::default(),
                metrics: vec!["mrr".into()],
                summary: Default::default(),
                noise: None,
                baseline_mismatch: None,
                queries,
            },
            trace: Default::default(),
            operational: Default::default(),
            embeddings: Vec::new(),
            judge_tasks: 1,
            judge_calls: 1,
            llm_usage: Default::default(),
            evaluation_seconds: 1.0,
            noise: None,
            judge_consistency: None,
        }
    }

    #[test]
    fn runs_are_averaged_per_query_and_their_spread_pooled() {
        let combined = combine(vec![
            evaluated(&[1.0, 0.5, 0.0]),
            evaluated(&[0.0, 0.5, 0.0]),
        ]);
        let mrr = |qid: &str| combined.results.queries[qid].metrics["mrr"];
        assert_eq!((mrr("q0"), mrr("q1"), mrr("q2")), (0.5, 0.5, 0.0));
        let noise = combined.noise.as_ref().unwrap();
        // Variances across the two runs: 0.5, 0, 0; pooled sd sqrt(0.5 / 3).
        assert_eq!(noise.repeats, 2);
        let within = noise.metrics["mrr"];
        assert_eq!(within.queries, 3);
        assert!((within.variance_sum - 0.5).abs() < 1e-15, "{within:?}");
        assert!((within.sd() - (0.5f64 / 3.0).sqrt()).abs() < 1e-15);
        assert_eq!(combined.judge_tasks, 2);
        assert!((combined.results.summary["all"]["mrr"].mean - 1.0 / 3.0).abs() < 1e-15);
        // One run: nothing changes, no noise is claimed.
        let single = combine(vec![evaluated(&[1.0, 0.5])]);
        assert!(single.noise.is_none());
    }

    fn noise(repeats: usize, variance: f64) -> RunNoise {
        RunNoise {
            repeats,
            metrics: [(
                "mrr".to_string(),
                WithinQuery {
                    variance_sum: variance * 3.0,
                    queries: 3,
                },
            )]
            .into_iter()
            .collect(),
        }
    }

    #[test]
    fn the_noise_share_counts_this_run_s_noise_and_the_baseline_s() {
        let mut baseline = evaluated(&[0.5, 0.5, 0.5]).results;
        let current = evaluated(&[0.3, 0.5, 0.7]).results;
        // Delta variance 0.04. This run: 0.016 over 4 runs, 0.004.
        let lines = describe(&noise(4, 0.016), &baseline, &current);
        assert!(
            lines[0].contains("over 4 runs") && lines[0].contains("mrr 0.1265"),
            "{lines:?}"
        );
        // A baseline without stored noise: this run's, from one run: (0.004 + 0.016) / 0.04.
        assert_eq!(
            lines[1],
            "mrr [all]: run-to-run noise is about 50% of the variance of the per-query deltas \
             (this run's mean of 4 runs and the baseline's, assuming the baseline has the same \
             run-to-run noise, from 1 run)"
        );
        // A baseline that stored its noise, 0.024 over 2 runs: (0.004 + 0.012) / 0.04.
        baseline.noise = Some(noise(2, 0.024));
        let lines = describe(&noise(4, 0.016), &baseline, &current);
        assert_eq!(
            lines[1],
            "mrr [all]: run-to-run noise is about 40% of the variance of the per-query deltas \
             (this run's mean of 4 runs and the baseline's of 2, whose stored standard \
             deviation is 0.1549)"
        );
        // A baseline whose stored noise lacks the metric falls back to the assumption.
        baseline.noise = Some(RunNoise {
            repeats: 2,
            metrics: BTreeMap::new(),
        });
        let lines = describe(&noise(4, 0.016), &baseline, &current);
        assert!(lines[1].contains("about 50%") && lines[1].contains("from 1 run"));
        // Noise beyond the delta variance (estimates) reads 100%, no more.
        let lines = describe(&noise(4, 0.04), &baseline, &current);
        assert!(lines[1].contains("about 100%"), "{lines:?}");
        // Deltas that do not vary: no share.
        let flat = describe(&noise(4, 0.016), &current, &current);
        assert_eq!(flat.len(), 1, "{flat:?}");
    }

    /// Standard normal draw (Box-Muller).
    fn normal(rng: &mut impl rand::Rng) -> f64 {
        let u1 = 1.0 - (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64; // in (0, 1]
        let u2 = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// A tier run `runs` times: every run's value of a query is its true value plus iid noise of
    /// standard deviation `sd`; the runs combined as `repeats:` does, the noise stored as a
    /// results file (so a baseline accepted from it) holds it.
    fn repeated(truth: &[f64], runs: usize, sd: f64, rng: &mut impl rand::Rng) -> Evaluated {
        let runs = (0..runs)
            .map(|_| {
                let values: Vec<f64> = truth.iter().map(|t| t + sd * normal(rng)).collect();
                evaluated(&values)
            })
            .collect();
        let mut combined = combine(runs);
        combined.results.noise = combined.noise.clone();
        combined
    }

    /// The noise share of simulated pipelines (300 queries, true values spread over [0.2, 0.8],
    /// run-to-run sd 0.1): `change_sd` is the sd of each query's true change from the baseline.
    fn simulated_share(
        seed: u64,
        (baseline_runs, current_runs): (usize, usize),
        change_sd: f64,
    ) -> (f64, String) {
        let mut rng = stats::rng_for(seed, "repeats-noise-share");
        let truth: Vec<f64> = (0..300).map(|i| 0.2 + 0.6 * i as f64 / 299.0).collect();
        let changed: Vec<f64> = truth
            .iter()
            .map(|t| t + change_sd * normal(&mut rng))
            .collect();
        let baseline = repeated(&truth, baseline_runs, 0.1, &mut rng);
        if baseline_runs == 1 {
            assert!(baseline.noise.is_none());
        }
        let current = repeated(&changed, current_runs, 0.1, &mut rng);
        let noise = current.noise.as_ref().unwrap();
        let fraction = share(noise, "mrr", &baseline.results, &current.results)
            .unwrap()
            .fraction;
        let line = describe(noise, &baseline.results, &current.results).remove(1);
        (fraction, line)
    }

    /// The percentage a share line reads.
    fn percent(line: &str) -> f64 {
        let after = line.split("about ").nth(1).unwrap();
        after.split('%').next().unwrap().parse().unwrap()
    }

    #[test]
    fn pure_run_to_run_noise_reads_near_all_of_the_delta_variance() {
        // Baseline and current from the same pipeline, nothing changed: every delta is noise.
        // Counting only this run's mean read 20% (1 baseline run) and 43% (3 runs) here.
        for runs in [(1, 4), (3, 4), (2, 2)] {
            let (_, line) = simulated_share(7, runs, 0.0);
            let read = percent(&line);
            assert!((85.0..=100.0).contains(&read), "{runs:?}: {line}");
            let fractions: Vec<f64> = (0..40)
                .map(|seed| simulated_share(seed, runs, 0.0).0)
                .collect();
            let mean = stats::mean(&fractions);
            assert!((0.95..=1.05).contains(&mean), "{runs:?}: mean share {mean}");
        }
        let (_, line) = simulated_share(7, (1, 4), 0.0);
        assert!(
            line.contains("assuming the baseline has the same"),
            "{line}"
        );
        let (_, line) = simulated_share(7, (3, 4), 0.0);
        assert!(line.contains("the baseline's of 3"), "{line}");
    }

    #[test]
    fn a_real_per_query_change_lowers_the_noise_share_accordingly() {
        // Noise of a delta with a 3-run baseline and a 4-run current: 0.01 / 4 + 0.01 / 3. A true
        // per-query change of the same variance leaves noise half the delta variance; one of
        // three times its variance, a quarter.
        let noise: f64 = 0.01 / 4.0 + 0.01 / 3.0;
        for (change_variance, expected) in [(noise, 0.5), (3.0 * noise, 0.25)] {
            let fractions: Vec<f64> = (0..40)
                .map(|seed| simulated_share(seed, (3, 4), change_variance.sqrt()).0)
                .collect();
            let mean = stats::mean(&fractions);
            assert!(
                (mean - expected).abs() < 0.05,
                "expected {expected}, mean share {mean}"
            );
            let read = percent(&simulated_share(7, (3, 4), change_variance.sqrt()).1);
            assert!((read - 100.0 * expected).abs() < 15.0, "read {read}%");
        }
    }
}
