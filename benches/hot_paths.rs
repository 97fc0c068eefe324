//! Timings of ragate's hot paths, so a change that slows one shows in review:
//! `cargo bench --bench hot_paths` (release profile). Each case runs 11 times after one warm-up;
//! the median, minimum and maximum are printed. Data are generated from a fixed seed, in memory
//! or in a temporary file; nothing is written elsewhere.
//!
//! - TREC run read and scored (nDCG@10, recall@100): 2,000 queries x 500 docs, grouped and
//!   shuffled (every query's lines scattered through the file).
//! - Per-query scoring alone: six metrics on rankings of 1,000 judged docs.
//! - The test against the limit and its bound: 2,000 paired deltas, dense and sparse (the betting
//!   check), as one check of a deep tier costs.

use std::hint::black_box;
use std::io::Write;
use std::time::{Duration, Instant};

use ragate::input::qrels::{Judgment, Ranked};
use ragate::input::trec_run::{self, ReadOptions};
use ragate::metrics::retrieval::{QueryTruth, RetrievalMetric};
use ragate::stats::{self, limit_test};
use rand::Rng;

const RUNS: usize = 11;

/// Runs `case` once to warm up, then [`RUNS`] times, and prints the median, min and max.
fn time(name: &str, mut case: impl FnMut()) {
    case();
    let mut samples: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            case();
            start.elapsed()
        })
        .collect();
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{name:<68} median {:>9.3} ms   min {:>9.3}   max {:>9.3}",
        ms(samples[RUNS / 2]),
        ms(samples[0]),
        ms(samples[RUNS - 1])
    );
}

fn uniform(rng: &mut impl Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A TREC run of `queries` x `docs` lines, sorted by score within each query.
fn trec_lines(queries: usize, docs: usize) -> Vec<String> {
    let mut lines = Vec::with_capacity(queries * docs);
    for q in 0..queries {
        for d in 0..docs {
            let score = 100.0 - d as f64 * 0.1;
            lines.push(format!(
                "q{q} Q0 d{} {} {score:.3} bench\n",
                (q * 7 + d) % 5000,
                d + 1
            ));
        }
    }
    lines
}

fn write_run(dir: &std::path::Path, name: &str, lines: &[String]) -> std::path::PathBuf {
    let path = dir.join(name);
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for line in lines {
        file.write_all(line.as_bytes()).unwrap();
    }
    file.flush().unwrap();
    path
}

fn bench_trec_read(dir: &std::path::Path) {
    let mut lines = trec_lines(2_000, 500);
    let grouped = write_run(dir, "grouped.trec", &lines);
    stats::shuffle(&mut lines, &mut stats::rng_for(1, "bench shuffle"));
    let shuffled = write_run(dir, "shuffled.trec", &lines);
    // Every doc id ending in 3 is relevant with grade 1..=3, the others unjudged.
    let judged = |doc: &[u8]| match doc.last() {
        Some(b'3') => Ranked::Judged(Judgment::from_grade(i32::from(doc.len() as u8 % 3) + 1)),
        _ => Ranked::Unjudged,
    };
    let truth = QueryTruth {
        num_relevant: 50,
        num_non_relevant: 0,
        ideal_gains: vec![3; 50],
    };
    let metrics: [RetrievalMetric; 2] = ["ndcg@10".parse().unwrap(), "recall@100".parse().unwrap()];
    let options = ReadOptions::new(2);
    for (name, path) in [("grouped", &grouped), ("shuffled", &shuffled)] {
        time(&format!("TREC read + score, 1M lines, {name}"), || {
            let queries = trec_run::for_each_query(path, &options, |_, entries| {
                let ranking: Vec<Ranked> = trec_run::in_trec_order(entries)
                    .take(100)
                    .map(judged)
                    .collect();
                metrics.map(|m| m.value(&ranking, &truth))
            })
            .unwrap();
            black_box(queries.outputs.len());
        });
    }
}

fn bench_scoring() {
    let mut rng = stats::rng_for(2, "bench scoring");
    let rankings: Vec<Vec<Ranked>> = (0..1_000)
        .map(|_| {
            (0..1_000)
                .map(|_| {
                    if uniform(&mut rng) < 0.05 {
                        Ranked::Judged(Judgment::from_grade(2))
                    } else {
                        Ranked::Unjudged
                    }
                })
                .collect()
        })
        .collect();
    let truth = QueryTruth {
        num_relevant: 60,
        num_non_relevant: 0,
        ideal_gains: vec![2; 60],
    };
    let metrics: Vec<RetrievalMetric> = [
        "precision@10",
        "recall@100",
        "mrr",
        "ndcg@10",
        "map",
        "r_precision",
    ]
    .iter()
    .map(|m| m.parse().unwrap())
    .collect();
    time("score 1,000 queries x 6 metrics, 1,000 docs each", || {
        let total: f64 = rankings
            .iter()
            .flat_map(|ranking| metrics.iter().map(|m| m.value(ranking, &truth)))
            .sum();
        black_box(total);
    });
}

fn bench_verdicts() {
    let mut rng = stats::rng_for(3, "bench verdicts");
    let dense: Vec<f64> = (0..2_000).map(|_| uniform(&mut rng) * 0.4 - 0.19).collect();
    let sparse: Vec<f64> = (0..2_000)
        .map(|i| if i % 100 == 0 { 0.8 } else { 0.0 })
        .collect();
    for (name, values) in [("dense", &dense), ("sparse: betting check", &sparse)] {
        time(
            &format!("test against the limit + bound, 2,000 pairs, {name}"),
            || {
                let test = limit_test::test(values, 0.02, Some(1.0));
                let bound = limit_test::lower_bound(values, 0.0025, Some(1.0), 0.02);
                black_box((test, bound));
            },
        );
    }
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    bench_trec_read(dir.path());
    bench_scoring();
    bench_verdicts();
}
