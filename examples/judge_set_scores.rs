//! Scores the lexical judges on labelled support items (`tests/fixtures/judge_set/`): per judge,
//! the true positive rate (supported items judged supported), the true negative rate and their
//! mean, the balanced accuracy; per error class, the share judged supported. A stop-gap until
//! `ragate judge-eval`:
//!
//! `cargo run --example judge_set_scores -- tests/fixtures/judge_set/example.jsonl [THRESHOLD]`
//! (the threshold of both judges; default 0.4, the configuration's default)

use std::collections::BTreeMap;

use ragate::judge::lexical::LexicalJudge;
use ragate::judge::{Task, Verdict};

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: judge_set_scores ITEMS.jsonl [THRESHOLD]");
    let threshold: f64 = std::env::args()
        .nth(2)
        .map_or(0.4, |t| t.parse().expect("a threshold in (0, 1]"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let items: Vec<serde_json::Value> = text
        .lines()
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{path}:{}: {e}", i + 1))
        })
        .collect();
    let tasks: Vec<Task> = items
        .iter()
        .map(|item| Task::Support {
            claim: item["claim"].as_str().expect("a claim").to_string(),
            context: item["context"].as_str().expect("a context").to_string(),
        })
        .collect();
    println!("{path}: {} items", items.len());
    for version in [1, 2] {
        let judge = LexicalJudge {
            threshold,
            stem: true,
            version,
        };
        let started = std::time::Instant::now();
        let verdicts: Vec<Verdict> = judge.verdicts(&tasks);
        let elapsed = started.elapsed();
        let (mut tp, mut pos, mut tn, mut neg) = (0, 0, 0, 0);
        let mut classes: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for (item, verdict) in items.iter().zip(&verdicts) {
            let supported = item["label"] == "supported";
            if supported {
                pos += 1;
                tp += usize::from(verdict.positive);
            } else {
                neg += 1;
                tn += usize::from(!verdict.positive);
            }
            let class = classes
                .entry(item["class"].as_str().unwrap_or("-"))
                .or_default();
            class.0 += usize::from(verdict.positive);
            class.1 += 1;
        }
        let tpr = tp as f64 / pos.max(1) as f64;
        let tnr = tn as f64 / neg.max(1) as f64;
        println!(
            "{}: balanced accuracy {:.3}, TPR {tpr:.3} ({tp}/{pos}), TNR {tnr:.3} ({tn}/{neg}), {:.1} ms",
            judge.describe(),
            (tpr + tnr) / 2.0,
            elapsed.as_secs_f64() * 1000.0
        );
        for (class, (supported, n)) in classes {
            println!("  {class:<22} judged supported {supported:>4} / {n:<4}");
        }
    }
}
